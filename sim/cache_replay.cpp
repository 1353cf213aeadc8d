#include "sim/cache_replay.h"

#include "sim/kernel_catalog.h"
#include "sim/kernel_choice.h"

#include <algorithm>
#include <limits>

#include "sim/errors.h"
#include "sim/l2_partitions.h"
#include "sim/limits.h"
#include "sim/parallel_for.h"
#include "sim/roofline.h"
#include "sim/row.h"
#include "sim/simulate.h"

namespace flashio::sim {
namespace {

// cudaMalloc hands out large allocations on 2 MiB boundaries.
constexpr uint64_t kAllocationAlignBytes = 2ull << 20;
// CUDA C Programming Guide, "Shared Memory" (compute capability 8.x and 9.0): the driver
// reserves 1 KB of shared memory per thread block.
constexpr int64_t kSmemReservedPerBlockBytes = 1024;
// The register file of an SM of compute capability 8.0 and 9.0, every preset's (docs/kernels.md,
// "Occupancy": the Programming Guide's table per compute capability and the toolkit's
// cuda_occupancy.h): 64 Ki 32-bit registers in 4 sub-partitions, a warp's registers allocated
// in one of them in units of 256 (8 per thread), at most 255 per thread.
constexpr int64_t kRegistersPerSm = 65536;
constexpr int64_t kRegisterSubPartitions = 4;
constexpr int64_t kRegisterAllocationUnit = 256;
constexpr int64_t kMaxRegistersPerThread = 255;
constexpr int64_t kWarpThreads = 32;

// One transfer, already turned into addresses: `rows` runs of `row_bytes`, `stride_bytes`
// apart. 24 bytes, because a resident block's whole list is held while blocks interleave.
struct Run {
  uint64_t address;
  uint32_t row_bytes;
  uint32_t rows;
  uint32_t stride_bytes;
  Access kind;
};

// Records one thread block's transfers as runs and adds its bytes and FLOPs to the counts.
class BlockRecorder : public ScheduleSink {
 public:
  BlockRecorder(const TensorAddresses& addresses, std::vector<Run>& runs, Counts& counts)
      : addresses_(addresses), runs_(runs), counts_(counts) {}
  void transfer(const Transfer& t) override {
    const TensorShape& shape = addresses_.shape(t.tensor);
    const int64_t row_bytes = checked_mul(t.cols, shape.element_bytes);
    counts_.add_transfer(t.tensor, t.dir, checked_mul(t.moved_rows(), row_bytes));  // io: a box's zero rows too
    if (t.rows <= 0 || t.cols <= 0) return;  // the memory replayed: the matrix's rows only
    const Access kind = t.atomic ? Access::atomic : (t.dir == Dir::read ? Access::read : Access::write);
    // One run per stretch of rows at one stride: the whole tile, or each page of a paged K/V tile.
    for (int64_t row = t.row0; row < t.row0 + t.rows;) {
      const int64_t rows = std::min(t.row0 + t.rows - row, addresses_.rows_in_run(t.tensor, row));
      runs_.push_back(Run{addresses_.address(t.tensor, t.bh, row, t.col0), static_cast<uint32_t>(row_bytes),
                          static_cast<uint32_t>(rows), static_cast<uint32_t>(shape.cols * shape.element_bytes), kind});
      row += rows;
    }
  }
  void compute(const Flops& f) override { counts_.flops += f; }

 private:
  const TensorAddresses& addresses_;
  std::vector<Run>& runs_;
  Counts& counts_;
};

struct Slot {
  std::vector<Run> runs;
  size_t next = 0;
  bool active = false;
};

L2Geometry geometry_of(const Hardware& hw, const CacheOptions& options) {
  L2Geometry g;
  g.capacity_bytes = options.l2_bytes > 0 ? options.l2_bytes : hw.l2_bytes;
  g.line_bytes = hw.l2_line_bytes;
  g.sector_bytes = hw.l2_sector_bytes;
  g.ways = options.l2_ways > 0 ? options.l2_ways : hw.l2_ways;
  return g;
}

// Blocks of the kernel one SM holds in the replay: the caller's figure, else the schedule's.
int64_t replay_blocks_per_sm(const KernelSchedule& kernel, const Hardware& hw, const CacheOptions& options) {
  const auto over = options.blocks_per_sm.find(kernel.kind);
  return over != options.blocks_per_sm.end() ? std::max<int64_t>(over->second, 1) : blocks_per_sm(kernel, hw);
}

int64_t resident_blocks(const KernelSchedule& kernel, const Hardware& hw, int64_t blocks_per_sm) {
  return std::min(kernel.grid_blocks(), saturating_mul(std::max<int64_t>(hw.sm_count, 1), blocks_per_sm));
}

// The replay's limits (sim/limits.h), checked before it starts: the L2 model's size, the
// address layout, the transfers and bytes replayed, and the transfer lists held at once.
void check_replay(const std::vector<KernelSchedule>& kernels, const Problem& problem, const Hardware& hw,
                  const CacheOptions& options) {
  const L2Geometry g = geometry_of(hw, options);
  if (g.line_bytes > 0 && g.capacity_bytes / g.line_bytes > kMaxL2Lines)
    throw InvalidInput(Field::hardware,
                       "the L2 model keeps an entry per line: l2_bytes / l2_line_bytes = " +
                           std::to_string(g.capacity_bytes / g.line_bytes) + " lines, more than its limit " +
                           limit_text(kMaxL2Lines) + "; allowed: l2_bytes up to " +
                           std::to_string(saturating_mul(kMaxL2Lines, g.line_bytes)) + " B (2^24 lines)");
  // Every tensor has its own 2 MiB-aligned range (TensorAddresses), the N × N ones included.
  int64_t layout_bytes = static_cast<int64_t>(kAllocationAlignBytes);
  for (int i = 0; i < kTensorCount; ++i) {
    const TensorShape s = tensor_shape(static_cast<Tensor>(i), problem, options.layout);
    const int64_t bytes = s.total_bytes(problem.batch);
    layout_bytes = saturating_add(layout_bytes, saturating_add(bytes, static_cast<int64_t>(kAllocationAlignBytes)));
  }
  if (layout_bytes == kMaxCount)
    throw InvalidInput(Field::seqlen, "the L2 model gives every tensor (the N × N ones included) its own "
                                      "addresses, and B·H·N² elements do not fit in 64-bit addresses here; "
                                      "allowed: a smaller B·H·N², or count with walk or formula");
  int64_t transfers = 0, bytes = 0, held_bytes = 0;
  for (const KernelSchedule& k : kernels) {
    transfers = saturating_add(transfers, saturating_mul(k.grid_blocks(), k.transfers_per_block));
    if (k.head_counts)
      for (const HeadRun& run : k.runs()) {
        const Counts c = k.head_counts(run.first);
        bytes = saturating_add(bytes, saturating_mul(saturating_add(c.io_read_bytes(), c.io_write_bytes()), run.count));
      }
    const int64_t resident = resident_blocks(k, hw, replay_blocks_per_sm(k, hw, options));
    // A slot's list of runs, at up to twice its length (a vector's growth), per resident block.
    const int64_t per_slot = saturating_add(static_cast<int64_t>(sizeof(Slot)),
                                            saturating_mul(2, k.transfers_per_block, static_cast<int64_t>(sizeof(Run))));
    held_bytes = std::max(held_bytes, saturating_mul(resident, per_slot));
  }
  const auto refuse = [](const std::string& what, int64_t got, int64_t limit) {
    throw InvalidInput(Field::count_method,
                       "cache replays every thread block of every head through the L2 model: " + what + " " +
                           std::to_string(got) + ", more than its limit " + limit_text(limit) +
                           "; allowed: a smaller problem (B·H, N), or count with walk or formula (the same io)");
  };
  if (transfers > kMaxCacheTransfers) refuse("transfers", transfers, kMaxCacheTransfers);
  if (bytes > kMaxCacheBytes) refuse("bytes moved", bytes, kMaxCacheBytes);
  if (held_bytes > kMaxCacheMemoryBytes)
    refuse("bytes of transfer lists held by the resident blocks", held_bytes, kMaxCacheMemoryBytes);
}

}  // namespace

TensorAddresses::TensorAddresses(const Problem& problem, const TensorLayout& layout)
    : kv_heads_(problem.kv_heads_count()), pages_(page_table(problem.batch, problem.keys(), layout.page_size)),
      rows_(problem) {
  uint64_t next = kAllocationAlignBytes;  // address 0 is never an allocation
  for (int i = 0; i < kTensorCount; ++i) {
    const Tensor t = static_cast<Tensor>(i);
    shape_[i] = tensor_shape(t, problem, layout);
    base_[i] = next;
    // A paged K or V holds whole pages: (pages, Hkv, P, d).
    const auto bytes = static_cast<uint64_t>(
        paged(t) ? saturating_mul(saturating_mul(pages_.pages, kv_heads_, pages_.page_size),
                                  saturating_mul(shape_[i].cols, shape_[i].element_bytes))
                 : shape_[i].total_bytes(problem.batch));
    next += (bytes + kAllocationAlignBytes - 1) / kAllocationAlignBytes * kAllocationAlignBytes;
  }
  end_ = next;
}

int64_t TensorAddresses::rows_in_run(Tensor t, int64_t row) const {
  return paged(t) ? pages_.page_size - row % pages_.page_size : std::numeric_limits<int64_t>::max();
}

uint64_t TensorAddresses::address(Tensor t, int64_t bh, int64_t row, int64_t col) const {
  const TensorShape& s = shape_[static_cast<int>(t)];
  if (paged(t)) {  // sequence b = bh / Hkv's page row / P: physical page (Hkv, P, d), sim/paged_kv.h
    const int64_t p = pages_.page_size;
    const int64_t page = pages_.physical(bh / kv_heads_, row / p);
    return base_[static_cast<int>(t)] +
           static_cast<uint64_t>((((page * kv_heads_ + bh % kv_heads_) * p + row % p) * s.cols + col) * s.element_bytes);
  }
  return base_[static_cast<int>(t)] +
         static_cast<uint64_t>((rows_.first_row(s, bh) + row) * s.cols + col) *
             static_cast<uint64_t>(s.element_bytes);
}

int64_t blocks_per_sm(const BlockResources& block, const Hardware& hw) {
  int64_t blocks = hw.max_blocks_per_sm > 0 ? hw.max_blocks_per_sm : 32;
  if (block.threads > 0 && hw.max_threads_per_sm > 0)
    blocks = std::min(blocks, hw.max_threads_per_sm / block.threads);
  if (block.smem_bytes > 0 && hw.smem_per_sm_bytes > 0)
    blocks = std::min(blocks, hw.smem_per_sm_bytes / saturating_add(block.smem_bytes, kSmemReservedPerBlockBytes));
  if (block.registers > 0 && block.threads > 0) {
    // A warp's registers come from one sub-partition, so an SM holds 4 × (the warps one
    // sub-partition holds), not 65,536 / (a warp's registers), warps.
    const int64_t warp_registers = (std::min(block.registers, kMaxRegistersPerThread) * kWarpThreads +
                                    kRegisterAllocationUnit - 1) / kRegisterAllocationUnit * kRegisterAllocationUnit;
    const int64_t warps_per_sm = kRegistersPerSm / kRegisterSubPartitions / warp_registers * kRegisterSubPartitions;
    const int64_t warps_per_block = (block.threads + kWarpThreads - 1) / kWarpThreads;
    blocks = std::min(blocks, warps_per_sm / warps_per_block);
  }
  return std::max<int64_t>(blocks, 1);
}

int64_t blocks_per_sm(const KernelSchedule& kernel, const Hardware& hw) {
  return blocks_per_sm(BlockResources{kernel.threads_per_block, kernel.registers_per_thread, kernel.smem_bytes}, hw);
}

int64_t instance_registers(const BuiltKernel& kernel, const KernelInstance& i) {
  const int64_t registers = i.sparse  ? kernel.sparse_registers
                            : i.window ? kernel.window_registers
                            : i.dropout ? kernel.dropout_registers
                            : i.paged ? (i.split ? kernel.paged_split_registers : kernel.paged_registers)
                            : i.split ? (i.stacked_rows ? kernel.stacked_split_registers : kernel.split_registers)
                                      : (i.stacked_rows ? kernel.stacked_registers : 0);
  return registers > 0 ? registers : kernel.registers;
}

KernelInstance kernel_instance(const Config& config, KernelKind kind) {
  KernelInstance instance;
  instance.stacked_rows = config.problem.group() > 1 && (pass_of(kind) == Pass::bwd || config.gqa_pack);
  instance.split = config.splits > 1 && pass_of(kind) == Pass::fwd;
  instance.paged = runs_kv_cache_instance(config, kind);  // a paged cache's, a varlen batch's: kPaged
  instance.window = config.problem.window_left != kNoWindow;  // a left side runs the window instances
  instance.sparse = algo_of(kind) == Algo::blocksparse;       // a block mask its block-sparse instances (kSparse)
  instance.dropout = runs_dropout_instance(config, kind);     // fused dropout and key padding: kDropout
  return instance;
}

int64_t built_blocks_per_sm(const BuiltKernel& kernel, KernelKind kind, const Hardware& hw,
                            const KernelInstance& instance) {
  if (kind == main_kernel_kind(kernel))
    return blocks_per_sm(BlockResources{kernel.threads, instance_registers(kernel, instance), kernel.smem_bytes}, hw);
  if (kernel.algo == Algo::flash2)
    if (const BuiltRowKernel* r = find_row_kernel(kind, kernel.headdim, kernel.dtype))
      return blocks_per_sm(BlockResources{r->threads, r->registers, r->static_smem_bytes}, hw);
  return 0;
}

CacheResult replay_kernels(const std::vector<KernelSchedule>& kernels, const Problem& problem,
                           const Hardware& hw, const CacheOptions& options) {
  check_replay(kernels, problem, hw, options);
  // A capacity that is not a whole number of sets per partition (a hardware file's odd figure)
  // is rounded down to one: the model needs equal sets (PartitionedL2).
  const TensorAddresses addresses(problem, options.layout);
  // Every replayed line lies below the layout's end (check_replay bounded it below 2^63 bytes):
  // the L2 model keeps 32-bit line addresses when that end is below 2^32 lines (sim/l2_sets.h).
  const L2Geometry geometry = geometry_of(hw, options);
  const uint64_t line_limit = geometry.line_bytes > 0 ? addresses.end() / static_cast<uint64_t>(geometry.line_bytes) + 1
                                                      : L2Cache::kNoLineLimit;
  const int64_t sms = std::max<int64_t>(hw.sm_count, 1);
  // One kernel replayed on `cache`; `last` says whether it ends the pass.
  auto replay_one = [&](PartitionedL2& cache, const KernelSchedule& kernel, bool last) {
    KernelCacheResult kr;
    kr.kind = kernel.kind;
    kr.grid_blocks = kernel.grid_blocks();
    kr.threads_per_block = kernel.threads_per_block;
    kr.smem_bytes = kernel.smem_bytes;
    kr.blocks_per_sm = replay_blocks_per_sm(kernel, hw, options);
    kr.resident_blocks = resident_blocks(kernel, hw, kr.blocks_per_sm);

    // Resident blocks take turns one transfer at a time; a finished block's slot takes the
    // next block in launch order (the hardware's block scheduler fills freed SM slots in
    // launch order).
    std::vector<Slot> slots(static_cast<size_t>(kr.resident_blocks));
    int64_t next_block = 0;
    auto refill = [&](Slot& slot) {
      slot.runs.clear();
      slot.next = 0;
      slot.active = false;
      while (next_block < kr.grid_blocks) {
        const int64_t index = next_block++;
        BlockRecorder recorder(addresses, slot.runs, kr.counts);
        kernel.emit_block(index / kernel.blocks_per_head, index % kernel.blocks_per_head, recorder);
        if (!slot.runs.empty()) {
          slot.active = true;
          return;
        }
      }
    };
    for (auto& slot : slots) refill(slot);
    bool any_active = true;
    while (any_active) {
      any_active = false;
      for (size_t s = 0; s < slots.size(); ++s) {
        Slot& slot = slots[s];
        if (!slot.active) continue;
        const Run& run = slot.runs[slot.next++];
        cache.access_rows(static_cast<int64_t>(s) % sms, run.address, run.row_bytes, run.rows,
                          run.stride_bytes, run.kind);
        if (slot.next == slot.runs.size()) refill(slot);
        any_active = any_active || slot.active;
      }
    }

    if (options.boundary == KernelBoundary::cold)
      cache.flush_and_invalidate();
    else if (last)
      cache.write_back_all();
    kr.l2 = cache.take_stats();
    return kr;
  };
  std::vector<KernelCacheResult> per_kernel(kernels.size());
  if (options.boundary == KernelBoundary::cold && kernels.size() > 1) {
    // Every kernel starts with an empty L2 and leaves nothing behind it (the cold boundary), so
    // the kernels' replays are independent: each runs on its own L2 model, on as many threads
    // as the machine has, the longest first (docs/l2_model.md, "Speed"). The counts are those of
    // one replay after another.
    std::vector<size_t> order(kernels.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return saturating_mul(kernels[a].grid_blocks(), kernels[a].transfers_per_block) >
             saturating_mul(kernels[b].grid_blocks(), kernels[b].transfers_per_block);
    });
    parallel_for(static_cast<int>(order.size()), [&](int i) {
      PartitionedL2 cache(geometry, hw.l2_partitions, line_limit);
      const size_t k = order[static_cast<size_t>(i)];
      per_kernel[k] = replay_one(cache, kernels[k], k + 1 == kernels.size());
    });
  } else {
    PartitionedL2 cache(geometry, hw.l2_partitions, line_limit);
    for (size_t k = 0; k < kernels.size(); ++k) per_kernel[k] = replay_one(cache, kernels[k], k + 1 == kernels.size());
  }
  CacheResult result;
  for (KernelCacheResult& kr : per_kernel) {
    result.total_counts += kr.counts;
    result.total_l2 += kr.l2;
    result.kernels.push_back(std::move(kr));
  }
  return result;
}

int64_t measured_blocks_per_sm(const Config& c, KernelKind kind) {
  // Read off the GPU by `flashio profile --occupancy-out` (cuOccupancyMaxActiveBlocksPerMultiprocessor
  // on the captured launches; docs/l2_model.md). The schedules' own figures (shared memory of the
  // tiles, threads) allow more: registers and the kernels' padded shared memory limit these.
  const std::string kernel = to_string(kind);
  for (const MeasuredOccupancy& m : measured_occupancy())
    if (m.hw == c.hw.name && m.kernel == kernel && m.headdim == c.problem.headdim && m.dtype == c.problem.dtype &&
        m.tiling == c.tiling)
      return m.blocks_per_sm;
  return 0;
}

namespace {

// blocksparse runs flash2's kernels (sim/kernel_catalog.h, built_algo): its row kernels are
// flash2's own, so their measured figures; its main kernels are flash2's block-sparse instances,
// not in the measured table, so the catalog's occupancy of the instance (threads, shared memory,
// sparse_registers: the rule tests/sim/test_occupancy.cpp checks against the driver's figures).
// Without them the schedule's own figures allowed more resident blocks than the kernels have, and
// the replay over-counted DRAM (a dense mask, causal bwd at d = 128: +10 % against flash2's −1 %).
int64_t blocksparse_blocks_per_sm(const Config& c, KernelKind kind) {
  switch (kind) {
    case KernelKind::blocksparse_bwd_preprocess: return measured_blocks_per_sm(c, KernelKind::flash2_bwd_preprocess);
    case KernelKind::blocksparse_bwd_convert_dq: return measured_blocks_per_sm(c, KernelKind::flash2_bwd_convert_dq);
    case KernelKind::blocksparse_fwd:
    case KernelKind::blocksparse_bwd: {
      const BuiltKernel* b = built_kernel(c, kind);
      if (!b) return 0;
      KernelInstance sparse;
      sparse.sparse = true;
      return built_blocks_per_sm(*b, main_kernel_kind(*b), c.hw, sparse);
    }
    default: return 0;
  }
}

// Fused dropout and key padding run flash1's and flash2's kDropout instances (runs_dropout_instance),
// and a varlen batch's forward flash2's KV-cache instance (runs_kv_cache_instance), which the
// measured table (taken without them) does not have: their main kernels' occupancy is the
// catalog's rule on the instance's registers (dropout_registers, paged_registers: `registers`),
// where those are known (0 otherwise: the instance is taken to be as the measured one).
int64_t instance_blocks_per_sm(const Config& c, KernelKind kind, const KernelInstance& instance,
                               int64_t BuiltKernel::*registers) {
  switch (kind) {
    case KernelKind::flash1_fwd:
    case KernelKind::flash1_bwd:
    case KernelKind::flash2_fwd:
    case KernelKind::flash2_bwd: {
      const BuiltKernel* b = built_kernel(c, kind);
      if (!b || (*b).*registers == 0) return 0;
      return built_blocks_per_sm(*b, main_kernel_kind(*b), c.hw, instance);
    }
    default: return 0;
  }
}

// The blocks per SM the replay takes for kernel `kind` of a pass's configuration: the catalog's
// rule for blocksparse's, fused dropout's and a varlen forward's instances (above), else measured
// where the table has the kernel; 0: the schedule's own figures. A paged cache's forward keeps the
// measured figures, with which its dram was validated on the H200 (docs/shapes.md, "Kernels").
int64_t replay_occupancy(const Config& c, KernelKind kind) {
  if (algo_of(kind) == Algo::blocksparse) return blocksparse_blocks_per_sm(c, kind);
  if (runs_dropout_instance(c, kind)) {
    KernelInstance dropout;
    dropout.dropout = true;
    if (const int64_t b = instance_blocks_per_sm(c, kind, dropout, &BuiltKernel::dropout_registers); b > 0) return b;
  }
  if (c.problem.varlen && runs_kv_cache_instance(c, kind)) {
    KernelInstance paged;
    paged.paged = true;
    if (const int64_t b = instance_blocks_per_sm(c, kind, paged, &BuiltKernel::paged_registers); b > 0) return b;
  }
  // The measured table holds each tiling's first entry (what the profiler ran with the family
  // unset): another family's kernel of the tiling (Config::kernel_impl) takes the catalog's rule
  // on its own threads, registers and shared memory.
  if (const BuiltKernel* b = built_kernel(c, kind);
      b && b != find_built(b->algo, b->pass, b->headdim, b->dtype, b->tiling))
    return built_blocks_per_sm(*b, kind, c.hw, kernel_instance(c, kind));
  return measured_blocks_per_sm(c, kind);
}

}  // namespace

CacheResult replay_cache(const Config& config, const CacheOptions& given) {
  validate(config);
  check_limits(config, CountMethod::cache);
  std::vector<KernelSchedule> kernels = build_schedule(config);
  CacheOptions options = given;
  options.layout = tensor_layout(config);
  if (options.measured_occupancy)
    for (const auto& k : kernels)
      if (!options.blocks_per_sm.count(k.kind))
        // Each pass's kernels with that pass's tiling (Config::bwd_tiling).
        if (const int64_t b = replay_occupancy(pass_config(config, pass_of(k.kind)), k.kind); b > 0)
          options.blocks_per_sm[k.kind] = b;
  CacheResult result = replay_kernels(kernels, config.problem, config.hw, options);
  result.config = config;
  return result;
}

std::vector<Row> cache_rows(const CacheResult& cache) {
  SimResult sim;
  sim.config = cache.config;
  sim.method = CountMethod::walk;  // the replay walks the schedule; rows carry source=cache
  for (const auto& k : cache.kernels) {
    sim.kernels.push_back(KernelCounts{k.kind, k.counts, k.grid_blocks, k.threads_per_block, k.smem_bytes});
    const double dram = static_cast<double>(k.l2.dram_read_bytes + k.l2.dram_write_bytes);
    sim.kernel_time_ms.push_back(roofline_time(k.counts, cache.config.hw, dram).time_ms);
    sim.time_ms += sim.kernel_time_ms.back();
  }
  sim.total = cache.total_counts;
  sim.extra_memory_bytes = extra_memory_bytes(cache.config);
  sim.convention_flops = convention_flops(cache.config);
  std::vector<Row> rows = rows_from_result(sim, RowSource::cache);
  // rows_from_result writes one row per kernel in order, then the total row.
  for (size_t i = 0; i < rows.size(); ++i) {
    Row& row = rows[i];
    const bool kernel_row = i < cache.kernels.size() && row.kernel == cache.kernels[i].kind;
    const L2Stats* l2 = kernel_row ? &cache.kernels[i].l2 : &cache.total_l2;
    row.dram_read_bytes = static_cast<double>(l2->dram_read_bytes);
    row.dram_write_bytes = static_cast<double>(l2->dram_write_bytes);
  }
  return rows;
}

}  // namespace flashio::sim
