#include "runner/kernels.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <stdexcept>

#include "runner/cuda_check.h"
#include "runner/device_buffer.h"

namespace ptxbench::runner {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 8192;  // grid-stride loops past this: enough blocks to fill any GPU

unsigned grid_for(int64_t work_items) {
  const int64_t blocks = (work_items + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, kMaxBlocks));
}

void check_launch(const char* kernel) {
  check_cuda(cudaGetLastError(), kernel, __FILE__, __LINE__);
}

// ---- random inputs ----------------------------------------------------------------------------------------

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3"): four 32-bit random words per
// 128-bit counter, with no state, so every element's value depends only on (key, index).
__device__ uint4 philox4x32_10(uint4 counter, uint2 key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const uint32_t hi0 = __umulhi(kM0, counter.x), lo0 = kM0 * counter.x;
    const uint32_t hi1 = __umulhi(kM1, counter.z), lo1 = kM1 * counter.z;
    counter = make_uint4(hi1 ^ counter.y ^ key.x, lo1, hi0 ^ counter.w ^ key.y, lo0);
    key.x += kW0;
    key.y += kW1;
  }
  return counter;
}

// A uniform value in (0, 1): never 0, so the logarithm in Box-Muller stays finite.
__device__ float uniform_open(uint32_t bits) {
  return (static_cast<float>(bits >> 8) + 0.5f) * (1.0f / 16777216.0f);
}

__device__ float2 box_muller(uint32_t a, uint32_t b) {
  const float radius = sqrtf(-2.0f * logf(uniform_open(a)));
  float s, c;
  sincospif(2.0f * uniform_open(b), &s, &c);
  return make_float2(radius * c, radius * s);
}

__global__ void fill_normal_kernel(__nv_bfloat16* out, __nv_bfloat16* copy, int64_t n, uint2 key,
                                   float scale) {
  const int64_t groups = (n + 3) / 4;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < groups;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint4 bits = philox4x32_10(
        make_uint4(static_cast<uint32_t>(g), static_cast<uint32_t>(static_cast<uint64_t>(g) >> 32), 0u, 0u),
        key);
    const float2 z01 = box_muller(bits.x, bits.y);
    const float2 z23 = box_muller(bits.z, bits.w);
    const float values[4] = {z01.x, z01.y, z23.x, z23.y};
    for (int j = 0; j < 4; ++j) {
      const int64_t i = 4 * g + j;
      if (i < n) {
        const __nv_bfloat16 v = __float2bfloat16(values[j] * scale);
        out[i] = v;
        copy[i] = v;
      }
    }
  }
}

// ---- L2 flush ---------------------------------------------------------------------------------------------

__global__ void flush_kernel(uint32_t* buffer, int64_t words, uint32_t salt) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    buffer[i] = static_cast<uint32_t>(i) ^ salt;
  }
}

// ---- read bandwidth ---------------------------------------------------------------------------------------

// Each thread keeps kReadsInFlight independent 16-byte loads outstanding before it folds them, so that the
// one resident wave has enough bytes in flight to saturate the DRAM.
constexpr int kReadsInFlight = 4;

__global__ void read_kernel(const uint4* __restrict__ data, int64_t n, uint32_t* sink) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  uint32_t fold = 0;
  for (; i + (kReadsInFlight - 1) * stride < n; i += kReadsInFlight * stride) {
    uint4 v[kReadsInFlight];
#pragma unroll
    for (int r = 0; r < kReadsInFlight; ++r) v[r] = data[i + r * stride];
#pragma unroll
    for (int r = 0; r < kReadsInFlight; ++r) fold ^= v[r].x ^ v[r].y ^ v[r].z ^ v[r].w;
  }
  for (; i < n; i += stride) {
    const uint4 v = data[i];
    fold ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  for (int offset = 16; offset > 0; offset /= 2) fold ^= __shfl_xor_sync(0xFFFFFFFFu, fold, offset);
  __shared__ uint32_t warp_folds[kThreads / 32];
  if (threadIdx.x % 32 == 0) warp_folds[threadIdx.x / 32] = fold;
  __syncthreads();
  if (threadIdx.x == 0) {
    uint32_t block_fold = 0;
    for (int w = 0; w < kThreads / 32; ++w) block_fold ^= warp_folds[w];
    atomicXor(sink, block_fold);
  }
}

// ---- byte comparison --------------------------------------------------------------------------------------

template <typename Word>
__global__ void count_differences_kernel(const Word* a, const Word* b, int64_t n, unsigned long long* count) {
  unsigned long long local = 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    local += a[i] != b[i] ? 1 : 0;
  }
  for (int offset = 16; offset > 0; offset /= 2) local += __shfl_xor_sync(0xFFFFFFFFu, local, offset);
  if (threadIdx.x % 32 == 0 && local != 0) atomicAdd(count, local);
}

__global__ void count_bytes_other_than_kernel(const uint8_t* bytes, int64_t n, uint8_t value,
                                              unsigned long long* count) {
  unsigned long long local = 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    local += bytes[i] != value ? 1 : 0;
  }
  for (int offset = 16; offset > 0; offset /= 2) local += __shfl_xor_sync(0xFFFFFFFFu, local, offset);
  if (threadIdx.x % 32 == 0 && local != 0) atomicAdd(count, local);
}

// ---- output comparison ------------------------------------------------------------------------------------

struct CompareCounters {
  unsigned long long compared;
  unsigned long long mismatches;
  unsigned long long non_finite;
  // Non-negative floats order like their bit patterns, so atomicMax on the bits gives the float maximum.
  unsigned int max_abs_bits;
  unsigned int max_rel_bits;
  unsigned int max_ratio_bits;
  unsigned int unused;
  unsigned long long unwritten_outside_sample;
};

__device__ bool element_passes(float actual, float expected, float rtol, float atol) {
  return isfinite(actual) && isfinite(expected) && fabsf(actual - expected) <= atol + rtol * fabsf(expected);
}

__device__ __host__ inline float as_float(float value) {
  return value;
}
__device__ __host__ inline float as_float(__nv_bfloat16 value) {
  return __bfloat162float(value);
}

// The judge's poison, every byte kPoisonByte.
__device__ bool is_poison(float value) {
  return __float_as_uint(value) == 0x01010101u * kPoisonByte;
}
__device__ bool is_poison(__nv_bfloat16 value) {
  return __bfloat16_as_ushort(value) == 0x0101u * kPoisonByte;
}

// Compares bf16 or fp32 outputs with an fp32 reference, where `checked` (when not null) marks an element.
template <typename T>
__global__ void compare_kernel(const T* actual, const float* expected, const uint8_t* checked, int64_t n,
                               float rtol, float atol, CompareCounters* out) {
  unsigned long long compared = 0, mismatches = 0, non_finite = 0, unwritten = 0;
  float max_abs = 0, max_rel = 0, max_ratio = 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (checked != nullptr && checked[i] == 0) {
      if (is_poison(actual[i])) ++unwritten;
      continue;
    }
    ++compared;
    const float a = as_float(actual[i]);
    const float e = expected[i];
    if (!element_passes(a, e, rtol, atol)) ++mismatches;
    if (!isfinite(a) || !isfinite(e)) {
      ++non_finite;
      continue;
    }
    const float error = fabsf(a - e);
    max_abs = fmaxf(max_abs, error);
    if (fabsf(e) > atol && e != 0.0f) max_rel = fmaxf(max_rel, error / fabsf(e));
    const float allowed = atol + rtol * fabsf(e);
    max_ratio = fmaxf(max_ratio, allowed > 0 ? error / allowed : (error > 0 ? INFINITY : 0.0f));
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    compared += __shfl_xor_sync(0xFFFFFFFFu, compared, offset);
    mismatches += __shfl_xor_sync(0xFFFFFFFFu, mismatches, offset);
    non_finite += __shfl_xor_sync(0xFFFFFFFFu, non_finite, offset);
    unwritten += __shfl_xor_sync(0xFFFFFFFFu, unwritten, offset);
    max_abs = fmaxf(max_abs, __shfl_xor_sync(0xFFFFFFFFu, max_abs, offset));
    max_rel = fmaxf(max_rel, __shfl_xor_sync(0xFFFFFFFFu, max_rel, offset));
    max_ratio = fmaxf(max_ratio, __shfl_xor_sync(0xFFFFFFFFu, max_ratio, offset));
  }
  if (threadIdx.x % 32 == 0) {
    if (compared != 0) atomicAdd(&out->compared, compared);
    if (mismatches != 0) atomicAdd(&out->mismatches, mismatches);
    if (non_finite != 0) atomicAdd(&out->non_finite, non_finite);
    if (unwritten != 0) atomicAdd(&out->unwritten_outside_sample, unwritten);
    atomicMax(&out->max_abs_bits, __float_as_uint(max_abs));
    atomicMax(&out->max_rel_bits, __float_as_uint(max_rel));
    atomicMax(&out->max_ratio_bits, __float_as_uint(max_ratio));
  }
}

// The smallest failing index >= start, into *best (initialised to ULLONG_MAX). Each thread stops at its first
// failure or once it is past the best found so far.
template <typename T>
__global__ void first_mismatch_kernel(const T* actual, const float* expected, const uint8_t* checked,
                                      int64_t start, int64_t n, float rtol, float atol,
                                      unsigned long long* best) {
  for (int64_t i = start + blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (static_cast<unsigned long long>(i) > *static_cast<volatile unsigned long long*>(best)) return;
    if (checked != nullptr && checked[i] == 0) continue;
    if (!element_passes(as_float(actual[i]), expected[i], rtol, atol)) {
      atomicMin(best, static_cast<unsigned long long>(i));
      return;
    }
  }
}

float float_from_bits(unsigned int bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

template <typename T>
T read_one(const T* device_ptr, cudaStream_t stream) {
  T value{};
  PTXBENCH_CUDA(cudaMemcpyAsync(&value, device_ptr, sizeof(T), cudaMemcpyDeviceToHost, stream));
  PTXBENCH_CUDA(cudaStreamSynchronize(stream));
  return value;
}

}  // namespace

void fill_normal_bf16(__nv_bfloat16* out, __nv_bfloat16* copy, int64_t n, uint64_t key, float scale,
                      cudaStream_t stream) {
  const uint2 philox_key = make_uint2(static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32));
  fill_normal_kernel<<<grid_for((n + 3) / 4), kThreads, 0, stream>>>(out, copy, n, philox_key, scale);
  check_launch("fill_normal_kernel");
}

__global__ void empty_kernel() {}

void launch_empty_kernel(cudaStream_t stream) {
  empty_kernel<<<1, 1, 0, stream>>>();
}

// %globaltimer: the GPU's nanosecond clock, the same for every SM.
__global__ void spin_kernel(uint64_t nanoseconds) {
  uint64_t start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (uint64_t now = start; now - start < nanoseconds;)
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
}

void launch_spin_kernel(double microseconds, cudaStream_t stream) {
  if (microseconds <= 0) return launch_empty_kernel(stream);
  spin_kernel<<<1, 1, 0, stream>>>(static_cast<uint64_t>(microseconds * 1e3));
}

__global__ void clock_probe_kernel(uint64_t nanoseconds, unsigned long long* out) {
  uint64_t start, now;
  const long long first = clock64();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
  const long long last = clock64();
  out[0] = static_cast<unsigned long long>(last - first);
  out[1] = now - start;
}

void launch_clock_probe(uint64_t nanoseconds, unsigned long long* out, cudaStream_t stream) {
  clock_probe_kernel<<<1, 1, 0, stream>>>(nanoseconds, out);
  check_launch("clock_probe_kernel");
}

void flush_l2(void* buffer, size_t bytes, uint32_t salt, cudaStream_t stream) {
  PTXBENCH_CUDA(cudaCtxResetPersistingL2Cache());
  const auto words = static_cast<int64_t>(bytes / 4);
  flush_kernel<<<grid_for(words), kThreads, 0, stream>>>(static_cast<uint32_t*>(buffer), words, salt);
  check_launch("flush_kernel");
}

void read_all(const void* buffer, size_t bytes, uint32_t* sink, cudaStream_t stream) {
  int device = 0, sms = 0, blocks_per_sm = 0;
  PTXBENCH_CUDA(cudaGetDevice(&device));
  PTXBENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  PTXBENCH_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, read_kernel, kThreads, 0));
  const auto blocks = static_cast<unsigned>(std::max(1, sms * blocks_per_sm));
  read_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const uint4*>(buffer),
                                               static_cast<int64_t>(bytes / 16), sink);
  check_launch("read_kernel");
}

uint64_t count_differences(const void* a, const void* b, size_t bytes, int elem_bytes, cudaStream_t stream) {
  DeviceBuffer count(sizeof(unsigned long long));
  PTXBENCH_CUDA(cudaMemsetAsync(count.get(), 0, count.bytes(), stream));
  const auto n = static_cast<int64_t>(bytes / static_cast<size_t>(elem_bytes));
  if (elem_bytes == 2) {
    count_differences_kernel<<<grid_for(n), kThreads, 0, stream>>>(
        static_cast<const uint16_t*>(a), static_cast<const uint16_t*>(b), n, count.as<unsigned long long>());
  } else if (elem_bytes == 4) {
    count_differences_kernel<<<grid_for(n), kThreads, 0, stream>>>(
        static_cast<const uint32_t*>(a), static_cast<const uint32_t*>(b), n, count.as<unsigned long long>());
  } else {
    throw std::invalid_argument("count_differences: element size must be 2 or 4 bytes");
  }
  check_launch("count_differences_kernel");
  return read_one(count.as<unsigned long long>(), stream);
}

uint64_t count_bytes_other_than(const void* bytes, size_t n, uint8_t value, cudaStream_t stream) {
  DeviceBuffer count(sizeof(unsigned long long));
  PTXBENCH_CUDA(cudaMemsetAsync(count.get(), 0, count.bytes(), stream));
  const auto elements = static_cast<int64_t>(n);
  count_bytes_other_than_kernel<<<grid_for(elements), kThreads, 0, stream>>>(
      static_cast<const uint8_t*>(bytes), elements, value, count.as<unsigned long long>());
  check_launch("count_bytes_other_than_kernel");
  return read_one(count.as<unsigned long long>(), stream);
}

namespace {

template <typename T>
Comparison compare_outputs(const T* actual, const float* expected, const uint8_t* checked, int64_t n,
                           float rtol, float atol, int max_reported, cudaStream_t stream) {
  DeviceBuffer counters(sizeof(CompareCounters));
  PTXBENCH_CUDA(cudaMemsetAsync(counters.get(), 0, counters.bytes(), stream));
  compare_kernel<<<grid_for(n), kThreads, 0, stream>>>(actual, expected, checked, n, rtol, atol,
                                                       counters.as<CompareCounters>());
  check_launch("compare_kernel");
  const CompareCounters totals = read_one(counters.as<CompareCounters>(), stream);

  Comparison result;
  result.compared = totals.compared;
  result.mismatches = totals.mismatches;
  result.non_finite = totals.non_finite;
  result.unwritten_outside_sample = totals.unwritten_outside_sample;
  result.max_abs_error = float_from_bits(totals.max_abs_bits);
  result.max_rel_error = float_from_bits(totals.max_rel_bits);
  result.max_error_ratio = float_from_bits(totals.max_ratio_bits);

  // The first failures in index order, one pass each: cheap next to a failing run, and only run on failure.
  DeviceBuffer best(sizeof(unsigned long long));
  int64_t start = 0;
  while (result.first_mismatches.size() < static_cast<size_t>(max_reported) &&
         result.first_mismatches.size() < result.mismatches) {
    PTXBENCH_CUDA(cudaMemsetAsync(best.get(), 0xFF, best.bytes(), stream));  // ULLONG_MAX: none found yet
    first_mismatch_kernel<<<grid_for(n - start), kThreads, 0, stream>>>(
        actual, expected, checked, start, n, rtol, atol, best.as<unsigned long long>());
    check_launch("first_mismatch_kernel");
    const unsigned long long index = read_one(best.as<unsigned long long>(), stream);
    if (index == ULLONG_MAX) break;
    const auto i = static_cast<int64_t>(index);
    result.first_mismatches.push_back(
        {i, read_one(expected + i, stream), as_float(read_one(actual + i, stream))});
    start = i + 1;
  }
  return result;
}

}  // namespace

Comparison compare_bf16(const __nv_bfloat16* actual, const float* expected, const uint8_t* checked, int64_t n,
                        float rtol, float atol, int max_reported, cudaStream_t stream) {
  return compare_outputs(actual, expected, checked, n, rtol, atol, max_reported, stream);
}

Comparison compare_f32(const float* actual, const float* expected, const uint8_t* checked, int64_t n,
                       float rtol, float atol, int max_reported, cudaStream_t stream) {
  return compare_outputs(actual, expected, checked, n, rtol, atol, max_reported, stream);
}

}  // namespace ptxbench::runner
