// Planted bugs for compute-sanitizer fixtures (tests/data/sanitizer/*.txt). One case per run, named by argv[1]:
//   clean             every access in bounds: memcheck and synccheck must report 0 errors
//   oob_global        64 threads write past the end of a 128-float buffer. Seen on the H200: memcheck reported
//                     NOTHING, because the writes land inside the next cudaMalloc'd buffer (`bytes`, allocated
//                     right after): memcheck checks "inside some allocation", not "inside the intended one".
//   oob_shared        one thread writes far past a static shared array (memcheck: Invalid __shared__ write)
//   misaligned        a 4-byte load from an address off by one byte (memcheck: ... is misaligned)
//   divergent_warp    __syncthreads reached by half of one warp (synccheck: Barrier error)
//   divergent_block   __syncthreads reached by two of four warps, the others still running. Seen on the H200:
//                     synccheck reported nothing (0 errors).
//   race              one warp writes a shared array that another warp then reads with no barrier between
//                     (racecheck: a read-after-write hazard)
//   uninit            a kernel reads a cudaMalloc'd buffer nothing wrote (initcheck: Uninitialized __global__
//                     memory read)
//   uninit_ipc        the same read of memory another process allocated and shared through CUDA IPC, which
//                     that process did initialise: whether initcheck follows IPC memory (the runner's buffers
//                     reach the solution process this way)
//   uninit_ipc_raw    the same, the shared memory never written by either process
// Build: nvcc -gencode arch=compute_90a,code=sm_90a -lineinfo -o sanitizer_cases sanitizer_cases.cu
#include <cstdio>
#include <cstring>

__global__ void clean_kernel(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * static_cast<float>(i);
}

__global__ void oob_global_kernel(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i + n / 2] = 1.0f;  // the upper half of the threads write past the end
}

__global__ void oob_shared_kernel(float* out, int offset) {
  __shared__ float tile[256];
  tile[threadIdx.x] = static_cast<float>(threadIdx.x);
  __syncthreads();
  if (threadIdx.x == 5) tile[threadIdx.x + offset] = 3.0f;  // offset comes from the host: not foldable
  __syncthreads();
  out[threadIdx.x] = tile[threadIdx.x];
}

__global__ void misaligned_kernel(const char* bytes, float* out) {
  const float* p = reinterpret_cast<const float*>(bytes + 1);
  out[threadIdx.x] = p[threadIdx.x];
}

__global__ void divergent_warp_kernel(float* out) {
  __shared__ float s[128];
  s[threadIdx.x] = 1.0f;
  if (threadIdx.x % 32 < 16) __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x + 1) % 128];
}

__global__ void divergent_block_kernel(float* out, int spin) {
  __shared__ float s[128];
  s[threadIdx.x] = 1.0f;
  if (threadIdx.x < 64) {
    __syncthreads();
  } else {
    float acc = 0;
    for (int i = 0; i < spin; ++i) acc += s[(threadIdx.x + i) % 128];
    s[threadIdx.x] = acc;
  }
  out[threadIdx.x] = s[threadIdx.x];
}

__global__ void race_kernel(float* out) {
  __shared__ float s[64];
  if (threadIdx.x < 32) s[threadIdx.x + 32] = static_cast<float>(threadIdx.x);  // warp 0 writes ...
  if (threadIdx.x >= 32) out[threadIdx.x] = s[threadIdx.x];                      // ... warp 1 reads, no barrier
}

__global__ void read_kernel(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + 1.0f;
}

static int check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::printf("host: %s failed: %s (%s)\n", what, cudaGetErrorName(e), cudaGetErrorString(e));
    return 1;
  }
  return 0;
}

// The parent allocates and initialises a buffer and hands its IPC handle to a child it forks before touching
// CUDA; the child maps it and reads it in a kernel. Run under --target-processes all.
#include <sys/wait.h>
#include <unistd.h>
static int uninit_ipc(int n, bool initialise) {
  int handle_pipe[2], done_pipe[2];
  if (pipe(handle_pipe) != 0 || pipe(done_pipe) != 0) return 2;
  const pid_t child = fork();
  if (child == 0) {
    cudaIpcMemHandle_t handle;
    if (read(handle_pipe[0], &handle, sizeof(handle)) != sizeof(handle)) _exit(2);
    void* mapped = nullptr;
    float* out = nullptr;
    if (check(cudaIpcOpenMemHandle(&mapped, handle, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle") ||
        check(cudaMalloc(&out, n * sizeof(float)), "cudaMalloc"))
      _exit(2);
    read_kernel<<<1, n>>>(static_cast<const float*>(mapped), out, n);
    const int failed = check(cudaDeviceSynchronize(), "child kernel");
    std::printf("child: read the parent's buffer through IPC\n");
    (void)cudaIpcCloseMemHandle(mapped);
    const char byte = 1;
    (void)!write(done_pipe[1], &byte, 1);
    _exit(failed ? 1 : 0);
  }
  float* shared = nullptr;
  cudaIpcMemHandle_t handle;
  if (check(cudaMalloc(&shared, size_t{2} << 20), "cudaMalloc") ||
      (initialise && check(cudaMemset(shared, 0, size_t{2} << 20), "cudaMemset")) ||
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize") ||
      check(cudaIpcGetMemHandle(&handle, shared), "cudaIpcGetMemHandle"))
    return 2;
  if (write(handle_pipe[1], &handle, sizeof(handle)) != sizeof(handle)) return 2;
  char byte = 0;
  (void)!read(done_pipe[0], &byte, 1);
  int status = 0;
  waitpid(child, &status, 0);
  std::printf("host: child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 3;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "clean";
  const int n = 128;
  float* out = nullptr;
  char* bytes = nullptr;
  if (check(cudaMalloc(&out, n * sizeof(float)), "cudaMalloc")) return 2;
  if (check(cudaMalloc(&bytes, 4096), "cudaMalloc")) return 2;
  if (!std::strcmp(mode, "clean")) clean_kernel<<<1, n>>>(out, n);
  else if (!std::strcmp(mode, "oob_global")) oob_global_kernel<<<1, n>>>(out, n);
  else if (!std::strcmp(mode, "oob_shared")) oob_shared_kernel<<<1, 128>>>(out, 1 << 20);
  else if (!std::strcmp(mode, "misaligned")) misaligned_kernel<<<1, 32>>>(bytes, out);
  else if (!std::strcmp(mode, "divergent_warp")) divergent_warp_kernel<<<1, 128>>>(out);
  else if (!std::strcmp(mode, "divergent_block")) divergent_block_kernel<<<1, 128>>>(out, 1000);
  else if (!std::strcmp(mode, "race")) race_kernel<<<1, 64>>>(out);
  else if (!std::strcmp(mode, "uninit")) read_kernel<<<1, n>>>(reinterpret_cast<const float*>(bytes), out, n);
  else if (!std::strcmp(mode, "uninit_ipc")) return uninit_ipc(n, true);
  else if (!std::strcmp(mode, "uninit_ipc_raw")) return uninit_ipc(n, false);
  else { std::printf("unknown mode %s\n", mode); return 2; }
  int failed = check(cudaGetLastError(), "launch");
  failed |= check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  float host[n];
  failed |= check(cudaMemcpy(host, out, sizeof(host), cudaMemcpyDeviceToHost), "cudaMemcpy");
  std::printf("mode=%s out[1]=%f failed=%d\n", mode, host[1], failed);
  return failed;
}
