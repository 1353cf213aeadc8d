// Schedule: what each thread block of each kernel does, in order (docs/architecture.md,
// "Vocabulary"; the contract: docs/schedules.md). Transfers name a tensor tile in (batch·head, row,
// col) coordinates so that the walk can add bytes and the L2 model can turn them into addresses;
// compute steps carry FLOPs.
//
// Launch order: a kernel's grid is heads × blocks_per_head thread blocks; linear launch index
// = block_in_head + blocks_per_head · bh, with bh = b·H + h (layout (B, H, N, d)). The kernels
// in kernels/ launch their grids in this order. Heads run the same schedule (only the base
// address differs), which is what lets the walk visit one head and multiply by B·H; with
// per-sequence key lengths (Problem::key_lengths) the heads of a run of sequences of one length
// do (KernelSchedule::head_runs), and the walk visits one head of each run.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/block_mask.h"
#include "sim/config.h"
#include "sim/counts.h"
#include "sim/kernel_kind.h"

namespace flashio::sim {

struct Transfer {
  Tensor tensor;
  Dir dir;
  int64_t bh = 0;    // batch·heads index
  int64_t row0 = 0;  // first row of the tile within the head
  int64_t rows = 0;
  int64_t col0 = 0;
  int64_t cols = 0;
  // Atomic reduction (flash2's dQ): a write that the L2 performs as read-modify-write.
  bool atomic = false;
  // Rows a TMA box moves past the matrix, after `rows` (loads_whole_boxes, sim/kernel_catalog.h):
  // zeros the counters count as moved (io) but no memory holds (the L2 model replays `rows` only).
  int64_t zero_rows = 0;
  // The rows the transfer moves: io.
  int64_t moved_rows() const { return rows + zero_rows; }
};

class ScheduleSink {
 public:
  virtual ~ScheduleSink() = default;
  virtual void transfer(const Transfer& t) = 0;
  virtual void compute(const Flops& f) = 0;
};

// Consecutive grid heads [first, first + count) that run one schedule.
struct HeadRun {
  int64_t first = 0, count = 0;
};

struct KernelSchedule {
  KernelKind kind = KernelKind::flash2_fwd;  // the row's `kernel` column is to_string(kind)
  int64_t heads = 0;            // B·H
  int64_t blocks_per_head = 0;  // thread blocks per (b, h)
  int64_t threads_per_block = 128;
  int64_t smem_bytes = 0;       // shared memory per block (occupancy in the L2 model)
  int64_t registers_per_thread = 0;  // the compiled kernel's, where sim knows them (0: not a limit)
  // At least the transfers one block emits (tiles the filter skips included), set beside the
  // loop nest: what the work and memory limits of walk and cache count (sim/limits.h). 0 when
  // unknown (hand-made schedules in tests).
  int64_t transfers_per_block = 0;
  // Emits the steps of one thread block in program order (not named emit: Qt reserves it).
  std::function<void(int64_t bh, int64_t block_in_head, ScheduleSink&)> emit_block;
  // One head's counts as formulas: the sums of emit_block's steps over all blocks of grid head
  // `grid_head` (and of every head of its run), written beside the loop nest they sum (the
  // closed form; docs/schedules.md). tests/sim checks they equal the walk of emit_block exactly
  // for every shape.
  std::function<Counts(int64_t grid_head)> head_counts;
  // The runs of grid heads that run alike, in launch order, covering [0, heads); empty when every
  // head does (all but per-sequence key lengths). runs() gives them either way.
  std::vector<HeadRun> head_runs;

  int64_t grid_blocks() const { return checked_mul(heads, blocks_per_head); }
  std::vector<HeadRun> runs() const { return head_runs.empty() ? std::vector<HeadRun>{{0, heads}} : head_runs; }
  // The counts of all heads: each run's head_counts × its heads.
  Counts all_heads_counts() const;
};

// The kernels of the configuration's pass, in launch order (forward kernels, then backward).
std::vector<KernelSchedule> build_schedule(const Config& config);

// Per-algorithm builders (schedule_standard.cpp, schedule_flash1.cpp, schedule_flash2.cpp);
// blocksparse is flash2's order over the tiles that meet its mask's nonzero 128-token blocks.
std::vector<KernelSchedule> standard_schedule(const Config& config);
std::vector<KernelSchedule> flash1_schedule(const Config& config);
std::vector<KernelSchedule> flash2_schedule(const Config& config);

// Tile grid helpers shared by the schedules, the closed forms and execute.
//
// The rows a grid head's blocks take (docs/shapes.md, "Grouped-query attention"): one query
// head's Nq queries (group_rows false), or the g·Nq rows of a K/V head's group of g query heads,
// head after head (group_rows true), which lie one after another in memory ((batch, head)
// outermost): row p is query p mod Nq of the group's head p / Nq. Without grouping (g = 1) the
// two are the same.
struct TileGrid {
  int64_t n = 0;       // rows of a grid head: Nq, or g·Nq with group_rows
  int64_t nk = 0;      // keys per head, Nk
  int64_t nq = 0;      // queries per head, Nq
  int64_t offset = 0;  // o = Nk − Nq: the band's alignment (bottom-right, sim/key_band.h)
  // The keys a query sees by position (sim/key_band.h, Problem::band_of): causal is right = 0.
  int64_t left = kNoWindow, right = kNoWindow;
  int64_t group = 1;   // query heads per K/V head, g
  bool group_rows = false;
  int64_t br = 0, bc = 0, tr = 0, tc = 0;
  int64_t rows_in(int64_t i) const { return std::min(br, n - i * br); }
  int64_t cols_in(int64_t j) const { return std::min(bc, nk - j * bc); }
  bool banded() const { return left != kNoWindow || right != kNoWindow; }
  // The first and last query (positions in their head) among the rows of row tile i: when the
  // tile crosses from one head's rows into the next, some row holds query 0 and some Nq − 1.
  int64_t first_query(int64_t i) const {
    const int64_t first = i * br, last = first + rows_in(i) - 1;
    return first / nq == last / nq ? first % nq : 0;
  }
  int64_t last_query(int64_t i) const {
    const int64_t first = i * br, last = first + rows_in(i) - 1;
    return first / nq == last / nq ? last % nq : nq - 1;
  }
  // Tile (i, j) is skipped when no row sees a key of it: its first key lies beyond what its
  // last query sees (right side; causal's diagonal), or its last key before what its first
  // query sees (left side).
  bool outside_band(int64_t i, int64_t j) const {
    return (right != kNoWindow && j * bc > last_query(i) + offset + right) ||
           (left != kNoWindow && j * bc + cols_in(j) - 1 < first_query(i) + offset - left);
  }
  // The first and last column tile row tile i visits (every tile between them is in the band).
  int64_t first_col(int64_t i) const {
    return left == kNoWindow ? 0 : std::max<int64_t>(0, first_query(i) + offset - left) / bc;
  }
  int64_t last_col(int64_t i) const {
    return right == kNoWindow ? tc - 1 : std::min(tc - 1, (last_query(i) + offset + right) / bc);
  }
  // The heads a grid head's transfers name: the first query head of its rows (the rest follow
  // in memory), and the K/V head it reads.
  int64_t query_head(int64_t grid_head) const { return group_rows ? grid_head * group : grid_head; }
  int64_t kv_head(int64_t grid_head) const { return group_rows ? grid_head : grid_head / group; }
};
// The grid of the configuration's tiling; group_rows as above (the kernels that take a group's
// rows: sim/schedule_flash1.cpp, schedule_flash2.cpp). A varlen batch's is the grid its kernels
// launch, over its longest sequence n_max (docs/shapes.md, "Variable-length batches").
TileGrid tile_grid(const Config& config, bool group_rows = false);
// Grid heads of a kernel: B·Hkv when its blocks take a group's rows, else B·H.
int64_t grid_heads(const Problem& problem, bool group_rows);
// The same per sequence (batch element): Hkv or H; grid head gh is of sequence gh / this.
int64_t grid_heads_per_batch(const Problem& problem, bool group_rows);

// Per-sequence key lengths (docs/shapes.md, "Per-sequence key lengths"): a kernel's grid heads in
// runs of consecutive sequences of one key length (key_length_runs, sim/config.h), each running
// the schedule of a problem whose Nk is that length (with_keys: its key tiles, causal offset and
// split partition) at the cache's addresses (a transfer's rows are keys of the Nk-row layout either
// way). In a varlen batch (docs/shapes.md, "Variable-length batches") a run is of sequences of one
// length n, and runs the schedule of a sequence alone, Nq = Nk = n (with_keys), within the launch's
// grid over n_max (tile_grid): its blocks past the run's own tiles emit nothing; a transfer's rows
// are then rows of the sequence's own head, which the packed layout places (sim/tensor.h,
// RowLayout). Without padding, one run of every head at Nk. `values` hold what a kernel's blocks
// need of their run, made once per run (sequence_runs); the run's configuration itself is not kept
// (a sweep's Config is large) but remade where needed (run_config).
template <class T>
struct SequenceRuns {
  std::vector<int64_t> keys;       // each run's key length (Nk without padding; a varlen run's n)
  std::vector<T> values;           // `make` of each run's configuration
  std::vector<HeadRun> head_runs;  // each run's grid heads in launch order (KernelSchedule::head_runs); empty without padding
  size_t run_of(int64_t grid_head) const {
    if (head_runs.empty()) return 0;
    const auto after = std::upper_bound(head_runs.begin(), head_runs.end(), grid_head,
                                        [](int64_t h, const HeadRun& r) { return h < r.first; });
    return static_cast<size_t>(after - head_runs.begin()) - 1;
  }
  const T& of(int64_t grid_head) const { return values[run_of(grid_head)]; }
  // The configuration grid head `grid_head`'s run runs: `config` (the one the runs were made of)
  // without padding, else with_keys.
  Config run_config(const Config& config, int64_t grid_head) const {
    return head_runs.empty() ? config : with_keys(config, keys[run_of(grid_head)]);
  }
};
// What makes a kernel's heads run differently: the sequences' keys (the tiled kernels), or only
// their query rows (flash2's row kernels, whose heads differ in a varlen batch alone).
enum class RunsBy { keys, queries };
// The runs of a kernel whose grid heads take a group's rows (`group_rows`) or a query head's;
// make(run's Config) → T.
template <class T, class Make>
std::shared_ptr<const SequenceRuns<T>> sequence_runs(const Config& config, bool group_rows, Make make,
                                                     RunsBy by = RunsBy::keys) {
  auto out = std::make_shared<SequenceRuns<T>>();
  const std::vector<KeyLengthRun> runs =
      by == RunsBy::keys || config.problem.varlen ? key_length_runs(config) : std::vector<KeyLengthRun>{};
  if (runs.empty()) {
    out->keys.push_back(config.problem.keys());
    out->values.push_back(make(config));
    return out;
  }
  const int64_t per_batch = grid_heads_per_batch(config.problem, group_rows);
  for (const KeyLengthRun& r : runs) {
    out->keys.push_back(r.keys);
    out->values.push_back(make(with_keys(config, r.keys)));
    out->head_runs.push_back({checked_mul(r.first, per_batch), checked_mul(r.count, per_batch)});
  }
  return out;
}

// Split-KV's combine kernel (kernels/flash2_fwd_combine.cuh): 64 query rows of one query head
// per block, 128 threads (docs/shapes.md, "Split-KV").
inline constexpr int64_t kSplitCombineRows = 64;
inline constexpr int64_t kSplitCombineThreads = 128;

// flash1's forward block: one warp per 16-row slice of its row tile (kernels/flash1.cuh,
// flash1_fwd_warps), for the schedule and the numeric execution alike.
inline int64_t flash1_fwd_threads(int64_t block_r) { return std::max<int64_t>(1, block_r / 16) * 32; }

// standard's cuBLAS GEMMs as modelled (docs/schedules.md, "standard"): output tiles of
// kStandardGemmTile × kStandardGemmTile. Along the keys the tiles cover the main call's
// standard_gemm_main_keys(N) keys (sim/kernel_catalog.h) 128 at a time, then, when N is not a
// multiple of 8, the second call's keys as one tile.
inline constexpr int64_t kStandardGemmTile = 128;
struct GemmKeyTiles {
  int64_t n = 0, main = 0;  // keys in all, keys of the main call
  int64_t main_tiles() const { return (main + kStandardGemmTile - 1) / kStandardGemmTile; }
  int64_t count() const { return main_tiles() + (main < n ? 1 : 0); }
  bool in_main(int64_t b) const { return b < main_tiles(); }
  int64_t start(int64_t b) const { return in_main(b) ? b * kStandardGemmTile : main; }
  int64_t extent(int64_t b) const { return in_main(b) ? std::min(kStandardGemmTile, main - start(b)) : n - main; }
  // Block `blk` of a GEMM with `others` tiles along the output's other dimension: the main
  // call's blocks first, then the second call's; within a call the key tile runs fastest
  // (gemm_qk, gemm_dp: keys are the output's columns) or slowest (gemm_dv, gemm_dk: its rows).
  struct Block {
    int64_t other, key;
  };
  Block key_fastest(int64_t others, int64_t blk) const {
    const int64_t mt = main_tiles();
    return blk < others * mt ? Block{blk / mt, blk % mt} : Block{blk - others * mt, mt};
  }
  Block key_slowest(int64_t others, int64_t blk) const {
    const int64_t mt = main_tiles();
    return blk < others * mt ? Block{blk % others, blk / others} : Block{blk - others * mt, mt};
  }
};
GemmKeyTiles gemm_key_tiles(int64_t seqlen);

// How many tiles each row tile i and column tile j visits, and how many rows they cover: the
// arithmetic the flash1 and flash2 closed forms sum. Per-row-tile sums appear only where causal
// or a block mask makes rows differ; they are arithmetic over Tr or Tc terms (a block mask is
// data: its tiles are counted), not a walk of the schedule.
struct TileVisits {
  std::vector<int64_t> per_row;  // vis_i: visited column tiles of row tile i
  std::vector<int64_t> kv_rows;  // Σ over visited j of c_j (K/V rows row tile i reads)
  std::vector<int64_t> per_col;  // vis_j: visited row tiles of column tile j
  std::vector<int64_t> q_rows;   // Σ over visited i of r_i
  int64_t tiles() const;         // Σ_i vis_i
  // Σ_i (vis_i − minus)·r_i: rows read or written across a row tile's visits (minus = 0), or
  // re-read and re-written after the first (minus = 1).
  int64_t weighted_rows(const TileGrid& grid, int64_t minus) const;
};
TileVisits tile_visits(const Config& config, bool group_rows = false);

// Whether the schedule visits tile (i, j): causal and windows skip tiles wholly outside the
// band (TileGrid::outside_band); blocksparse skips zero tiles of the block mask.
class TileFilter {
 public:
  explicit TileFilter(const Config& config, bool group_rows = false);
  bool visits(int64_t i, int64_t j) const;
  const TileGrid& grid() const { return grid_; }
  // blocksparse's mask (on blocks of T tokens, sim/block_mask.h), or null when dense.
  const std::shared_ptr<const BlockMask>& mask() const { return mask_; }

 private:
  TileGrid grid_;
  std::shared_ptr<const BlockMask> mask_;  // null when dense; shared by copies
};

}  // namespace flashio::sim
