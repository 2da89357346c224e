// Reference solution for the Hopper attention-backward tasks: dQ, dK, dV from Q, K, V, O, LSE and dO, bf16 tensors,
// fp32 statistics and accumulation (include/ptxbench/abi.h). Written with the kit (kits/hopper/ptx, kits/common/ptx);
// the rules it relies on are in their contracts.md. The design is FlashAttention-3's backward (Shah et al., 2024), in three
// kernels on the caller's stream:
//
//   1. prep: eight threads per query row (b, h, i): Delta_i = dO_i . O_i and lse2_i = LSE_i * log2(e) into the
//      workspace (a row with no visible key, LSE = -inf, gets lse2 = +inf so that every exponent of its row is -inf
//      and its probabilities are exactly 0, never NaN), and zeroes the row of the fp32 dQ accumulator. The
//      statistics are padded to a multiple of 128 rows per (b, h) with lse2 = +inf, Delta = 0, so query rows past
//      Sq need no mask.
//   2. main: one CTA per (b, KV head g, block of 128 keys). It keeps the block's K and V in shared memory and its
//      dK, dV in registers, and loops over the query heads of group g (GQA: dK and dV sum over them here, with no
//      atomics) and their blocks of kBM query rows, one block a step (causal: only the blocks that see a key of the
//      block), each key block starting at its own place in that cycle so that neighbouring CTAs add into different
//      dQ tiles. kBM is 128 at D = 64 (as in FlashAttention-3: a step of 64 rows has too little tensor work to hide
//      the consumers' meeting behind), 64 at D = 96 and 128, where the registers allow no more.
//      - Warpgroup 0 is the producer: one thread loads K and V once, then for each step the Q and dO tiles and the
//        kBM lse2 and Delta values, all by TMA (Q, K, V, dO through 4-D [B, S, H, D] maps, 128B swizzle, 64 columns
//        of D per box; rows past Sq or Sk load as zeros) into a two-stage ring of mbarriers.
//      - Warpgroups 1 and 2 are consumers, 64 keys each. Per step, transposed so that the key index is the row of
//        every accumulator: S^T = K Q^T and dP^T = V dO^T (SS wgmma, m64 n kBM, K = D); P^T = exp2(S^T scale
//        log2e - lse2) and dS^T = P^T (dP^T - Delta) in fp32 on the accumulators (kBM = 128: P^T as rounded for dV);
//        then dV += P^T dO and dK += dS^T Q with RS wgmma (m64nD, K = kBM queries): P^T and dS^T go from the
//        accumulators to A fragments in registers (wgmma_acc_to_a), and dO and Q are the MN-major B operands.
//        FlashAttention-3 computes S^T this way too (its SdP_swapAB); it spares two shared-memory round trips of P
//        and dS per step.
//      - dQ += dS K needs dS with the query index as rows: each consumer stores its dS^T (bf16, stmatrix, 128B
//        swizzle) into [128 keys][64 queries] boxes, one per 64 queries of the step (double-buffered by step),
//        which is dS in MN-major form; after a named barrier over both consumers, a wgmma reads it as the MN-major
//        A operand and K as the MN-major B operand. Each consumer computes one 64 x 64 tile of the step's dQ over
//        all 128 keys: D = 64, the rows of its 64 queries; D = 128 (and 96, padded to 128), its 64 columns.
//      - The 64 x 64 fp32 dQ tile goes to shared memory (128B-swizzled fp32 boxes of 32 columns) and is added
//        into the fp32 accumulator in the workspace by a TMA reduce-add (4-D map [B, Sq, Hq, D], which clips rows
//        past Sq and columns past D). Atomic reduction rather than a separate dQ pass: a dQ pass would recompute S
//        and dP (two more of the five GEMMs); the reduce-add costs 16 KB of L2 traffic per 64 x 64 tile, 32 KB a
//        step.
//      - Overlap inside a consumer: dP^T runs while P^T is computed, dV += P^T dO while dS^T is computed and stored.
//      - setmaxnreg gives the consumers 240 registers and the producer 24 (240 + 240 + 24 = 3 x 168), as
//        FlashAttention-3 does: with 232, ptxas serialised the wgmmas (C7512) for D = 96 and 128.
//      - Epilogue: dK (times scale) and dV to bf16, stored from registers, clipped to Sk and D.
//   3. convert: dQ = bf16(scale * accumulator), element-wise (the accumulator has dQ's [B, Sq, Hq, D] layout).
//
// Masking, only in the steps that need it: keys past Sk (the last key block) and causal j > i + Sk - Sq (the blocks
// that cross the bottom-right-aligned diagonal) get S = -inf, hence P = dS = 0. Keys past Sk load as zero, so they
// add nothing to dQ either; their dK and dV rows are never stored.
// D = 96 is padded to 128 in shared memory (TMA zero-fills columns 96..127): S and dP use 6 k-steps of 16, but dK,
// dV and dQ use N = 128, so that every MN-major operand is whole 64-column swizzle atoms.
// Limits: D is 64, 96 or 128 (the ABI's); any B, Hq (a multiple of Hkv), Sq, Sk >= 1.
#include <ptxbench/abi.h>

#include <hopper.cuh>
#include <math.h>

using namespace ptxkit::hopper;

namespace {

__device__ __forceinline__ float2 unpack_bf16x2(uint32_t pair) {  // pack_bf16x2's inverse: low half in x
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&pair));
}

constexpr int kBN = 128;          // keys per CTA (64 per consumer warpgroup)
constexpr int kStatRows = 128;    // the statistics are padded to a multiple of every step's query rows
constexpr int kStages = 2;        // Q / dO / statistics ring
constexpr int kConsumers = 2;
constexpr int kThreads = 128 * (kConsumers + 1);
constexpr int kRowBytes = 128;    // one 64-column bf16 box row, the 128B swizzle span
constexpr float kLog2e = 1.4426950408889634f;
constexpr uint32_t kBarDS = 1;    // named barrier: both consumers stored their dS^T (256 threads)
constexpr uint32_t kBarDQ = 2;    // 2, 3: a consumer's own dQ staging buffer (128 threads)

template <int D>
struct Config {
  // Query rows per step: 128 at D = 64, where a step of 64 rows has too little tensor work to hide the consumers'
  // meeting behind (FlashAttention-3 steps by 128 rows at D = 64 too); 64 otherwise, for the registers.
  static constexpr int kBM = D == 64 ? 128 : 64;
  static constexpr int kBlocksD = (D + 63) / 64;                 // 64-column boxes per row
  static constexpr int kDp = 64 * kBlocksD;                      // D padded to whole boxes (N of dK, dV)
  static constexpr int kKSteps = D / 16;                         // k-steps of S^T and dP^T
  static constexpr int kTileBox = kBM * kRowBytes;               // one box of a Q or dO tile, 8 KB
  static constexpr int kTileBytes = kBlocksD * kTileBox;
  static constexpr int kKVBox = kBN * kRowBytes;                 // one box of the K or V block, 16 KB
  static constexpr int kKVBytes = kBlocksD * kKVBox;
  static constexpr int kDSBox = kBN * kRowBytes;                 // dS^T, [128 keys][64 queries] bf16, 16 KB
  static constexpr int kDSBytes = (kBM / 64) * kDSBox;           // one box per 64 queries of the step
  static constexpr int kDQBox = 64 * 32 * 4;                     // [64 rows][32 fp32], 8 KB
  static constexpr int kDQBytes = 2 * kDQBox;                    // one consumer's 64 x 64 fp32 dQ tile
  static constexpr int kStatBytes = 2 * kBM * 4;                 // lse2[64], Delta[64]
  static constexpr int kOffK = 0;
  static constexpr int kOffV = kOffK + kKVBytes;
  static constexpr int kOffQ = kOffV + kKVBytes;
  static constexpr int kOffDO = kOffQ + kStages * kTileBytes;
  static constexpr int kOffDS = kOffDO + kStages * kTileBytes;
  static constexpr int kOffDQ = kOffDS + 2 * kDSBytes;
  static constexpr int kOffStat = kOffDQ + kConsumers * kDQBytes;
  static constexpr int kOffBar = kOffStat + kStages * kStatBytes;
  static constexpr int kBarriers = 1 + 2 * kStages;              // kv full, then full / empty per stage
  static constexpr int kSmemBytes = kOffBar + kBarriers * 8 + 1024;  // + slack to align the base to 1024
  static constexpr uint32_t kStageTx = 2 * kTileBytes + kStatBytes;
  static_assert(D % 16 == 0 && D <= 128, "D is 64, 96 or 128");
  static_assert(kStatRows % kBM == 0, "statistics padding");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory budget");
};

struct Problem {
  int B, Hq, Hkv, Sq, Sk, causal;
  int key_blocks;   // ceil(Sk / kBN)
  int q_blocks;     // ceil(Sq / kBM), kBM of the kernel's D
  float scale;      // dK's factor
  float scale_log2; // scale * log2(e), the exponent's
};

// The CTA's (batch, KV head, key block). Causal: key block 0 sees the most query rows, so all CTAs of block 0 come
// first (the longest work starts first). Otherwise the key blocks of one (b, g) are neighbours, so the CTAs
// running at one time read the same Q and dO from L2.
__device__ __forceinline__ void cta_work(const Problem& p, int& b, int& g, int& n) {
  const int bg_count = p.B * p.Hkv;
  int bg;
  if (p.causal) {
    n = blockIdx.x / bg_count;
    bg = blockIdx.x % bg_count;
  } else {
    n = blockIdx.x % p.key_blocks;
    bg = blockIdx.x / p.key_blocks;
  }
  b = bg / p.Hkv;
  g = bg % p.Hkv;
}

// First block of `rows` query rows that sees key j0 (causal: query i sees key j iff j <= i + Sk - Sq).
__device__ __forceinline__ int first_q_block(const Problem& p, int j0, int rows) {
  if (!p.causal) return 0;
  const int i = j0 - (p.Sk - p.Sq);
  return i <= 0 ? 0 : i / rows;
}

template <int D>
__global__ void __launch_bounds__(kThreads, 1)
    attention_bwd_kernel(const __grid_constant__ CUtensorMap map_q, const __grid_constant__ CUtensorMap map_k,
                         const __grid_constant__ CUtensorMap map_v, const __grid_constant__ CUtensorMap map_do,
                         const __grid_constant__ CUtensorMap map_stat, const __grid_constant__ CUtensorMap map_dq,
                         __nv_bfloat16* __restrict__ dK, __nv_bfloat16* __restrict__ dV, const Problem p) {
  using C = Config<D>;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  uint64_t* kv_full = reinterpret_cast<uint64_t*>(smem + C::kOffBar);
  uint64_t* full = kv_full + 1;
  uint64_t* empty = full + kStages;

  int b, g, n;
  cta_work(p, b, g, n);
  const int j0 = n * kBN;
  const int group = p.Hq / p.Hkv;
  constexpr int kBM = C::kBM;
  const int m_begin = first_q_block(p, j0, kBM), m_count = p.q_blocks - m_begin;
  // The t-th query block of a head's loop. Each key block starts at its own place in the cycle, so the CTAs of one
  // (b, g) do not reduce-add into the same dQ tile at the same time.
  const auto q_block = [&](int t) { return m_begin + (t + n) % m_count; };
  const int warpgroup = threadIdx.x / 128;

  if (threadIdx.x == 0) {
    prefetch_tensormap(&map_q);
    prefetch_tensormap(&map_k);
    prefetch_tensormap(&map_v);
    prefetch_tensormap(&map_do);
    prefetch_tensormap(&map_stat);
    prefetch_tensormap(&map_dq);
    mbarrier_init(kv_full, 1);
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&full[s], 1);                // the producer's arrive_expect_tx
      mbarrier_init(&empty[s], kConsumers * 4);  // one arrive per consumer warp
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (warpgroup == 0) {
    // ------------------------------------------------------------------------------------------ producer
    setmaxnreg_dec<24>();
    if (threadIdx.x == 0) {
      mbarrier_arrive_expect_tx(kv_full, 2 * C::kKVBytes);
      for (int bd = 0; bd < C::kBlocksD; ++bd) {
        tma_load_4d(smem + C::kOffK + bd * C::kKVBox, &map_k, kv_full, 64 * bd, g, j0, b);
        tma_load_4d(smem + C::kOffV + bd * C::kKVBox, &map_v, kv_full, 64 * bd, g, j0, b);
      }
      const int bh_count = p.B * p.Hq;
      int stage = 0;
      uint32_t phase = 0;
      for (int hh = 0; hh < group; ++hh) {
        const int h = g * group + hh, bh = b * p.Hq + h;
        for (int t = 0; t < m_count; ++t) {
          const int m = q_block(t);
          mbarrier_wait(&empty[stage], phase ^ 1);  // the first pass does not block (contract: mbarrier phases)
          mbarrier_arrive_expect_tx(&full[stage], C::kStageTx);  // whole boxes, zero-filled parts included
          uint8_t* q_tile = smem + C::kOffQ + stage * C::kTileBytes;
          uint8_t* do_tile = smem + C::kOffDO + stage * C::kTileBytes;
          for (int bd = 0; bd < C::kBlocksD; ++bd) {
            tma_load_4d(q_tile + bd * C::kTileBox, &map_q, &full[stage], 64 * bd, h, m * kBM, b);
            tma_load_4d(do_tile + bd * C::kTileBox, &map_do, &full[stage], 64 * bd, h, m * kBM, b);
          }
          float* stat = reinterpret_cast<float*>(smem + C::kOffStat + stage * C::kStatBytes);
          tma_load_2d(stat, &map_stat, &full[stage], m * kBM, bh);                 // lse2
          tma_load_2d(stat + kBM, &map_stat, &full[stage], m * kBM, bh_count + bh);  // Delta
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
    }
    __syncwarp();
  } else {
    // ------------------------------------------------------------------------------------------ consumers
    setmaxnreg_inc<240>();
    const int wg = warpgroup - 1;  // which 64 keys of the block
    const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
    const int key0 = j0 + wg * 64;
    const int diag = p.Sk - p.Sq;  // causal: key j visible to query i iff j <= i + diag

    float dv[C::kDp / 2], dk[C::kDp / 2];
#pragma unroll
    for (int i = 0; i < C::kDp / 2; ++i) {
      dv[i] = 0.0f;
      dk[i] = 0.0f;
    }

    // K-major descriptors of this warpgroup's 64 rows of K and V (A of S^T and dP^T); box bd at + bd * kKVBox.
    const uint64_t desc_k_rows = make_desc_k128(smem + C::kOffK + wg * 64 * kRowBytes);
    const uint64_t desc_v_rows = make_desc_k128(smem + C::kOffV + wg * 64 * kRowBytes);
    // This warpgroup's 64 x 64 tile of the step's dQ = dS K, over all 128 keys: the rows of its query box (D = 64:
    // 128 queries, two boxes) and the columns of its D box (D = 96, 128: two boxes). MN-major descriptors: A = dS
    // (stored [keys][queries]), B = K (stored [keys][D]).
    static_assert((C::kBM / 64) * (C::kDp / 64) == kConsumers, "one dQ tile per consumer");
    const int dq_row0 = C::kBM == 128 ? 64 * wg : 0, dq_col0 = C::kDp == 128 ? 64 * wg : 0;
    const uint64_t desc_dq_b = make_desc_mn128(smem + C::kOffK + (dq_col0 / 64) * C::kKVBox, C::kKVBox);
    // This thread's row of each stmatrix_x4 in the dS^T buffer (contract: ldmatrix and stmatrix).
    const int ds_row = wg * 64 + warp * 16 + (lane / 8 % 2) * 8 + lane % 8;

    mbarrier_wait(kv_full, 0);

    int stage = 0;
    uint32_t phase = 0;
    int step = 0;
    for (int hh = 0; hh < group; ++hh) {
      const int h = g * group + hh;
      for (int t = 0; t < m_count; ++t, ++step) {
        const int m0 = q_block(t) * kBM;
        mbarrier_wait(&full[stage], phase);
        uint8_t* q_tile = smem + C::kOffQ + stage * C::kTileBytes;
        uint8_t* do_tile = smem + C::kOffDO + stage * C::kTileBytes;
        const float* lse2 = reinterpret_cast<const float*>(smem + C::kOffStat + stage * C::kStatBytes);
        const float* delta = lse2 + kBM;

        // ---- S^T = K_w Q^T and dP^T = V_w dO^T (64 keys x kBM queries each), two commit groups
        float s[kBM / 2], dp[kBM / 2];
        const uint64_t desc_q = make_desc_k128(q_tile), desc_do = make_desc_k128(do_tile);
        wgmma_fence_operand(s);
        wgmma_fence_operand(dp);
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < C::kKSteps; ++k)
          wgmma_bf16_ss<kBM>(s, desc_advance(desc_k_rows, (k / 4) * C::kKVBox + 32 * (k % 4)),
                            desc_advance(desc_q, (k / 4) * C::kTileBox + 32 * (k % 4)), k > 0);
        wgmma_commit();
#pragma unroll
        for (int k = 0; k < C::kKSteps; ++k)
          wgmma_bf16_ss<kBM>(dp, desc_advance(desc_v_rows, (k / 4) * C::kKVBox + 32 * (k % 4)),
                            desc_advance(desc_do, (k / 4) * C::kTileBox + 32 * (k % 4)), k > 0);
        wgmma_commit();
        wgmma_wait<1>();  // S^T is ready; dP^T may still run
        wgmma_fence_operand(s);

        // ---- P^T = exp2(S^T * scale * log2e - lse2[query]): element i of thread tid is key
        // key0 + wgmma_acc_row(i, tid), query m0 + wgmma_acc_col(i, tid) = m0 + 8 (i / 4) + 2 (tid % 4) + i % 2.
        const bool need_mask = key0 + 63 >= p.Sk || (p.causal && key0 + 63 > m0 + diag);
        if (need_mask) {
#pragma unroll
          for (int i = 0; i < kBM / 2; ++i) {
            const int key = key0 + wgmma_acc_row(i, tid), q = m0 + wgmma_acc_col(i, tid);
            if (key >= p.Sk || (p.causal && key > q + diag)) s[i] = -INFINITY;
          }
        }
#pragma unroll
        for (int a = 0; a < kBM / 8; ++a) {
          const float2 l = *reinterpret_cast<const float2*>(lse2 + 8 * a + 2 * (tid % 4));
          s[4 * a + 0] = exp2_approx(fmaf(s[4 * a + 0], p.scale_log2, -l.x));
          s[4 * a + 1] = exp2_approx(fmaf(s[4 * a + 1], p.scale_log2, -l.y));
          s[4 * a + 2] = exp2_approx(fmaf(s[4 * a + 2], p.scale_log2, -l.x));
          s[4 * a + 3] = exp2_approx(fmaf(s[4 * a + 3], p.scale_log2, -l.y));
        }
        uint32_t pa[kBM / 16][4];  // P^T as the A operand of dV += P^T dO (k-step j = queries 16j .. 16j + 15)
        wgmma_acc_to_a<kBM>(s, pa);

        // ---- dV += P^T dO (RS, m64 n kDp, K = kBM queries; dO is the MN-major B operand: K index = query row,
        // 128-byte rows of 64 columns of D, the D boxes kTileBox apart). Issued now, it runs while dS^T is made.
#pragma unroll
        for (int j = 0; j < kBM / 16; ++j) wgmma_fence_operand(pa[j]);
        wgmma_fence_operand(dv);
        wgmma_fence();
        const uint64_t desc_do_mn = make_desc_mn128(do_tile, C::kTileBox);
#pragma unroll
        for (int j = 0; j < kBM / 16; ++j) wgmma_bf16_rs<C::kDp, 1>(dv, pa[j], desc_advance(desc_do_mn, 2048 * j), 1);
        wgmma_commit();

        wgmma_wait<1>();  // dP^T is ready (dV may still run; dv and pa stay untouched until wgmma_wait<0>)
        wgmma_fence_operand(dp);
        // ---- dS^T = P^T (dP^T - Delta[query]). kBM = 64: with P^T in fp32 (s). kBM = 128: with P^T as rounded
        // for dV (element 4a + e is half e % 2 of pa[a / 2][2 (a % 2) + e / 2]), since s, dP^T, pa, dK and dV do not
        // fit in the registers together (ptxas serialises the wgmmas, C7512). It costs accuracy: the worst error
        // over the d64 tasks' checks went from 0.38 to 0.59 of the tolerance (bench/reference-attention.md).
#pragma unroll
        for (int a = 0; a < kBM / 8; ++a) {
          const float2 dl = *reinterpret_cast<const float2*>(delta + 8 * a + 2 * (tid % 4));
          float2 p01, p23;
          if constexpr (kBM == 64) {
            p01 = make_float2(s[4 * a + 0], s[4 * a + 1]);
            p23 = make_float2(s[4 * a + 2], s[4 * a + 3]);
          } else {
            p01 = unpack_bf16x2(pa[a / 2][2 * (a % 2)]);
            p23 = unpack_bf16x2(pa[a / 2][2 * (a % 2) + 1]);
          }
          dp[4 * a + 0] = p01.x * (dp[4 * a + 0] - dl.x);
          dp[4 * a + 1] = p01.y * (dp[4 * a + 1] - dl.y);
          dp[4 * a + 2] = p23.x * (dp[4 * a + 2] - dl.x);
          dp[4 * a + 3] = p23.y * (dp[4 * a + 3] - dl.y);
        }
        uint32_t da[kBM / 16][4];  // dS^T as the A operand of dK += dS^T Q
        wgmma_acc_to_a<kBM>(dp, da);

        // ---- dS^T to shared memory for dQ: da[j] is exactly the stmatrix_x4 register set of column blocks 2j and
        // 2j + 1 (queries 16j .. 16j + 15), both row halves: matrix q = lane / 8 is column block 2j + q / 2, row half
        // q % 2. Queries 64b .. 64b + 63 go to box b. 128B swizzle: 16-byte chunk c of row r at c ^ (r % 8), and
        // ds_row % 8 == lane % 8.
        uint8_t* ds_buf = smem + C::kOffDS + (step & 1) * C::kDSBytes;
#pragma unroll
        for (int j = 0; j < kBM / 16; ++j)
          stmatrix_x4(ds_buf + (j / 4) * C::kDSBox + ds_row * kRowBytes +
                          (((2 * (j % 4) + lane / 16) ^ (lane % 8)) * 16),
                      da[j]);
        fence_proxy_async_shared();  // generic writes, read next by wgmma (async proxy)

        // ---- dK += dS^T Q (RS, as dV; Q is the MN-major B operand)
#pragma unroll
        for (int j = 0; j < kBM / 16; ++j) wgmma_fence_operand(da[j]);
        wgmma_fence_operand(dk);
        wgmma_fence();
        const uint64_t desc_q_mn = make_desc_mn128(q_tile, C::kTileBox);
#pragma unroll
        for (int j = 0; j < kBM / 16; ++j) wgmma_bf16_rs<C::kDp, 1>(dk, da[j], desc_advance(desc_q_mn, 2048 * j), 1);
        wgmma_commit();

        // ---- dQ tile = dS K (SS, both MN-major), once both consumers stored their dS^T
        bar_sync(kBarDS, 256);
        float dq[32];
        const uint64_t desc_dq_a = make_desc_mn128(ds_buf + (dq_row0 / 64) * C::kDSBox, C::kDSBox);
        wgmma_fence_operand(dq);
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < kBN / 16; ++k)
          wgmma_bf16_ss<64, 1, 1>(dq, desc_advance(desc_dq_a, 2048 * k), desc_advance(desc_dq_b, 2048 * k), k > 0);
        wgmma_commit();
        wgmma_wait<0>();
        wgmma_fence_operand(dq);
        wgmma_fence_operand(dv);
        wgmma_fence_operand(dk);
#pragma unroll
        for (int j = 0; j < kBM / 16; ++j) {
          wgmma_fence_operand(pa[j]);
          wgmma_fence_operand(da[j]);
        }
        // Every read of this stage (wgmma and the statistics) is done: hand it back to the producer.
        if (lane == 0) mbarrier_arrive(&empty[stage]);

        // ---- dQ tile -> shared memory (two [64][32] fp32 boxes, 128B swizzle) -> TMA reduce-add. Element i of
        // thread tid: row wgmma_acc_row(i, tid), columns c, c + 1 (c = wgmma_acc_col(i, tid) even, one 16-byte
        // chunk). The reduction is atomic per element: the CTAs of the other key blocks add into the same tiles.
        uint8_t* dq_buf = smem + C::kOffDQ + wg * C::kDQBytes;
        if (tid == 0) tma_store_wait_read<0>();  // the previous step's reduction has read the buffer
        bar_sync(kBarDQ + wg, 128);
#pragma unroll
        for (int i = 0; i < 32; i += 2) {
          const int r = wgmma_acc_row(i, tid), c = wgmma_acc_col(i, tid), cc = c % 32;
          *reinterpret_cast<float2*>(dq_buf + (c / 32) * C::kDQBox + r * kRowBytes + (((cc / 4) ^ (r % 8)) * 16) +
                                     (cc % 4) * 4) = make_float2(dq[i], dq[i + 1]);
        }
        fence_proxy_async_shared();
        bar_sync(kBarDQ + wg, 128);
        if (tid == 0) {
#pragma unroll
          for (int box = 0; box < 2; ++box)
            if (dq_col0 + 32 * box < D)  // D = 96: columns 96..127 are padding
              tma_reduce_add_4d(&map_dq, dq_buf + box * C::kDQBox, dq_col0 + 32 * box, h, m0 + dq_row0, b);
          tma_store_commit();
        }

        if (++stage == kStages) {
          stage = 0;
          phase ^= 1;
        }
      }
    }
    if (tid == 0) tma_store_wait<0>();  // the reductions finish before the CTA's shared memory goes away

    // ---- epilogue: dK = scale * sum dS^T Q, dV = sum P^T dO, bf16, rows past Sk and columns past D clipped
#pragma unroll
    for (int i = 0; i < C::kDp / 2; i += 2) {
      const int key = key0 + wgmma_acc_row(i, tid), c = wgmma_acc_col(i, tid);
      if (key < p.Sk && c < D) {
        const size_t at = ((static_cast<size_t>(b) * p.Sk + key) * p.Hkv + g) * D + c;
        *reinterpret_cast<uint32_t*>(dK + at) = pack_bf16x2(dk[i] * p.scale, dk[i + 1] * p.scale);
        *reinterpret_cast<uint32_t*>(dV + at) = pack_bf16x2(dv[i], dv[i + 1]);
      }
    }
  }
}

// Eight threads per query row (b, h, i) of the padded statistics, four rows a warp: Delta and lse2 (see the top),
// and zeroes the row of the fp32 dQ accumulator ([B][Sq][Hq][D], like dQ). 16-byte loads and stores: memory-bound,
// it needs every thread's accesses wide (one warp per row moved a third of what the memory can at D = 64).
constexpr int kPrepRowThreads = 8;
__global__ void __launch_bounds__(256)
    attention_bwd_prep_kernel(const __nv_bfloat16* __restrict__ O, const __nv_bfloat16* __restrict__ dO,
                              const float* __restrict__ LSE, float* __restrict__ stat, float* __restrict__ dq_acc,
                              int B, int Hq, int Sq, int sq_pad, int D) {
  const long long row = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / kPrepRowThreads;
  const int sub = threadIdx.x % kPrepRowThreads;
  // The row's lanes: the only ones that reduce together (the rows of one warp may take different branches below).
  const unsigned row_lanes = ((1u << kPrepRowThreads) - 1) << (threadIdx.x % 32 / kPrepRowThreads * kPrepRowThreads);
  const long long bh_count = static_cast<long long>(B) * Hq;
  if (row >= bh_count * sq_pad) return;  // whole rows: blockDim.x is a multiple of kPrepRowThreads
  const long long bh = row / sq_pad;
  const int i = static_cast<int>(row % sq_pad);
  float lse2 = INFINITY, delta = 0.0f;
  if (i < Sq) {  // the row's eight threads take the same branch (not the warp's: Sq need not be a multiple of 4)
    const int b = static_cast<int>(bh / Hq), h = static_cast<int>(bh % Hq);
    const long long at = ((static_cast<long long>(b) * Sq + i) * Hq + h) * D;
    float partial = 0.0f;
    for (int c = 8 * sub; c < D; c += 8 * kPrepRowThreads) {  // D is a multiple of 8: 8 bf16 = 16 bytes
      const uint4 o = *reinterpret_cast<const uint4*>(O + at + c), d = *reinterpret_cast<const uint4*>(dO + at + c);
      const uint32_t ow[4] = {o.x, o.y, o.z, o.w}, dw[4] = {d.x, d.y, d.z, d.w};
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 of = unpack_bf16x2(ow[k]), df = unpack_bf16x2(dw[k]);
        partial += of.x * df.x + of.y * df.y;
      }
    }
#pragma unroll
    for (int off = kPrepRowThreads / 2; off > 0; off /= 2) partial += __shfl_xor_sync(row_lanes, partial, off);
    delta = partial;
    const float lse = LSE[bh * Sq + i];
    lse2 = lse == -INFINITY ? INFINITY : lse * kLog2e;  // no visible key: every probability of the row is 0
    for (int c = 4 * sub; c < D; c += 4 * kPrepRowThreads)
      *reinterpret_cast<float4*>(dq_acc + at + c) = make_float4(0, 0, 0, 0);
  }
  if (sub == 0) {
    stat[bh * sq_pad + i] = lse2;
    stat[(bh_count + bh) * sq_pad + i] = delta;
  }
}

// dQ = bf16(scale * accumulator), four elements per thread (D is a multiple of 4).
__global__ void __launch_bounds__(256)
    attention_bwd_dq_kernel(const float* __restrict__ dq_acc, __nv_bfloat16* __restrict__ dQ, long long quads,
                            float scale) {
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < quads;
       k += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float4 v = reinterpret_cast<const float4*>(dq_acc)[k];
    reinterpret_cast<uint2*>(dQ)[k] =
        make_uint2(pack_bf16x2(v.x * scale, v.y * scale), pack_bf16x2(v.z * scale, v.w * scale));
  }
}

// Workspace: the fp32 dQ accumulator, then lse2 and Delta ([2][B * Hq][Sq rounded up to 64]).
size_t dq_acc_bytes(int B, int Hq, int Sq, int D) {
  // Rounded up to 256 bytes, the alignment the ABI gives the workspace, for the statistics that follow.
  return (static_cast<size_t>(B) * Hq * Sq * D * sizeof(float) + 255) & ~size_t(255);
}
int padded_sq(int Sq) { return (Sq + kStatRows - 1) / kStatRows * kStatRows; }
size_t stat_bytes(int B, int Hq, int Sq) { return 2 * static_cast<size_t>(B) * Hq * padded_sq(Sq) * sizeof(float); }

template <int D>
int launch(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, const __nv_bfloat16* dO,
           float* dq_acc, float* stat, __nv_bfloat16* dK, __nv_bfloat16* dV, Problem p, cudaStream_t stream) {
  using C = Config<D>;
  p.q_blocks = (p.Sq + C::kBM - 1) / C::kBM;
  const int sq_pad = padded_sq(p.Sq);
  CUtensorMap map_q, map_k, map_v, map_do, map_stat, map_dq;
  if (make_tensor_map_bshd_bf16(&map_q, Q, p.B, p.Sq, p.Hq, D, C::kBM) != cudaSuccess) return 3;
  if (make_tensor_map_bshd_bf16(&map_do, dO, p.B, p.Sq, p.Hq, D, C::kBM) != cudaSuccess) return 3;
  if (make_tensor_map_bshd_bf16(&map_k, K, p.B, p.Sk, p.Hkv, D, kBN) != cudaSuccess) return 3;
  if (make_tensor_map_bshd_bf16(&map_v, V, p.B, p.Sk, p.Hkv, D, kBN) != cudaSuccess) return 3;
  {
    const uint64_t dims[2] = {static_cast<uint64_t>(sq_pad), 2ull * p.B * p.Hq};
    const uint64_t strides[1] = {static_cast<uint64_t>(sq_pad) * sizeof(float)};
    const uint32_t box[2] = {C::kBM, 1};
    if (make_tensor_map(&map_stat, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, stat, dims, strides, box,
                        CU_TENSOR_MAP_SWIZZLE_NONE) != cudaSuccess)
      return 3;
  }
  {
    const uint64_t dims[4] = {D, static_cast<uint64_t>(p.Hq), static_cast<uint64_t>(p.Sq),
                              static_cast<uint64_t>(p.B)};
    const uint64_t strides[3] = {D * sizeof(float), static_cast<uint64_t>(p.Hq) * D * sizeof(float),
                                 static_cast<uint64_t>(p.Sq) * p.Hq * D * sizeof(float)};
    const uint32_t box[4] = {32, 1, 64, 1};  // a consumer's 64 x 64 tile in two boxes of 32 fp32 = 128 bytes
    if (make_tensor_map(&map_dq, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, dq_acc, dims, strides, box,
                        CU_TENSOR_MAP_SWIZZLE_128B) != cudaSuccess)
      return 3;
  }
  if (cudaFuncSetAttribute(attention_bwd_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes) !=
      cudaSuccess)
    return 4;
  const long long ctas = static_cast<long long>(p.key_blocks) * p.B * p.Hkv;
  if (ctas > 0x7fffffffLL) return 4;
  attention_bwd_kernel<D><<<static_cast<unsigned>(ctas), kThreads, C::kSmemBytes, stream>>>(
      map_q, map_k, map_v, map_do, map_stat, map_dq, dK, dV, p);
  return cudaGetLastError() == cudaSuccess ? 0 : 5;
}

}  // namespace

extern "C" size_t ptxbench_attention_backward_workspace_bytes(int B, int Hq, int, int Sq, int, int D, int) {
  if (B <= 0 || Hq <= 0 || Sq <= 0 || D <= 0) return 0;
  return dq_acc_bytes(B, Hq, Sq, D) + stat_bytes(B, Hq, Sq);
}

extern "C" int ptxbench_attention_backward_bf16(const __nv_bfloat16* Q, const __nv_bfloat16* K,
                                                const __nv_bfloat16* V, const __nv_bfloat16* O,
                                                const float* LSE, const __nv_bfloat16* dO, __nv_bfloat16* dQ,
                                                __nv_bfloat16* dK, __nv_bfloat16* dV, void* workspace, int B,
                                                int Hq, int Hkv, int Sq, int Sk, int D, float scale,
                                                int causal, cudaStream_t stream) {
  if (B <= 0 || Hq <= 0 || Hkv <= 0 || Sq <= 0 || Sk <= 0 || Hq % Hkv != 0 || workspace == nullptr) return 1;
  if (D != 64 && D != 96 && D != 128) return 2;
  float* dq_acc = static_cast<float*>(workspace);
  float* stat = reinterpret_cast<float*>(static_cast<uint8_t*>(workspace) + dq_acc_bytes(B, Hq, Sq, D));
  Problem p;
  p.B = B;
  p.Hq = Hq;
  p.Hkv = Hkv;
  p.Sq = Sq;
  p.Sk = Sk;
  p.causal = causal ? 1 : 0;
  p.key_blocks = (Sk + kBN - 1) / kBN;
  p.scale = scale;
  p.scale_log2 = scale * kLog2e;

  const long long rows = static_cast<long long>(B) * Hq * padded_sq(Sq);
  constexpr int kPrepRows = 256 / kPrepRowThreads;  // rows per block
  attention_bwd_prep_kernel<<<static_cast<unsigned>((rows + kPrepRows - 1) / kPrepRows), 256, 0, stream>>>(
      O, dO, LSE, stat, dq_acc, B, Hq, Sq, padded_sq(Sq), D);
  if (cudaGetLastError() != cudaSuccess) return 5;

  int rc;
  if (D == 64)
    rc = launch<64>(Q, K, V, dO, dq_acc, stat, dK, dV, p, stream);
  else if (D == 96)
    rc = launch<96>(Q, K, V, dO, dq_acc, stat, dK, dV, p, stream);
  else
    rc = launch<128>(Q, K, V, dO, dq_acc, stat, dK, dV, p, stream);
  if (rc != 0) return rc;

  const long long quads = static_cast<long long>(B) * Sq * Hq * D / 4;
  const long long blocks = (quads + 255) / 256;
  attention_bwd_dq_kernel<<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(dq_acc, dQ,
                                                                                                   quads, scale);
  return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
