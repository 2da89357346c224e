// Trick: run code at load time, before any call: a static constructor that writes a forged "passed"
// document to every writable pipe among fds 3..64 (the runner's result channel among them) and registers an
// atexit handler that prints another one; the GEMM itself is a correct SIMT kernel.
// Why it must fail: the library loads in the solution process, which holds no descriptor of the runner's
// result channel; the only writable pipes there belong to the CUDA driver, so the forgery garbles the
// driver's own traffic and the solution's first launch fails (runtime_error). Were the channel reachable, it
// would hold more than one authenticated document: tampering. The atexit handler never runs (the process ends
// with _exit). Stopped by: the process split, then the channel.
#include <fcntl.h>
#include <ptxbench/abi.h>
#include <sys/stat.h>
#include <cstdlib>

// Reaches libc functions without importing them, so that the import scan cannot see them: from the address of
// puts (an allowed import) back to libc's ELF header, then a GNU-hash lookup in its dynamic symbol table.
// This is what any solution can do in-process; the sandbox, not the scan, must stop what follows.
#include <elf.h>
#include <cstdint>
#include <cstdio>
#include <cstring>
namespace evade {
inline const unsigned char* libc_base() {
  uintptr_t page = reinterpret_cast<uintptr_t>(&puts) & ~uintptr_t{4095};
  for (int i = 0; i < (1 << 16); ++i, page -= 4096)
    if (std::memcmp(reinterpret_cast<const void*>(page),
                    "\x7f"
                    "ELF",
                    4) == 0)
      return reinterpret_cast<const unsigned char*>(page);
  return nullptr;
}
inline void* libc_symbol(const char* name) {
  const unsigned char* base = libc_base();
  if (!base) return nullptr;
  const auto* header = reinterpret_cast<const Elf64_Ehdr*>(base);
  const auto* program = reinterpret_cast<const Elf64_Phdr*>(base + header->e_phoff);
  const Elf64_Dyn* dynamic = nullptr;
  for (int i = 0; i < header->e_phnum; ++i)
    if (program[i].p_type == PT_DYNAMIC)
      dynamic = reinterpret_cast<const Elf64_Dyn*>(base + program[i].p_vaddr);
  if (!dynamic) return nullptr;
  auto absolute = [&](uint64_t v) {
    return v < reinterpret_cast<uintptr_t>(base) ? v + reinterpret_cast<uintptr_t>(base) : v;
  };
  const Elf64_Sym* symbols = nullptr;
  const char* strings = nullptr;
  const uint32_t* gnu_hash = nullptr;
  for (; dynamic->d_tag != DT_NULL; ++dynamic) {
    if (dynamic->d_tag == DT_SYMTAB)
      symbols = reinterpret_cast<const Elf64_Sym*>(absolute(dynamic->d_un.d_ptr));
    if (dynamic->d_tag == DT_STRTAB) strings = reinterpret_cast<const char*>(absolute(dynamic->d_un.d_ptr));
    if (dynamic->d_tag == DT_GNU_HASH)
      gnu_hash = reinterpret_cast<const uint32_t*>(absolute(dynamic->d_un.d_ptr));
  }
  if (!symbols || !strings || !gnu_hash) return nullptr;
  const uint32_t buckets_count = gnu_hash[0], first = gnu_hash[1], bloom_words = gnu_hash[2];
  const uint32_t* buckets =
      reinterpret_cast<const uint32_t*>(reinterpret_cast<const uint64_t*>(gnu_hash + 4) + bloom_words);
  const uint32_t* chain = buckets + buckets_count;
  uint32_t hash = 5381;
  for (const char* c = name; *c; ++c) hash = hash * 33 + static_cast<unsigned char>(*c);
  uint32_t index = buckets[hash % buckets_count];
  if (index < first) return nullptr;
  for (;; ++index) {
    const uint32_t h = chain[index - first];
    if ((h | 1) == (hash | 1) && std::strcmp(strings + symbols[index].st_name, name) == 0 &&
        symbols[index].st_value)
      return const_cast<unsigned char*>(base) + symbols[index].st_value;
    if (h & 1) return nullptr;
  }
}
template <typename F>
F fn(const char* name) {
  return reinterpret_cast<F>(libc_symbol(name));
}
}  // namespace evade

// A plain SIMT GEMM (no tensor cores): 64 x 64 tile per 16 x 16 block, 4 x 4 elements per thread.
namespace simt {
constexpr int kTile = 64, kSlice = 16;
template <typename Acc>
__global__ void gemm_kernel(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                            int K, int rows_to_write) {
  __shared__ float a_tile[kSlice][kTile + 1];
  __shared__ float b_tile[kSlice][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  Acc acc[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) acc[i][j] = Acc(0.0f);
  for (int k0 = 0; k0 < K; k0 += kSlice) {
    for (int i = tid; i < kTile * kSlice; i += 256) {
      const int r = i / kSlice, kk = i % kSlice, k = k0 + kk;
      a_tile[kk][r] = (row0 + r < M && k < K) ? __bfloat162float(A[(size_t)(row0 + r) * K + k]) : 0.0f;
      b_tile[kk][r] = (col0 + r < N && k < K) ? __bfloat162float(B[(size_t)(col0 + r) * K + k]) : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < kSlice; ++kk)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          acc[i][j] = Acc(float(acc[i][j]) + a_tile[kk][ty + 16 * i] * b_tile[kk][tx + 16 * j]);
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int row = row0 + ty + 16 * i, col = col0 + tx + 16 * j;
      if (row < M && row < rows_to_write && col < N)
        C[(size_t)row * N + col] = __float2bfloat16(float(acc[i][j]));
    }
}
inline int launch(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K,
                  cudaStream_t stream, int rows_to_write = 1 << 30) {
  const dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile), block(16, 16);
  gemm_kernel<float><<<grid, block, 0, stream>>>(A, B, C, M, N, K, rows_to_write);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
}  // namespace simt

namespace {
const char kFake[] =
    R"({"protocol": 1, "mode": "check", "status": "passed", "message": "all 9 trials over 3 shape(s) passed", "shapes": []})"
    "\n";
void print_fake() {
  std::puts(kFake);
}
struct AtLoad {
  AtLoad() {
    std::atexit(print_fake);
    auto fstat_fn = evade::fn<int (*)(int, struct stat*)>("fstat");
    auto fcntl_fn = evade::fn<int (*)(int, int, ...)>("fcntl");
    auto write_fn = evade::fn<long (*)(int, const void*, unsigned long)>("write");
    if (!fstat_fn || !fcntl_fn || !write_fn) return;
    for (int fd = 3; fd <= 64; ++fd) {
      struct stat st;
      if (fstat_fn(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) continue;
      const int flags = fcntl_fn(fd, F_GETFL);
      if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY) continue;
      write_fn(fd, kFake, sizeof(kFake) - 1);
    }
  }
} at_load;
}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
                                  int N, int K, cudaStream_t stream) {
  return simt::launch(A, B, C, M, N, K, stream);
}
