// GPU test of the attention families' reference (src/runner/attention_kernels.cu): its fp32 kernels against a
// float64 CPU implementation written straight from include/ptxbench/abi.h, on small shapes that cover causal
// masking (bottom-right aligned, Sq < Sk and Sq > Sk with fully masked rows), GQA, Sq != Sk, odd lengths and
// the three head dims; the time stage's sampled forward and backward (the elements they mark, exactly those
// of the sample, against the same float64 values); the paged decode and the paged prefill through drawn page
// tables. Prints one line per shape and output; exits non-zero on any failure.
//
//   nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a -I src -I include \
//        tests/gpu/attention/reference_check.cu src/runner/attention_kernels.cu -o attention_reference_check
//   ./attention_reference_check          (tests/gpu/attention/run.sh does both)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "runner/attention_kernels.h"
#include "runner/device_buffer.h"
#include "runner/layouts.h"

using namespace ptxbench::runner;

namespace {

struct Case {
  int b, hq, hkv, sq, sk, d;
  bool causal;
  size_t score_block_bytes = kAttentionScoreBlockBytes;  // smaller: the launchers' blocks of heads and rows
};

template <typename T>
struct Device {
  explicit Device(const std::vector<T>& host) : buffer(host.size() * sizeof(T)) {
    PTXBENCH_CUDA(cudaMemcpy(buffer.get(), host.data(), buffer.bytes(), cudaMemcpyHostToDevice));
  }
  explicit Device(size_t n) : buffer(n * sizeof(T)) {}
  std::vector<T> read() const {
    std::vector<T> host(buffer.bytes() / sizeof(T));
    PTXBENCH_CUDA(cudaMemcpy(host.data(), buffer.get(), buffer.bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  T* get() const { return buffer.as<T>(); }
  DeviceBuffer buffer;
};

std::vector<__nv_bfloat16> random_bf16(size_t n, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<__nv_bfloat16> out(n);
  for (auto& x : out) x = __float2bfloat16(normal(rng));
  return out;
}

std::vector<double> to_double(const std::vector<__nv_bfloat16>& x) {
  std::vector<double> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = static_cast<double>(__bfloat162float(x[i]));
  return out;
}

// ---- float64 CPU attention, from the ABI's formulas
// -------------------------------------------------------------

struct Cpu {
  Case c;
  double scale;
  size_t qi(int b, int i, int h) const { return ((size_t(b) * c.sq + i) * c.hq + h) * c.d; }
  size_t ki(int b, int j, int g) const { return ((size_t(b) * c.sk + j) * c.hkv + g) * c.d; }
  size_t li(int b, int h, int i) const { return (size_t(b) * c.hq + h) * c.sq + i; }
  bool visible(int i, int j) const { return !c.causal || j <= i + (c.sk - c.sq); }
  int group(int h) const { return h / (c.hq / c.hkv); }
  double score(const std::vector<double>& q, const std::vector<double>& k, int b, int i, int h, int j) const {
    double s = 0;
    for (int d = 0; d < c.d; ++d) s += q[qi(b, i, h) + d] * k[ki(b, j, group(h)) + d];
    return scale * s;
  }

  void forward(const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
               std::vector<double>& o, std::vector<double>& lse) const {
    o.assign(size_t(c.b) * c.sq * c.hq * c.d, 0.0);
    lse.assign(size_t(c.b) * c.hq * c.sq, -INFINITY);
    for (int b = 0; b < c.b; ++b)
      for (int h = 0; h < c.hq; ++h)
        for (int i = 0; i < c.sq; ++i) {
          double m = -INFINITY;
          for (int j = 0; j < c.sk; ++j)
            if (visible(i, j)) m = std::max(m, score(q, k, b, i, h, j));
          if (m == -INFINITY) continue;  // no visible key: O = 0, LSE = -inf
          double l = 0;
          std::vector<double> acc(c.d, 0.0);
          for (int j = 0; j < c.sk; ++j) {
            if (!visible(i, j)) continue;
            const double p = std::exp(score(q, k, b, i, h, j) - m);
            l += p;
            for (int d = 0; d < c.d; ++d) acc[d] += p * v[ki(b, j, group(h)) + d];
          }
          for (int d = 0; d < c.d; ++d) o[qi(b, i, h) + d] = acc[d] / l;
          lse[li(b, h, i)] = m + std::log(l);
        }
  }

  // P from the given LSE, Delta from the given O, as the ABI says.
  void backward(const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
                const std::vector<double>& o, const std::vector<double>& lse, const std::vector<double>& d_o,
                std::vector<double>& dq, std::vector<double>& dk, std::vector<double>& dv) const {
    dq.assign(q.size(), 0.0);
    dk.assign(k.size(), 0.0);
    dv.assign(v.size(), 0.0);
    for (int b = 0; b < c.b; ++b)
      for (int h = 0; h < c.hq; ++h)
        for (int i = 0; i < c.sq; ++i) {
          double delta = 0;
          for (int d = 0; d < c.d; ++d) delta += d_o[qi(b, i, h) + d] * o[qi(b, i, h) + d];
          for (int j = 0; j < c.sk; ++j) {
            if (!visible(i, j)) continue;
            const double p = std::exp(score(q, k, b, i, h, j) - lse[li(b, h, i)]);
            double dp = 0;
            for (int d = 0; d < c.d; ++d) dp += d_o[qi(b, i, h) + d] * v[ki(b, j, group(h)) + d];
            const double ds = p * (dp - delta);
            for (int d = 0; d < c.d; ++d) {
              dq[qi(b, i, h) + d] += scale * ds * k[ki(b, j, group(h)) + d];
              dk[ki(b, j, group(h)) + d] += scale * ds * q[qi(b, i, h) + d];
              dv[ki(b, j, group(h)) + d] += p * d_o[qi(b, i, h) + d];
            }
          }
        }
  }
};

int failures = 0;

// fp32 against float64: each element within 1e-4 of the larger of 1 and |expected| (fp32 sums of at most a
// few hundred terms of size ~1 are good to ~1e-6 relative; 1e-4 leaves room and still catches any formula
// slip).
void compare(const std::string& what, const std::vector<float>& gpu, const std::vector<double>& cpu) {
  double worst = 0;
  size_t worst_at = 0, bad = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    const double e = cpu[i], a = gpu[i];
    double err;
    if (std::isinf(e) || std::isinf(a))
      err = (e == a) ? 0.0 : INFINITY;  // -inf LSE of a row with no visible key must match exactly
    else
      err = std::fabs(a - e) / std::max(1.0, std::fabs(e));
    if (!(err <= 1e-4)) ++bad;
    if (!(err <= worst)) worst = err, worst_at = i;
  }
  std::printf("%s  %-48s max scaled error %.3g at %zu (gpu %.6g, cpu %.6g)\n", bad ? "FAIL" : "PASS",
              what.c_str(), worst, worst_at, static_cast<double>(gpu[worst_at]), cpu[worst_at]);
  failures += bad != 0;
}

void run_case(const Case& c, std::mt19937_64& rng) {
  const std::string name = "B=" + std::to_string(c.b) + " Hq=" + std::to_string(c.hq) +
                           " Hkv=" + std::to_string(c.hkv) + " Sq=" + std::to_string(c.sq) +
                           " Sk=" + std::to_string(c.sk) + " D=" + std::to_string(c.d) +
                           (c.causal ? " causal" : "") +
                           (c.score_block_bytes < kAttentionScoreBlockBytes
                                ? " blocks of " + std::to_string(c.score_block_bytes) + " B"
                                : "");
  const size_t nq = size_t(c.b) * c.sq * c.hq * c.d, nk = size_t(c.b) * c.sk * c.hkv * c.d;
  const size_t nl = size_t(c.b) * c.hq * c.sq;
  const auto q = random_bf16(nq, rng), k = random_bf16(nk, rng), v = random_bf16(nk, rng),
             d_o = random_bf16(nq, rng);
  AttentionDims dims;
  dims.b = c.b, dims.hq = c.hq, dims.hkv = c.hkv, dims.sq = c.sq, dims.sk = c.sk, dims.d = c.d;
  dims.causal = c.causal;
  dims.scale = 1.0f / std::sqrt(static_cast<float>(c.d));
  const Cpu cpu{c, static_cast<double>(dims.scale)};

  Device<__nv_bfloat16> dq_in(q), dk_in(k), dv_in(v), ddo(d_o);
  Device<float> o(nq), lse(nl);
  attention_forward_reference(dims, dq_in.get(), dk_in.get(), dv_in.get(), o.get(), lse.get(), nullptr,
                              c.score_block_bytes);
  PTXBENCH_CUDA(cudaDeviceSynchronize());
  std::vector<double> o_cpu, lse_cpu;
  cpu.forward(to_double(q), to_double(k), to_double(v), o_cpu, lse_cpu);
  const auto o_gpu = o.read(), lse_gpu = lse.read();
  compare(name + " O", o_gpu, o_cpu);
  compare(name + " LSE", lse_gpu, lse_cpu);
  {
    // The backward's inputs: P rounded to bf16 (a relative 2^-8 at most) before P V. LSE as exact as ever; O
    // within 2^-8 of the largest |v| of the exact one.
    Device<float> o_fast(nq), lse_fast(nl);
    attention_forward_reference(dims, dq_in.get(), dk_in.get(), dv_in.get(), o_fast.get(), lse_fast.get(),
                                nullptr, c.score_block_bytes, true);
    PTXBENCH_CUDA(cudaDeviceSynchronize());
    double largest_v = 0, worst = 0;
    for (const auto& x : v)
      largest_v = std::max(largest_v, std::fabs(static_cast<double>(__bfloat162float(x))));
    const std::vector<float> fast = o_fast.read();
    for (size_t i = 0; i < nq; ++i) worst = std::max(worst, std::fabs(fast[i] - o_cpu[i]));
    compare(name + " LSE with P in bf16", lse_fast.read(), lse_cpu);
    const bool passed = worst <= std::ldexp(largest_v, -8) + 1e-5;
    std::printf("%s  %-48s at most %.3g off (bound %.3g)\n", passed ? "PASS" : "FAIL",
                (name + " O with P in bf16").c_str(), worst, std::ldexp(largest_v, -8));
    failures += !passed;
  }

  // The backward takes O rounded to bf16 (as the family hands it to solutions) and the fp32 LSE; both sides
  // get exactly those.
  Device<__nv_bfloat16> o_bf16(nq), o_copy(nq);
  round_to_bf16(o.get(), o_bf16.get(), o_copy.get(), static_cast<int64_t>(nq), nullptr);
  Device<float> dq(nq), dk(nk), dv(nk), delta(nl);
  attention_backward_reference(dims, dq_in.get(), dk_in.get(), dv_in.get(), o_bf16.get(), lse.get(),
                               ddo.get(), dq.get(), dk.get(), dv.get(), delta.get(), nullptr,
                               c.score_block_bytes);
  PTXBENCH_CUDA(cudaDeviceSynchronize());
  std::vector<double> lse_given(lse_gpu.begin(), lse_gpu.end()), dq_cpu, dk_cpu, dv_cpu;
  cpu.backward(to_double(q), to_double(k), to_double(v), to_double(o_bf16.read()), lse_given, to_double(d_o),
               dq_cpu, dk_cpu, dv_cpu);
  compare(name + " dQ", dq.read(), dq_cpu);
  compare(name + " dK", dk.read(), dk_cpu);
  compare(name + " dV", dv.read(), dv_cpu);

  // The sampled reference, at a share drawn like its key (a stage of fewer calls draws more blocks each):
  // into poisoned outputs, its marks exactly the sample's elements, its values there those of the float64
  // reference.
  const SampleDraw draw{.key = rng(), .share = 1 + static_cast<int>(rng() % kSampleShare)};
  const AttentionSample sample = draw_attention_sample(c.b, c.hq / c.hkv, c.sq, c.sk, true, draw);
  const int group = c.hq / c.hkv;
  std::vector<uint8_t> want_q(nq, 0), want_lse(nl, 0), want_kv(nk, 0);
  for (const auto& rows : sample.query)
    for (int i = rows.i0; i < std::min(c.sq, rows.i0 + kSampleRows); ++i)
      for (int g = 0; g < c.hkv; ++g) {
        const int h = g * group + rows.r;
        std::fill_n(want_q.begin() + ((size_t(rows.b) * c.sq + i) * c.hq + h) * c.d, c.d, 1);
        want_lse[(size_t(rows.b) * c.hq + h) * c.sq + i] = 1;
      }
  for (const auto& keys : sample.keys)
    for (int j = keys.j0; j < std::min(c.sk, keys.j0 + kSampleRows); ++j)
      std::fill_n(want_kv.begin() + (size_t(keys.b) * c.sk + j) * c.hkv * c.d, size_t(c.hkv) * c.d, 1);
  const auto sampled = [&](const std::string& what, const Device<float>& gpu, const Device<uint8_t>& marks,
                           const std::vector<uint8_t>& want, const std::vector<double>& cpu) {
    const std::vector<uint8_t> got = marks.read();
    const bool marks_right = got == want;
    std::printf("%s  %-48s marks %s the sample's %zu elements\n", marks_right ? "PASS" : "FAIL",
                (what + " marks").c_str(), marks_right ? "are" : "are NOT",
                static_cast<size_t>(std::count(want.begin(), want.end(), 1)));
    failures += !marks_right;
    const std::vector<float> all = gpu.read();
    std::vector<float> values;
    std::vector<double> expected;
    for (size_t i = 0; i < want.size(); ++i)
      if (want[i]) values.push_back(all[i]), expected.push_back(cpu[i]);
    compare(what, values, expected);
  };
  const AttentionSample forward_sample{sample.query, {}};
  Device<float> so(nq), slse(nl), sdq(nq), sdk(nk), sdv(nk);
  Device<uint8_t> o_marks(nq), lse_marks(nl), dq_marks(nq), dk_marks(nk), dv_marks(nk);
  for (auto* buffer : {&so.buffer, &slse.buffer, &sdq.buffer, &sdk.buffer, &sdv.buffer, &o_marks.buffer,
                       &lse_marks.buffer, &dq_marks.buffer, &dk_marks.buffer, &dv_marks.buffer})
    PTXBENCH_CUDA(cudaMemset(buffer->get(), 0xFF, buffer->bytes()));
  attention_forward_sample(dims, dq_in.get(), dk_in.get(), dv_in.get(), so.get(), slse.get(), forward_sample,
                           o_marks.get(), lse_marks.get(), nullptr, c.score_block_bytes);
  attention_backward_sample(dims, dq_in.get(), dk_in.get(), dv_in.get(), o_bf16.get(), lse.get(), ddo.get(),
                            sdq.get(), sdk.get(), sdv.get(), delta.get(), sample, dq_marks.get(),
                            dk_marks.get(), dv_marks.get(), nullptr, c.score_block_bytes);
  PTXBENCH_CUDA(cudaDeviceSynchronize());
  sampled(name + " sampled O", so, o_marks, want_q, o_cpu);
  sampled(name + " sampled LSE", slse, lse_marks, want_lse, lse_cpu);
  sampled(name + " sampled dQ", sdq, dq_marks, want_q, dq_cpu);
  sampled(name + " sampled dK", sdk, dk_marks, want_kv, dk_cpu);
  sampled(name + " sampled dV", sdv, dv_marks, want_kv, dv_cpu);
}

// The paged decode: a layout the runner would draw, the fp32 reference against a float64 decode from the
// ABI's formulas (every token of each sequence through the page table).
void run_decode_case(int b, int hq, int hkv, int d, int page, int longest, int64_t tokens,
                     std::mt19937_64& rng) {
  const std::string name = "decode B=" + std::to_string(b) + " Hq=" + std::to_string(hq) +
                           " Hkv=" + std::to_string(hkv) + " D=" + std::to_string(d) +
                           " page=" + std::to_string(page) + " L=" + std::to_string(longest) +
                           " T=" + std::to_string(tokens);
  const int max_pages = (longest + page - 1) / page;
  const int num_pages = static_cast<int>((tokens + int64_t{b} * (page - 1)) / page + b);
  const PagedLayout layout = draw_paged_layout(b, longest, tokens, page, max_pages, num_pages, rng());
  const size_t nq = size_t(b) * hq * d, ncache = size_t(num_pages) * page * hkv * d;
  const auto q = random_bf16(nq, rng), k = random_bf16(ncache, rng), v = random_bf16(ncache, rng);
  PagedDecodeDims dims;
  dims.b = b, dims.hq = hq, dims.hkv = hkv, dims.d = d, dims.page_size = page, dims.max_pages = max_pages;
  dims.scale = 1.0f / std::sqrt(static_cast<float>(d));
  Device<__nv_bfloat16> dq(q), dk(k), dv(v);
  Device<int> table(layout.page_table), lens(layout.seq_lens);
  Device<float> o(nq), lse(size_t(b) * hq);
  paged_decode_reference(dims, dq.get(), dk.get(), dv.get(), table.get(), lens.get(), o.get(), lse.get(),
                         nullptr);
  PTXBENCH_CUDA(cudaDeviceSynchronize());
  const auto qd = to_double(q), kd = to_double(k), vd = to_double(v);
  std::vector<double> o_cpu(nq), lse_cpu(size_t(b) * hq);
  for (int s = 0; s < b; ++s)
    for (int h = 0; h < hq; ++h) {
      const int g = h / (hq / hkv), n = layout.seq_lens[s];
      const auto row = [&](int t) {
        const size_t p = layout.page_table[size_t(s) * max_pages + t / page];
        return ((p * page + t % page) * hkv + g) * d;
      };
      std::vector<double> score(n);
      double mx = -INFINITY;
      for (int t = 0; t < n; ++t) {
        double dot = 0;
        for (int e = 0; e < d; ++e) dot += qd[(size_t(s) * hq + h) * d + e] * kd[row(t) + e];
        mx = std::max(mx, score[t] = dot * dims.scale);
      }
      double sum = 0;
      for (int t = 0; t < n; ++t) sum += score[t] = std::exp(score[t] - mx);
      lse_cpu[size_t(s) * hq + h] = mx + std::log(sum);
      for (int e = 0; e < d; ++e) {
        double acc = 0;
        for (int t = 0; t < n; ++t) acc += score[t] / sum * vd[row(t) + e];
        o_cpu[(size_t(s) * hq + h) * d + e] = acc;
      }
    }
  compare(name + " O", o.read(), o_cpu);
  compare(name + " LSE", lse.read(), lse_cpu);
}

// The paged prefill: a layout the runner would draw, the fp32 reference (a gather and a dense forward per
// sequence) against a float64 prefill from the ABI's formulas (every visible token through the page table).
void run_paged_prefill_case(int b, int longest, int l, int s, int prefix, int hq, int hkv, int d, int page,
                            std::mt19937_64& rng) {
  const std::string name =
      "paged prefill B=" + std::to_string(b) + " (" + std::to_string(longest) + " of " + std::to_string(l) +
      ", others " + std::to_string(s) + ", prefix " + std::to_string(prefix) + ") Hq=" + std::to_string(hq) +
      " Hkv=" + std::to_string(hkv) + " D=" + std::to_string(d) + " page=" + std::to_string(page);
  const int total = longest * l + (b - longest) * s;
  const int max_pages = (l + prefix + page - 1) / page;
  const int num_pages = (total + b * prefix + b * (page - 1)) / page + b;
  const PagedPrefillLayout layout =
      draw_paged_prefill_layout(b, longest, l, s, prefix, page, max_pages, num_pages, rng());
  const size_t nq = size_t(total) * hq * d, ncache = size_t(num_pages) * page * hkv * d;
  const auto q = random_bf16(nq, rng), k = random_bf16(ncache, rng), v = random_bf16(ncache, rng);
  PagedPrefillDims dims;
  dims.hq = hq, dims.hkv = hkv, dims.d = d, dims.page_size = page, dims.max_pages = max_pages;
  dims.scale = 1.0f / std::sqrt(static_cast<float>(d));
  Device<__nv_bfloat16> dq(q), dk(k), dv(v);
  Device<int> table(layout.page_table);
  Device<float> o(nq), lse(size_t(total) * hq);
  paged_prefill_reference(dims, layout.qo_indptr, layout.kv_lens, dq.get(), dk.get(), dv.get(), table.get(),
                          o.get(), lse.get(), nullptr);
  PTXBENCH_CUDA(cudaDeviceSynchronize());
  const auto qd = to_double(q), kd = to_double(k), vd = to_double(v);
  std::vector<double> o_cpu(nq), lse_cpu(size_t(total) * hq);
  for (int seq = 0; seq < b; ++seq) {
    const int first = layout.qo_indptr[seq], n = layout.qo_indptr[seq + 1] - first, m = layout.kv_lens[seq];
    for (int i = 0; i < n; ++i)
      for (int h = 0; h < hq; ++h) {
        const int g = h / (hq / hkv), visible = m - n + i + 1;
        const size_t row_q = (size_t(first + i) * hq + h) * d;
        const auto row = [&](int t) {
          const size_t p = layout.page_table[size_t(seq) * max_pages + t / page];
          return ((p * page + t % page) * hkv + g) * d;
        };
        std::vector<double> score(visible);
        double mx = -INFINITY;
        for (int t = 0; t < visible; ++t) {
          double dot = 0;
          for (int e = 0; e < d; ++e) dot += qd[row_q + e] * kd[row(t) + e];
          mx = std::max(mx, score[t] = dot * dims.scale);
        }
        double sum = 0;
        for (int t = 0; t < visible; ++t) sum += score[t] = std::exp(score[t] - mx);
        lse_cpu[size_t(first + i) * hq + h] = mx + std::log(sum);
        for (int e = 0; e < d; ++e) {
          double acc = 0;
          for (int t = 0; t < visible; ++t) acc += score[t] / sum * vd[row(t) + e];
          o_cpu[row_q + e] = acc;
        }
      }
  }
  compare(name + " O", o.read(), o_cpu);
  compare(name + " LSE", lse.read(), lse_cpu);
}

// What the reference costs the judge at the tasks' main shape (B=4, H=16, S=4096): printed, not checked.
void time_main_shapes() {
  for (const int d : {64, 128})
    for (const bool causal : {false, true}) {
      AttentionDims dims;
      dims.b = 4, dims.hq = dims.hkv = 16, dims.sq = dims.sk = 4096, dims.d = d, dims.causal = causal;
      dims.scale = 1.0f / std::sqrt(static_cast<float>(d));
      DeviceBuffer q(dims.q_elements() * 2), k(dims.kv_elements() * 2), v(dims.kv_elements() * 2),
          d_o(dims.q_elements() * 2), o(dims.q_elements() * 4), o_bf16(dims.q_elements() * 2),
          lse(dims.lse_elements() * 4), dq(dims.q_elements() * 4), dk(dims.kv_elements() * 4),
          dv(dims.kv_elements() * 4), delta(dims.lse_elements() * 4);
      for (DeviceBuffer* buffer : {&q, &k, &v, &d_o})
        PTXBENCH_CUDA(cudaMemset(buffer->get(), 0, buffer->bytes()));
      const auto bf16 = [](const DeviceBuffer& buffer) { return buffer.as<__nv_bfloat16>(); };
      const auto seconds = [](auto&& work) {
        work();  // the first call pays cuBLAS's start
        PTXBENCH_CUDA(cudaDeviceSynchronize());
        const auto start = std::chrono::steady_clock::now();
        work();
        PTXBENCH_CUDA(cudaDeviceSynchronize());
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      };
      const double forward = seconds([&] {
        attention_forward_reference(dims, bf16(q), bf16(k), bf16(v), o.as<float>(), lse.as<float>(), nullptr);
      });
      const double inputs = seconds([&] {  // the backward's O and LSE inputs: P rounded to bf16 for P V
        attention_forward_reference(dims, bf16(q), bf16(k), bf16(v), o.as<float>(), lse.as<float>(), nullptr,
                                    kAttentionScoreBlockBytes, true);
      });
      const double backward = seconds([&] {
        attention_backward_reference(dims, bf16(q), bf16(k), bf16(v), bf16(o_bf16), lse.as<float>(),
                                     bf16(d_o), dq.as<float>(), dk.as<float>(), dv.as<float>(),
                                     delta.as<float>(), nullptr);
      });
      // The time stage's check of one call: the reference of a sample (at kSampleShare's share).
      const AttentionSample sample = draw_attention_sample(dims.b, 1, dims.sq, dims.sk, true, {.key = 1});
      DeviceBuffer q_marks(dims.q_elements()), lse_marks(dims.lse_elements()), dk_marks(dims.kv_elements()),
          dv_marks(dims.kv_elements());
      const auto marks = [](const DeviceBuffer& buffer) { return buffer.as<uint8_t>(); };
      const double forward_sampled = seconds([&] {
        attention_forward_sample(dims, bf16(q), bf16(k), bf16(v), o.as<float>(), lse.as<float>(),
                                 AttentionSample{sample.query, {}}, marks(q_marks), marks(lse_marks),
                                 nullptr);
      });
      const double backward_sampled = seconds([&] {
        attention_backward_sample(dims, bf16(q), bf16(k), bf16(v), bf16(o_bf16), lse.as<float>(), bf16(d_o),
                                  dq.as<float>(), dk.as<float>(), dv.as<float>(), delta.as<float>(), sample,
                                  marks(q_marks), marks(dk_marks), marks(dv_marks), nullptr);
      });
      std::printf(
          "time  B=4 H=16 S=4096 D=%d%s: forward %.1f ms, backward %.1f ms; on the time stage's sample "
          "%.1f ms and %.1f ms; the backward's inputs %.1f ms\n",
          d, causal ? " causal" : "", forward * 1e3, backward * 1e3, forward_sampled * 1e3,
          backward_sampled * 1e3, inputs * 1e3);
    }
}

}  // namespace

int main() {
  std::mt19937_64 rng(20261130);
  const Case cases[] = {
      {1, 2, 2, 67, 67, 64, false},
      {1, 2, 2, 67, 67, 64, true},
      {2, 4, 2, 33, 97, 96, true},
      {1, 8, 1, 40, 130, 128, true},
      {1, 4, 4, 130, 40, 128, false},
      {1, 4, 2, 130, 40, 64, true},
      {2, 2, 2, 129, 129, 128, true},
      {1, 32, 4, 17, 45, 128, true},
      // Blocks of 3 query rows of one head (rows with no visible key among them), and of 2 of 3 KV heads.
      {1, 8, 2, 70, 90, 64, true, 3 * 90 * sizeof(float)},
      {2, 6, 3, 33, 50, 96, false, 2 * 33 * 50 * sizeof(float)},
      // Several blocks of 64 rows and of 64 keys, so that a sample leaves some out (and one whose limit on
      // the scores splits a sampled query block's KV heads and a key block's query rows).
      {2, 4, 2, 300, 280, 64, true},
      {1, 6, 3, 200, 330, 128, false, 2 * 100 * 64 * sizeof(float)},
      // Long rows: the softmax's shared-memory row cache past 48 KB (asked for), and past its 64 KB (unused).
      {1, 1, 1, 4, 13000, 64, true},
      {1, 1, 1, 4, 17000, 64, false},
  };
  for (const Case& c : cases) run_case(c, rng);
  run_decode_case(5, 32, 8, 128, 64, 1000, 2100, rng);  // ragged, partial pages (a task's check shape)
  run_decode_case(3, 8, 2, 64, 1, 77, 100, rng);
  run_decode_case(4, 4, 4, 256, 16, 300, 700, rng);
  run_paged_prefill_case(5, 2, 300, 77, 130, 32, 8, 128, 64, rng);  // a task's check shape: partial pages
  run_paged_prefill_case(3, 1, 130, 1, 0, 4, 2, 64, 16, rng);       // no prefix, a one-token sequence
  run_paged_prefill_case(2, 1, 64, 1, 1000, 8, 8, 96, 1, rng);      // one new token after a long prefix
  time_main_shapes();
  std::printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
