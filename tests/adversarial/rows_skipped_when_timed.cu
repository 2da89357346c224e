// Trick: count calls, and once the correct stage's trials are over (3 shapes x 3 trials), skip one block of
// 64 query rows in 16 (their O and LSE left as they were): 6% less work on every timed call. A check of each
// timed call against the whole reference catches it at once; so must the sample of rows the time stage
// checks for the dense attention families (one block of 64 query rows in 16 of each batch and head
// position, drawn after the call: 16 blocks at the main shape, all 16 missing the skipped ones with a
// probability of (15/16)^16 = 0.36 a call, and in all of the 20 to 50 timed calls with 1e-9 or less). An
// honest SIMT forward otherwise (simt/attention_forward.cuh, the manifest's prelude).
// Why it must fail: the skipped rows stay as the judge poisoned them (NaN), and the ABI asks for every row.
// Stopped by: time (each checked call: the poison left outside the sample is counted too; the sample alone
// would catch it as above; also instructions, as any SIMT kernel).

extern "C" int ptxbench_attention_forward_bf16(const __nv_bfloat16* Q, const __nv_bfloat16* K,
                                               const __nv_bfloat16* V, __nv_bfloat16* O, float* LSE, int B,
                                               int Hq, int Hkv, int Sq, int Sk, int D, float scale,
                                               int causal, cudaStream_t stream) {
  static int calls = 0;
  const bool skip = ++calls > 16;  // the correct stage's 9 trials and the first warm-up calls are honest
  return simt::launch_forward(Q, K, V, O, LSE, B, Hq, Hkv, Sq, Sk, D, scale, causal, skip ? 16 : 0, stream);
}
