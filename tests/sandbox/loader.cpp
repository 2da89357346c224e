// A stand-in for ptxbench-runner in the CPU sandbox tests: loads the library named by argv[1] with dlopen (as
// the runner loads a solution), so that the library's load-time code runs inside the sandbox; then prints
// what that code reported. Plain C++: no CUDA needed.
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s library.so [arguments for the library]\n", argv[0]);
    return 2;
  }
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 3;
  }
  using Report = const char* (*)();
  auto report = reinterpret_cast<Report>(dlsym(library, "probe_report"));
  if (!report) return 4;
  std::fputs(report(), stdout);
  return 0;
}
