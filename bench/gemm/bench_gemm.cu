// Benchmark of a GEMM solution (the ptxbench_gemm_bf16 ABI) against cuBLASLt on the Hopper GEMM task shapes.
//
// For every task (N, K) and M in {8192, 128, 1999}: random normal A, B scaled by 1/sqrt(K) (so C is about unit
// size), C poisoned with NaN, one call of the solution, checked against cuBLASLt with fp32 output,
// |c - ref| <= atol + rtol * |ref| with rtol = atol = 1e-2 on every element. For M = 8192 (the tasks' main
// shape): both timed with a cold L2 (a 256 MB buffer is written between calls), 10 warm-ups, 30 timed calls
// each (alternating), median. cuBLASLt is timed with bf16 output, like the solution.
//
// Usage: bench_gemm <solution.so> [reps]
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CUDA_CHECK(x)                                                                                   \
  do {                                                                                                  \
    cudaError_t err_ = (x);                                                                             \
    if (err_ != cudaSuccess) {                                                                          \
      std::printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorName(err_), __FILE__, __LINE__, #x);      \
      std::exit(2);                                                                                     \
    }                                                                                                   \
  } while (0)
#define LT_CHECK(x)                                                                                     \
  do {                                                                                                  \
    cublasStatus_t st_ = (x);                                                                           \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                                 \
      std::printf("cuBLASLt error %d at %s:%d: %s\n", static_cast<int>(st_), __FILE__, __LINE__, #x);  \
      std::exit(2);                                                                                     \
    }                                                                                                   \
  } while (0)

using GemmFn = int (*)(const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, int, int, int, cudaStream_t);

constexpr double kPeakTflops = 989.0;  // H100/H200 SXM dense bf16, NVIDIA datasheet

// ------------------------------------------------------------------------------------------------ device helpers

__device__ uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__global__ void fill_normal(__nv_bfloat16* p, size_t n, uint64_t seed, float scale) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const uint64_t h = splitmix64(seed ^ (i * 0x2545F4914F6CDD1Dull));
    const float u1 = ((h >> 40) + 1) * (1.0f / 16777217.0f), u2 = ((h >> 16) & 0xFFFFFF) * (1.0f / 16777216.0f);
    p[i] = __float2bfloat16(scale * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2));
  }
}

struct CheckResult {
  unsigned long long bad;
  unsigned int max_err_bits;  // float bits of the largest |c - ref| (non-negative floats order as integers)
  unsigned long long first_bad;
};

__global__ void compare(const __nv_bfloat16* c, const float* ref, size_t n, float rtol, float atol, CheckResult* r) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const float got = __bfloat162float(c[i]), want = ref[i];
    const float err = fabsf(got - want);
    if (!(err <= atol + rtol * fabsf(want))) {  // NaN fails too
      atomicAdd(&r->bad, 1ull);
      atomicMin(&r->first_bad, static_cast<unsigned long long>(i));
    }
    if (err == err) atomicMax(&r->max_err_bits, __float_as_uint(err));
  }
}

// ------------------------------------------------------------------------------------------------ cuBLASLt

// C[M,N] = A[M,K] * B[N,K]^T in row-major terms is, column-major, C^T (N x M) = B (K x N)^T * A (K x M).
struct LtGemm {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulHeuristicResult_t algo{};

  LtGemm(cublasLtHandle_t h, int M, int N, int K, cudaDataType ctype, size_t workspace) {
    LT_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    LT_CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, K, N, K));
    LT_CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, K, M, K));
    LT_CHECK(cublasLtMatrixLayoutCreate(&lc, ctype, N, M, N));
    cublasLtMatmulPreference_t pref;
    LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                  sizeof workspace));
    int found = 0;
    LT_CHECK(cublasLtMatmulAlgoGetHeuristic(h, op, la, lb, lc, lc, pref, 1, &algo, &found));
    LT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
    if (found < 1) {
      std::printf("cuBLASLt found no algorithm\n");
      std::exit(2);
    }
  }
  ~LtGemm() {
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
  }
  void run(cublasLtHandle_t h, const __nv_bfloat16* A, const __nv_bfloat16* B, void* C, void* ws, size_t ws_size,
           cudaStream_t s) const {
    const float alpha = 1.0f, beta = 0.0f;
    LT_CHECK(cublasLtMatmul(h, op, &alpha, B, la, A, lb, &beta, C, lc, C, lc, &algo.algo, ws, ws_size, s));
  }
};

static double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::printf("usage: %s <solution.so> [reps]\n", argv[0]);
    return 2;
  }
  const int reps = argc > 2 ? std::atoi(argv[2]) : 30, warmups = 10;
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::printf("dlopen: %s\n", dlerror());
    return 2;
  }
  auto gemm = reinterpret_cast<GemmFn>(dlsym(lib, "ptxbench_gemm_bf16"));
  if (!gemm) {
    std::printf("no ptxbench_gemm_bf16 in %s\n", argv[1]);
    return 2;
  }
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs; solution: %s; %d warm-ups, %d timed calls, cold L2\n", prop.name,
              prop.multiProcessorCount, argv[1], warmups, reps);

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cublasLtHandle_t lt;
  LT_CHECK(cublasLtCreate(&lt));
  const size_t ws_size = 64ull << 20, flush_size = 256ull << 20;
  void *ws, *flush;
  CUDA_CHECK(cudaMalloc(&ws, ws_size));
  CUDA_CHECK(cudaMalloc(&flush, flush_size));
  CheckResult* d_check;
  CUDA_CHECK(cudaMalloc(&d_check, sizeof(CheckResult)));
  cudaEvent_t ev[4];
  for (auto& e : ev) CUDA_CHECK(cudaEventCreate(&e));

  struct Shape {
    int N, K;
  };
  const Shape tasks[] = {{7168, 5120}, {4096, 4096}, {4096, 14336}, {28672, 4096}};
  const int Ms[] = {8192, 128, 1999};
  bool all_correct = true;
  double log_ratio_sum = 0;
  int timed = 0;
  uint64_t seed = 20261201;
  std::printf("\n%-22s %-8s %-10s %-9s %-10s %-10s %-8s %-7s\n", "shape (MxNxK)", "check", "max err", "ours ms",
              "ours TF/s", "cuBLAS TF/s", "ratio", "% peak");
  for (const Shape& task : tasks)
    for (int M : Ms) {
      const int N = task.N, K = task.K;
      const size_t na = size_t(M) * K, nb = size_t(N) * K, nc = size_t(M) * N;
      __nv_bfloat16 *A, *B, *C, *Cb;
      float* ref;
      CUDA_CHECK(cudaMalloc(&A, na * 2));
      CUDA_CHECK(cudaMalloc(&B, nb * 2));
      CUDA_CHECK(cudaMalloc(&C, nc * 2));
      CUDA_CHECK(cudaMalloc(&Cb, nc * 2));
      CUDA_CHECK(cudaMalloc(&ref, nc * 4));
      fill_normal<<<1024, 256, 0, stream>>>(A, na, ++seed, 1.0f);
      fill_normal<<<1024, 256, 0, stream>>>(B, nb, ++seed, 1.0f / std::sqrt(float(K)));
      CUDA_CHECK(cudaMemsetAsync(C, 0xFF, nc * 2, stream));  // NaN: unwritten elements fail the check

      int rc = gemm(A, B, C, M, N, K, stream);
      CUDA_CHECK(cudaGetLastError());
      LtGemm check_gemm(lt, M, N, K, CUDA_R_32F, ws_size);
      check_gemm.run(lt, A, B, ref, ws, ws_size, stream);
      CheckResult zero{0, 0, ~0ull}, res;
      CUDA_CHECK(cudaMemcpyAsync(d_check, &zero, sizeof zero, cudaMemcpyHostToDevice, stream));
      compare<<<1024, 256, 0, stream>>>(C, ref, nc, 1e-2f, 1e-2f, d_check);
      CUDA_CHECK(cudaMemcpyAsync(&res, d_check, sizeof res, cudaMemcpyDeviceToHost, stream));
      CUDA_CHECK(cudaStreamSynchronize(stream));
      float max_err;
      std::memcpy(&max_err, &res.max_err_bits, 4);
      const bool ok = rc == 0 && res.bad == 0;
      all_correct = all_correct && ok;
      char shape[32];
      std::snprintf(shape, sizeof shape, "%dx%dx%d", M, N, K);
      if (!ok)
        std::printf("%-22s FAIL     rc=%d, %llu bad elements, first at row %llu col %llu, max err %g\n", shape, rc,
                    res.bad, res.first_bad / N, res.first_bad % N, max_err);

      if (ok && M == 8192) {
        LtGemm time_gemm(lt, M, N, K, CUDA_R_16BF, ws_size);
        for (int i = 0; i < warmups; ++i) {
          gemm(A, B, C, M, N, K, stream);
          time_gemm.run(lt, A, B, Cb, ws, ws_size, stream);
        }
        std::vector<float> t_ours, t_lt;
        for (int i = 0; i < reps; ++i) {
          CUDA_CHECK(cudaMemsetAsync(flush, i & 0xFF, flush_size, stream));
          CUDA_CHECK(cudaEventRecord(ev[0], stream));
          gemm(A, B, C, M, N, K, stream);
          CUDA_CHECK(cudaEventRecord(ev[1], stream));
          CUDA_CHECK(cudaMemsetAsync(flush, (i + 1) & 0xFF, flush_size, stream));
          CUDA_CHECK(cudaEventRecord(ev[2], stream));
          time_gemm.run(lt, A, B, Cb, ws, ws_size, stream);
          CUDA_CHECK(cudaEventRecord(ev[3], stream));
          CUDA_CHECK(cudaEventSynchronize(ev[3]));
          float a, b;
          CUDA_CHECK(cudaEventElapsedTime(&a, ev[0], ev[1]));
          CUDA_CHECK(cudaEventElapsedTime(&b, ev[2], ev[3]));
          t_ours.push_back(a);
          t_lt.push_back(b);
        }
        CUDA_CHECK(cudaGetLastError());
        const double flops = 2.0 * M * N * K;
        const double ms_ours = median(t_ours), ms_lt = median(t_lt);
        const double tf_ours = flops / ms_ours * 1e-9, tf_lt = flops / ms_lt * 1e-9;
        const double ratio = ms_lt / ms_ours;
        log_ratio_sum += std::log(ratio);
        ++timed;
        std::printf("%-22s %-8s %-10.3g %-9.3f %-10.1f %-11.1f %-8.3f %-7.1f\n", shape, "ok", max_err, ms_ours,
                    tf_ours, tf_lt, ratio, 100.0 * tf_ours / kPeakTflops);
      } else if (ok) {
        std::printf("%-22s %-8s %-10.3g\n", shape, "ok", max_err);
      }
      CUDA_CHECK(cudaFree(A));
      CUDA_CHECK(cudaFree(B));
      CUDA_CHECK(cudaFree(C));
      CUDA_CHECK(cudaFree(Cb));
      CUDA_CHECK(cudaFree(ref));
    }
  if (timed) std::printf("\ngeometric mean ratio vs cuBLASLt (main shapes): %.3f\n", std::exp(log_ratio_sum / timed));
  std::printf("correctness: %s\n", all_correct ? "all shapes pass" : "FAILURES");
  return all_correct ? 0 : 1;
}
