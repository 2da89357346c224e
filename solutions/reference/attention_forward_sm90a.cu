// Reference solution for the Hopper attention-forward tasks: O = softmax(scale Q K^T) V and LSE, bf16 in and
// out, fp32 softmax (include/ptxbench/abi.h). Written with the kit (kits/hopper/ptx, kits/common/ptx); the rules
// it relies on are in their contracts.md. The design is FlashAttention-3's (Shah et al., 2024). The tile shape is a table
// (the tuning table below, one row per head dim and mask): the number of consumer warpgroups C (2 or 3), the
// keys per block BN, the depth of the K/V ring, the setmaxnreg budgets and whether the query tiles are aligned
// to the first row or to the last. As shipped, D = 64 has C = 3 (192-row tiles) and BN = 112, with the tiles
// aligned to the last row when causal; D = 128 without the mask has BN = 160; D = 256 has BN = 80 and consumers
// of 240 registers (FlashAttention-3's choice: O's accumulator alone takes 128 registers a thread); the other rows
// have C = 2 and BN = 128 from row 0; the ring has four stages at D = 64 and two otherwise.
// bench/attention-tune/README.md has the measurements that chose them (D = 256's is not measured yet).
//
//   - One CTA per SM, persistent. A work tile is 64 x C query rows (128) of one (batch, query head). Causal
//     tiles are taken longest first (the last query rows see the most keys), in waves that alternate direction
//     across the CTAs, so the short ones even out the tail; non-causal tiles go head by head, so the CTAs working
//     at one time share K and V in L2. GQA: query head h reads KV head h / (Hq / Hkv); a group's heads are
//     neighbours.
//   - C + 1 warpgroups. Warpgroup 0 is the producer: one thread loads the Q tile, then BN-key blocks of K and V
//     into the ring, all by TMA from 4-D [B, S, H, D] tensor maps (128B swizzle, 64 columns of D per box), each
//     completing on an mbarrier. Rows past Sq or Sk load as zeros, and so do a last-row-aligned tile's rows
//     before row 0, which are never stored.
//   - Warpgroups 1 .. C are consumers, 64 query rows each. Per key block j: S = Q K_j^T with SS wgmma
//     (m64nBN, K = D), the online softmax on the accumulator in fp32 with exp2 (the scale folded into one FFMA),
//     then O += P V_j with RS wgmma: P goes from the accumulator to A fragments in registers, never through
//     shared memory; V is the MN-major B operand, read in whole 64-column atoms (D = 96 computes 128 columns
//     of O, the last 32 zero, and stores 96).
//   - Overlap inside a warpgroup: S_{j+1} = Q K_{j+1}^T is issued together with O += P_j V_j, and the softmax of
//     S_{j+1} runs while the PV product is still in flight (only the rescale of O waits for it).
//   - Overlap between the consumers (round robin; ping-pong for two): each issues its wgmmas only after the
//     previous one has issued its own, through one named barrier per consumer, so the others' softmax runs
//     while one's GEMMs occupy the tensor cores.
//   - setmaxnreg moves registers from the producer to the consumers within the pool the launch fixed (consumers
//     232, producer 40: 232 + 232 + 40 = 3 x 168, or 240 and 24 at D = 256; with three consumers at most 160
//     each: 4 x 128 = 512).
//   - Epilogue: O / l -> bf16 -> shared memory (stmatrix, 128B swizzle) -> TMA store, which clips rows past Sq
//     and columns past D. LSE = scale * m + ln(l) straight from registers. At D = 256 the Q tile and the ring
//     fill the shared memory, so O is staged in the consumer's own rows of the Q tile, and the next tile's Q
//     loads once both consumers' stores have read theirs.
//   - Masking only where needed: blocks that reach past Sk or cross the causal diagonal (bottom-right aligned:
//     key j is visible to query i iff j <= i + Sk - Sq). A row with no visible key gets O = 0, LSE = -inf.
//   - The prefills are the causal forward of each sequence of a batch packed token after token, by the same
//     kernel compiled for their layouts (Layout::ragged, Layout::paged): the maps of Q and O see one batch of
//     `total` rows, a tile is a tile of one sequence (indptr gives its first row and length), the tiles of the
//     longest are enumerated for every sequence (a shorter one's last are empty), and a consumer's rows that
//     run past its sequence's end are stored with plain stores. Ragged, K and V are packed as Q is, and the
//     keys past a sequence's end (the next one's) are masked as keys past Sk are. Paged, a block of K or V is
//     loaded a page at a time, each page's rows by one TMA box of the cache's map, the page's number from the
//     page table (a page past the sequence's last is -1, which loads zeros); the keys are the sequence's
//     kv_lens[b] tokens, its new ones last (the causal diagonal aligned to the bottom right).
// Limits: D is 64, 96, 128 or 256 (the ABI's; the prefills: 64, 96 or 128); any B, Hq (a multiple of Hkv), Sq,
// Sk >= 1; scale > 0.
#include <ptxbench/abi.h>

#include <hopper.cuh>
#include <math.h>

using namespace ptxkit::hopper;

namespace {

// ====================================================================================== the tuning table
// The tile configuration per head dim D and mask: the choices a measurement may move. launch() takes the row of
// the call's (D, causal) at run time; each distinct configuration is a kernel of its own, and rows that agree
// share one. bench/attention-tune/variants.sh makes its A/B variants by rewriting rows of this table and
// nothing else; its README has each variant's registers and spills. Config rejects at compile time a row the
// hardware cannot run.
//   consumers  consumer warpgroups, 64 query rows each: 2 or 3 (3: FlashAttention-3's 192-row tiles, D = 64).
//              Four warpgroups at one CTA per SM start at 128 registers a thread instead of 168.
//   bn         keys per K/V block, the N of S = Q K^T and the K of O += P V: a multiple of 16 up to 256 (the
//              kit's wgmma shapes; a TMA box has at most 256 rows). Q, the ring and one 64-row O staging buffer
//              per consumer must fit 227 KB of shared memory.
//   stages     depth of the K/V ring.
//   regs       setmaxnreg of the producer and of each consumer: multiples of 8 in 24..256 that fit the pool the
//              launch fixed, 40 + 2 x 232 <= 3 x 168 with two consumers, 32 + 3 x 160 <= 4 x 128 with three.
//   bottom     the query tiles end at the last row instead of starting at row 0, so that when Sq is not a
//              multiple of the tile the partial tile is the first one (to within 64 rows: a consumer's rows are
//              all in the tile or all before row 0). Causal, the first tile is the one that sees the fewest keys;
//              at Sq = 4096 with 192-row tiles that halves the work spent on invisible scores: 12.5% -> 6.3%.
struct TileConfig {
  int consumers, bn, stages, producer_regs, consumer_regs;
  bool bottom;
};
struct TableRow {
  int d;
  bool causal;
  TileConfig config;
};
constexpr TableRow kTuningTable[] = {
    // D, causal, {consumers, bn, stages, producer_regs, consumer_regs, bottom}
    {64, false, {3, 112, 4, 32, 160, false}},
    {64, true, {3, 112, 4, 32, 160, true}},
    {96, false, {2, 128, 2, 40, 232, false}},
    {96, true, {2, 128, 2, 40, 232, false}},
    {128, false, {2, 160, 2, 40, 232, false}},
    {128, true, {2, 128, 2, 40, 232, false}},
    {256, false, {2, 80, 2, 24, 240, false}},
    {256, true, {2, 80, 2, 24, 240, false}},
};
// ================================================================================= end of the tuning table

constexpr int kRows = sizeof(kTuningTable) / sizeof(kTuningTable[0]);

constexpr bool same_config(const TileConfig& x, const TileConfig& y) {
  return x.consumers == y.consumers && x.bn == y.bn && x.stages == y.stages &&
         x.producer_regs == y.producer_regs && x.consumer_regs == y.consumer_regs && x.bottom == y.bottom;
}

// The row a kernel for (d, causal) is compiled from: the first row of head dim d with the same configuration,
// so that rows which agree share one kernel. -1 when the table has no row for (d, causal).
constexpr int kernel_row(int d, bool causal) {
  int row = -1;
  for (int r = 0; r < kRows; ++r)
    if (kTuningTable[r].d == d && kTuningTable[r].causal == causal) row = r;
  for (int r = 0; r < row; ++r)
    if (kTuningTable[r].d == d && same_config(kTuningTable[r].config, kTuningTable[row].config)) return r;
  return row;
}

constexpr TileConfig row_config(int row) {
  return row >= 0 && row < kRows ? kTuningTable[row].config : TileConfig{};
}

constexpr int kRowBytes = 128;  // one 64-column box row of bf16 (the 128B swizzle span)

template <int D, int kRow>
struct Config {
  static constexpr TileConfig T = row_config(kRow);
  static constexpr int kConsumers = T.consumers;
  static constexpr int kBM = 64 * kConsumers;  // query rows per tile
  static constexpr int kBN = T.bn;             // keys per block
  static constexpr int kStages = T.stages;     // K and V ring
  static constexpr bool kBottom = T.bottom;    // tiles end at row Sq - 1
  static constexpr int kThreads = 128 * (kConsumers + 1);
  static constexpr int kBlocksD = (D + 63) / 64;                // 64-column boxes per row
  // O's width: whole 64-column swizzle atoms (96 -> 128; V's extra columns load as zeros and are not stored).
  // The PV wgmma then reads whole atoms of the MN-major V, as CUTLASS and FlashAttention-3 lay it out.
  static constexpr int kNO = kBlocksD * 64;
  static constexpr int kQBytes = kBlocksD * kBM * kRowBytes;    // the Q tile
  static constexpr int kKVBytes = kBlocksD * kBN * kRowBytes;   // one K or V block
  static constexpr int kOBytes = kBlocksD * 64 * kRowBytes;     // one consumer's O staging
  static constexpr int kOffQ = 0;
  static constexpr int kOffK = kOffQ + kQBytes;
  static constexpr int kOffV = kOffK + kStages * kKVBytes;
  static constexpr int kOffO = kOffV + kStages * kKVBytes;
  static constexpr int kBarriers = 2 + 4 * kStages;  // q full/empty, k full/empty, v full/empty
  // O is staged in buffers of its own when they fit beside Q and the ring, else (D = 256) in the consumer's own
  // 64 rows of the Q tile, which it then releases only once the store has read them.
  static constexpr bool kOInQ = kOffO + kConsumers * kOBytes + kBarriers * 8 + 1024 > 227 * 1024;
  static constexpr int kOffBar = kOInQ ? kOffO : kOffO + kConsumers * kOBytes;
  // The distance between the 64-column boxes of one consumer's staged O: a box of its own 64 rows, or one of
  // the Q tile's kBM.
  static constexpr int kOBoxBytes = (kOInQ ? kBM : 64) * kRowBytes;
  static constexpr int kSmemBytes = kOffBar + kBarriers * 8 + 1024;  // + slack to align the base to 1024
  // Named barriers (id 0 is __syncthreads): kConsumers ids "consumer w may issue" (round robin), then one per
  // consumer for its own epilogue.
  static constexpr uint32_t kBarSchedule = 1;
  static constexpr uint32_t kBarEpilogue = kBarSchedule + kConsumers;
  // The register pool: __launch_bounds__(kThreads, 1) caps each thread at 65536 / kThreads rounded down to a
  // multiple of 8, and the CTA's pool is that cap times kThreads; setmaxnreg only moves registers within it.
  static constexpr int kRegCap = 65536 / kThreads / 8 * 8;

  static_assert(kRow >= 0 && kTuningTable[kRow].d == D, "tuning table: no row for this head dim and mask");
  static_assert(kConsumers == 2 || kConsumers == 3, "tuning table: 2 or 3 consumer warpgroups");
  static_assert(kBN % 16 == 0 && kBN >= 16 && kBN <= 256,
                "tuning table: bn is wgmma N (the kit: 16..256 in steps of 16) and a TMA box's rows (<= 256)");
  static_assert(kBM <= 256, "the Q tile is one TMA box of kBM rows");
  static_assert(kStages >= 1, "tuning table: at least one stage");
  static_assert(kBarEpilogue + kConsumers <= 16, "named barriers are 1..15");
  static_assert(T.producer_regs % 8 == 0 && T.producer_regs >= 24 && T.producer_regs <= 256 &&
                    T.consumer_regs % 8 == 0 && T.consumer_regs >= 24 && T.consumer_regs <= 256,
                "tuning table: setmaxnreg takes multiples of 8 in 24..256");
  static_assert(T.producer_regs <= kRegCap && T.consumer_regs >= kRegCap,
                "tuning table: the producer decreases from the launch cap, the consumers increase from it");
  static_assert(T.producer_regs + kConsumers * T.consumer_regs <= (kConsumers + 1) * kRegCap,
                "tuning table: the warpgroups' registers must fit the pool, or setmaxnreg_inc waits forever");
  static_assert(kSmemBytes <= 227 * 1024, "tuning table: shared memory budget (227 KB per block)");
};

// How Q, K, V and O hold a batch. Dense: B sequences of Sq queries and Sk keys, [B, S, H, D]. Ragged (the prefill,
// causal): B sequences packed in [total, H, D], sequence b the rows indptr[b] .. indptr[b+1] - 1 with Sq = Sk =
// its length. Paged (the prefill over a cache, causal): Q and O packed as the ragged's, K and V in pages of a
// cache [num_pages, page_size, Hkv, D], sequence b's token t in row t % page_size of page
// page_table[b][t / page_size], with Sk = kv_lens[b] keys of which its Sq new tokens are the last.
enum class Layout { dense, ragged, paged };

struct Problem {
  int B, Hq, Hkv, Sq, Sk;
  float scale;
  int causal;
  int m_blocks, tiles;  // m_blocks: of the longest sequence
  int rows;             // the rows of the Q and O maps' S dimension: Sq when dense, total otherwise
  const int* indptr;    // ragged and paged: [B + 1] in device memory
  const int* page_table;  // paged: [B, max_pages]
  const int* kv_lens;     // paged: [B]
  int page_size, max_pages;
};

// A work tile. The packed layouts have kernels of their own, so that the dense one reads its sequence's sizes
// from the launch's parameters as it always did, not from registers a tile would hold through the main loop
// (which made ptxas spill at D = 128).
template <Layout kLayout>
struct Tile {
  static constexpr bool kPacked = kLayout != Layout::dense;
  int b, h, m0;  // sequence, query head, first query row of the tile (relative to the sequence)
  int n_blocks;  // key blocks with at least one visible key for some row of the tile
  int seq_q, seq_k, first;  // packed: the sequence's queries, keys and the row of its first query
  const int* pages;         // paged: the sequence's row of the page table
  bool empty;               // packed: the tile starts past its sequence's last row (nothing to do)

  __device__ int sq(const Problem& p) const {
    if constexpr (kPacked) return seq_q; else return p.Sq;
  }
  __device__ int sk(const Problem& p) const {
    if constexpr (kPacked) return seq_k; else return p.Sk;
  }
  // The Q and O maps' row of the sequence's row 0 and their batch coordinate (K and V's too but when paged).
  __device__ int base() const {
    if constexpr (kPacked) return first; else return 0;
  }
  __device__ int batch() const {
    if constexpr (kPacked) return 0; else return b;
  }
  // Element (row r, column c) of O, and row r's LSE ([B, Hq, Sq] dense, [total, Hq] packed).
  __device__ size_t o_index(const Problem& p, int r, int c, int d) const {
    return ((static_cast<size_t>(batch()) * p.rows + base() + r) * p.Hq + h) * d + c;
  }
  __device__ size_t lse_index(const Problem& p, int r) const {
    if constexpr (kPacked) return static_cast<size_t>(first + r) * p.Hq + h;
    else return (static_cast<size_t>(b) * p.Hq + h) * p.Sq + r;
  }
};

// This CTA's work tile of wave `wave` (gridDim.x tiles a wave). Causal waves alternate direction (a snake), so a
// CTA that took one of the longer tiles of a wave takes one of the shorter of the next. Increasing in `wave`.
__device__ __forceinline__ int tile_index(int wave, const Problem& p) {
  const int c = p.causal && (wave & 1) ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  return wave * gridDim.x + c;
}

// Work tile t of the persistent order: kBM query rows, key blocks of kBN. Bottom-aligned tiles start
// (m_blocks x kBM - Sq) rows earlier, rounded down to whole 64-row consumer slices, so m0 may be negative: rows
// before 0 load as zeros (a TMA load may start at a negative coordinate) and are never stored (a TMA store may
// not; a consumer's slice lies wholly before row 0 or not at all). Causal, they see no key.
// Ragged: the tiles are those of the longest sequence for every sequence, so a shorter one's last tiles are
// empty; its own tiles are aligned as a dense sequence of its length would be.
template <int kBM, int kBN, bool kBottom, Layout kLayout>
__device__ __forceinline__ Tile<kLayout> tile_at(int t, const Problem& p) {
  Tile<kLayout> tile;
  int m_block, head;
  if (p.causal) {  // longest first: the last query blocks see the most keys
    m_block = p.m_blocks - 1 - t / (p.B * p.Hq);
    head = t % (p.B * p.Hq);
  } else {  // head by head: the CTAs at work share a few heads' K and V in L2
    m_block = t % p.m_blocks;
    head = t / p.m_blocks;
  }
  tile.b = head / p.Hq;
  tile.h = head % p.Hq;
  int own_blocks = p.m_blocks;
  tile.empty = false;
  if constexpr (Tile<kLayout>::kPacked) {
    tile.first = p.indptr[tile.b];
    tile.seq_q = p.indptr[tile.b + 1] - tile.first;
    tile.seq_k = tile.seq_q;
    if constexpr (kLayout == Layout::paged) {
      tile.seq_k = p.kv_lens[tile.b];
      tile.pages = p.page_table + static_cast<size_t>(tile.b) * p.max_pages;
    }
    own_blocks = (tile.seq_q + kBM - 1) / kBM;
    tile.empty = m_block >= own_blocks;
  }
  const int sq = tile.sq(p), sk = tile.sk(p);
  tile.m0 = m_block * kBM;
  if constexpr (kBottom) tile.m0 -= (own_blocks * kBM - sq) & ~63;  // whole 64-row slices
  // The tile's last row sees keys 0 .. m0 + kBM - 1 + Sk - Sq.
  const int n_end = p.causal ? min(sk, tile.m0 + kBM + sk - sq) : sk;
  tile.n_blocks = n_end > 0 && !tile.empty ? (n_end + kBN - 1) / kBN : 0;
  return tile;
}

// Lane 0 of each warp arrives: the barriers of buffers the consumers read count 4 arrivals per consumer.
__device__ __forceinline__ void release(uint64_t* bar) {
  if (threadIdx.x % 32 == 0) mbarrier_arrive(bar);
}

template <int D, int kRow, Layout kLayout>
__global__ void __launch_bounds__(Config<D, kRow>::kThreads, 1)
    attention_forward_kernel(const __grid_constant__ CUtensorMap map_q, const __grid_constant__ CUtensorMap map_k,
                             const __grid_constant__ CUtensorMap map_v, const __grid_constant__ CUtensorMap map_o,
                             __nv_bfloat16* __restrict__ O, float* __restrict__ LSE, const Problem p) {
  using C = Config<D, kRow>;
  constexpr TileConfig T = C::T;
  constexpr int kConsumers = C::kConsumers, kBM = C::kBM, kBN = C::kBN, kStages = C::kStages;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  uint64_t* q_full = reinterpret_cast<uint64_t*>(smem + C::kOffBar);
  uint64_t* q_empty = q_full + 1;
  uint64_t* k_full = q_full + 2;
  uint64_t* k_empty = k_full + kStages;
  uint64_t* v_full = k_empty + kStages;
  uint64_t* v_empty = v_full + kStages;

  const int warpgroup = threadIdx.x / 128;
  const int group_size = p.Hq / p.Hkv;

  if (threadIdx.x == 0) {
    prefetch_tensormap(&map_q);
    prefetch_tensormap(&map_k);
    prefetch_tensormap(&map_v);
    prefetch_tensormap(&map_o);
    mbarrier_init(q_full, 1);
    mbarrier_init(q_empty, kConsumers * 4);
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&k_full[s], 1);
      mbarrier_init(&k_empty[s], kConsumers * 4);
      mbarrier_init(&v_full[s], 1);
      mbarrier_init(&v_empty[s], kConsumers * 4);
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (warpgroup == 0) {
    // ------------------------------------------------------------------------------------------ producer
    setmaxnreg_dec<T.producer_regs>();
    if (threadIdx.x == 0) {
      int stage = 0;
      uint32_t phase = 0, q_phase = 0;
      for (int wave = 0, t = tile_index(0, p); t < p.tiles; t = tile_index(++wave, p)) {
        const auto tile = tile_at<kBM, kBN, C::kBottom, kLayout>(t, p);
        if (tile.n_blocks == 0) continue;  // empty, or no row of it sees a key
        const int g = tile.h / group_size;
        // One K or V block into the ring. A fresh barrier's parity-1 wait passes; whole boxes count towards
        // expect_tx always, zero-filled bytes too.
        const auto load = [&](const CUtensorMap* map, uint64_t* full, uint64_t* empty, int offset, int j) {
          mbarrier_wait(&empty[stage], phase ^ 1);
          mbarrier_arrive_expect_tx(&full[stage], C::kKVBytes);
          uint8_t* block = smem + offset + stage * C::kKVBytes;
          if constexpr (kLayout == Layout::paged) {
            // kBN / page_size pages, each a box of page_size rows at its place in the block (whole 1024-byte
            // swizzle atoms: the host takes page sizes that are multiples of 8).
            const int per_block = kBN / p.page_size;
            for (int i = 0; i < per_block; ++i) {
              const int slot = j * per_block + i;
              const int page = slot < p.max_pages ? tile.pages[slot] : -1;
              for (int d = 0; d < C::kBlocksD; ++d)
                tma_load_4d(block + d * kBN * kRowBytes + i * p.page_size * kRowBytes, map, &full[stage], 64 * d,
                            g, 0, page);
            }
          } else {
            for (int d = 0; d < C::kBlocksD; ++d)
              tma_load_4d(block + d * kBN * kRowBytes, map, &full[stage], 64 * d, g, tile.base() + j * kBN,
                          tile.batch());
          }
        };
        const auto advance = [&] {
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        };
        // K_0 before Q: its stage is free one S earlier than Q, which waits for the previous tile's last S.
        load(&map_k, k_full, k_empty, C::kOffK, 0);
        mbarrier_wait(q_empty, q_phase ^ 1);
        q_phase ^= 1;
        mbarrier_arrive_expect_tx(q_full, C::kQBytes);
        for (int d = 0; d < C::kBlocksD; ++d)
          tma_load_4d(smem + C::kOffQ + d * kBM * kRowBytes, &map_q, q_full, 64 * d, tile.h, tile.base() + tile.m0,
                      tile.batch());
        load(&map_v, v_full, v_empty, C::kOffV, 0);
        advance();
        for (int j = 1; j < tile.n_blocks; ++j) {
          load(&map_k, k_full, k_empty, C::kOffK, j);
          load(&map_v, v_full, v_empty, C::kOffV, j);
          advance();
        }
      }
    }
    return;
  }

  // -------------------------------------------------------------------------------------------- consumers
  setmaxnreg_inc<T.consumer_regs>();
  const int wg = warpgroup - 1;  // which 64 rows of the tile
  const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
  const uint32_t my_turn = C::kBarSchedule + wg;
  // The next consumer, (wg + 1) % kConsumers; for two, written 1 - wg, which compiles without a compare.
  const uint32_t next_turn = C::kBarSchedule + (kConsumers == 2 ? 1 - wg : (wg + 1) % kConsumers);
  const float scale_log2 = p.scale * 1.4426950408889634f;  // exp(x * scale) = 2^(x * scale * log2(e))
  const int row_in_tile = wg * 64 + wgmma_acc_row(0, tid);  // this thread's first row; the second is 8 below
  const int col_in_block = wgmma_acc_col(0, tid);           // this thread's first column of each 8-column group

  // Round robin (ping-pong for two): consumer 0 issues first, so the last consumer (whose next is 0) signals it
  // once; every issue then waits for the previous consumer's and signals the next. Each barrier joins two
  // warpgroups: 256 threads.
  if (wg == kConsumers - 1) bar_arrive(next_turn, 256);
  const auto issue_begin = [&] { bar_sync(my_turn, 256); };
  const auto issue_end = [&] { bar_arrive(next_turn, 256); };

  int stage = 0;
  uint32_t phase = 0, q_phase = 0;
  for (int wave = 0, t = tile_index(0, p); t < p.tiles; t = tile_index(++wave, p)) {
    const auto tile = tile_at<kBM, kBN, C::kBottom, kLayout>(t, p);
    if (tile.empty) continue;
    const int row0 = tile.m0 + row_in_tile;  // the sequence's query rows row0 and row0 + 8
    if (tile.n_blocks == 0) {  // causal with Sq > Sk: no row of this tile sees a key
      for (int i = threadIdx.x - 128; i < kBM * D; i += kConsumers * 128) {
        const int r = tile.m0 + i / D;
        if ((!C::kBottom || r >= 0) && r < tile.sq(p)) O[tile.o_index(p, r, i % D, D)] = __float2bfloat16(0.0f);
      }
      const int r0 = C::kBottom ? max(tile.m0, 0) : tile.m0;  // rows before 0 are not stored
      for (int r = r0 + threadIdx.x - 128; r < min(tile.sq(p), tile.m0 + kBM); r += kConsumers * 128)
        LSE[tile.lse_index(p, r)] = -INFINITY;
      continue;
    }

    const uint8_t* q_tile = smem + C::kOffQ + wg * 64 * kRowBytes;
    const auto desc_q = [&](int k) {  // k-step k of this warpgroup's 64 x D slice of Q
      return desc_advance(make_desc_k128(q_tile + (k / 4) * kBM * kRowBytes), 32 * (k % 4));
    };
    const auto issue_s = [&](float (&s)[kBN / 2], int st) {  // S = Q K^T, one commit group
      const uint8_t* k_tile = smem + C::kOffK + st * C::kKVBytes;
#pragma unroll
      for (int k = 0; k < D / 16; ++k) {
        const uint64_t desc_k = make_desc_k128(k_tile + (k / 4) * kBN * kRowBytes);
        wgmma_bf16_ss<kBN>(s, desc_q(k), desc_advance(desc_k, 32 * (k % 4)), k > 0);
      }
      wgmma_commit();
    };
    const auto issue_pv = [&](float (&o)[C::kNO / 2], uint32_t (&a)[kBN / 16][4], int st) {  // O += P V
      const uint64_t desc_v = make_desc_mn128(smem + C::kOffV + st * C::kKVBytes, kBN * kRowBytes);
#pragma unroll
      for (int k = 0; k < kBN / 16; ++k) wgmma_bf16_rs<C::kNO, 1>(o, a[k], desc_advance(desc_v, 16 * kRowBytes * k), 1);
      wgmma_commit();
    };
    // Scores of keys a row must not see become -inf: past Sk, or (causal) right of the row's diagonal.
    // (Ragged: the keys past the sequence's last are the next sequence's, masked as past Sk.)
    const auto mask = [&](float (&s)[kBN / 2], int n0) {
      const int sq = tile.sq(p), sk = tile.sk(p);
      const bool needed = n0 + kBN > sk || (p.causal && n0 + kBN - 1 > tile.m0 + sk - sq);
      if (!needed) return;
      // Per row, the first column of the block it must not see (one compare per element).
      const int reach = p.causal ? sk - sq + 1 : sk;
      const int limit[2] = {min(sk, row0 + reach) - n0, min(sk, row0 + 8 + reach) - n0};
#pragma unroll
      for (int i = 0; i < kBN / 2; ++i)
        s[i] = col_in_block + (i / 4) * 8 + (i % 2) >= limit[(i / 2) % 2] ? -INFINITY : s[i];
    };

    float s[kBN / 2], o[C::kNO / 2];
    uint32_t a[kBN / 16][4];
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
    // The online softmax of block S (in place: S becomes P), with the factor the old O and l must be scaled by.
    const auto softmax = [&](float (&correction)[2]) {
      float m_new[2] = {m[0], m[1]};
      acc_row_max<kBN>(s, m_new);
      float shift[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        shift[h] = m_new[h] == -INFINITY ? 0.0f : m_new[h] * scale_log2;  // a row masked so far stays at 0
        correction[h] = exp2_approx(m[h] * scale_log2 - shift[h]);        // 0 while m was -inf
        m[h] = m_new[h];
        l[h] *= correction[h];
      }
#pragma unroll
      for (int i = 0; i < kBN / 2; ++i) s[i] = exp2_approx(fmaf(s[i], scale_log2, -shift[(i / 2) % 2]));
      acc_row_sum_partial<kBN>(s, l);
    };

#pragma unroll
    for (int i = 0; i < C::kNO / 2; ++i) o[i] = 0.0f;
    mbarrier_wait(q_full, q_phase);
    q_phase ^= 1;

    // Block 0: S alone.
    mbarrier_wait(&k_full[stage], phase);
    issue_begin();
    wgmma_fence_operand(s);
    wgmma_fence();
    issue_s(s, stage);
    issue_end();
    wgmma_wait<0>();
    wgmma_fence_operand(s);
    release(&k_empty[stage]);
    if (!C::kOInQ && tile.n_blocks == 1) release(q_empty);
    mask(s, 0);
    {
      float unused[2];
      softmax(unused);
    }
    wgmma_acc_to_a<kBN>(s, a);

    for (int j = 1; j < tile.n_blocks; ++j) {
      const int prev = stage;
      const uint32_t prev_phase = phase;
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1;
      }
      // S_j and O += P_{j-1} V_{j-1}, in that order: wait<1> then means S_j is done.
      mbarrier_wait(&k_full[stage], phase);
      mbarrier_wait(&v_full[prev], prev_phase);
      issue_begin();
      wgmma_fence_operand(s);
      wgmma_fence_operand(o);
#pragma unroll
      for (int k = 0; k < kBN / 16; ++k) wgmma_fence_operand(a[k]);
      wgmma_fence();
      issue_s(s, stage);
      issue_pv(o, a, prev);
      issue_end();
      wgmma_wait<1>();
      wgmma_fence_operand(s);
      release(&k_empty[stage]);
      if (!C::kOInQ && j == tile.n_blocks - 1) release(q_empty);
      mask(s, j * kBN);
      float correction[2];
      softmax(correction);  // while P_{j-1} V_{j-1} runs
      wgmma_wait<0>();
      wgmma_fence_operand(o);
#pragma unroll
      for (int k = 0; k < kBN / 16; ++k) wgmma_fence_operand(a[k]);
      release(&v_empty[prev]);
      acc_row_scale<C::kNO>(o, correction);
      wgmma_acc_to_a<kBN>(s, a);
    }

    // The last block's O += P V.
    mbarrier_wait(&v_full[stage], phase);
    issue_begin();
    wgmma_fence_operand(o);
#pragma unroll
    for (int k = 0; k < kBN / 16; ++k) wgmma_fence_operand(a[k]);
    wgmma_fence();
    issue_pv(o, a, stage);
    issue_end();
    wgmma_wait<0>();
    wgmma_fence_operand(o);
#pragma unroll
    for (int k = 0; k < kBN / 16; ++k) wgmma_fence_operand(a[k]);
    release(&v_empty[stage]);
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1;
    }

    // ------------------------------------------------------------------------------------------ epilogue
    float inv[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      l[h] = quad_sum(l[h]);
      inv[h] = l[h] > 0.0f ? 1.0f / l[h] : 0.0f;  // a row with no visible key: O = 0
    }
    acc_row_scale<C::kNO>(o, inv);
    if (tid % 4 == 0) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = row0 + 8 * h;
        if ((!C::kBottom || row >= 0) && row < tile.sq(p))
          LSE[tile.lse_index(p, row)] = l[h] > 0.0f ? m[h] * p.scale + logf(l[h]) : -INFINITY;
      }
    }
    // This consumer's O staging. Three consumers (160 registers each) sit at ptxas's limit: with wg in this
    // address CUDA 13.0 spills 24 bytes in the main loop, with the index recomputed from threadIdx none (with
    // no margin: bench/attention-tune/README.md). Two consumers keep wg, as the measured shipped kernel does.
    const int o_wg = kConsumers == 2 ? wg : static_cast<int>(threadIdx.x / 128) - 1;
    uint8_t* o_stage = C::kOInQ ? smem + C::kOffQ + o_wg * 64 * kRowBytes : smem + C::kOffO + o_wg * C::kOBytes;
    // O -> bf16 -> 128B-swizzled 64 x 64 chunks -> TMA store. The previous tile's store must have read the buffer.
    if (tid == 0) tma_store_wait_read<0>();
    bar_sync(C::kBarEpilogue + wg, 128);
#pragma unroll
    for (int c = 0; c < C::kBlocksD; ++c) {
#pragma unroll
      for (int jj = 0; jj < 8; jj += 2) {
        const int j = c * 8 + jj;  // accumulator column block (8 columns)
        if (j * 8 < D) {
          const uint32_t r[4] = {pack_bf16x2(o[4 * j + 0], o[4 * j + 1]), pack_bf16x2(o[4 * j + 2], o[4 * j + 3]),
                                 pack_bf16x2(o[4 * j + 4], o[4 * j + 5]), pack_bf16x2(o[4 * j + 6], o[4 * j + 7])};
          const int q = lane / 8;
          const int row = warp * 16 + (q % 2) * 8 + lane % 8;
          const int col16 = jj + q / 2;  // 16-byte column chunk in the 128-byte row
          stmatrix_x4(o_stage + c * C::kOBoxBytes + row * kRowBytes + ((col16 ^ (row % 8)) * 16), r);
        }
      }
    }
    fence_proxy_async_shared();  // generic-proxy writes, read next by the TMA engine
    bar_sync(C::kBarEpilogue + wg, 128);
    // A slice before row 0 (bottom-aligned tiles) has nothing to store; thread 0's row0 is its slice's first row.
    // (Tested as row0 rather than tile.m0 + wg * 64: the latter made ptxas spill with three consumers.) The TMA
    // store clips rows past the map's last; a ragged sequence's last slice, whose rows run into the next
    // sequence, stores its own rows with plain 16-byte stores from the staging buffer instead (the next tile's
    // epilogue waits at its barrier until they have read it).
    const int slice0 = row0 - ((row0 - tile.m0) & 63);  // this consumer's first row (row_in_tile % 64 = its row)
    if (Tile<kLayout>::kPacked && slice0 + 64 > tile.sq(p)) {
      if (slice0 >= 0)
        for (int i = tid; i < 64 * (D / 8); i += 128) {
          const int r = i / (D / 8), chunk = i % (D / 8), col16 = chunk % 8;
          if (slice0 + r < tile.sq(p))
            *reinterpret_cast<uint4*>(O + tile.o_index(p, slice0 + r, 8 * chunk, D)) =
                *reinterpret_cast<const uint4*>(o_stage + (chunk / 8) * C::kOBoxBytes + r * kRowBytes +
                                                ((col16 ^ (r % 8)) * 16));
        }
    } else if (tid == 0 && (!C::kBottom || row0 >= 0)) {
      for (int c = 0; c < C::kBlocksD; ++c)
        tma_store_4d(&map_o, o_stage + c * C::kOBoxBytes, 64 * c, tile.h, tile.base() + tile.m0 + wg * 64,
                     tile.batch());
      tma_store_commit();
    }
    if constexpr (C::kOInQ) {  // the next tile's Q may go where O was staged once the store has read it
      if (tid == 0) tma_store_wait_read<0>();
      bar_sync(C::kBarEpilogue + wg, 128);
      release(q_empty);
    }
  }
  if (wg == 0) bar_sync(my_turn, 256);  // the signal the last consumer gave after its last issue
  if (tid == 0) tma_store_wait<0>();    // shared memory must outlive the last store's reads
}

// `longest`: the most queries of a sequence (dense: Sq; packed: max_len, max_q_len); `num_pages`: paged, the
// cache's.
template <int D, int kRow, Layout kLayout>
int launch(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, __nv_bfloat16* O, float* LSE,
           Problem p, int longest, int num_pages, cudaStream_t stream) {
  using C = Config<D, kRow>;
  p.m_blocks = (longest + C::kBM - 1) / C::kBM;
  const long long tiles = static_cast<long long>(p.m_blocks) * p.B * p.Hq;
  if (tiles > 0x7fffffff) return 1;
  p.tiles = static_cast<int>(tiles);
  // Packed: Q and O one batch of `rows` tokens; ragged K and V too; paged K and V batches of pages, a page a
  // box.
  const bool packed = kLayout != Layout::dense, paged = kLayout == Layout::paged;
  const int batches = packed ? 1 : p.B;
  const int kv_batches = paged ? num_pages : batches, kv_rows = paged ? p.page_size : packed ? p.rows : p.Sk;
  const int kv_box = paged ? p.page_size : C::kBN;
  if (paged && (p.page_size % 8 != 0 || C::kBN % p.page_size != 0)) return 2;
  CUtensorMap map_q, map_k, map_v, map_o;
  if (make_tensor_map_bshd_bf16(&map_q, Q, batches, p.rows, p.Hq, D, C::kBM) != cudaSuccess ||
      make_tensor_map_bshd_bf16(&map_k, K, kv_batches, kv_rows, p.Hkv, D, kv_box) != cudaSuccess ||
      make_tensor_map_bshd_bf16(&map_v, V, kv_batches, kv_rows, p.Hkv, D, kv_box) != cudaSuccess ||
      make_tensor_map_bshd_bf16(&map_o, O, batches, p.rows, p.Hq, D, 64) != cudaSuccess)
    return 3;
  const auto kernel = attention_forward_kernel<D, kRow, kLayout>;
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes) != cudaSuccess)
    return 4;
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    return 4;
  const int grid = p.tiles < sms ? p.tiles : sms;
  kernel<<<grid, C::kThreads, C::kSmemBytes, stream>>>(map_q, map_k, map_v, map_o, O, LSE, p);
  return cudaGetLastError() == cudaSuccess ? 0 : 5;
}

// The kernel of the tuning table's row for (D, causal): one kernel for both masks where their rows agree. The
// prefills (causal) have kernels of their own, from the causal rows, for the head dims their ABI names
// (kPrefills: D is 64, 96 or 128 there; 256 is the dense forward's alone).
template <int D, bool kPrefills = true>
int launch_row(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, __nv_bfloat16* O,
               float* LSE, const Problem& p, Layout layout, int longest, int num_pages, cudaStream_t stream) {
  constexpr int causal = kernel_row(D, true), full = kernel_row(D, false);
  if (layout == Layout::dense)
    return p.causal ? launch<D, causal, Layout::dense>(Q, K, V, O, LSE, p, longest, 0, stream)
                    : launch<D, full, Layout::dense>(Q, K, V, O, LSE, p, longest, 0, stream);
  if constexpr (kPrefills) {
    if (layout == Layout::ragged) return launch<D, causal, Layout::ragged>(Q, K, V, O, LSE, p, longest, 0, stream);
    return launch<D, causal, Layout::paged>(Q, K, V, O, LSE, p, longest, num_pages, stream);
  }
  return 2;
}

int launch_d(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, __nv_bfloat16* O, float* LSE,
             const Problem& p, Layout layout, int D, int longest, int num_pages, cudaStream_t stream) {
  switch (D) {
    case 64: return launch_row<64>(Q, K, V, O, LSE, p, layout, longest, num_pages, stream);
    case 96: return launch_row<96>(Q, K, V, O, LSE, p, layout, longest, num_pages, stream);
    case 128: return launch_row<128>(Q, K, V, O, LSE, p, layout, longest, num_pages, stream);
    case 256: return launch_row<256, false>(Q, K, V, O, LSE, p, layout, longest, num_pages, stream);
    default: return 2;
  }
}

}  // namespace

extern "C" int ptxbench_attention_forward_bf16(const __nv_bfloat16* Q, const __nv_bfloat16* K,
                                               const __nv_bfloat16* V, __nv_bfloat16* O, float* LSE, int B,
                                               int Hq, int Hkv, int Sq, int Sk, int D, float scale, int causal,
                                               cudaStream_t stream) {
  if (B <= 0 || Hq <= 0 || Hkv <= 0 || Sq <= 0 || Sk <= 0 || Hq % Hkv != 0) return 1;
  if (!(scale > 0.0f)) return 1;  // the running max is taken over unscaled scores: a positive scale only
  // launch() fills in the tiles
  const Problem p{.B = B, .Hq = Hq, .Hkv = Hkv, .Sq = Sq, .Sk = Sk, .scale = scale, .causal = causal ? 1 : 0,
                  .rows = Sq};
  return launch_d(Q, K, V, O, LSE, p, Layout::dense, D, Sq, 0, stream);
}

// The ragged prefill: the causal forward of each packed sequence (Sq = Sk = its length), the same kernel.
extern "C" int ptxbench_attention_prefill_ragged_bf16(const __nv_bfloat16* Q, const __nv_bfloat16* K,
                                                      const __nv_bfloat16* V, const int* indptr, __nv_bfloat16* O,
                                                      float* LSE, int B, int Hq, int Hkv, int D, int max_len,
                                                      int total, float scale, cudaStream_t stream) {
  if (B <= 0 || Hq <= 0 || Hkv <= 0 || max_len <= 0 || total <= 0 || Hq % Hkv != 0 || indptr == nullptr) return 1;
  if (!(scale > 0.0f)) return 1;
  const Problem p{.B = B, .Hq = Hq, .Hkv = Hkv, .Sq = max_len, .Sk = max_len, .scale = scale, .causal = 1,
                  .rows = total, .indptr = indptr};
  return launch_d(Q, K, V, O, LSE, p, Layout::ragged, D, max_len, 0, stream);
}

// The paged prefill: the causal forward of each sequence's new tokens over its tokens in the cache, the same
// kernel with K and V loaded a page at a time.
extern "C" int ptxbench_attention_prefill_paged_bf16(const __nv_bfloat16* Q, const __nv_bfloat16* K_cache,
                                                     const __nv_bfloat16* V_cache, const int* qo_indptr,
                                                     const int* page_table, const int* kv_lens, __nv_bfloat16* O,
                                                     float* LSE, int B, int Hq, int Hkv, int D, int page_size,
                                                     int max_pages, int num_pages, int max_q_len, int total_q,
                                                     float scale, cudaStream_t stream) {
  if (B <= 0 || Hq <= 0 || Hkv <= 0 || page_size <= 0 || max_pages <= 0 || num_pages <= 0 || max_q_len <= 0 ||
      total_q <= 0 || Hq % Hkv != 0 || !qo_indptr || !page_table || !kv_lens)
    return 1;
  if (!(scale > 0.0f)) return 1;
  const Problem p{.B = B, .Hq = Hq, .Hkv = Hkv, .Sq = max_q_len, .Sk = max_pages * page_size, .scale = scale,
                  .causal = 1, .rows = total_q, .indptr = qo_indptr, .page_table = page_table, .kv_lens = kv_lens,
                  .page_size = page_size, .max_pages = max_pages};
  return launch_d(Q, K_cache, V_cache, O, LSE, p, Layout::paged, D, max_q_len, num_pages, stream);
}
