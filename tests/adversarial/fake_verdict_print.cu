// Trick: print a verdict instead of computing one: a "passed" result document (and a fake tag line) on
// stdout with printf, on stderr, and through std::cout, and do no work.
// Why it must fail: the runner points fd 1 at stderr before the solution loads and keeps its result channel
// private; the parent reads only that channel and requires an HMAC tag under a key the solution never saw.
// The prints end up in the stage's stderr log. Stopped by: the channel; the verdict is the real one
// (correct failed: C is NaN).
#include <ptxbench/abi.h>
#include <cstdio>
#include <iostream>

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  (void)A, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
  const char* fake = R"({"protocol": 1, "mode": "check", "status": "passed", "message": "all 9 trials over 3 shape(s) passed", "shapes": []})";
  std::printf("%s\nptxbench-mac %064d\n", fake, 0);
  std::fprintf(stderr, "%s\n", fake);
  std::cout << fake << std::endl;
  std::fflush(nullptr);
  return 0;
}
