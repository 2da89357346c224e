/*
 * ptxbench solution ABI.
 *
 * A solution is one .cu file that defines, with C linkage, the entry point of its task's family.
 *
 * Rules that hold for every entry point:
 *   - All pointers are device pointers to contiguous, row-major tensors, each aligned to 256 bytes (and to no
 *     more: do not assume a larger alignment).
 *   - All GPU work is enqueued on `stream`. The call must not synchronise the device or a stream, allocate or
 *     free memory, create streams or events, or keep state between calls: the harness may call it with other
 *     shapes, other buffers or the same buffers again, in any order, and moves every buffer between the calls
 *     it checks and times, so a pointer, descriptor or tensor map made in one call is stale in the next.
 *     Nor may a call leave a change behind it: device limits (persisting L2 size, stack size, malloc heap,
 *     printf FIFO), the cache configuration, or the attributes of `stream` (access policy window, priority,
 *     synchronisation policy) must be as they were before the call.
 *   - Inputs are read-only; only the outputs may be written.
 *   - The return value is 0 on success; any other value is reported as a runtime error.
 *
 * The harness compiles the solution with
 *   nvcc -gencode arch=compute_XXa,code=sm_XXa -std=c++20 -O3 -lineinfo -shared -Xcompiler -fPIC
 *        -cudart shared -lcuda -Xptxas -v -keep -keep-dir keep -o solution.so solution.cu
 * with this folder and the architecture's kit (kits/<arch>/ptx) on the include path. Host code may call the
 * CUDA driver's tensor-map, error, version, attribute, occupancy and launch functions directly
 * (cuTensorMapEncodeTiled, cuLaunchKernelEx, ...); a library that imports any other driver function is refused.
 */
#ifndef PTXBENCH_ABI_H
#define PTXBENCH_ABI_H

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * GEMM, bf16 inputs, fp32 accumulation, bf16 output:  C[M,N] = A[M,K] * B[N,K]^T  (a linear layer, y = x W^T).
 * A is M x K, B is N x K (both K-contiguous), C is M x N (N-contiguous). M, N and K are positive; M may be any
 * value (tasks check odd and small M), N and K are those of the task.
 */
int ptxbench_gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K,
                       cudaStream_t stream);

/*
 * Attention, bf16 tensors, fp32 softmax statistics. Shared by the forward and backward entry points:
 *
 *   Q is [B, Sq, Hq, D], K and V are [B, Sk, Hkv, D], O (and dO, dQ) are [B, Sq, Hq, D], dK and dV are
 *   [B, Sk, Hkv, D]: row-major, D contiguous, bf16. LSE is [B, Hq, Sq], fp32.
 *   D is 64, 96 or 128, and for the forward also 256. Hq is a multiple of Hkv (grouped-query attention, GQA):
 *   query head h uses KV head h / (Hq / Hkv). Hq == Hkv is ordinary multi-head attention. Sq and Sk are any
 *   positive values (tasks check values that are not multiples of 128, and Sq != Sk).
 *
 *   For batch b, query head h, query row i and key row j, with g = h / (Hq / Hkv):
 *     s[i][j]  = scale * sum_d Q[b][i][h][d] * K[b][j][g][d]
 *     visible(i, j) = !causal || j <= i + (Sk - Sq)
 *       Causal masking is aligned to the BOTTOM-RIGHT corner: the last query row sees every key, as when the
 *       queries are the last Sq tokens of a sequence of Sk (prefill with a KV cache). When Sq == Sk this is the
 *       usual j <= i.
 *     LSE[b][h][i] = log(sum over visible j of exp(s[i][j]))          (natural log, not log2; includes scale)
 *     P[i][j]  = exp(s[i][j] - LSE[b][h][i]) for visible j, else 0     (the softmax of row i)
 *     O[b][i][h][d] = sum_j P[i][j] * V[b][j][g][d]
 *   A row with no visible key (only when causal and Sq > Sk, for i < Sq - Sk) has O = 0 and LSE = -infinity.
 *   scale is given by the caller (tasks use 1 / sqrt(D)); causal is 0 or 1.
 *   Accumulate in fp32; the harness compares with an fp32 reference computed from the same bf16 inputs (the
 *   task file gives the tolerance of each output).
 */

/* Forward: writes O and LSE. */
int ptxbench_attention_forward_bf16(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
                                    __nv_bfloat16* O, float* LSE, int B, int Hq, int Hkv, int Sq, int Sk,
                                    int D, float scale, int causal, cudaStream_t stream);

/*
 * Backward: the bytes of device workspace ptxbench_attention_backward_bf16 needs for these arguments (0 for
 * none). Called on the host before each backward call, with no GPU work allowed; must depend only on its
 * arguments. The harness refuses sizes above 4 GiB.
 */
size_t ptxbench_attention_backward_workspace_bytes(int B, int Hq, int Hkv, int Sq, int Sk, int D, int causal);

/*
 * Backward: given Q, K, V, the forward's O and LSE (as defined above, computed by the harness: O rounded to
 * bf16, LSE in fp32) and dO = dLoss/dO, writes
 *   dP[i][j] = sum_d dO[b][i][h][d] * V[b][j][g][d]
 *   Delta[i] = sum_d dO[b][i][h][d] * O[b][i][h][d]          (use the given O, as FlashAttention does)
 *   dS[i][j] = P[i][j] * (dP[i][j] - Delta[i])              (P from the given LSE; 0 where not visible)
 *   dQ[b][i][h][d] = scale * sum_j dS[i][j] * K[b][j][g][d]
 *   dK[b][j][g][d] = scale * sum over the query heads h of group g, and i, of dS[i][j] * Q[b][i][h][d]
 *   dV[b][j][g][d] = sum over the query heads h of group g, and i, of P[i][j] * dO[b][i][h][d]
 * dK and dV sum over all Hq / Hkv query heads that share KV head g. `workspace` points to
 * ptxbench_attention_backward_workspace_bytes(...) bytes of device memory, 256-byte aligned, whose contents are
 * undefined on entry (not zeroed): initialise what you use, on `stream`. It is nullptr when the size is 0.
 */
int ptxbench_attention_backward_bf16(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
                                     const __nv_bfloat16* O, const float* LSE, const __nv_bfloat16* dO,
                                     __nv_bfloat16* dQ, __nv_bfloat16* dK, __nv_bfloat16* dV, void* workspace,
                                     int B, int Hq, int Hkv, int Sq, int Sk, int D, float scale, int causal,
                                     cudaStream_t stream);

/*
 * Decode attention over a paged KV cache, bf16 tensors, fp32 softmax statistics: one query token per sequence
 * (the next token of each sequence in a batch being served), attending to every token of its sequence.
 *
 *   Q and O are [B, Hq, D], bf16; LSE is [B, Hq], fp32. K_cache and V_cache are [num_pages, page_size, Hkv, D],
 *   bf16, D contiguous: one pool of pages that the batch's sequences share. Sequence b has seq_lens[b] tokens
 *   (1 <= seq_lens[b] <= max_pages * page_size); its token t is row t % page_size of page
 *   page_table[b][t / page_size]. page_table is [B, max_pages] int32; its entries past a sequence's last page
 *   are -1. page_table and seq_lens are device memory, and differ from call to call.
 *   A sequence's pages lie anywhere in the pool, in any order; the rows of its last page past its length, and
 *   the pages no sequence uses, hold other values.
 *   D is 64, 128 or 256; Hq is a multiple of Hkv, and query head h uses KV head g = h / (Hq / Hkv).
 *
 *   For batch b and query head h, over the tokens t < seq_lens[b] (no mask: the query follows them all):
 *     s[t]        = scale * sum_d Q[b][h][d] * K(b, t)[g][d]      (K(b, t): the K_cache row of token t)
 *     LSE[b][h]   = log(sum_t exp(s[t]))                           (natural log; includes scale)
 *     O[b][h][d]  = sum_t exp(s[t] - LSE[b][h]) * V(b, t)[g][d]
 *   scale is given by the caller (tasks use 1 / sqrt(D)). Accumulate in fp32.
 */

/*
 * The bytes of device workspace ptxbench_attention_decode_paged_bf16 needs for these arguments (0 for none):
 * for partial results when a long sequence is split over several CTAs. As the backward's workspace function:
 * called on the host, no GPU work, depends only on its arguments, at most 4 GiB.
 */
size_t ptxbench_attention_decode_paged_workspace_bytes(int B, int Hq, int Hkv, int D, int page_size, int max_pages,
                                                       int num_pages);

/* Writes O and LSE. `workspace` as the backward's: undefined contents, nullptr when its size is 0. */
int ptxbench_attention_decode_paged_bf16(const __nv_bfloat16* Q, const __nv_bfloat16* K_cache,
                                         const __nv_bfloat16* V_cache, const int* page_table, const int* seq_lens,
                                         __nv_bfloat16* O, float* LSE, void* workspace, int B, int Hq, int Hkv,
                                         int D, int page_size, int max_pages, int num_pages, float scale,
                                         cudaStream_t stream);

/*
 * Ragged prefill, causal: the self-attention of each prompt of a batch whose sequences are packed token after
 * token (no padding), bf16 tensors, fp32 softmax statistics.
 *
 *   Q and O are [total, Hq, D], K and V are [total, Hkv, D], bf16, D contiguous; LSE is [total, Hq], fp32.
 *   Sequence b is the tokens indptr[b] .. indptr[b+1] - 1 (indptr is [B + 1] int32 in device memory, indptr[0] =
 *   0, indptr[B] = total); each sequence has 1 .. max_len tokens, and the order and the lengths of the sequences
 *   differ from call to call. D is 64, 96 or 128; Hq is a multiple of Hkv (query head h uses KV head
 *   g = h / (Hq / Hkv)).
 *
 *   For a sequence starting at token o with n tokens, query head h and its rows i, j in 0 .. n - 1 (causal:
 *   row i sees keys 0 .. i of its own sequence, never another sequence's):
 *     s[i][j]     = scale * sum_d Q[o + i][h][d] * K[o + j][g][d]
 *     LSE[o + i][h] = log(sum over j <= i of exp(s[i][j]))            (natural log; includes scale)
 *     O[o + i][h][d] = sum over j <= i of exp(s[i][j] - LSE[o + i][h]) * V[o + j][g][d]
 *   scale is given by the caller (tasks use 1 / sqrt(D)). Accumulate in fp32.
 */
int ptxbench_attention_prefill_ragged_bf16(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
                                           const int* indptr, __nv_bfloat16* O, float* LSE, int B, int Hq, int Hkv,
                                           int D, int max_len, int total, float scale, cudaStream_t stream);

/*
 * Paged prefill, causal: the new tokens of each sequence of a batch (a prompt, or the next chunk of one) attend to
 * the sequence's tokens already in a paged KV cache and to each other; the new tokens' K and V are in the cache
 * too, after the old ones. bf16 tensors, fp32 softmax statistics.
 *
 *   Q and O are [total_q, Hq, D], bf16, the new tokens packed: sequence b's are the rows qo_indptr[b] ..
 *   qo_indptr[b+1] - 1 (qo_indptr is [B + 1] int32, qo_indptr[0] = 0, qo_indptr[B] = total_q), at most max_q_len
 *   of them. LSE is [total_q, Hq], fp32. K_cache and V_cache are [num_pages, page_size, Hkv, D], bf16, as the
 *   paged decode's: sequence b has kv_lens[b] tokens in the cache (kv_lens[b] >= its new tokens, at most
 *   max_pages * page_size), its token t row t % page_size of page page_table[b][t / page_size] (page_table
 *   [B, max_pages] int32, -1 past the last page). qo_indptr, page_table and kv_lens are device memory and differ
 *   from call to call; a sequence's pages lie anywhere in the pool, in any order. D is 64, 96 or 128; Hq is a
 *   multiple of Hkv (query head h uses KV head g = h / (Hq / Hkv)).
 *
 *   For sequence b with n = qo_indptr[b+1] - qo_indptr[b] new tokens and m = kv_lens[b] cached ones, its new
 *   token i (0 .. n - 1, row o + i with o = qo_indptr[b]) is token m - n + i of the sequence and sees the tokens
 *   j <= m - n + i (causal, aligned to the bottom right as the dense forward's):
 *     s[i][j]        = scale * sum_d Q[o + i][h][d] * K(b, j)[g][d]     (K(b, j): the K_cache row of token j)
 *     LSE[o + i][h]  = log(sum over j <= m - n + i of exp(s[i][j]))    (natural log; includes scale)
 *     O[o + i][h][d] = sum over j <= m - n + i of exp(s[i][j] - LSE[o + i][h]) * V(b, j)[g][d]
 *   scale is given by the caller (tasks use 1 / sqrt(D)). Accumulate in fp32.
 */
int ptxbench_attention_prefill_paged_bf16(const __nv_bfloat16* Q, const __nv_bfloat16* K_cache,
                                          const __nv_bfloat16* V_cache, const int* qo_indptr, const int* page_table,
                                          const int* kv_lens, __nv_bfloat16* O, float* LSE, int B, int Hq, int Hkv,
                                          int D, int page_size, int max_pages, int num_pages, int max_q_len,
                                          int total_q, float scale, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* PTXBENCH_ABI_H */
