// Defect: remembers its arguments. On the first call of each value of M it stores A, B and C in a small
// static table, and every later call of that M launches the kernel with the remembered pointers instead of
// the ones it was given (as host code that builds its launch arguments, or a graph, once per shape would).
// The kernel itself is the plain, correct SIMT GEMM of the prelude (simt/gemm.cuh).
// Why it must fail: the ABI allows no state between calls, and the harness moves every buffer between calls
// of a shape (two disjoint places per buffer, alternating, at random 256-byte offsets; everything around the
// current place is a guard pattern). The first call of a process passes: the sanitize stage's single call
// on the smallest shape is clean. From the correct stage's second trial on, the kernel reads the guard
// pattern where A and B used to be and writes where C used to be, so the current C stays NaN and the guards
// change. Stopped by: correct (moved buffers); time is skipped.
// The kernel and its launch: simt/gemm.cuh, the manifest's prelude.

namespace {

// The planted defect: launch arguments kept per value of M.
struct Remembered {
  int M = 0;
  const __nv_bfloat16* A = nullptr;
  const __nv_bfloat16* B = nullptr;
  __nv_bfloat16* C = nullptr;
};
Remembered table[8];
int remembered = 0;

const Remembered& arguments_for(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M) {
  for (int i = 0; i < remembered; ++i)
    if (table[i].M == M) return table[i];
  Remembered& slot = table[remembered < 8 ? remembered++ : 7];
  slot = {M, A, B, C};
  return slot;
}

}  // namespace

extern "C" int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N,
                                  int K, cudaStream_t stream) {
  const Remembered& args = arguments_for(A, B, C, M);
  return simt::launch(args.A, args.B, args.C, M, N, K, stream) ? 0 : 1;
}
