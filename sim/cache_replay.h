// replay_cache: the fourth way to count (docs/architecture.md, "Ways to count", 4). It replays the
// schedules of the thread blocks that run at the same time through the L2 model (l2_cache.h)
// and predicts the bytes that reach DRAM (dram_*), next to the schedule's own io_* counts.
//
// How blocks are fed to the cache (docs/l2_model.md has the reasons and the limits):
// - launch order: linear index block_in_head + blocks_per_head · bh (docs/schedules.md);
// - occupancy: blocks per SM limited by shared memory (plus the 1 KiB the driver reserves per
//   block on sm_80/sm_90), threads, and the hardware's block limit (a schedule's registers are
//   not known; the measured occupancy of the built kernels includes them); resident blocks =
//   SMs × blocks per SM;
// - interleaving: the resident blocks take turns, one transfer (one tile) each, round-robin;
//   when a block finishes, the next block in launch order takes its place (waves, and the
//   ragged waves of causal grids);
// - partitions: the L2 is the hardware's partitions (l2_partitions.h); resident block slot s
//   runs on SM s mod SMs;
// - addresses: every tensor has its own base (aligned to 2 MiB, as cudaMalloc's large
//   allocations are); element (bh, row, col) lies at base + ((bh·rows + row)·cols + col)·e, but
//   in a varlen batch's packed tensors, where head bh = b·heads + h starts at row heads·cu_b + h·n_b
//   (sim/tensor.h, RowLayout), and in a paged K or V (Config::page_size), whose row lies in its
//   sequence's page through the block table flashio runs with (sim/paged_kv.h): a paged tile is one
//   run per page it touches;
// - kernel boundaries: by default every kernel starts with a cold L2, and the dirty lines left
//   at its end are written back and counted as that kernel's DRAM writes (what the profiler
//   measures: it flushes the L2 before each kernel and adds to the kernel's DRAM writes those
//   of a drain right after it, which evicts what the kernel left dirty; docs/profiler.md, "Why
//   the drain?").
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/config.h"
#include "sim/counts.h"
#include "sim/l2_cache.h"
#include "sim/paged_kv.h"
#include "sim/schedule.h"

namespace flashio::sim {

struct Row;
struct BuiltKernel;

enum class KernelBoundary {
  cold,  // write back and invalidate at every kernel end (matches the profiler)
  warm,  // keep the L2 across kernels; dirty lines are written back when evicted, and what is
         // still dirty after the pass's last kernel is counted there
};

struct CacheOptions {
  KernelBoundary boundary = KernelBoundary::cold;
  // Blocks per SM by kernel, where the kernels' registry knows it exactly (register use
  // can limit occupancy below what shared memory and threads allow).
  std::map<KernelKind, int64_t> blocks_per_sm;
  // Use the occupancy measured for our kernels on this hardware (measured_blocks_per_sm) where
  // it is known, for kernels not named in blocks_per_sm.
  bool measured_occupancy = true;
  // Hardware geometry overrides: 0 keeps the Hardware's figure.
  int64_t l2_bytes = 0;
  int64_t l2_ways = 0;
  // The configuration's split-KV count and page size (sim/tensor.h, TensorLayout), which size the
  // partial results and the block table and place K and V in pages; replay_cache sets it from the Config.
  TensorLayout layout;
};

struct KernelCacheResult {
  KernelKind kind = KernelKind::flash2_fwd;
  Counts counts;  // io and FLOPs as the replayed schedule emitted them (equal to the walk's)
  int64_t grid_blocks = 0;
  int64_t threads_per_block = 0;
  int64_t smem_bytes = 0;
  int64_t blocks_per_sm = 0;
  int64_t resident_blocks = 0;  // blocks in flight at once: min(grid, SMs × blocks per SM)
  L2Stats l2;                   // dram_read_bytes / dram_write_bytes are the prediction
};

struct CacheResult {
  Config config;
  std::vector<KernelCacheResult> kernels;
  Counts total_counts;
  L2Stats total_l2;
};

// What a thread block takes from its SM (docs/kernels.md, "Occupancy").
struct BlockResources {
  int64_t threads = 0;
  int64_t registers = 0;   // per thread; 0: not known, no register limit
  int64_t smem_bytes = 0;  // per block, dynamic and static, without the driver's reserve
};

// The occupancy rule: blocks one SM holds at once (at least 1), the least of the hardware's
// blocks-per-SM limit, threads per SM, shared memory with the driver's 1 KiB per-block reserve,
// and registers (allocated per warp in units of 256 in each of the SM's 4 sub-partitions of
// 16,384; compute capability 8.0 and 9.0, every preset).
int64_t blocks_per_sm(const BlockResources& block, const Hardware& hw);
// The rule for a schedule: its threads and shared memory, registers not known.
int64_t blocks_per_sm(const KernelSchedule& kernel, const Hardware& hw);
// The rule for launch `kind` of a built kernel, from its catalog entry: the main kernel's
// threads, registers and shared memory, or one of flash2 backward's row kernels
// (built_row_kernels), or the split-KV forward's combine. 0 when the entry launches no kernel of
// that kind. `instance`: which instance of the main kernel runs (its registers: instance_registers).
struct KernelInstance {
  bool stacked_rows = false;  // a group's stacked query rows (grouped-query attention)
  bool split = false;         // split-KV's forward (Config::splits > 1)
  bool paged = false;         // a paged KV cache's forward (Config::page_size > 0; stacked-row instances)
  bool window = false;        // flash2 with a window's left side (Problem::window_left; stacked-row instances)
  bool sparse = false;        // blocksparse: flash2's block-sparse instances (one head's rows)
  bool dropout = false;       // fused dropout (Problem::dropout > 0; flash2's: stacked-row instances)
};
int64_t built_blocks_per_sm(const BuiltKernel& kernel, KernelKind kind, const Hardware& hw,
                            const KernelInstance& instance = {});
// The instance of its main kernel `kind` that the configuration runs: a group's stacked rows with
// grouped-query attention (the forward packed, the backward always), split-KV's forward, a paged
// cache's or a varlen batch's KV-cache instance (kPaged), a window's left side (kWindow),
// blocksparse's (kSparse), fused dropout and key padding (kDropout). The time model and the L2
// model's occupancy take it from here.
KernelInstance kernel_instance(const Config& config, KernelKind kind);
// The registers per thread of that instance of the entry's main kernel (BuiltKernel::registers,
// stacked_registers, split_registers, stacked_split_registers, paged_registers, paged_split_registers,
// window_registers, sparse_registers, dropout_registers); an instance's 0 (not known) gives `registers`.
int64_t instance_registers(const BuiltKernel& kernel, const KernelInstance& instance);

// Blocks per SM of our CUDA kernels as the driver's occupancy calculator gave them on the
// H200 (`flashio profile` notes, 2026-12-01: registers and the kernels' real shared memory);
// 0 where not measured (hardware other than h200, dtype other than fp16, other tilings).
int64_t measured_blocks_per_sm(const Config& config, KernelKind kind);

// Replays every kernel of the configuration's pass. Throws InvalidInput for an invalid config.
CacheResult replay_cache(const Config& config, const CacheOptions& options = {});

// Replays one list of kernels (the schedules need not come from build_schedule: tests feed
// hand-made ones). `problem` gives the tensors' shapes and element size.
CacheResult replay_kernels(const std::vector<KernelSchedule>& kernels, const Problem& problem,
                           const Hardware& hw, const CacheOptions& options = {});

// Byte address of element (bh, row, col) of a tensor in the replay's layout.
class TensorAddresses {
 public:
  explicit TensorAddresses(const Problem& problem, const TensorLayout& layout = {});
  uint64_t address(Tensor t, int64_t bh, int64_t row, int64_t col) const;
  // Rows from `row` on that lie at one stride in memory: all of them, but in a paged K or V
  // (sim/paged_kv.h), where a page's rows are contiguous and the next page lies elsewhere.
  int64_t rows_in_run(Tensor t, int64_t row) const;
  const TensorShape& shape(Tensor t) const { return shape_[static_cast<int>(t)]; }
  // The end of the last tensor's range: every element's address lies below it.
  uint64_t end() const { return end_; }

 private:
  bool paged(Tensor t) const { return pages_.page_size > 0 && (t == Tensor::K || t == Tensor::V); }
  uint64_t end_ = 0;
  int64_t kv_heads_ = 1;
  PageTable pages_;
  RowLayout rows_;  // each head's first row: (batch, head) outermost, or a varlen batch's packed sequences
  uint64_t base_[kTensorCount] = {};
  TensorShape shape_[kTensorCount] = {};
};

// source=cache rows (one per kernel, then total): io and FLOPs from the schedule, dram from
// the L2 model, time from the roofline over the predicted DRAM bytes.
std::vector<Row> cache_rows(const CacheResult& result);

}  // namespace flashio::sim
