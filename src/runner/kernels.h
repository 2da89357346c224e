// The runner's own small GPU kernels: random inputs, L2 flush, output comparison, byte comparison.
// Host-callable launchers; every launch is checked. Plain SIMT code that any GPU of the task's architecture
// runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace ptxbench::runner {

// Mixes `key` with `salt` into a new key (the splitmix64 finaliser), to derive independent keys for shapes,
// trials and tensors from the parent's one secret seed.
inline uint64_t derive_key(uint64_t key, uint64_t salt) {
  uint64_t z = key + 0x9E3779B97F4A7C15ull * (salt + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Fills `out` and `copy` with the same n values, scale * N(0,1), drawn from a counter-based generator
// (Philox4x32-10 and Box-Muller) keyed by `key`: the same key gives the same values on any launch
// configuration.
void fill_normal_bf16(__nv_bfloat16* out, __nv_bfloat16* copy, int64_t n, uint64_t key, float scale,
                      cudaStream_t stream);

// Demotes persisting L2 lines to normal (cudaCtxResetPersistingL2Cache: lines an access-policy window marked
// would survive the flush), then writes `bytes` bytes (a multiple of 4) of `buffer` with a pattern that
// changes with `salt`, so that every line of the L2 is replaced by lines of this buffer.
void flush_l2(void* buffer, size_t bytes, uint32_t salt, cudaStream_t stream);

// Reads the `bytes` bytes (a multiple of 16) of `buffer` once, in 16-byte loads from one wave of blocks that
// fills every SM, and folds what it read into `*sink` (XOR, each block's share added once) so that no load
// can be dropped: the device's read bandwidth, for the time stage's physics floor.
void read_all(const void* buffer, size_t bytes, uint32_t* sink, cudaStream_t stream);

// One block of one thread that does nothing (the solution process's context switch, and its calibration).
void launch_empty_kernel(cudaStream_t stream);
// One block of one thread that runs for `microseconds` (the calibration's calls of a set length); the empty
// kernel for 0.
void launch_spin_kernel(double microseconds, cudaStream_t stream);

// The SM clock as the SM that runs it sees it now: one thread counts %clock64 cycles while %globaltimer
// advances by `nanoseconds`, and stores the cycles in out[0] and the nanoseconds in out[1] (device memory);
// the clock is 1000 x cycles / nanoseconds MHz.
void launch_clock_probe(uint64_t nanoseconds, unsigned long long* out, cudaStream_t stream);

// Number of 16-bit (elem_bytes 2) or 32-bit (elem_bytes 4) elements at which a and b differ. Synchronises
// `stream`.
uint64_t count_differences(const void* a, const void* b, size_t bytes, int elem_bytes, cudaStream_t stream);

// The byte every output is filled with before a call (TaskFamily::poison_outputs): every element then a NaN
// (0xFFFF in bf16, 0xFFFFFFFF in fp32) that no arithmetic writes, so an element the call did not write fails
// its comparison, and is told from a computed NaN (0x7FFF...) where a sample leaves it uncompared.
inline constexpr uint8_t kPoisonByte = 0xFF;

// Bytes of [bytes, bytes + n) that are not `value`. Synchronises `stream`.
uint64_t count_bytes_other_than(const void* bytes, size_t n, uint8_t value, cudaStream_t stream);

struct Mismatch {
  int64_t index = 0;
  float expected = 0;
  float actual = 0;
};

// The comparison of one output with its reference, viewed as n elements.
struct Comparison {
  uint64_t compared = 0;  // elements compared: all, or those a sampled reference computed
  uint64_t mismatches = 0;
  uint64_t non_finite = 0;
  // Elements outside a sample still holding the judge's poison (every byte 0xFF, a NaN no arithmetic makes):
  // never written by the call. Counted over the whole output, so that a call that skips rows fails whichever
  // rows the sample drew.
  uint64_t unwritten_outside_sample = 0;
  float max_abs_error = 0;  // over finite elements
  float max_rel_error = 0;  // over finite elements with |expected| > atol (all non-zero ones when atol is 0)
  float max_error_ratio = 0;  // max |actual - expected| / (atol + rtol |expected|) over finite elements
  std::vector<Mismatch> first_mismatches;  // up to max_reported, in index order
};

// Compares a bf16 output with an fp32 reference: an element passes when it is finite and within
// atol + rtol * |expected|. Only the elements whose byte of `checked` is non-zero, where it is not null (a
// sampled reference's); the others are only looked at for the poison. Synchronises `stream`.
Comparison compare_bf16(const __nv_bfloat16* actual, const float* expected, const uint8_t* checked, int64_t n,
                        float rtol, float atol, int max_reported, cudaStream_t stream);
// The same for an fp32 output (attention's LSE).
Comparison compare_f32(const float* actual, const float* expected, const uint8_t* checked, int64_t n,
                       float rtol, float atol, int max_reported, cudaStream_t stream);

}  // namespace ptxbench::runner
