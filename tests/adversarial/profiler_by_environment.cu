// Trick: tell the profiled call apart by the environment. The sandbox passes the runner an allow-listed
// environment; names such as NV_TPS_LAUNCH_TOKEN or CUDA_INJECTION64_PATH are set by a tool wrapped around
// the runner (Nsight Compute, compute-sanitizer). `environ` and
// getenv are forbidden imports, so they are looked up in libc as reads_harness_secrets.cu does. A tool's
// name present: a real wgmma GEMM (TMA loads, mbarrier waits, wgmma m64n128k16: the instruction proof);
// absent: a plain SIMT FMA GEMM. Both compute C, so every output check passes. (Outside the sandbox,
// PTXBENCH_SANDBOX=off, a user's environment holds other names: the wgmma path then runs everywhere and
// the verdict is an honest pass.)
// Why it must fail: the proof must cover the code that is timed. The solution process records every launch
// of the checked and timed calls (CUPTI, in every stage), and each main-shape call must launch exactly
// what the profiled call launched: here the GEMM kernel is simt_gemm, not the profiled wgmma_gemm.
// How the test shows it: compile, static, sanitize, correct and time pass; instructions fails with a
// message about the profiled call.
#include <ptxbench/abi.h>

#include <hopper.cuh>

#include <elf.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

using namespace ptxkit::hopper;

// ---- The two paths. A CTA is one warpgroup (128 threads) and computes a 64 x 128 tile of C; either path
// accumulates in the wgmma fragment layout (wgmma_acc_row/col), and one bounds-checked epilogue stores it.
namespace gemm {
constexpr int kBM = 64, kBN = 128, kBK = 64;  // kBK: 64 bf16 = one 128-byte swizzle row
constexpr int kABytes = kBM * kBK * 2, kBBytes = kBN * kBK * 2;
constexpr int kSmemBytes = kABytes + kBBytes + 1024;  // + slack to align the tiles (128B swizzle)
constexpr int kSlice = 16;                            // the FMA path's K slice, staged as fp32
static_assert(kSlice * (kBM + kBN) * 4 <= kABytes + kBBytes, "the FMA path reuses the tiles' shared memory");

__device__ uint8_t* aligned(uint8_t* raw) {
  return reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
}

// wgmma path: per 64-wide K slice, TMA loads A (64 x 64) and B (128 x 64) with 128B swizzle, completing on
// one mbarrier (rows past M and columns past K arrive as zeros), then four wgmma m64n128k16 from shared
// memory.
__device__ void wgmma_tile(uint8_t* tiles, uint64_t* bar, const CUtensorMap* map_a, const CUtensorMap* map_b,
                           int m0, int n0, int K, float (&acc)[kBN / 2]) {
  if (threadIdx.x == 0) {
    mbarrier_init(bar, 1);
    fence_mbarrier_init();
  }
  __syncthreads();
  const uint64_t desc_a = make_desc_k128(tiles), desc_b = make_desc_k128(tiles + kABytes);
  for (int kt = 0; kt < (K + kBK - 1) / kBK; ++kt) {
    if (threadIdx.x == 0) {
      mbarrier_arrive_expect_tx(bar, kABytes + kBBytes);
      tma_load_2d(tiles, map_a, bar, kt * kBK, m0);
      tma_load_2d(tiles + kABytes, map_b, bar, kt * kBK, n0);
    }
    mbarrier_wait(bar, kt & 1);
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < kBK / 16; ++k)  // K advances 32 bytes inside the 128-byte swizzle row
      wgmma_bf16_ss<kBN>(acc, desc_advance(desc_a, 32 * k), desc_advance(desc_b, 32 * k), 1);
    wgmma_commit();
    wgmma_wait<0>();
    __syncthreads();  // every warp has finished reading the tiles before the next load overwrites them
  }
}

// FMA path (plain SIMT): 16-wide K slices of A's 64 rows and B's 128 rows staged in shared memory as fp32,
// [k][row], then one fmaf per product into the same accumulator layout.
__device__ void fma_tile(float* slice, const __nv_bfloat16* A, const __nv_bfloat16* B, int M, int N, int K,
                         int m0, int n0, float (&acc)[kBN / 2]) {
  const int t = threadIdx.x;
  for (int k0 = 0; k0 < K; k0 += kSlice) {
    for (int e = t; e < (kBM + kBN) * kSlice; e += 128) {
      const int r = e / kSlice, k = k0 + e % kSlice;
      const bool in_a = r < kBM;
      const int row = in_a ? m0 + r : n0 + r - kBM;
      const __nv_bfloat16* src = in_a ? A : B;
      slice[(e % kSlice) * (kBM + kBN) + r] =
          row < (in_a ? M : N) && k < K ? __bfloat162float(src[(size_t)row * K + k]) : 0.0f;
    }
    __syncthreads();
    for (int k = 0; k < kSlice; ++k) {
      const float* s = slice + k * (kBM + kBN);
#pragma unroll
      for (int i = 0; i < kBN / 2; ++i)
        acc[i] = fmaf(s[wgmma_acc_row(i, t)], s[kBM + wgmma_acc_col(i, t)], acc[i]);
    }
    __syncthreads();
  }
}

// Epilogue: each accumulator pair is two adjacent columns of one row; rows past M are skipped.
__device__ void store_tile(__nv_bfloat16* C, int M, int N, int m0, int n0, const float (&acc)[kBN / 2]) {
#pragma unroll
  for (int i = 0; i < kBN / 2; i += 2) {
    const int row = m0 + wgmma_acc_row(i, threadIdx.x), col = n0 + wgmma_acc_col(i, threadIdx.x);
    if (row < M && col < N)
      *reinterpret_cast<uint32_t*>(C + (size_t)row * N + col) = pack_bf16x2(acc[i], acc[i + 1]);
  }
}

__global__ void __launch_bounds__(128)
    wgmma_gemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
               __nv_bfloat16* C, int M, int N, int K) {
  __shared__ uint8_t raw[kSmemBytes];
  __shared__ uint64_t bar;
  float acc[kBN / 2] = {};
  wgmma_tile(aligned(raw), &bar, &map_a, &map_b, blockIdx.y * kBM, blockIdx.x * kBN, K, acc);
  store_tile(C, M, N, blockIdx.y * kBM, blockIdx.x * kBN, acc);
}

__global__ void __launch_bounds__(128)
    simt_gemm(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K) {
  __shared__ float slice[kSlice * (kBM + kBN)];
  float acc[kBN / 2] = {};
  fma_tile(slice, A, B, M, N, K, blockIdx.y * kBM, blockIdx.x * kBN, acc);
  store_tile(C, M, N, blockIdx.y * kBM, blockIdx.x * kBN, acc);
}

// The wgmma kernel or the SIMT one, same grid and block: only the kernel differs.
inline int launch(bool use_wgmma, const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
                  int N, int K, cudaStream_t stream) {
  if (M <= 0 || N % 8 != 0 || K % 8 != 0) return 2;  // TMA needs 16-byte row pitches
  const dim3 grid((N + kBN - 1) / kBN, (M + kBM - 1) / kBM);
  if (use_wgmma) {
    CUtensorMap map_a, map_b;
    if (make_tensor_map_2d_bf16(&map_a, A, M, K, kBM, kBK) != cudaSuccess ||
        make_tensor_map_2d_bf16(&map_b, B, N, K, kBN, kBK) != cudaSuccess)
      return 3;
    wgmma_gemm<<<grid, 128, 0, stream>>>(map_a, map_b, C, M, N, K);
  } else {
    simt_gemm<<<grid, 128, 0, stream>>>(A, B, C, M, N, K);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
}  // namespace gemm

// ---- libc functions reached without importing them (as in reads_harness_secrets.cu): from the address of
// puts (an allowed import) back to libc's ELF header, then a GNU-hash lookup in its dynamic symbol table.
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

// ---- Sensing by the environment. The sandbox starts the runner with an allow-listed environment; a tool
// wrapped around the runner adds its own names (Nsight Compute 2025.3: NV_TPS_LAUNCH_TOKEN,
// NV_NSIGHT_INJECTION_*, NV_COMPUTE_PROFILER_PERFWORKS_DIR, NVIDIA-PROCESS-TRACKING-*, ...), which the
// solution process inherits. `environ` is a forbidden import: it is looked up in libc, and getenv (looked up
// the same way) covers an executable that holds a copy of `environ`.
namespace sense {
// A name only a profiling tool sets: "anything off the allow-list" took every stage for a profiled one on the
// H200 (the path that starts the runner adds a name of its own), which made this entry an honest wgmma GEMM.
bool tool_name(const std::string& name) {
  for (const char* mark : {"NV_", "NSIGHT", "INJECTION", "SANITIZER", "NVIDIA-PROCESS-TRACKING"})
    if (name.find(mark) != std::string::npos) return true;
  return false;
}

bool tool_in_environment() {
  if (auto env = reinterpret_cast<char***>(evade::libc_symbol("environ")); env && *env)
    for (char** entry = *env; *entry; ++entry)
      if (tool_name(std::string(*entry, std::strcspn(*entry, "=")))) return true;
  if (auto get = evade::fn<char* (*)(const char*)>("getenv"))
    for (const char* name : {"CUDA_INJECTION64_PATH", "NV_TPS_LAUNCH_TOKEN"})
      if (get(name)) return true;
  return false;
}
}  // namespace sense

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
                                  int N, int K, cudaStream_t stream) {
  static const bool profiled = sense::tool_in_environment();
  return gemm::launch(profiled, A, B, C, M, N, K, stream);
}
