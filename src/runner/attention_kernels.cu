#include "runner/attention_kernels.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include <cublas_v2.h>

#include "runner/cuda_check.h"

namespace ptxbench::runner {
namespace {

constexpr int kThreads = 128;  // per block of the row kernels
constexpr int64_t kMaxGrid = 8192;

void check_launch(const char* kernel) {
  check_cuda(cudaGetLastError(), kernel, __FILE__, __LINE__);
}

void check_cublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("attention reference: ") + call + ": " +
                             cublasGetStatusString(status));
}
#define PTXBENCH_CUBLAS(call) check_cublas((call), #call)

int narrow(int64_t value, const char* what) {
  if (value > INT_MAX)
    throw std::invalid_argument(std::string("attention reference: ") + what + " too large");
  return static_cast<int>(value);
}

// ---- fp32 matrix products from bf16 operands
// ------------------------------------------------------------------------------

// The process's cuBLAS handle, on `stream`: bf16 operands, fp32 compute on the tensor cores. Every operand is
// bf16 exactly: the inputs as given, and P and dS (fp32) each as the sum of three bf16 parts (split3 below:
// hi + mid + lo carry fp32's 24 bits of significand). The product of two bf16 values is exact in fp32 and the
// sums are fp32, so each result is an fp32 GEMM's up to the order of its additions, at many times the speed of
// one on the CUDA cores; the tolerances (docs/tasks.md) are 10^4 times wider than that difference.
cublasHandle_t cublas_on(cudaStream_t stream) {
  static const cublasHandle_t handle = [] {
    cublasHandle_t created = nullptr;
    PTXBENCH_CUBLAS(cublasCreate(&created));
    return created;
  }();
  PTXBENCH_CUBLAS(cublasSetStream(handle, stream));
  return handle;
}

// One operand of a batch of row-major products: matrices `stride` elements apart, rows `ld` apart.
struct Operand {
  const __nv_bfloat16* data;
  int64_t ld;
  int64_t stride;
  bool transposed = false;
};

// For each of `batch` matrices, C = alpha * op(A) op(B) + beta * C, row-major, C m x n (fp32) with rows `ldc`
// apart. cuBLAS is column-major, and a row-major matrix is the column-major view of its transpose, so the
// library computes C^T = op(B)^T op(A)^T: the same call with the operands swapped.
void gemm(cudaStream_t stream, int64_t m, int64_t n, int64_t k, float alpha, const Operand& a,
          const Operand& b, float beta, float* c, int64_t ldc, int64_t stride_c, int batch) {
  const auto op = [](const Operand& x) { return x.transposed ? CUBLAS_OP_T : CUBLAS_OP_N; };
  PTXBENCH_CUBLAS(cublasGemmStridedBatchedEx(
      cublas_on(stream), op(b), op(a), narrow(n, "n"), narrow(m, "m"), narrow(k, "k"), &alpha, b.data,
      CUDA_R_16BF, narrow(b.ld, "ld"), b.stride, a.data, CUDA_R_16BF, narrow(a.ld, "ld"), a.stride, &beta, c,
      CUDA_R_32F, narrow(ldc, "ld"), stride_c, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// x as hi + mid + lo, each bf16: hi is x rounded, mid the rest rounded, lo what is left. Each difference is
// exact in fp32 and lo holds the last (at most 8) significant bits exactly, so the three sum to x exactly for
// every normal fp32 x above about 2^-102 (below it lo falls under bf16's subnormal step: an error under
// 1e-38).
__device__ void split3(float x, __nv_bfloat16* parts, int64_t part_stride, int64_t at) {
  const __nv_bfloat16 hi = __float2bfloat16(x);
  const float rest = x - __bfloat162float(hi);
  const __nv_bfloat16 mid = __float2bfloat16(rest);
  parts[at] = hi;
  parts[part_stride + at] = mid;
  parts[2 * part_stride + at] = __float2bfloat16(rest - __bfloat162float(mid));
}

// The three parts of a block's P or dS, bf16, `stride` elements apart.
struct Parts {
  __nv_bfloat16* data;
  int64_t stride;
  __nv_bfloat16* part(int p) const { return data + p * stride; }
};

// ---- blocks of scores
// -------------------------------------------------------------------------------------------
// A block is `rows` query rows from i0 of `heads` query heads that share their position in a KV group: heads
// (g0 + y) * group + r for y < heads, of batch b, against `cols` keys from j0 (every key, but for the sampled
// backward's dK and dV). Each of its heads reads its own KV head, so the products are batches over y at fixed
// strides: Q-like rows [B,Sq,Hq,D] G*D elements apart, KV-like rows [B,Sk,Hkv,D] D apart, the block's scores
// (rows x cols each, fp32) rows*cols apart.

struct Block {
  AttentionDims s;
  int b, r, g0, heads, i0, rows, j0, cols;

  __host__ __device__ int group() const { return s.hq / s.hkv; }
  int64_t q_offset() const { return ((int64_t{b} * s.sq + i0) * s.hq + int64_t{g0} * group() + r) * s.d; }
  int64_t kv_offset() const { return ((int64_t{b} * s.sk + j0) * s.hkv + g0) * s.d; }
  Operand q_like(const __nv_bfloat16* base, bool transposed = false) const {
    return {base + q_offset(), int64_t{s.hq} * s.d, int64_t{group()} * s.d, transposed};
  }
  Operand kv_like(const __nv_bfloat16* base, bool transposed = false) const {
    return {base + kv_offset(), int64_t{s.hkv} * s.d, s.d, transposed};
  }
  Operand scores(const __nv_bfloat16* base, bool transposed = false) const {
    return {base, cols, int64_t{rows} * cols, transposed};
  }
  // C = alpha op(A) op(B) + beta C into Q-like (m = rows, n = D, k = cols) or KV-like (m = cols, n = D,
  // k = rows, accumulated) outputs.
  void into_q(cudaStream_t stream, float alpha, const Operand& a, const Operand& b, float beta,
              float* base) const {
    gemm(stream, rows, s.d, cols, alpha, a, b, beta, base + q_offset(), int64_t{s.hq} * s.d,
         int64_t{group()} * s.d, heads);
  }
  void into_kv(cudaStream_t stream, float alpha, const Operand& a, const Operand& b, float* base) const {
    gemm(stream, cols, s.d, rows, alpha, a, b, 1.0f, base + kv_offset(), int64_t{s.hkv} * s.d, s.d, heads);
  }
  // Scores = alpha A B^T (m = rows, n = cols, k = D) from a Q-like and a KV-like operand.
  void into_scores(cudaStream_t stream, float alpha, const Operand& a, const Operand& b, float* out) const {
    gemm(stream, rows, cols, s.d, alpha, a, b, 0.0f, out, cols, int64_t{rows} * cols, heads);
  }
};

// The KV heads a block of `rows` x `cols` scores may batch within `bytes`, at least one.
int heads_within(const AttentionDims& s, int rows, int cols, size_t bytes) {
  const size_t head_bytes = sizeof(float) * static_cast<size_t>(rows) * static_cast<size_t>(cols);
  return static_cast<int>(std::clamp<size_t>(bytes / head_bytes, 1, static_cast<size_t>(s.hkv)));
}

// The heads and query rows of a block whose scores fit `bytes`: all of a group position's heads and rows when
// they fit, fewer heads, or fewer rows of one head.
struct BlockShape {
  int heads = 1;
  int rows = 1;
};
BlockShape block_shape(const AttentionDims& s, size_t bytes) {
  const int heads = heads_within(s, s.sq, s.sk, bytes);
  const int rows = heads > 1 ? s.sq
                             : static_cast<int>(std::clamp<size_t>(bytes / (sizeof(float) * s.sk), 1,
                                                                   static_cast<size_t>(s.sq)));
  return {heads, rows};
}

// Calls fn(block) for blocks of block_shape() that cover every (b, head, query row); the last ones along
// heads and rows may be smaller.
template <typename Fn>
void for_each_block(const AttentionDims& s, size_t bytes, Fn fn) {
  const auto [heads, rows] = block_shape(s, bytes);
  for (int b = 0; b < s.b; ++b)
    for (int r = 0; r < s.hq / s.hkv; ++r)
      for (int g0 = 0; g0 < s.hkv; g0 += heads)
        for (int i0 = 0; i0 < s.sq; i0 += rows)
          fn(Block{s, b, r, g0, std::min(heads, s.hkv - g0), i0, std::min(rows, s.sq - i0), 0, s.sk});
}

// Device memory for one launcher call, ordered on its stream (freed after the work queued before it).
class Scratch {
 public:
  Scratch(size_t floats, cudaStream_t stream) : stream_(stream) {  // none for 0 floats
    if (floats != 0)
      PTXBENCH_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&data_), floats * sizeof(float), stream));
  }
  ~Scratch() {
    if (data_ != nullptr) (void)cudaFreeAsync(data_, stream_);
  }
  Scratch(Scratch&& other) noexcept : data_(std::exchange(other.data_, nullptr)), stream_(other.stream_) {}
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  float* get() const { return data_; }

 private:
  float* data_ = nullptr;
  cudaStream_t stream_;
};

// ---- elementwise and row kernels
// --------------------------------------------------------------------------------

// Keys 0 .. visible_keys - 1 are visible to query row i (causal: j <= i + Sk - Sq, bottom-right aligned).
__device__ int visible_keys(const AttentionDims& s, int i) {
  if (!s.causal) return s.sk;
  return max(0, min(s.sk, i + (s.sk - s.sq) + 1));
}
__device__ int64_t lse_index(const AttentionDims& s, int b, int h, int i) {  // LSE, Delta: [B,Hq,Sq]
  return (int64_t{b} * s.hq + h) * s.sq + i;
}
// The score row of this thread block in a Block's scores (blockIdx.x: row, blockIdx.y: head), with its
// query row and head.
struct ScoreRow {
  int64_t offset;
  int i, h;
};
__device__ ScoreRow score_row(const Block& block) {
  const int row = static_cast<int>(blockIdx.x), y = static_cast<int>(blockIdx.y);
  return {(int64_t{y} * block.rows + row) * block.cols, block.i0 + row,
          (block.g0 + y) * block.group() + block.r};
}

// Block-wide reductions for kThreads threads; every thread gets the result. `scratch` holds 32 floats.
__device__ float block_reduce(float value, float* scratch, bool is_max) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xFFFFFFFFu, value, offset);
    value = is_max ? fmaxf(value, other) : value + other;
  }
  __syncthreads();  // scratch may still be read by a previous reduction
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = value;
  __syncthreads();
  value = scratch[0];
  for (int w = 1; w < kThreads / 32; ++w) value = is_max ? fmaxf(value, scratch[w]) : value + scratch[w];
  return value;
}

// A score row of up to this many bytes is read from memory once, into shared memory, by the softmax.
constexpr size_t kRowCacheBytes = 64 * 1024;
constexpr size_t kUnaskedSharedBytes = 48 * 1024;  // dynamic shared memory a kernel has without asking

// Forward: each score row (scaled S, of a block of every key) becomes P = softmax over its visible keys, 0
// beyond them, in three bf16 parts; LSE of the row. With `cached`, the row's visible keys are read once into
// shared memory (Sk floats of dynamic shared memory), each thread reading back only what it wrote.
__global__ void __launch_bounds__(kThreads) softmax_kernel(Block block, const float* scores, float* lse,
                                                           Parts p, bool cached) {
  extern __shared__ float row_cache[];
  __shared__ float scratch[32];
  const AttentionDims& s = block.s;
  const auto [offset, i, h] = score_row(block);
  const int n = visible_keys(s, i);
  const float* row = scores + offset;
  if (cached) {
    for (int j = threadIdx.x; j < n; j += kThreads) row_cache[j] = row[j];
    row = row_cache;
  }
  float row_max = -INFINITY;
  for (int j = threadIdx.x; j < n; j += kThreads) row_max = fmaxf(row_max, row[j]);
  row_max = block_reduce(row_max, scratch, true);
  float row_sum = 0;
  for (int j = threadIdx.x; j < n; j += kThreads) row_sum += expf(row[j] - row_max);
  row_sum = block_reduce(row_sum, scratch, false);
  for (int j = threadIdx.x; j < s.sk; j += kThreads)
    split3(j < n ? expf(row[j] - row_max) / row_sum : 0.0f, p.data, p.stride, offset + j);
  if (threadIdx.x == 0) lse[lse_index(s, block.b, h, i)] = n > 0 ? row_max + logf(row_sum) : -INFINITY;
}

// Backward: from the scaled S and dP of a row of the block's keys, P = exp(S - LSE) over the visible keys (0
// beyond them) and dS = P (dP - Delta), each in three bf16 parts.
__global__ void __launch_bounds__(kThreads) gradient_kernel(Block block, const float* scores,
                                                            const float* d_scores, const float* lse,
                                                            const float* delta, Parts p_parts, Parts ds_parts) {
  const AttentionDims& s = block.s;
  const auto [offset, i, h] = score_row(block);
  const int n = visible_keys(s, i);
  const float row_lse = lse[lse_index(s, block.b, h, i)], row_delta = delta[lse_index(s, block.b, h, i)];
  for (int j = threadIdx.x; j < block.cols; j += kThreads) {
    const float p = block.j0 + j < n ? expf(scores[offset + j] - row_lse) : 0.0f;
    split3(p, p_parts.data, p_parts.stride, offset + j);
    split3(p * (d_scores[offset + j] - row_delta), ds_parts.data, ds_parts.stride, offset + j);
  }
}

// Delta [B,Hq,Sq] = rowsum(dO * O) over D, one thread per (b, i, h).
__global__ void delta_kernel(AttentionDims s, const __nv_bfloat16* o, const __nv_bfloat16* d_o,
                             float* delta) {
  const int64_t rows = int64_t{s.b} * s.sq * s.hq;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < rows;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float acc = 0;
    for (int d = 0; d < s.d; ++d)
      acc += __bfloat162float(d_o[t * s.d + d]) * __bfloat162float(o[t * s.d + d]);
    const int h = static_cast<int>(t % s.hq), i = static_cast<int>(t / s.hq % s.sq);
    delta[lse_index(s, static_cast<int>(t / s.hq / s.sq), h, i)] = acc;
  }
}

__global__ void round_kernel(const float* in, __nv_bfloat16* out, __nv_bfloat16* copy, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = copy[i] = __float2bfloat16(in[i]);
  }
}

// Paged decode, one block per (h, b): the row's scores into `scores` (max_pages * page_size floats per row),
// their softmax in place, LSE, then O = P V with the threads over D.
__global__ void __launch_bounds__(kThreads)
    paged_decode_kernel(PagedDecodeDims s, const __nv_bfloat16* q, const __nv_bfloat16* k_cache,
                        const __nv_bfloat16* v_cache, const int* page_table, const int* seq_lens, float* o,
                        float* lse, float* scores) {
  __shared__ float scratch[32];
  const int h = static_cast<int>(blockIdx.x), b = static_cast<int>(blockIdx.y), g = h / (s.hq / s.hkv);
  const int64_t row_index = int64_t{b} * s.hq + h;
  const int n = seq_lens[b];
  float* row = scores + row_index * s.max_pages * s.page_size;
  const __nv_bfloat16* q_row = q + row_index * s.d;
  // The cache row of token t for KV head g.
  const auto cache_row = [&](const __nv_bfloat16* cache, int t) {
    const int64_t page = page_table[int64_t{b} * s.max_pages + t / s.page_size];
    return cache + ((page * s.page_size + t % s.page_size) * s.hkv + g) * s.d;
  };
  for (int t = threadIdx.x; t < n; t += kThreads) {
    const __nv_bfloat16* k_row = cache_row(k_cache, t);
    float acc = 0;
    for (int d = 0; d < s.d; ++d) acc += __bfloat162float(q_row[d]) * __bfloat162float(k_row[d]);
    row[t] = s.scale * acc;
  }
  float row_max = -INFINITY;
  for (int t = threadIdx.x; t < n; t += kThreads) row_max = fmaxf(row_max, row[t]);
  row_max = block_reduce(row_max, scratch, true);
  float row_sum = 0;
  for (int t = threadIdx.x; t < n; t += kThreads) row_sum += expf(row[t] - row_max);
  row_sum = block_reduce(row_sum, scratch, false);
  for (int t = threadIdx.x; t < n; t += kThreads) row[t] = expf(row[t] - row_max) / row_sum;
  __syncthreads();
  for (int d = threadIdx.x; d < s.d; d += kThreads) {
    float acc = 0;
    for (int t = 0; t < n; ++t) acc += row[t] * __bfloat162float(cache_row(v_cache, t)[d]);
    o[row_index * s.d + d] = acc;
  }
  if (threadIdx.x == 0) lse[row_index] = row_max + logf(row_sum);
}

// A sequence's LSE, [Hq][n] as the dense forward writes it, into the ragged [T][Hq] at token `first`.
__global__ void ragged_lse_kernel(const float* heads_rows, int hq, int n, int64_t first, float* out) {
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < int64_t{hq} * n;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t h = t / n, i = t % n;
    out[(first + i) * hq + h] = heads_rows[t];
  }
}

// The n tokens of one sequence of a paged cache, [n][Hkv][D] contiguous, from its row of the page table.
__global__ void gather_pages_kernel(const __nv_bfloat16* cache, const int* pages, int page_size, int hkv,
                                    int d, int n, __nv_bfloat16* out) {
  const int64_t row = int64_t{hkv} * d;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n * row;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = i / row;
    const int64_t page = pages[t / page_size];
    out[i] = cache[(page * page_size + t % page_size) * row + i % row];
  }
}

unsigned grid_for(int64_t items) {
  return static_cast<unsigned>(std::clamp<int64_t>((items + 255) / 256, 1, kMaxGrid));
}

// One thread block per score row of `block`.
dim3 row_grid(const Block& block) {
  return {static_cast<unsigned>(block.rows), static_cast<unsigned>(block.heads)};
}

void check_dims(const AttentionDims& s) {
  if (s.b <= 0 || s.hq <= 0 || s.hkv <= 0 || s.sq <= 0 || s.sk <= 0 || s.d <= 0 || s.hq % s.hkv != 0 ||
      s.hkv > 65535) {
    throw std::invalid_argument("attention reference: dimensions out of range");
  }
}

// Floats of one score buffer for the blocks for_each_block makes: the first is the largest.
size_t score_floats(const AttentionDims& s, size_t bytes) {
  const auto [heads, rows] = block_shape(s, bytes);
  return static_cast<size_t>(heads) * static_cast<size_t>(rows) * static_cast<size_t>(s.sk);
}

// Whether the softmax may take kRowCacheBytes of dynamic shared memory: asked once; on an error (cleared, so
// that no later check takes it for its own) the rows are read three times instead.
bool row_cache_allowed() {
  static const bool allowed = [] {
    const bool set = cudaFuncSetAttribute(softmax_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(kRowCacheBytes)) == cudaSuccess;
    if (!set) (void)cudaGetLastError();
    return set;
  }();
  return allowed;
}

// Room for the three bf16 parts of a score buffer of `floats` (two bf16 to a float), and the parts in it:
// each part starts 16 bytes aligned, as cuBLAS's fastest kernels want.
size_t part_stride(size_t floats) {
  return (floats + 7) / 8 * 8;
}
Scratch parts_scratch(size_t floats, cudaStream_t stream) {
  return Scratch(3 * part_stride(floats) / 2, stream);
}
Parts parts_of(const Scratch& scratch, size_t floats) {
  return {reinterpret_cast<__nv_bfloat16*>(scratch.get()), static_cast<int64_t>(part_stride(floats))};
}

// The elements a block's results cover, marked 1 (the sampled checks' masks): per score row (row_grid), the
// row's D values of a Q-like output and its LSE; per key row and head, the row's D values of a KV-like one.
__global__ void mark_query_rows(Block block, uint8_t* q_like, uint8_t* lse) {
  const AttentionDims& s = block.s;
  const auto [offset, i, h] = score_row(block);
  uint8_t* row = q_like + ((int64_t{block.b} * s.sq + i) * s.hq + h) * s.d;
  for (int d = threadIdx.x; d < s.d; d += blockDim.x) row[d] = 1;
  if (lse != nullptr && threadIdx.x == 0) lse[lse_index(s, block.b, h, i)] = 1;
}
__global__ void mark_key_rows(Block block, uint8_t* kv_like) {
  const AttentionDims& s = block.s;
  const int j = block.j0 + static_cast<int>(blockIdx.x), g = block.g0 + static_cast<int>(blockIdx.y);
  uint8_t* row = kv_like + ((int64_t{block.b} * s.sk + j) * s.hkv + g) * s.d;
  for (int d = threadIdx.x; d < s.d; d += blockDim.x) row[d] = 1;
}

// The scratch of the blocks of one launcher call: scores (and dP), and the three bf16 parts of P (and dS).
struct BlockScratch {
  BlockScratch(size_t floats, bool backward, cudaStream_t stream)
      : scores(floats, stream),
        d_scores(backward ? floats : 0, stream),
        p_parts(parts_scratch(floats, stream)),
        ds_parts(parts_scratch(backward ? floats : 0, stream)),
        p(parts_of(p_parts, floats)),
        ds(parts_of(ds_parts, floats)) {}
  Scratch scores, d_scores, p_parts, ds_parts;
  Parts p, ds;
};

// The forward of one block of every key: S, the softmax (P and LSE), O = P V over P's first `parts` bf16
// parts (3: P exactly; 1: P rounded to bf16).
void forward_block(const Block& block, const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                   float* o, float* lse, const BlockScratch& scratch, cudaStream_t stream, int parts = 3) {
  if (block.j0 != 0 || block.cols != block.s.sk) throw std::logic_error("a forward block has every key");
  const size_t row_bytes = sizeof(float) * static_cast<size_t>(block.s.sk);
  const bool cached =
      row_bytes <= kUnaskedSharedBytes || (row_bytes <= kRowCacheBytes && row_cache_allowed());
  block.into_scores(stream, block.s.scale, block.q_like(q), block.kv_like(k, true), scratch.scores.get());
  softmax_kernel<<<row_grid(block), kThreads, cached ? row_bytes : 0, stream>>>(block, scratch.scores.get(),
                                                                                lse, scratch.p, cached);
  check_launch("softmax_kernel");
  for (int part = 0; part < parts; ++part)  // O = P V
    block.into_q(stream, 1.0f, block.scores(scratch.p.part(part)), block.kv_like(v), part == 0 ? 0.0f : 1.0f,
                 o);
}

// The backward of one block, given Delta: S, dP, then P and dS; dQ = scale dS K for the block's query rows
// when `dq` (the block has every key), and dV += P^T dO, dK += scale dS^T Q for its keys when `dk`.
void backward_block(const Block& block, const __nv_bfloat16* q, const __nv_bfloat16* k,
                    const __nv_bfloat16* v, const float* lse, const __nv_bfloat16* d_o, const float* delta,
                    float* dq, float* dk, float* dv, const BlockScratch& scratch, cudaStream_t stream) {
  const float scale = block.s.scale;
  block.into_scores(stream, scale, block.q_like(q), block.kv_like(k, true), scratch.scores.get());
  block.into_scores(stream, 1.0f, block.q_like(d_o), block.kv_like(v, true), scratch.d_scores.get());
  gradient_kernel<<<row_grid(block), kThreads, 0, stream>>>(
      block, scratch.scores.get(), scratch.d_scores.get(), lse, delta, scratch.p, scratch.ds);
  check_launch("gradient_kernel");
  for (int part = 0; part < 3; ++part) {
    if (dk != nullptr) {
      block.into_kv(stream, 1.0f, block.scores(scratch.p.part(part), true), block.q_like(d_o), dv);  // P^T dO
      block.into_kv(stream, scale, block.scores(scratch.ds.part(part), true), block.q_like(q), dk);
    }
    if (dq != nullptr)
      block.into_q(stream, scale, block.scores(scratch.ds.part(part)), block.kv_like(k),
                   part == 0 ? 0.0f : 1.0f, dq);
  }
}

void launch_delta(const AttentionDims& dims, const __nv_bfloat16* o, const __nv_bfloat16* d_o, float* delta,
                  cudaStream_t stream) {
  delta_kernel<<<grid_for(dims.q_elements() / dims.d), 256, 0, stream>>>(dims, o, d_o, delta);
  check_launch("delta_kernel");
}

// Calls fn(block, true) for the blocks of a sample's query rows (every key), and fn(block, false) for those
// of its key rows (every query row that may see them: from the first whose causal window reaches j0, over
// every query head of the group), each over as many KV heads as fit `bytes`.
template <typename Fn>
void for_each_sample_block(const AttentionDims& s, const AttentionSample& sample, size_t bytes, Fn fn) {
  for (const AttentionSample::QueryRows& rows : sample.query) {
    const int n = std::min(kSampleRows, s.sq - rows.i0), heads = heads_within(s, n, s.sk, bytes);
    for (int g0 = 0; g0 < s.hkv; g0 += heads)
      fn(Block{s, rows.b, rows.r, g0, std::min(heads, s.hkv - g0), rows.i0, n, 0, s.sk}, true);
  }
  for (const AttentionSample::KeyRows& keys : sample.keys) {
    const int cols = std::min(kSampleRows, s.sk - keys.j0);
    const int first = s.causal ? std::clamp(keys.j0 - (s.sk - s.sq), 0, s.sq - 1) : 0;
    const int heads = heads_within(s, 1, cols, bytes);
    const int rows = static_cast<int>(
        std::clamp<size_t>(bytes / (sizeof(float) * static_cast<size_t>(heads) * static_cast<size_t>(cols)),
                           1, static_cast<size_t>(s.sq)));
    for (int r = 0; r < s.hq / s.hkv; ++r)
      for (int g0 = 0; g0 < s.hkv; g0 += heads)
        for (int i0 = first; i0 < s.sq; i0 += rows)
          fn(Block{s, keys.b, r, g0, std::min(heads, s.hkv - g0), i0, std::min(rows, s.sq - i0), keys.j0,
                   cols},
             false);
  }
}

size_t sample_floats(const AttentionDims& s, const AttentionSample& sample, size_t bytes) {
  size_t floats = 0;
  for_each_sample_block(s, sample, bytes, [&](const Block& block, bool) {
    floats = std::max(floats, static_cast<size_t>(block.heads) * static_cast<size_t>(block.rows) *
                                  static_cast<size_t>(block.cols));
  });
  return floats;
}

dim3 key_grid(const Block& block) {
  return {static_cast<unsigned>(block.cols), static_cast<unsigned>(block.heads)};
}

}  // namespace

void attention_forward_reference(const AttentionDims& dims, const __nv_bfloat16* q, const __nv_bfloat16* k,
                                 const __nv_bfloat16* v, float* o, float* lse, cudaStream_t stream,
                                 size_t score_block_bytes, bool p_in_bf16) {
  check_dims(dims);
  const BlockScratch scratch(score_floats(dims, score_block_bytes), false, stream);
  for_each_block(dims, score_block_bytes, [&](const Block& block) {
    forward_block(block, q, k, v, o, lse, scratch, stream, p_in_bf16 ? 1 : 3);
  });
}

void attention_backward_reference(const AttentionDims& dims, const __nv_bfloat16* q, const __nv_bfloat16* k,
                                  const __nv_bfloat16* v, const __nv_bfloat16* o, const float* lse,
                                  const __nv_bfloat16* d_o, float* dq, float* dk, float* dv, float* delta,
                                  cudaStream_t stream, size_t score_block_bytes) {
  check_dims(dims);
  launch_delta(dims, o, d_o, delta, stream);
  const BlockScratch scratch(score_floats(dims, score_block_bytes), true, stream);
  // dK and dV sum over the query heads of their group and over the blocks of query rows.
  PTXBENCH_CUDA(cudaMemsetAsync(dk, 0, sizeof(float) * dims.kv_elements(), stream));
  PTXBENCH_CUDA(cudaMemsetAsync(dv, 0, sizeof(float) * dims.kv_elements(), stream));
  for_each_block(dims, score_block_bytes, [&](const Block& block) {
    backward_block(block, q, k, v, lse, d_o, delta, dq, dk, dv, scratch, stream);
  });
}

void attention_forward_sample(const AttentionDims& dims, const __nv_bfloat16* q, const __nv_bfloat16* k,
                              const __nv_bfloat16* v, float* o, float* lse, const AttentionSample& sample,
                              uint8_t* o_checked, uint8_t* lse_checked, cudaStream_t stream,
                              size_t score_block_bytes) {
  check_dims(dims);
  if (!sample.keys.empty())
    throw std::invalid_argument("attention forward sample: the forward has no key rows");
  PTXBENCH_CUDA(cudaMemsetAsync(o_checked, 0, static_cast<size_t>(dims.q_elements()), stream));
  PTXBENCH_CUDA(cudaMemsetAsync(lse_checked, 0, static_cast<size_t>(dims.lse_elements()), stream));
  const BlockScratch scratch(sample_floats(dims, sample, score_block_bytes), false, stream);
  for_each_sample_block(dims, sample, score_block_bytes, [&](const Block& block, bool) {
    forward_block(block, q, k, v, o, lse, scratch, stream);
    mark_query_rows<<<row_grid(block), kThreads, 0, stream>>>(block, o_checked, lse_checked);
    check_launch("mark_query_rows");
  });
}

void attention_backward_sample(const AttentionDims& dims, const __nv_bfloat16* q, const __nv_bfloat16* k,
                               const __nv_bfloat16* v, const __nv_bfloat16* o, const float* lse,
                               const __nv_bfloat16* d_o, float* dq, float* dk, float* dv, float* delta,
                               const AttentionSample& sample, uint8_t* dq_checked, uint8_t* dk_checked,
                               uint8_t* dv_checked, cudaStream_t stream, size_t score_block_bytes) {
  check_dims(dims);
  launch_delta(dims, o, d_o, delta, stream);
  PTXBENCH_CUDA(cudaMemsetAsync(dq_checked, 0, static_cast<size_t>(dims.q_elements()), stream));
  for (uint8_t* checked : {dk_checked, dv_checked})
    PTXBENCH_CUDA(cudaMemsetAsync(checked, 0, static_cast<size_t>(dims.kv_elements()), stream));
  PTXBENCH_CUDA(cudaMemsetAsync(dk, 0, sizeof(float) * dims.kv_elements(), stream));
  PTXBENCH_CUDA(cudaMemsetAsync(dv, 0, sizeof(float) * dims.kv_elements(), stream));
  const BlockScratch scratch(sample_floats(dims, sample, score_block_bytes), true, stream);
  // Query blocks: dQ of their rows. Key blocks: dK and dV of their keys, summed over every query row that
  // sees them and every query head of their group.
  for_each_sample_block(dims, sample, score_block_bytes, [&](const Block& block, bool query_block) {
    backward_block(block, q, k, v, lse, d_o, delta, query_block ? dq : nullptr, query_block ? nullptr : dk,
                   dv, scratch, stream);
    if (query_block) {
      mark_query_rows<<<row_grid(block), kThreads, 0, stream>>>(block, dq_checked, nullptr);
      check_launch("mark_query_rows");
    }
  });
  for (const AttentionSample::KeyRows& keys : sample.keys) {
    const Block every_head{
        dims, keys.b, 0, 0, dims.hkv, 0, 1, keys.j0, std::min(kSampleRows, dims.sk - keys.j0)};
    for (uint8_t* checked : {dk_checked, dv_checked}) {
      mark_key_rows<<<key_grid(every_head), kThreads, 0, stream>>>(every_head, checked);
      check_launch("mark_key_rows");
    }
  }
}

void paged_decode_reference(const PagedDecodeDims& dims, const __nv_bfloat16* q, const __nv_bfloat16* k_cache,
                            const __nv_bfloat16* v_cache, const int* page_table, const int* seq_lens,
                            float* o, float* lse, cudaStream_t stream) {
  if (dims.b <= 0 || dims.b > 65535 || dims.hq <= 0 || dims.hkv <= 0 || dims.hq % dims.hkv != 0 ||
      dims.d <= 0 || dims.page_size <= 0 || dims.max_pages <= 0)
    throw std::invalid_argument("paged decode reference: dimensions out of range");
  const Scratch scores(static_cast<size_t>(dims.b) * static_cast<size_t>(dims.hq) *
                           static_cast<size_t>(dims.max_pages) * static_cast<size_t>(dims.page_size),
                       stream);
  paged_decode_kernel<<<dim3(static_cast<unsigned>(dims.hq), static_cast<unsigned>(dims.b)), kThreads, 0,
                        stream>>>(dims, q, k_cache, v_cache, page_table, seq_lens, o, lse, scores.get());
  check_launch("paged_decode_kernel");
}

void ragged_prefill_reference(int hq, int hkv, int d, float scale, const std::vector<int32_t>& indptr,
                              const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                              float* o, float* lse, cudaStream_t stream) {
  for (size_t b = 0; b + 1 < indptr.size(); ++b) {
    const int64_t first = indptr[b];
    const int n = indptr[b + 1] - indptr[b];
    if (n <= 0) throw std::invalid_argument("ragged prefill reference: a sequence without tokens");
    const AttentionDims dims{
        .b = 1, .hq = hq, .hkv = hkv, .sq = n, .sk = n, .d = d, .causal = true, .scale = scale};
    const Scratch sequence_lse(static_cast<size_t>(dims.lse_elements()), stream);
    // [n, H, D] of one sequence is [1, n, H, D]: the dense forward's layout with B = 1.
    attention_forward_reference(dims, q + first * hq * d, k + first * hkv * d, v + first * hkv * d,
                                o + first * hq * d, sequence_lse.get(), stream);
    ragged_lse_kernel<<<grid_for(dims.lse_elements()), 256, 0, stream>>>(sequence_lse.get(), hq, n, first,
                                                                         lse);
    check_launch("ragged_lse_kernel");
  }
}

void paged_prefill_reference(const PagedPrefillDims& dims, const std::vector<int32_t>& qo_indptr,
                             const std::vector<int32_t>& kv_lens, const __nv_bfloat16* q,
                             const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
                             const int* page_table, float* o, float* lse, cudaStream_t stream) {
  if (qo_indptr.size() != kv_lens.size() + 1 || dims.page_size <= 0 || dims.max_pages <= 0)
    throw std::invalid_argument("paged prefill reference: dimensions out of range");
  for (size_t b = 0; b < kv_lens.size(); ++b) {
    const int64_t first = qo_indptr[b];
    const int n = qo_indptr[b + 1] - qo_indptr[b], m = kv_lens[b];
    if (n <= 0 || m < n || m > int64_t{dims.max_pages} * dims.page_size)
      throw std::invalid_argument("paged prefill reference: a sequence's lengths out of range");
    const AttentionDims dense{.b = 1,
                              .hq = dims.hq,
                              .hkv = dims.hkv,
                              .sq = n,
                              .sk = m,
                              .d = dims.d,
                              .causal = true,
                              .scale = dims.scale};
    // The sequence's K and V as [1, m, Hkv, D], bf16 as the cache holds them (two to a float of scratch).
    const int* pages = page_table + b * static_cast<size_t>(dims.max_pages);
    const auto gathered = [&](const __nv_bfloat16* cache) {
      Scratch out(static_cast<size_t>(dense.kv_elements() + 1) / 2, stream);
      gather_pages_kernel<<<grid_for(dense.kv_elements()), 256, 0, stream>>>(
          cache, pages, dims.page_size, dims.hkv, dims.d, m, reinterpret_cast<__nv_bfloat16*>(out.get()));
      check_launch("gather_pages_kernel");
      return out;
    };
    const Scratch k = gathered(k_cache), v = gathered(v_cache);
    const Scratch sequence_lse(static_cast<size_t>(dense.lse_elements()), stream);
    attention_forward_reference(dense, q + first * dims.hq * dims.d,
                                reinterpret_cast<const __nv_bfloat16*>(k.get()),
                                reinterpret_cast<const __nv_bfloat16*>(v.get()), o + first * dims.hq * dims.d,
                                sequence_lse.get(), stream);
    ragged_lse_kernel<<<grid_for(dense.lse_elements()), 256, 0, stream>>>(sequence_lse.get(), dims.hq, n,
                                                                          first, lse);
    check_launch("ragged_lse_kernel");
  }
}

void round_to_bf16(const float* in, __nv_bfloat16* out, __nv_bfloat16* copy, int64_t n, cudaStream_t stream) {
  round_kernel<<<grid_for(n), 256, 0, stream>>>(in, out, copy, n);
  check_launch("round_kernel");
}

}  // namespace ptxbench::runner
