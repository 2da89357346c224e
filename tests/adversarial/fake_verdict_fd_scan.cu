// Trick: find the runner's private result descriptor (every writable pipe among fds 3..64, found with fstat
// and fcntl reached without imports) and write a forged "passed" document with a made-up tag there, then end
// the process with _exit(0) before the runner can write the real one.
// Why it must fail: the parent accepts only one document followed by an HMAC-SHA256 tag under a one-time key
// that the runner reads after the solution's last call; a forged tag does not verify. Stopped by: the
// channel (every stage that runs: "the verdict channel was tampered with").
#include <ptxbench/abi.h>
#include <fcntl.h>
#include <sys/stat.h>

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

namespace {
void forge() {
  auto fstat_fn = evade::fn<int (*)(int, struct stat*)>("fstat");
  auto fcntl_fn = evade::fn<int (*)(int, int, ...)>("fcntl");
  auto write_fn = evade::fn<long (*)(int, const void*, unsigned long)>("write");
  auto quit = evade::fn<void (*)(int)>("_exit");
  if (!fstat_fn || !fcntl_fn || !write_fn || !quit) return;
  const char fake[] = R"({"protocol": 1, "mode": "check", "status": "passed", "message": "all 9 trials over 3 shape(s) passed", "shapes": []})" "\nptxbench-mac 0000000000000000000000000000000000000000000000000000000000000000\n";
  for (int fd = 3; fd <= 64; ++fd) {
    struct stat st;
    if (fstat_fn(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) continue;
    const int flags = fcntl_fn(fd, F_GETFL);
    if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY) continue;
    write_fn(fd, fake, sizeof(fake) - 1);
  }
  quit(0);
}
}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
  forge();
  return 0;
}
