// The attention families' trusted reference (include/ptxbench/abi.h defines what it computes) in fp32
// throughout, written for clarity and checked against a float64 CPU implementation by tests/gpu/attention/.
// The matrix products are cuBLAS SGEMMs (fp32 operands, fp32 accumulation, the default math mode, which never
// rounds to TF32), over blocks of heads and query rows with the whole score block in memory; the mask, the
// softmax, LSE, Delta and dS are plain elementwise and row kernels with accurate expf/logf. Host-callable
// launchers, asynchronous on `stream`; every launch and library call is checked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "runner/layouts.h"

namespace ptxbench::runner {

struct AttentionDims {
  int b = 0, hq = 0, hkv = 0, sq = 0, sk = 0, d = 0;
  bool causal = false;
  float scale = 0;

  int64_t q_elements() const { return int64_t{b} * sq * hq * d; }    // Q, O, dO, dQ
  int64_t kv_elements() const { return int64_t{b} * sk * hkv * d; }  // K, V, dK, dV
  int64_t lse_elements() const { return int64_t{b} * hq * sq; }      // LSE, Delta
};

// The most bytes one block of fp32 scores (S, or dP beside it in the backward) takes: the launchers take as
// many heads and query rows at once as fit, at least one row of one head.
inline constexpr size_t kAttentionScoreBlockBytes = size_t{1} << 30;

// O [B,Sq,Hq,D] and LSE [B,Hq,Sq], fp32, from bf16 Q, K, V. A row with no visible key gets O = 0, LSE = -inf.
// With `p_in_bf16`, P is rounded to bf16 once before P V, as a FlashAttention kernel rounds its P (there
// before the row's normalisation; one product where the exact P takes three): the backward's O input, which
// is rounded to bf16 after anyway.
void attention_forward_reference(const AttentionDims& dims, const __nv_bfloat16* q, const __nv_bfloat16* k,
                                 const __nv_bfloat16* v, float* o, float* lse, cudaStream_t stream,
                                 size_t score_block_bytes = kAttentionScoreBlockBytes,
                                 bool p_in_bf16 = false);

// dQ [B,Sq,Hq,D], dK and dV [B,Sk,Hkv,D], fp32, from bf16 Q, K, V, O, dO and fp32 LSE, as the ABI defines
// them (P from the given LSE, Delta from the given O). `delta` is scratch of dims.lse_elements() floats.
void attention_backward_reference(const AttentionDims& dims, const __nv_bfloat16* q, const __nv_bfloat16* k,
                                  const __nv_bfloat16* v, const __nv_bfloat16* o, const float* lse,
                                  const __nv_bfloat16* d_o, float* dq, float* dk, float* dv, float* delta,
                                  cudaStream_t stream, size_t score_block_bytes = kAttentionScoreBlockBytes);

// The forward on a sample: O and LSE of the sample's query rows (as attention_forward_reference computes
// them), and 1 in `o_checked` and `lse_checked` (one byte per element of O and LSE, zeroed first) at the
// elements written.
void attention_forward_sample(const AttentionDims& dims, const __nv_bfloat16* q, const __nv_bfloat16* k,
                              const __nv_bfloat16* v, float* o, float* lse, const AttentionSample& sample,
                              uint8_t* o_checked, uint8_t* lse_checked, cudaStream_t stream,
                              size_t score_block_bytes = kAttentionScoreBlockBytes);

// The backward on a sample: dQ of its query rows and dK, dV of its key rows, with their element masks.
void attention_backward_sample(const AttentionDims& dims, const __nv_bfloat16* q, const __nv_bfloat16* k,
                               const __nv_bfloat16* v, const __nv_bfloat16* o, const float* lse,
                               const __nv_bfloat16* d_o, float* dq, float* dk, float* dv, float* delta,
                               const AttentionSample& sample, uint8_t* dq_checked, uint8_t* dk_checked,
                               uint8_t* dv_checked, cudaStream_t stream,
                               size_t score_block_bytes = kAttentionScoreBlockBytes);

// The paged decode (one query token per sequence over a paged KV cache) at these dimensions.
struct PagedDecodeDims {
  int b = 0, hq = 0, hkv = 0, d = 0, page_size = 0, max_pages = 0;
  float scale = 0;
};

// O [B,Hq,D] and LSE [B,Hq], fp32, from bf16 Q [B,Hq,D] and the caches [pages,page_size,Hkv,D], through the
// device page table [B,max_pages] and lengths [B] (each in 1..max_pages*page_size, as the runner draws them).
// One block per (b, h): the scores of the row in global scratch, their softmax, then P V.
void paged_decode_reference(const PagedDecodeDims& dims, const __nv_bfloat16* q, const __nv_bfloat16* k_cache,
                            const __nv_bfloat16* v_cache, const int* page_table, const int* seq_lens,
                            float* o, float* lse, cudaStream_t stream);

// The ragged causal prefill: O [T,Hq,D] and LSE [T,Hq], fp32, from bf16 Q [T,Hq,D], K and V [T,Hkv,D] packed
// by the B + 1 offsets `indptr` (host memory), one dense causal forward (above) per sequence.
void ragged_prefill_reference(int hq, int hkv, int d, float scale, const std::vector<int32_t>& indptr,
                              const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                              float* o, float* lse, cudaStream_t stream);

// The paged causal prefill: O [T,Hq,D] and LSE [T,Hq], fp32, from bf16 Q [T,Hq,D] packed by the B + 1 offsets
// `qo_indptr` and the caches [pages,page_size,Hkv,D] through the device page table [B,max_pages], sequence b
// holding kv_lens[b] tokens (both host vectors): each sequence's tokens gathered from its pages, then one
// dense causal forward (above, bottom-right aligned) per sequence.
struct PagedPrefillDims {
  int hq = 0, hkv = 0, d = 0, page_size = 0, max_pages = 0;
  float scale = 0;
};
void paged_prefill_reference(const PagedPrefillDims& dims, const std::vector<int32_t>& qo_indptr,
                             const std::vector<int32_t>& kv_lens, const __nv_bfloat16* q,
                             const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
                             const int* page_table, float* o, float* lse, cudaStream_t stream);

// Rounds n fp32 values to bf16 into `out` and `copy` (the backward's O input and its pristine copy).
void round_to_bf16(const float* in, __nv_bfloat16* out, __nv_bfloat16* copy, int64_t n, cudaStream_t stream);

}  // namespace ptxbench::runner
