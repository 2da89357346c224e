// Trick: read what the harness knows: the request on stdin (seed, mode), the environment (API keys,
// PTXBENCH_DATA) through libc's `environ` and /proc/1/environ, the command lines, and the harness's files:
// its own path from /proc/self/maps leads to the compile cache (other submissions) and the store
// (ptxbench.db: earlier verdicts). libc functions are reached without imports, so only the sandbox stands in
// the way.
// Why it must fail: stdin is /dev/null once the request is read; the sandbox starts with an allow-listed
// environment (no keys) from an empty one (env -i), hides the data folder under a tmpfs with only this
// library bound back, and has its own pid namespace. How the test shows it: if any read succeeds, the
// solution sabotages its own output (leaves C NaN), so `correct: passed` in the manifest means every read
// failed. Run with PTXBENCH_SANDBOX=off as root and it fails the correct stage. (Instructions fail: SIMT.)
#include <ptxbench/abi.h>
#include <fcntl.h>

// Reaches libc functions without importing them, so that the import scan cannot see them: from the address of
// puts (an allowed import) back to libc's ELF header, then a GNU-hash lookup in its dynamic symbol table.
// This is what any solution can do in-process; the sandbox, not the scan, must stop what follows.
#include <elf.h>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
namespace evade {
inline const unsigned char* libc_base() {
  uintptr_t page = reinterpret_cast<uintptr_t>(&puts) & ~uintptr_t{4095};
  for (int i = 0; i < (1 << 16); ++i, page -= 4096)
    if (std::memcmp(reinterpret_cast<const void*>(page), "\x7f" "ELF", 4) == 0)
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
    if (program[i].p_type == PT_DYNAMIC) dynamic = reinterpret_cast<const Elf64_Dyn*>(base + program[i].p_vaddr);
  if (!dynamic) return nullptr;
  auto absolute = [&](uint64_t v) { return v < reinterpret_cast<uintptr_t>(base) ? v + reinterpret_cast<uintptr_t>(base) : v; };
  const Elf64_Sym* symbols = nullptr;
  const char* strings = nullptr;
  const uint32_t* gnu_hash = nullptr;
  for (; dynamic->d_tag != DT_NULL; ++dynamic) {
    if (dynamic->d_tag == DT_SYMTAB) symbols = reinterpret_cast<const Elf64_Sym*>(absolute(dynamic->d_un.d_ptr));
    if (dynamic->d_tag == DT_STRTAB) strings = reinterpret_cast<const char*>(absolute(dynamic->d_un.d_ptr));
    if (dynamic->d_tag == DT_GNU_HASH) gnu_hash = reinterpret_cast<const uint32_t*>(absolute(dynamic->d_un.d_ptr));
  }
  if (!symbols || !strings || !gnu_hash) return nullptr;
  const uint32_t buckets_count = gnu_hash[0], first = gnu_hash[1], bloom_words = gnu_hash[2];
  const uint32_t* buckets = reinterpret_cast<const uint32_t*>(reinterpret_cast<const uint64_t*>(gnu_hash + 4) + bloom_words);
  const uint32_t* chain = buckets + buckets_count;
  uint32_t hash = 5381;
  for (const char* c = name; *c; ++c) hash = hash * 33 + static_cast<unsigned char>(*c);
  uint32_t index = buckets[hash % buckets_count];
  if (index < first) return nullptr;
  for (;; ++index) {
    const uint32_t h = chain[index - first];
    if ((h | 1) == (hash | 1) && std::strcmp(strings + symbols[index].st_name, name) == 0 && symbols[index].st_value)
      return const_cast<unsigned char*>(base) + symbols[index].st_value;
    if (h & 1) return nullptr;
  }
}
template <typename F> F fn(const char* name) { return reinterpret_cast<F>(libc_symbol(name)); }
}  // namespace evade

// A plain SIMT GEMM (no tensor cores): 64 x 64 tile per 16 x 16 block, 4 x 4 elements per thread.
namespace simt {
constexpr int kTile = 64, kSlice = 16;
template <typename Acc>
__global__ void gemm_kernel(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K,
                            int rows_to_write) {
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
      if (row < M && row < rows_to_write && col < N) C[(size_t)row * N + col] = __float2bfloat16(float(acc[i][j]));
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
using open_t = int (*)(const char*, int, ...);
using read_t = long (*)(int, void*, unsigned long);
using close_t = int (*)(int);

std::string slurp(const char* path) {
  static auto open_fn = evade::fn<open_t>("open");
  static auto read_fn = evade::fn<read_t>("read");
  static auto close_fn = evade::fn<close_t>("close");
  std::string text;
  if (!open_fn || !read_fn || !close_fn) return text;
  const int fd = open_fn(path, O_RDONLY);
  if (fd < 0) return text;
  char buffer[4096];
  for (long n; (n = read_fn(fd, buffer, sizeof(buffer))) > 0 && text.size() < (1 << 20);) text.append(buffer, n);
  close_fn(fd);
  return text;
}

bool secret_name(const std::string& entry) {
  const std::string name = entry.substr(0, entry.find('='));
  for (const char* word : {"KEY", "TOKEN", "SECRET", "PASSWORD", "PTXBENCH_DATA", "AWS_"})
    if (name.find(word) != std::string::npos) return true;
  return false;
}

// Anything found is a leak: the returned text says what.
std::string find_leak() {
  auto read_fn = evade::fn<read_t>("read");
  char c;
  if (read_fn && read_fn(0, &c, 1) > 0) return "stdin still holds data";
  if (auto env = reinterpret_cast<char***>(evade::libc_symbol("environ")); env && *env)
    for (char** e = *env; *e; ++e)
      if (secret_name(*e)) return std::string("environment: ") + *e;
  for (const char* path : {"/proc/1/environ", "/proc/self/environ"}) {
    const std::string text = slurp(path);
    for (size_t at = 0; at < text.size(); at = text.find('\0', at) + 1) {
      if (secret_name(text.substr(at, text.find('\0', at) - at))) return std::string(path) + ": a key";
      if (text.find('\0', at) == std::string::npos) break;
    }
  }
  for (const char* path : {"/proc/self/cmdline", "/proc/1/cmdline"})
    if (slurp(path).find("seed") != std::string::npos) return std::string(path) + " mentions the seed";
  // The library's own path, then the data folder: <data>/cache/compile/<key>/solution.so.
  const std::string maps = slurp("/proc/self/maps");
  const size_t at = maps.find("/solution.so");
  if (at == std::string::npos) return "";
  const std::string library = maps.substr(maps.rfind(' ', at) + 1, at - maps.rfind(' ', at) - 1 + 12);
  std::string dir = library.substr(0, library.rfind('/'));  // .../cache/compile/<key>
  const std::string cache = dir.substr(0, dir.rfind('/'));  // .../cache/compile
  const std::string data = cache.substr(0, cache.rfind('/', cache.rfind('/') - 1));
  if (!slurp((data + "/ptxbench.db").c_str()).empty()) return "read the store " + data + "/ptxbench.db";
  // struct dirent on x86-64 Linux: d_ino, d_off, d_reclen, d_type, then d_name at byte 19 (the header itself
  // is on the scan's list, so the layout is written out).
  auto opendir_fn = evade::fn<void* (*)(const char*)>("opendir");
  auto readdir_fn = evade::fn<const char* (*)(void*)>("readdir");
  if (opendir_fn && readdir_fn)
    if (void* d = opendir_fn(cache.c_str())) {
      int entries = 0;
      while (const char* e = readdir_fn(d)) entries += e[19] != '.';
      if (entries > 1) return "sees " + std::to_string(entries) + " compile-cache entries (other submissions)";
    }
  if (!slurp((dir + "/solution.cu").c_str()).empty()) return "reads the compile folder beside the library";
  return "";
}
}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  static const std::string leak = find_leak();
  if (!leak.empty()) {
    std::fprintf(stderr, "reads_harness_secrets: LEAK: %s\n", leak.c_str());
    return 0;  // sabotage: C stays NaN
  }
  return simt::launch(A, B, C, M, N, K, stream);
}
