// Trick: make the time stage check as few calls as it can, then skip rows. The correct stage's calls and the
// time stage's share one process: the correct stage's 9 trials (3 shapes x 3), then the time stage's warm-up
// calls 0 and 1. Warm-up call 1 (call 11) is neither timed nor checked, and its length sizes the timed calls:
// it spins 2.5 s on the GPU, so that as many calls fit the solution's budget of 10 s as the fewest the stage
// makes, 5 (and 2 counted). From call 12 on, the forward skips one block of 64 query rows in 32 (their O and
// LSE left as the judge poisoned them): 3% less work. Had each check kept its share of one block in 16 (16
// blocks a call at the main shape, 112 over 7 checked calls), all would miss the skipped ones with a
// probability of (31/32)^112 = 2.8%. The judge draws more blocks a call when it times fewer calls
// (timing_rules.h, time_stage_calls): a quarter of them at 5 calls, 448 over the 7, missed with 7e-7. An
// honest SIMT forward otherwise (simt/attention_forward.cuh, the manifest's prelude).
// Why it must fail: the skipped rows are wrong, and the ABI asks for every row.
// Stopped by: time (each checked call, by the poison left outside the sample, which the check counts; by the
// larger sample alone, as above, were the rows written with something else; also instructions, as any SIMT
// kernel).

namespace {

__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  while (now - start < ns);
}

}  // namespace

extern "C" int ptxbench_attention_forward_bf16(const __nv_bfloat16* Q, const __nv_bfloat16* K,
                                               const __nv_bfloat16* V, __nv_bfloat16* O, float* LSE, int B,
                                               int Hq, int Hkv, int Sq, int Sk, int D, float scale,
                                               int causal, cudaStream_t stream) {
  static int calls = 0;
  ++calls;
  if (calls == 11) spin_kernel<<<1, 1, 0, stream>>>(2500000000ull);
  return simt::launch_forward(Q, K, V, O, LSE, B, Hq, Hkv, Sq, Sk, D, scale, causal, calls > 11 ? 32 : 0,
                              stream);
}
