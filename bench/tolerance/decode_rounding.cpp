// The error of an honest tensor-core decode on the short sequences of the paged-decode tasks: a float64 model
// of the rounding the reference kernel (solutions/reference/attention_decode_paged_sm90a.cu) does, against
// the exact O. Scores ~ N(0,1) (q.k scaled by 1/sqrt(D) with Q, K ~ N(0,1)) and V ~ N(0,1) in bf16, as the
// runner draws them. Each of four warps takes 16 tokens of a 64-token tile and keeps its own maximum; P =
// exp(s - max) is rounded to bf16 for the P V MMA while the row sum takes it unrounded; the warps merge in
// fp32 and O is rounded to bf16 once. Rows of up to 64 tokens (one tile), where the weights are large.
// Prints, per length, the largest error and the share of elements beyond atol + 0.01 |ref| for each atol.
//   g++ -O2 -o decode_rounding bench/tolerance/decode_rounding.cpp && ./decode_rounding [rows per length]
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

float bf16(float x) {  // to the nearest bf16, ties to even
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000u;
  std::memcpy(&x, &u, 4);
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  const int rows = argc > 1 ? std::atoi(argv[1]) : 20000;
  constexpr int D = 128, kWarps = 4, kWarpTokens = 16;
  const double atols[] = {0.002, 0.003, 0.005, 0.01};
  std::mt19937_64 rng(1);
  std::normal_distribution<float> normal(0, 1);
  for (int n : {2, 3, 4, 6, 8, 12, 16, 32, 64}) {
    long beyond[4] = {};
    double worst = 0;
    for (int row = 0; row < rows; ++row) {
      std::vector<float> s(n), v(static_cast<size_t>(n) * D);
      for (float& x : s) x = normal(rng);
      for (float& x : v) x = bf16(normal(rng));
      const double max_all = *std::max_element(s.begin(), s.end());
      double warp_max[kWarps];
      std::fill(warp_max, warp_max + kWarps, -INFINITY);
      for (int t = 0; t < n; ++t) warp_max[t / kWarpTokens] = std::max(warp_max[t / kWarpTokens], double(s[t]));
      for (int d = 0; d < D; ++d) {
        double exact = 0, sum = 0, o[kWarps] = {}, l[kWarps] = {};
        for (int t = 0; t < n; ++t) {
          const double p = std::exp(s[t] - max_all);
          exact += p * v[t * D + d];
          sum += p;
          const int w = t / kWarpTokens;
          const float pw = std::exp(s[t] - static_cast<float>(warp_max[w]));
          o[w] += double(bf16(pw)) * v[t * D + d];
          l[w] += pw;
        }
        exact /= sum;
        double merged = 0, merged_sum = 0;
        for (int w = 0; w < kWarps; ++w)
          if (l[w] > 0) {
            const double weight = std::exp(warp_max[w] - max_all);
            merged += o[w] * weight;
            merged_sum += l[w] * weight;
          }
        const double error = std::fabs(double(bf16(static_cast<float>(merged / merged_sum))) - exact);
        worst = std::max(worst, error);
        for (int a = 0; a < 4; ++a)
          if (error > atols[a] + 0.01 * std::fabs(exact)) ++beyond[a];
      }
    }
    std::printf("%2d keys: largest error %.4f; beyond atol", n, worst);
    for (int a = 0; a < 4; ++a)
      std::printf(" %.3f: %.1e%s", atols[a], double(beyond[a]) / (double(rows) * D), a < 3 ? "," : "\n");
  }
}
