// Trick: at load time (a static constructor) and in the first call, reach out: TCP connections to local
// services (127.0.0.1: ssh, http, databases, a local model server) and to a public DNS server, a name
// lookup, and files planted on the real file system (/var/tmp, /etc, /usr, /opt) for a later evaluation or
// to leak data. libc functions are reached without imports, so only the sandbox stands in the way.
// Why it must fail: the sandbox has its own network namespace (no interface but a down loopback), a
// read-only view of the file system, and a private /tmp. How the test shows it: if any attempt succeeds,
// the solution sabotages its own output (C stays NaN), so `correct: passed` means every attempt failed.
// (Instructions fail: SIMT.)
#include <ptxbench/abi.h>
#include <cerrno>
#include <fcntl.h>
#include <poll.h>

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
// The socket headers are on the scan's list, so what is needed from them is written out (x86-64 Linux).
constexpr int kInet = 2, kStream = 1, kNonBlock = 04000, kSolSocket = 1, kSoError = 4;
struct Ipv4Address {
  uint16_t family;
  uint16_t port;  // network byte order
  uint32_t ip;    // network byte order
  unsigned char zero[8];
};
uint16_t big16(uint16_t v) { return static_cast<uint16_t>((v << 8) | (v >> 8)); }
uint32_t big32(uint32_t v) { return __builtin_bswap32(v); }

std::string escape() {
  auto socket_fn = evade::fn<int (*)(int, int, int)>("socket");
  auto connect_fn = evade::fn<int (*)(int, const void*, unsigned)>("connect");
  auto poll_fn = evade::fn<int (*)(pollfd*, unsigned long, int)>("poll");
  auto close_fn = evade::fn<int (*)(int)>("close");
  auto lookup = evade::fn<int (*)(const char*, const char*, const void*, void**)>("getaddrinfo");
  auto open_fn = evade::fn<int (*)(const char*, int, ...)>("open");
  auto unlink_fn = evade::fn<int (*)(const char*)>("unlink");
  if (!socket_fn || !connect_fn || !poll_fn || !close_fn || !open_fn || !unlink_fn) return "";
  struct Target { uint32_t ip; uint16_t port; };
  for (const Target t : {Target{0x7f000001, 22}, {0x7f000001, 80}, {0x7f000001, 443}, {0x7f000001, 5432},
                         {0x7f000001, 6379}, {0x7f000001, 8000}, {0x7f000001, 8080}, {0x7f000001, 11434},
                         {0x01010101, 53}, {0x08080808, 53}}) {
    const int fd = socket_fn(kInet, kStream | kNonBlock, 0);
    if (fd < 0) continue;
    Ipv4Address address{kInet, big16(t.port), big32(t.ip), {}};
    int connected = connect_fn(fd, &address, sizeof(address));
    if (connected != 0 && errno == EINPROGRESS) {  // not refused at once: wait for the handshake
      pollfd p{fd, POLLOUT, 0};
      int error = 0;
      unsigned length = sizeof(error);
      auto getsockopt_fn = evade::fn<int (*)(int, int, int, void*, unsigned*)>("getsockopt");
      if (poll_fn(&p, 1, 300) == 1 && getsockopt_fn && getsockopt_fn(fd, kSolSocket, kSoError, &error, &length) == 0 &&
          error == 0)
        connected = 0;
    }
    close_fn(fd);
    if (connected == 0) return "connected to port " + std::to_string(t.port);
  }
  void* found = nullptr;
  if (lookup && lookup("example.com", "80", nullptr, &found) == 0) return "resolved example.com";
  for (const char* path : {"/var/tmp/ptxbench-planted", "/etc/ptxbench-planted", "/usr/ptxbench-planted",
                           "/opt/ptxbench-planted"}) {
    const int fd = open_fn(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      close_fn(fd);
      unlink_fn(path);
      return std::string("created ") + path;
    }
  }
  return "";
}
const std::string at_load = escape();
}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  static const std::string in_call = escape();
  if (!at_load.empty() || !in_call.empty()) {
    std::fprintf(stderr, "sandbox_escape_at_load: ESCAPED: %s%s\n", at_load.c_str(), in_call.c_str());
    return 0;  // sabotage: C stays NaN
  }
  return simt::launch(A, B, C, M, N, K, stream);
}
