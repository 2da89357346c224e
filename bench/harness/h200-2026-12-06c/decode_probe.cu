// Where the paged-decode reference's time goes: its entry point called on the main shape of
// attention-decode-gqa64x8-d128-p64 (64 sequences of 1..8192 tokens, 262144 in all, pages of 64 in a random
// order), timed with events after an L2 flush; the share of the bytes over the time of a plain device copy of
// the same size. Arguments: Hq (64), the page size (64), Hkv (8; a third argument since
// ../h200-2026-12-06e/'s call T). Built by decode_probe.sh (here and in ../h200-2026-12-06e/) with the
// solution's source included, in variants (sed edits a copy of it there).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include SOLUTION

namespace {

__global__ void read_kernel(const uint4* in, size_t n, uint4* sink) {
  uint4 acc = make_uint4(0, 0, 0, 0);
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const uint4 v = in[i];
    acc.x ^= v.x, acc.y ^= v.y, acc.z ^= v.z, acc.w ^= v.w;
  }
  if (acc.x == 0x12345678u) *sink = acc;
}

// Inputs: a hash of the index, uniform in [-1.75, 1.75) (the check needs values, not zeros).
__global__ void fill_kernel(__nv_bfloat16* out, size_t n, uint32_t salt) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 0x9E3779B1u ^ salt;
    h ^= h >> 15, h *= 0x2C1B3C6Du, h ^= h >> 12, h *= 0x297A2D39u, h ^= h >> 15;
    out[i] = __float2bfloat16((h >> 8) * (3.5f / 16777216.0f) - 1.75f);
  }
}

// The fp32 decode of one (head, sequence) per block, as the judge's reference computes it, and the count of
// the solution's O elements beyond atol 0.01 + rtol 0.01 |ref| (the tasks' tolerance) and the largest error.
__global__ void check_kernel(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                             const int* table, const int* lens, const __nv_bfloat16* o, int Hq, int Hkv, int D,
                             int page, int max_pages, float scale, float* scores, unsigned long long* bad,
                             unsigned* worst_bits) {
  const int h = blockIdx.x, b = blockIdx.y, g = h / (Hq / Hkv), n = lens[b], d = threadIdx.x;
  const auto row = [&](int t) {
    return (static_cast<size_t>(table[size_t(b) * max_pages + t / page]) * page + t % page) * Hkv * D + size_t(g) * D;
  };
  const __nv_bfloat16* qr = q + (size_t(b) * Hq + h) * D;
  float* s = scores + (size_t(b) * Hq + h) * size_t(max_pages) * page;
  for (int t = threadIdx.x; t < n; t += blockDim.x) {
    float dot = 0;
    for (int e = 0; e < D; ++e) dot += __bfloat162float(qr[e]) * __bfloat162float(k[row(t) + e]);
    s[t] = dot * scale;
  }
  __syncthreads();
  float m = -INFINITY;
  for (int t = 0; t < n; ++t) m = fmaxf(m, s[t]);
  float l = 0, acc = 0;
  for (int t = 0; t < n; ++t) {
    const float p = expf(s[t] - m);
    l += p;
    acc += p * __bfloat162float(v[row(t) + d]);
  }
  const float ref = acc / l, got = __bfloat162float(o[(size_t(b) * Hq + h) * D + d]);
  const float error = fabsf(got - ref);
  if (!(error <= 0.01f + 0.01f * fabsf(ref))) atomicAdd(bad, 1ull);
  atomicMax(worst_bits, __float_as_uint(isfinite(error) ? error : INFINITY));
}

}  // namespace

int main(int argc, char** argv) {
  const int B = 64, Hq = argc > 1 ? std::atoi(argv[1]) : 64, Hkv = argc > 3 ? std::atoi(argv[3]) : 8, D = 128,
            page = argc > 2 ? std::atoi(argv[2]) : 64;
  const int L = 8192;
  const long long T = 262144;
  std::mt19937_64 rng(7);
  // Lengths in 1..L, one of them L, summing to T.
  std::vector<int> lens(B, 1);
  lens[0] = L;
  long long left = T - L - (B - 1);
  std::uniform_int_distribution<int> pick(1, B - 1);
  while (left > 0) {
    const int b = pick(rng);
    const int add = static_cast<int>(std::min<long long>(left, std::min(64, L - lens[b])));
    lens[b] += add, left -= add;
  }
  const int max_pages = (L + page - 1) / page;
  int pages_used = 0;
  for (int n : lens) pages_used += (n + page - 1) / page;
  const int num_pages = pages_used + B;
  std::vector<int> order(num_pages);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<int> table(size_t(B) * max_pages, -1);
  int next = 0;
  for (int b = 0; b < B; ++b)
    for (int p = 0; p < (lens[b] + page - 1) / page; ++p) table[size_t(b) * max_pages + p] = order[next++];
  const size_t cache = size_t(num_pages) * page * Hkv * D;
  __nv_bfloat16 *q, *kv, *k, *v, *o;
  float* lse;
  int *d_table, *d_lens;
  void* ws;
  cudaMalloc(&q, size_t(B) * Hq * D * 2);
  // K then V: the plain read below reads the call's bytes from it; 1 MiB more, which the big-copies variant
  // may read past V's last page.
  cudaMalloc(&kv, cache * 4 + (1 << 20));
  cudaMemset(kv, 0, cache * 4 + (1 << 20));
  fill_kernel<<<1024, 256>>>(kv, cache * 2, 1u);
  k = kv, v = kv + cache;
  fill_kernel<<<64, 256>>>(q, size_t(B) * Hq * D, 2u);
  cudaMalloc(&o, size_t(B) * Hq * D * 2);
  cudaMalloc(&lse, size_t(B) * Hq * 4);
  cudaMalloc(&d_table, table.size() * 4);
  cudaMalloc(&d_lens, B * 4);
  cudaMemcpy(d_table, table.data(), table.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(d_lens, lens.data(), B * 4, cudaMemcpyHostToDevice);
  const size_t ws_bytes = ptxbench_attention_decode_paged_workspace_bytes(B, Hq, Hkv, D, page, max_pages, num_pages);
  cudaMalloc(&ws, ws_bytes);
  const size_t flush_bytes = size_t(256) << 20;
  uint4 *flush, *sink;
  cudaMalloc(&flush, flush_bytes);
  cudaMalloc(&sink, 16);
  cudaEvent_t start, stop;
  cudaEventCreate(&start), cudaEventCreate(&stop);
  const double bytes = 4.0 * T * Hkv * D + 2.0 * B * Hq * D;
  std::vector<float> times, copies;
  for (int i = 0; i < 30; ++i) {
    cudaMemsetAsync(flush, i, flush_bytes);
    cudaEventRecord(start);
    if (const cudaError_t before = cudaGetLastError(); before != cudaSuccess)
      std::printf("an error before the call: %s\n", cudaGetErrorString(before));
    if (ptxbench_attention_decode_paged_bf16(q, k, v, d_table, d_lens, o, lse, ws, B, Hq, Hkv, D, page, max_pages,
                                              num_pages, 1.0f / sqrtf(D), nullptr) != 0) {
      std::printf("the entry point returned non-zero: %s\n", cudaGetErrorString(cudaGetLastError()));
      return 1;
    }
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms;
    cudaEventElapsedTime(&ms, start, stop);
    times.push_back(ms);
    cudaMemsetAsync(flush, i, flush_bytes);
    cudaEventRecord(start);
    read_kernel<<<132 * 8, 512>>>(reinterpret_cast<const uint4*>(kv), size_t(4.0 * T * Hkv * D) / 16, sink);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    cudaEventElapsedTime(&ms, start, stop);
    copies.push_back(ms);
  }
  if (cudaGetLastError() != cudaSuccess) {
    std::printf("CUDA error: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  unsigned long long* bad;
  unsigned* worst;
  float* scores;
  cudaMalloc(&scores, size_t(B) * Hq * max_pages * page * 4);
  cudaMalloc(&bad, 8);
  cudaMalloc(&worst, 4);
  cudaMemset(bad, 0, 8);
  cudaMemset(worst, 0, 4);
  // The last call's O, the inputs unchanged since.
  check_kernel<<<dim3(Hq, B), D>>>(q, k, v, d_table, d_lens, o, Hq, Hkv, D, page, max_pages, 1.0f / sqrtf(D),
                                   scores, bad, worst);
  unsigned long long bad_host = 0;
  unsigned worst_host = 0;
  cudaMemcpy(&bad_host, bad, 8, cudaMemcpyDeviceToHost);
  cudaMemcpy(&worst_host, worst, 4, cudaMemcpyDeviceToHost);
  float worst_error;
  std::memcpy(&worst_error, &worst_host, 4);
  std::sort(times.begin(), times.end());
  std::sort(copies.begin(), copies.end());
  const double t = times[times.size() / 2] * 1e-3, c = copies[copies.size() / 2] * 1e-3;
  std::printf("%-28s Hq %d Hkv %d page %d: %.1f us (min %.1f), %.0f GB/s; a read of the same bytes %.1f us, %.0f GB/s; "
              "share %.3f; O: %llu of %d beyond the tolerance, largest error %.4f\n",
              VARIANT, Hq, Hkv, page, t * 1e6, times[0] * 1e3, bytes / t / 1e9, c * 1e6, bytes / c / 1e9, c / t, bad_host,
              B * Hq * D, worst_error);
  return 0;
}
