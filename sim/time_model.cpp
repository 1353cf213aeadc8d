#include "sim/time_model.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>

#include "sim/cache_replay.h"
#include "sim/errors.h"
#include "sim/flops_model.h"
#include "sim/kernel_catalog.h"
#include "sim/kernel_choice.h"
#include "sim/tensor.h"

namespace flashio::sim {

std::string to_string(TimeMethod m) {
  switch (m) {
    case TimeMethod::model: return "model";
    case TimeMethod::roofline: return "roofline";
  }
  return "?";
}

std::optional<TimeMethod> parse_time_method(std::string_view text) {
  if (text == "model") return TimeMethod::model;
  if (text == "roofline") return TimeMethod::roofline;
  return std::nullopt;
}

std::string to_string(Pipe p) {
  switch (p) {
    case Pipe::dram: return "dram";
    case Pipe::l2: return "l2";
    case Pipe::atomics: return "atomics";
    case Pipe::tensor: return "tensor";
    case Pipe::smem: return "smem";
    case Pipe::exp: return "exp";
    case Pipe::fp32: return "fp32";
    case Pipe::issue: return "issue";
    case Pipe::sync: return "sync";
    case Pipe::latency: return "latency";
    case Pipe::launch: return "launch";
  }
  return "?";
}

namespace {

// Kernels of standard attention that are cuBLAS GEMMs (kernels/standard_attention.cu): their
// tiling and occupancy are cuBLAS's, not the schedule's (docs/time_model.md, "Standard").
bool is_library_gemm(KernelKind kind) {
  switch (kind) {
    case KernelKind::gemm_qk:
    case KernelKind::gemm_pv:
    case KernelKind::gemm_dv:
    case KernelKind::gemm_dp:
    case KernelKind::gemm_dq:
    case KernelKind::gemm_dk: return true;
    case KernelKind::mask:
    case KernelKind::softmax:
    case KernelKind::dropout:
    case KernelKind::dropout_bwd:
    case KernelKind::rowsum_do_o:
    case KernelKind::softmax_bwd:
    case KernelKind::flash1_fwd:
    case KernelKind::flash1_bwd:
    case KernelKind::flash2_fwd:
    case KernelKind::flash2_fwd_combine:
    case KernelKind::flash2_bwd_preprocess:
    case KernelKind::flash2_bwd:
    case KernelKind::flash2_bwd_convert_dq:
    case KernelKind::blocksparse_fwd:
    case KernelKind::blocksparse_bwd_preprocess:
    case KernelKind::blocksparse_bwd:
    case KernelKind::blocksparse_bwd_convert_dq: return false;
  }
  return false;
}

// What the model takes from the kernel beyond its schedule.
struct KernelFacts {
  int64_t threads = 128;
  int64_t stages = 1;
  MmaKind mma = MmaKind::mma_sync;
  int64_t blocks_per_sm = 1;
  int64_t wgmma_n = 0;  // the N of the kernel's wgmma instructions (its Bc)
  // Rows of the block's own tile, which its warps split between them in every GEMM: Br for the
  // forward kernels (Q rows), Bc for the backward (K, V rows).
  int64_t block_rows = 0;
  // The kernel as the catalog describes it (an unbuilt tiling: as its kind's built ones are),
  // for the loads its steps wait for (dependent_load_rounds).
  BuiltKernel entry;
};

KernelFacts facts_of(const Config& config, const KernelSchedule& k) {
  KernelFacts f;
  const Config pass = pass_config(config, pass_of(k.kind));
  f.block_rows = pass_of(k.kind) == Pass::fwd ? pass.tiling.block_r : pass.tiling.block_c;
  if (const BuiltKernel* b = built_kernel(config, k.kind)) {
    f.entry = *b;
    f.wgmma_n = b->tiling.block_c;
    // Occupancy from the built kernel's threads, registers and shared memory (the catalog's,
    // checked against cuobjdump and the driver's occupancy on the H200: tests/sim/test_occupancy.cpp).
    // With grouped-query attention flash2's forward (packed) and backward run the instance for
    // a group's stacked rows (kernels/key_limits.cuh).
    // Split-KV's forward runs its split instance (kernels/flash2_fwd.cuh, kSplit), a paged cache's its
    // KV-cache instance (kPaged, as a varlen batch's), a window's left side its window instance (kWindow), blocksparse
    // its block-sparse instance (kSparse), dropout and key lengths its instance for them (kDropout).
    f.blocks_per_sm = built_blocks_per_sm(*b, main_kernel_kind(*b), config.hw, kernel_instance(config, k.kind));
  } else {
    // Tilings that are not built run as the built ones of their kind do: two stages of streamed
    // tiles forward, one backward (sim/kernel_catalog.cpp), on mma.sync, with the schedule's
    // threads; occupancy from its threads and shared memory alone.
    f.entry.algo = algo_of(k.kind);
    f.entry.pass = pass_of(k.kind);
    f.entry.tiling = pass.tiling;
    f.entry.threads = k.threads_per_block;
    f.entry.stages = pass_of(k.kind) == Pass::fwd ? 2 : 1;
    f.entry.headdim = pass.problem.headdim;
    f.entry.dtype = pass.problem.dtype;
    f.blocks_per_sm = blocks_per_sm(k, config.hw);
  }
  f.threads = f.entry.threads;
  f.stages = f.entry.stages;
  f.mma = f.entry.mma;
  return f;
}

const std::optional<RateCurve>* wgmma_curve(const Calibration& c, DType dtype, int64_t n) {
  const bool bf16 = dtype == DType::bf16;
  if (n >= 256) return bf16 ? &c.wgmma_n256_bf16_flops_per_s : &c.wgmma_n256_fp16_flops_per_s;
  if (n >= 128) return bf16 ? &c.wgmma_n128_bf16_flops_per_s : &c.wgmma_n128_fp16_flops_per_s;
  return bf16 ? &c.wgmma_n64_bf16_flops_per_s : &c.wgmma_n64_fp16_flops_per_s;
}

// The waited curve of the same shape (Calibration::wgmma_waited_*): a GEMM of 4 instructions
// waited for before the next is issued.
const std::optional<RateCurve>* wgmma_waited_curve(const Calibration& c, DType dtype, int64_t n) {
  const bool bf16 = dtype == DType::bf16;
  if (n >= 256) return bf16 ? &c.wgmma_waited_n256_bf16_flops_per_s : &c.wgmma_waited_n256_fp16_flops_per_s;
  if (n >= 128) return bf16 ? &c.wgmma_waited_n128_bf16_flops_per_s : &c.wgmma_waited_n128_fp16_flops_per_s;
  return bf16 ? &c.wgmma_waited_n64_bf16_flops_per_s : &c.wgmma_waited_n64_fp16_flops_per_s;
}

const char* wgmma_key(DType dtype, int64_t n) {
  const bool bf16 = dtype == DType::bf16;
  if (n >= 256) return bf16 ? "wgmma_n256_bf16_flops_per_s" : "wgmma_n256_fp16_flops_per_s";
  if (n >= 128) return bf16 ? "wgmma_n128_bf16_flops_per_s" : "wgmma_n128_fp16_flops_per_s";
  return bf16 ? "wgmma_n64_bf16_flops_per_s" : "wgmma_n64_fp16_flops_per_s";
}

// cuBLAS's GEMMs on sm_90 are wgmma kernels of wide tiles: the N = 128 rate (docs/time_model.md).
constexpr int64_t kLibraryGemmN = 128;

// Integer instructions of one tile step of kernel `kind` beyond its FLOPs: fused dropout's keep
// decisions over the step's Br × Bc scores (whole tiles, as its tensor FLOPs; sim/flops_model.h,
// dropout_*_tile_integer_ops). 0 for the other kernels and without dropout.
int64_t step_integer_ops(const Config& config, KernelKind kind) {
  if (config.problem.dropout <= 0) return 0;
  const Tiling t = pass_config(config, pass_of(kind)).tiling;
  switch (kind) {
    case KernelKind::flash1_fwd:
    case KernelKind::flash2_fwd: return flops_model::dropout_fwd_tile_integer_ops(t.block_r, t.block_c);
    case KernelKind::flash1_bwd:
    case KernelKind::flash2_bwd: return flops_model::dropout_bwd_tile_integer_ops(t.block_r, t.block_c);
    default: return 0;  // no tiles that drop (blocksparse, the row kernels, the GEMMs)
  }
}

// Accumulates one thread block's steps; each tile step also adds `step_integer_ops` integer
// instructions (step_integer_ops above).
class BlockWorkSink : public ScheduleSink {
 public:
  BlockWorkSink(const Problem& problem, const BuiltKernel* entry, BlockWork& work, int64_t step_integer_ops = 0)
      : problem_(problem), entry_(entry), work_(work), step_integer_ops_(step_integer_ops) {}
  // Stops the walk (throws StopWalk) after this many transfers; negative: no limit.
  void set_budget(int64_t transfers) { budget_ = transfers; }
  struct StopWalk {};
  void transfer(const Transfer& t) override {
    if (budget_ >= 0 && ++seen_ > budget_) throw StopWalk{};
    if (entry_ != nullptr && t.dir == Dir::read && !t.atomic) {
      const int64_t rounds = dependent_load_rounds(*entry_, t.tensor, t.rows, t.cols);
      if (rounds > 0) {
        work_.dependent_load_rounds += rounds;
        work_.dependent_read_bytes += saturating_mul(t.rows, t.cols, tensor_element_bytes(t.tensor, problem_));
      }
    }
    const int64_t bytes = saturating_mul(t.rows, t.cols, tensor_element_bytes(t.tensor, problem_));
    if (t.atomic) {
      work_.atomic_bytes = saturating_add(work_.atomic_bytes, bytes);
    } else if (t.dir == Dir::read) {
      work_.read_bytes = saturating_add(work_.read_bytes, bytes);
      step_bytes_ = saturating_add(step_bytes_, bytes);
    } else {
      work_.write_bytes = saturating_add(work_.write_bytes, bytes);
    }
  }
  void compute(const Flops& f) override {
    work_.flops += f;
    if (f.tensor > 0) {
      if (work_.tile_steps == 0) work_.first_step_read_bytes = step_bytes_;
      ++work_.tile_steps;
      work_.integer_ops = saturating_add(work_.integer_ops, step_integer_ops_);
      work_.step_read_bytes = std::max(work_.step_read_bytes, step_bytes_);
      step_bytes_ = 0;
    }
  }
  void finish() {
    // A block without tile steps (a row kernel) has all its loads in flight at once.
    if (work_.tile_steps == 0) work_.step_read_bytes = work_.read_bytes;
  }

 private:
  const Problem& problem_;
  const BuiltKernel* entry_;
  BlockWork& work_;
  int64_t step_integer_ops_;
  int64_t budget_ = -1, seen_ = 0;
  int64_t step_bytes_ = 0;
};

// One head's blocks walked exactly up to this many transfers; beyond, evenly spaced blocks
// stand for their neighbours (docs/time_model.md, "Cost of the model").
constexpr int64_t kMaxWalkedTransfers = int64_t{1} << 20;
constexpr int64_t kSampledBlocks = 1024;
// Blocks list-scheduled exactly; beyond, the first whole heads are and the rest scale.
constexpr int64_t kMaxScheduledBlocks = int64_t{1} << 16;

// Work of the blocks of grid head `grid_head` (and of every head of its run, sim/schedule.h):
// work[i] stands for blocks i·stride to min((i + 1)·stride, blocks) − 1, so that a head of
// millions of blocks (standard's row kernels at N = 10^7) keeps only its sampled ones in memory.
struct HeadWork {
  std::vector<BlockWork> work;
  int64_t stride = 1;
};
HeadWork head_work(const Problem& problem, const KernelSchedule& k, const BuiltKernel* entry, int64_t grid_head,
                   int64_t step_integer_ops) {
  const int64_t blocks = k.blocks_per_head;
  HeadWork head;
  const int64_t per_block = std::max<int64_t>(k.transfers_per_block, 1);
  if (per_block > kMaxWalkedTransfers && k.head_counts) {
    // One block emits more than the whole walk may (flash1 at large N with small tiles: its one
    // block per head visits Tr·Tc tiles): the first kMaxWalkedTransfers transfers of block 0
    // stand for it, scaled to the head's closed-form tensor FLOPs per block (its tile steps are
    // alike; docs/time_model.md, "Cost of the model"), and for every block of the head.
    BlockWork w;
    BlockWorkSink sink(problem, entry, w, step_integer_ops);
    sink.set_budget(kMaxWalkedTransfers);
    try {
      k.emit_block(grid_head, 0, sink);
    } catch (const BlockWorkSink::StopWalk&) {
    }
    sink.finish();
    const double head_tensor = static_cast<double>(k.head_counts(grid_head).flops.tensor) / static_cast<double>(blocks);
    const double scale = w.flops.tensor > 0 ? head_tensor / static_cast<double>(w.flops.tensor) : 1.0;
    const auto scaled = [scale](int64_t v) { return static_cast<int64_t>(std::llround(static_cast<double>(v) * scale)); };
    w.read_bytes = scaled(w.read_bytes), w.write_bytes = scaled(w.write_bytes), w.atomic_bytes = scaled(w.atomic_bytes);
    w.flops.tensor = scaled(w.flops.tensor), w.flops.exp = scaled(w.flops.exp), w.flops.other = scaled(w.flops.other);
    w.tile_steps = scaled(w.tile_steps), w.integer_ops = scaled(w.integer_ops);
    w.dependent_load_rounds = scaled(w.dependent_load_rounds), w.dependent_read_bytes = scaled(w.dependent_read_bytes);
    head.work.push_back(w);
    head.stride = std::max<int64_t>(blocks, 1);
    return head;
  }
  const bool exact = saturating_mul(blocks, per_block) <= kMaxWalkedTransfers;
  // Sampled: at most kSampledBlocks blocks, and no more than kMaxWalkedTransfers transfers in
  // all (at the tile grid's limit one block emits millions).
  const int64_t sampled = std::max<int64_t>(1, std::min(kSampledBlocks, kMaxWalkedTransfers / per_block));
  head.stride = exact ? 1 : std::max<int64_t>(1, (blocks + sampled - 1) / sampled);
  for (int64_t b = 0; b < blocks; b += head.stride) {
    BlockWork& w = head.work.emplace_back();
    BlockWorkSink sink(problem, entry, w, step_integer_ops);
    k.emit_block(grid_head, b, sink);
    sink.finish();
  }
  return head;
}

struct Rates {  // per SM, per second, at the kernel's occupancy
  double dram_read = 0, dram_write = 0, l2 = 0, atomics = 0, tensor = 0, exp = 0, fp32 = 0;
  double integer = 0;  // 32-bit integer instructions (lane results)
};

struct BlockTerms {
  double dram = 0, l2 = 0, atomics = 0, tensor = 0, smem = 0, exp = 0, fp32 = 0, issue = 0, sync = 0, latency = 0;
  double total = 0;
};

}  // namespace

std::vector<std::string> missing_calibration(const Config& config) {
  const Calibration& c = config.hw.calibration;
  std::vector<std::string> missing;
  const auto need_number = [&](const std::optional<double>& f, const char* key) {
    if (!f) missing.emplace_back(key);
  };
  const auto need_curve = [&](const std::optional<RateCurve>& f, const char* key) {
    if (!f) missing.emplace_back(key);
  };
  need_curve(c.dram_read_bytes_per_s, "dram_read_bytes_per_s");
  need_curve(c.dram_write_bytes_per_s, "dram_write_bytes_per_s");
  need_curve(c.dram_copy_bytes_per_s, "dram_copy_bytes_per_s");
  need_curve(c.l2_hit_bytes_per_s, "l2_hit_bytes_per_s");
  need_number(c.exp2_per_s, "exp2_per_s");
  need_number(c.fma_flops_per_s, "fma_flops_per_s");
  need_number(c.cp_async_latency_ns, "cp_async_latency_ns");
  need_curve(c.barrier_ns, "barrier_ns");
  need_number(c.kernel_overhead_us, "kernel_overhead_us");
  need_number(c.wave_overhead_us, "wave_overhead_us");
  const DType dtype = config.problem.dtype;
  for (const KernelSchedule& k : build_schedule(config)) {
    if (is_library_gemm(k.kind)) {
      need_curve(*wgmma_curve(c, dtype, kLibraryGemmN), wgmma_key(dtype, kLibraryGemmN));
      continue;
    }
    const KernelFacts f = facts_of(config, k);
    if (k.kind == KernelKind::flash2_bwd || k.kind == KernelKind::blocksparse_bwd)
      need_number(c.atomic_f32_per_s, "atomic_f32_per_s");
    if (k.kind == KernelKind::flash1_fwd || k.kind == KernelKind::flash1_bwd || k.kind == KernelKind::flash2_fwd ||
        k.kind == KernelKind::flash2_bwd || k.kind == KernelKind::blocksparse_fwd || k.kind == KernelKind::blocksparse_bwd) {
      if (issues_wgmma(f.mma))
        need_curve(*wgmma_curve(c, dtype, f.wgmma_n), wgmma_key(dtype, f.wgmma_n));
      else if (dtype == DType::bf16)
        need_curve(c.mma_sync_bf16_flops_per_s, "mma_sync_bf16_flops_per_s");
      else
        need_curve(c.mma_sync_fp16_flops_per_s, "mma_sync_fp16_flops_per_s");
      if (f.mma == MmaKind::mma_sync) need_number(c.smem_bytes_per_s, "smem_bytes_per_s");
    }
  }
  std::sort(missing.begin(), missing.end());
  missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
  return missing;
}

void require_calibration(const Config& config) {
  const std::vector<std::string> missing = missing_calibration(config);
  if (missing.empty()) return;
  std::string list;
  for (const std::string& key : missing) list += (list.empty() ? "" : ", ") + key;
  throw InvalidInput(Field::hardware,
                     "'" + config.hw.name + "' has no " + missing.front() +
                         ", a figure the time model needs (missing: " + list +
                         "); `flashio calibrate` measures them on a GPU (docs/calibration.md), or use --time roofline");
}

namespace {
Config small_config(const Hardware& hw) {
  Problem small;
  small.batch = small.heads = 1, small.seqlen = 128;
  return make_config(Algo::flash2, small, hw);
}
}  // namespace

std::vector<std::string> missing_calibration(const Hardware& hw) { return missing_calibration(small_config(hw)); }
void require_calibration(const Hardware& hw) { require_calibration(small_config(hw)); }

int64_t estimated_dram_bytes(const Config& config, const KernelSchedule&, const Counts& counts) {
  int64_t bytes = 0;
  for (int t = 0; t < kTensorCount; ++t) {
    const Tensor tensor = static_cast<Tensor>(t);
    const TensorShape s = tensor_shape(tensor, config.problem, tensor_layout(config));
    const int64_t size = s.total_bytes(config.problem.batch);
    const auto& b = counts.of(tensor);
    bytes = saturating_add(bytes, saturating_add(std::min(b.read_bytes, size), std::min(b.write_bytes, size)));
  }
  return bytes;
}

PassTime model_time(const Config& config, const std::vector<KernelSchedule>& kernels,
                    std::span<const int64_t> dram_read_bytes, std::span<const int64_t> dram_write_bytes) {
  require_calibration(config);
  const Hardware& hw = config.hw;
  const Calibration& cal = hw.calibration;
  const double sms = static_cast<double>(std::max<int64_t>(hw.sm_count, 1));
  const DType dtype = config.problem.dtype;
  PassTime pass;
  for (size_t ki = 0; ki < kernels.size(); ++ki) {
    const KernelSchedule& k = kernels[ki];
    KernelTime kt;
    kt.kind = k.kind;
    const double launch_s = *cal.kernel_overhead_us * 1e-6;
    const bool library_gemm = is_library_gemm(k.kind);
    const KernelFacts f = library_gemm ? KernelFacts{} : facts_of(config, k);
    // A library GEMM is modelled from its totals (below): its closed form, not a walk of its
    // tiles (at N = 65,536 a head has 2.6 × 10^5 of them).
    // One head's blocks of each run of alike heads, one run after another (run r's blocks at
    // run_first_block[r], each standing for run_stride[r] blocks of its head, HeadWork);
    // weight[b]: the blocks its terms stand for, over all heads of its run.
    std::vector<BlockWork> work;
    std::vector<double> weight;
    std::vector<size_t> run_first_block;
    std::vector<int64_t> run_stride;
    const std::vector<HeadRun> runs = k.runs();
    if (library_gemm && k.head_counts) {
      const Counts all = k.all_heads_counts();
      BlockWork w;
      w.read_bytes = all.io_read_bytes();
      w.write_bytes = all.io_write_bytes();
      w.flops = all.flops;
      work.push_back(w);
      weight.push_back(1.0);
    } else {
      for (const HeadRun& run : runs) {
        run_first_block.push_back(work.size());
        const HeadWork head = head_work(config.problem, k, library_gemm ? nullptr : &f.entry, run.first,
                                        step_integer_ops(config, k.kind));
        run_stride.push_back(head.stride);
        for (size_t i = 0; i < head.work.size(); ++i) {
          const int64_t first = static_cast<int64_t>(i) * head.stride;
          const int64_t stands_for = std::min(head.stride, k.blocks_per_head - first);
          work.push_back(head.work[i]);
          weight.push_back(static_cast<double>(run.count) * static_cast<double>(std::max<int64_t>(stands_for, 1)));
        }
      }
    }
    // The kernel's io (from its blocks) and its DRAM bytes: the share of each block's bytes
    // that reaches DRAM is the kernel's (the L2 model predicts kernels, not blocks).
    double io_read = 0, io_write = 0;
    for (size_t b = 0; b < work.size(); ++b) {
      io_read += static_cast<double>(work[b].read_bytes) * weight[b];
      io_write += static_cast<double>(work[b].write_bytes + work[b].atomic_bytes) * weight[b];
    }
    const double dram_r = ki < dram_read_bytes.size() ? static_cast<double>(dram_read_bytes[ki]) : io_read;
    const double dram_w = ki < dram_write_bytes.size() ? static_cast<double>(dram_write_bytes[ki]) : io_write;
    const double read_share = io_read > 0 ? dram_r / io_read : 0;
    const double write_share = io_write > 0 ? dram_w / io_write : 0;

    if (library_gemm) {
      // A cuBLAS GEMM: its FLOPs at the wide-tile wgmma rate with every SM full, or its DRAM
      // bytes at the streams' best bandwidth, whichever is longer (docs/time_model.md, "Standard").
      double tensor_flops = 0;
      for (size_t b = 0; b < work.size(); ++b) tensor_flops += static_cast<double>(work[b].flops.tensor) * weight[b];
      const RateCurve& tensor_rate = **wgmma_curve(cal, dtype, kLibraryGemmN);
      kt.tensor_ms = tensor_flops / tensor_rate.points().back().second * 1e3;
      kt.dram_ms = std::max({dram_r / cal.dram_read_bytes_per_s->points().back().second,
                             dram_w / cal.dram_write_bytes_per_s->points().back().second,
                             (dram_r + dram_w) / cal.dram_copy_bytes_per_s->points().back().second}) * 1e3;
      // Two cuBLAS calls when N is not a multiple of 8 (sim/kernel_catalog.h): two launches.
      kt.launch_ms = launch_s * 1e3 * static_cast<double>(standard_gemm_calls(config.problem.keys()));
      kt.time_ms = std::max(kt.tensor_ms, kt.dram_ms) + kt.launch_ms;
      kt.bound_by = kt.launch_ms > std::max(kt.tensor_ms, kt.dram_ms) ? Pipe::launch
                    : kt.tensor_ms >= kt.dram_ms                     ? Pipe::tensor
                                                                     : Pipe::dram;
      pass.kernels.push_back(kt);
      pass.time_ms += kt.time_ms;
      continue;
    }

    // The block scheduler fills the SMs breadth first: a grid smaller than SMs × occupancy puts
    // ⌈grid / SMs⌉ blocks on an SM, and leaves SMs idle when it is smaller than the SM count
    // (flash1's one block per head). The blocks that share an SM's pipes are the resident ones.
    const int64_t grid = k.grid_blocks();
    const int64_t sm_count = std::max<int64_t>(hw.sm_count, 1);
    const int64_t occupancy_blocks =
        std::max<int64_t>(1, std::min(f.blocks_per_sm, (grid + sm_count - 1) / sm_count));
    kt.blocks_per_sm = occupancy_blocks;
    const int64_t warps_per_block = std::max<int64_t>(1, f.threads / 32);
    bool has_tensor = false;
    for (const BlockWork& w : work) has_tensor = has_tensor || w.flops.tensor > 0;
    const double barrier_s = cal.barrier_ns->at(static_cast<double>(f.threads)) * 1e-9;
    const double latency_s = *cal.cp_async_latency_ns * 1e-9;

    BlockTerms sum;     // over all heads' blocks: the SM's pipe times (the kernel's *_ms)
    BlockTerms binding; // the same, counting only what bounds each block (bound_by)
    // Every block's time with `resident_blocks` of them on each SM (sharing its pipes); `record`
    // adds the terms into sum and binding.
    const auto block_times = [&](int64_t resident_blocks, bool record) {
      const double resident = static_cast<double>(resident_blocks);
      // The tensor rate of all the resident blocks' warps together (they run their matrix phases at
      // the same time): warps per SM for mma.sync, warpgroups per SM for wgmma; the warp-specialised
      // family (wgmma_ws) counts its consumer warpgroups only (computing_warps: the producer issues
      // no wgmma).
      double tensor_rate_sm = 0, tensor_rate_one_block = 0;  // all resident blocks' warps; one block's
      if (has_tensor) {
        // The wgmma family's warpgroups wait for each GEMM before their next phase (S before the
        // softmax, P V before the rescale; the backward's Sᵀ and dPᵀ, then dV, dK and dQ): where
        // the calibration has the waited curve they run at it, else at the streaming one
        // (docs/time_model.md, "The wgmma backward"). The warp-specialised family overlaps a
        // warpgroup's GEMMs with the others' (its turns): the streaming curve.
        const std::optional<RateCurve>& waited = *wgmma_waited_curve(cal, dtype, f.wgmma_n);
        const RateCurve& curve = f.mma == MmaKind::wgmma && waited ? *waited
                                 : issues_wgmma(f.mma)              ? **wgmma_curve(cal, dtype, f.wgmma_n)
                                 : dtype == DType::bf16             ? *cal.mma_sync_bf16_flops_per_s
                                                                    : *cal.mma_sync_fp16_flops_per_s;
        const double per = issues_wgmma(f.mma) ? 4.0 : 1.0;  // warps per unit of the curve's x
        const double computing = static_cast<double>(computing_warps(f.entry));
        tensor_rate_sm = curve.at(resident * computing / per);
        tensor_rate_one_block = curve.at(computing / per);
      }
      std::vector<double> block_s(work.size());
      for (size_t b = 0; b < work.size(); ++b) {
        const BlockWork& w = work[b];
        // A block that moves and computes nothing returns at once (a varlen batch's block past its
        // sequence's tiles, docs/shapes.md): no time, no waits.
        if (w.read_bytes == 0 && w.write_bytes == 0 && w.atomic_bytes == 0 && w.flops.tensor == 0 &&
            w.flops.exp == 0 && w.flops.other == 0) {
          block_s[b] = 0;
          continue;
        }
        // Bytes in flight per SM: each resident block's loads of one tile step (Little's law:
        // the bandwidth a stream reaches depends on them, docs/calibration.md).
        const int64_t row_in_flight = row_kernel_bytes_in_flight(k.kind, f.threads, config.problem.keys(),
                                                                 element_bytes(dtype));
        const int64_t block_in_flight = row_in_flight > 0 ? std::min(w.step_read_bytes, row_in_flight) : w.step_read_bytes;
        const double in_flight = resident * static_cast<double>(std::max<int64_t>(block_in_flight, 1));
        // An SM's share of a stream at x bytes in flight is what it reached when every SM had x in
        // flight (the curves' measurement), also when fewer SMs are busy (docs/time_model.md,
        // "Memory": flash1's grids of one block per head leave SMs idle and are not faster per SM).
        const double per_sm = 1.0 / sms;
        Rates r;
        r.dram_read = cal.dram_read_bytes_per_s->at(in_flight) * per_sm;
        r.dram_write = cal.dram_write_bytes_per_s->at(in_flight) * per_sm;
        const double dram_copy = cal.dram_copy_bytes_per_s->at(in_flight) * per_sm;
        r.l2 = cal.l2_hit_bytes_per_s->at(in_flight) * per_sm;
        r.atomics = cal.atomic_f32_per_s ? *cal.atomic_f32_per_s * per_sm : 0;
        r.exp = *cal.exp2_per_s * per_sm;
        r.fp32 = *cal.fma_flops_per_s / 2.0 * per_sm;  // one fp32 operation per lane per FMA slot
        // Integer instructions (fused dropout's hashes and compares) at the calibrated integer
        // rate; a calibration without it (measured before the figure existed) puts them on the
        // FP32 pipe at its rate (docs/time_model.md, "Fused dropout").
        r.integer = cal.integer_ops_per_s ? *cal.integer_ops_per_s * per_sm : r.fp32;
        // Throughput: the SM's pipes shared by its resident blocks, each block's work × resident
        // over the SM's rate. DRAM: each stream's limit, reads, writes, and both together (the
        // copy rate: a kernel that reads and writes shares the bus between them).
        BlockTerms t;
        // Bytes a step waits for in turn (dependent loads) are costed below, as round trips; the
        // streams carry the rest.
        const int64_t streamed_read_bytes = w.read_bytes - w.dependent_read_bytes;
        const double dram_read = static_cast<double>(streamed_read_bytes) * read_share;
        const double dram_write = static_cast<double>(w.write_bytes + w.atomic_bytes) * write_share;
        t.dram = resident * std::max({dram_read / r.dram_read, dram_write / r.dram_write,
                                      dram_read > 0 && dram_write > 0 ? (dram_read + dram_write) / dram_copy : 0.0});
        t.l2 = resident * static_cast<double>(streamed_read_bytes + w.write_bytes + w.atomic_bytes) / r.l2;
        t.atomics = w.atomic_bytes > 0 && r.atomics > 0 ? resident * static_cast<double>(w.atomic_bytes) / 4.0 / r.atomics : 0;
        t.tensor = w.flops.tensor > 0 ? resident * static_cast<double>(w.flops.tensor) / (tensor_rate_sm * per_sm) : 0;
        t.exp = resident * static_cast<double>(w.flops.exp) / r.exp;
        // The CUDA cores' term: the other FLOPs, then the integer instructions in the same
        // instruction stream (docs/time_model.md, "Fused dropout").
        t.fp32 = resident * (static_cast<double>(w.flops.other) / r.fp32 + static_cast<double>(w.integer_ops) / r.integer);
        // Two barriers per tile step (tiles loaded; tiles consumed), and the load latency a block
        // waits for: once when its stages stream ahead, at every step otherwise.
        t.sync = static_cast<double>(w.tile_steps) * 2.0 * barrier_s;
        const double waits = f.stages >= 2 ? 1.0 : static_cast<double>(std::max<int64_t>(w.tile_steps, 1));
        const double cp_async_waits = waits * latency_s;
        double dependent_s = 0;
        // Loads a step waits for in turn (sim/kernel_catalog.h, dependent_load_rounds): each round
        // trip takes the memory's latency at light load, read off the same curves by Little's law
        // (latency = bytes in flight / bandwidth at their first point), from DRAM for the share of
        // reads that reach it and from the L2 for the rest, and its bytes then arrive at the
        // stream's full rate (docs/time_model.md, "Dependent loads").
        if (w.dependent_load_rounds > 0) {
          const double share = std::clamp(read_share, 0.0, 1.0);
          const auto light_load_latency_s = [&](const RateCurve& curve) {
            const auto& [x, rate] = curve.points().front();
            return x * sms / rate;
          };
          const double round_s = share * light_load_latency_s(*cal.dram_read_bytes_per_s) +
                                 (1 - share) * light_load_latency_s(*cal.l2_hit_bytes_per_s);
          const double bytes = static_cast<double>(w.dependent_read_bytes);
          dependent_s = static_cast<double>(w.dependent_load_rounds) * round_s +
                        bytes * share / (cal.dram_read_bytes_per_s->points().back().second * per_sm) +
                        bytes * (1 - share) / (cal.l2_hit_bytes_per_s->points().back().second * per_sm);
        }
        t.latency = cp_async_waits + dependent_s;
        // Phases in series: a block's warps pass the block-wide barriers of every tile step
        // together, so its matrix, exp and fp32 phases follow each other; and the resident blocks,
        // launched together with identical steps, stay in phase, so they share each pipe in turn
        // rather than overlap on different ones (the terms above carry the sharing). Within the
        // matrix phase the ldmatrix loads overlap the mma where the kernel's step is one
        // straight-line block (fragments_overlap_mma, sim/kernel_catalog.h), and follow them
        // otherwise. Loads run beside compute when the kernel streams its tiles in two or more
        // stages; a single-stage kernel waits for its reads (docs/time_model.md, "Overlap").
        // mma.sync takes its operands from registers, which ldmatrix fills from shared memory: in a
        // GEMM whose rows the block's warps split, every warp reads all of the other operand, so a
        // block reads warps × e / (2 · rows) bytes per tensor FLOP (2·M·N·K FLOPs, W·N·K·e bytes),
        // at the calibrated ldmatrix bandwidth, in the same instruction stream as the mma. wgmma
        // reads shared memory through its descriptors, inside the measured wgmma rate.
        if (f.mma == MmaKind::mma_sync && w.flops.tensor > 0 && f.block_rows > 0 && cal.smem_bytes_per_s) {
          const double smem_bytes = static_cast<double>(w.flops.tensor) * static_cast<double>(warps_per_block) *
                                    static_cast<double>(element_bytes(dtype)) / (2.0 * static_cast<double>(f.block_rows));
          t.smem = resident * smem_bytes / (*cal.smem_bytes_per_s * per_sm);
        }
        const double matrix = fragments_overlap_mma(f.entry) ? std::max(t.tensor, t.smem) : t.tensor + t.smem;
        // One block's GEMMs at the tensor rate its own warps reach (the curve at one block's
        // warps): the matrix part of a block's own path, below.
        const double own_tensor =
            w.flops.tensor > 0 ? static_cast<double>(w.flops.tensor) / (tensor_rate_one_block * per_sm) : 0;
        // Issue slots (docs/time_model.md, "Issue slots"): each of the SM's four schedulers issues
        // one warp instruction a cycle, at the calibrated clock. A step of the block is at least
        // its warps' instructions of the step loop (BuiltKernel::step_instructions, read off the
        // SASS) over the schedulers, shared with the other resident blocks' (issue_all). The wgmma
        // family's warps wait for each GEMM before the work that uses it (wgmma.wait_group), so
        // there the instructions beyond the matrix ones issue after the block's GEMMs, one warp a
        // scheduler at least (own_issue, below).
        double issue_all = 0, own_issue = 0;
        if (f.entry.step_instructions > 0 && cal.sm_clock_hz && w.tile_steps > 0) {
          const double computing = static_cast<double>(computing_warps(f.entry));
          const double cycles = static_cast<double>(w.tile_steps) / *cal.sm_clock_hz;
          issue_all = cycles * static_cast<double>(f.entry.step_instructions) * std::max(1.0, resident * computing / 4.0);
          own_issue = cycles * static_cast<double>(f.entry.step_instructions - f.entry.step_matrix_instructions) *
                      std::max(1.0, computing / 4.0);
        }
        // C consumer warpgroups taking turns at the tensor cores (turn_taking_warpgroups): each
        // issues its GEMMs (matrix / C) and then computes its softmax ((exp + fp32) / C) while the
        // others' GEMMs run, so a step takes the longer of the tensor cores' whole work and one
        // warpgroup's GEMMs and softmax; C = 1: the phases in series.
        // The tensor cores and the softmax's pipes, each a bound of its own, share the step as the
        // calibrated co-run found them sharing: both together take r × the sum of each alone, the
        // softmax's alone being its slower pipe, the SFU's or the CUDA cores' (they run beside each
        // other in its instruction stream). r is tensor_softmax_corun_ratio (the softmax's
        // instructions per score beside the GEMMs), else tensor_exp_corun_ratio (its exponentials
        // alone), else 0.5 (the two wholly overlapped; docs/time_model.md, "The warp-specialised
        // forward").
        const double turns = static_cast<double>(turn_taking_warpgroups(f.entry));
        const double corun = cal.tensor_softmax_corun_ratio ? *cal.tensor_softmax_corun_ratio
                             : cal.tensor_exp_corun_ratio   ? *cal.tensor_exp_corun_ratio
                                                            : 0.5;
        const double softmax_alone = cal.tensor_softmax_corun_ratio ? std::max(t.exp, t.fp32) : t.exp;
        const double pipes = std::max({matrix, t.exp, corun * (matrix + softmax_alone)});
        const double without_issue = turns > 1 ? std::max(pipes, (matrix + t.exp + t.fp32) / turns) : matrix + t.exp + t.fp32;
        double compute = std::max(without_issue, issue_all);
        bool issue_binds = issue_all > without_issue;
        t.issue = issue_all;
        if (f.mma == MmaKind::wgmma && own_issue > 0) {
          // One block's own path: its GEMMs at the rate its own warpgroups reach, then its other
          // instructions, no faster than its CUDA-core and SFU work.
          const double own = own_tensor + std::max((t.exp + t.fp32) / resident, own_issue);
          issue_binds = issue_binds || (own > compute && own_issue > (t.exp + t.fp32) / resident);
          compute = std::max(compute, own);
          t.issue = std::max(t.issue, own_issue);
        }
        const double memory = std::max({t.dram, t.l2, t.atomics});
        // A single-stage kernel waits for its loads before it computes; its stores drain beside
        // the next step's work, so only the reads are in series, the whole traffic a floor.
        const double reads = resident * std::max(dram_read / r.dram_read, static_cast<double>(streamed_read_bytes) / r.l2);
        // A block alone on its SM computes nothing until its first tile step's operands are in:
        // those loads (Q forward, and the first step's tiles) cannot overlap its compute, and no
        // other block's work fills the wait; a multi-stage kernel streams everything after them
        // beside its compute. They are part of its traffic, so a memory-bound block is no longer.
        double first_loads = 0;
        if (f.stages >= 2 && resident_blocks == 1 && w.tile_steps > 0) {
          const double share = std::clamp(read_share, 0.0, 1.0);
          const double bytes = static_cast<double>(std::min(w.first_step_read_bytes, streamed_read_bytes));
          first_loads = bytes * share / r.dram_read + bytes * (1 - share) / r.l2;
        }
        // A single-stage kernel's cp.async waits are in series with its step (below, beside the
        // other resident blocks' work); a multi-stage kernel's one wait is not.
        double overlapped = f.stages >= 2 ? std::max(compute + first_loads, memory)
                                          : std::max(compute + reads, memory) + cp_async_waits;
        if (f.stages < 2 && resident_blocks > 1) {
          // One block's own path: its compute at the rates its own warps reach (the tensor curve
          // at its warps; a warp's exp and fp32 work runs on its own sub-partition's units, so a
          // block of w < 4 warps has w / 4 of the SM's), its share of the reads, its waits.
          const double own_fraction = std::min(1.0, static_cast<double>(warps_per_block) / 4.0);
          const double own_smem = t.smem / resident;
          const double own_matrix = fragments_overlap_mma(f.entry) ? std::max(own_tensor, own_smem) : own_tensor + own_smem;
          const double own = own_matrix + (t.exp + t.fp32) / resident / own_fraction;
          overlapped = std::max({compute, memory, own + reads / resident + cp_async_waits});
        }
        t.total = overlapped + t.sync + (f.stages >= 2 ? t.latency : dependent_s);
        block_s[b] = t.total;
        if (!record) continue;
        const double stands_for = weight[b];  // the blocks of all its run's heads that block b stands for
        sum.dram += t.dram * stands_for, sum.l2 += t.l2 * stands_for, sum.atomics += t.atomics * stands_for;
        sum.tensor += t.tensor * stands_for, sum.smem += t.smem * stands_for, sum.exp += t.exp * stands_for;
        sum.fp32 += t.fp32 * stands_for, sum.issue += t.issue * stands_for, sum.sync += t.sync * stands_for,
            sum.latency += t.latency * stands_for;
        // What bounds the block: the largest of its terms (the memory terms only where they are
        // not hidden behind compute).
        const bool memory_counts = f.stages < 2 ? reads > 0 || memory > compute + reads : memory > compute;
        const std::pair<double, double BlockTerms::*> terms[] = {
            {memory_counts ? t.dram : 0, &BlockTerms::dram}, {memory_counts ? t.l2 : 0, &BlockTerms::l2},
            {memory_counts ? t.atomics : 0, &BlockTerms::atomics}, {t.tensor, &BlockTerms::tensor},
            {t.smem, &BlockTerms::smem},
            {t.exp, &BlockTerms::exp}, {t.fp32, &BlockTerms::fp32},
            // The issue slots only where they lengthen the step (a floor that does not bind is no bound).
            {issue_binds ? t.issue : 0, &BlockTerms::issue}, {t.sync, &BlockTerms::sync},
            {t.latency, &BlockTerms::latency}};
        binding.*(std::max_element(std::begin(terms), std::end(terms), [](const auto& a, const auto& b) {
                    return a.first < b.first;
                  })->second) += t.total * stands_for;
      }
      return block_s;
    };
    const std::vector<double> block_s = block_times(occupancy_blocks, true);

    // The block scheduler: SMs × blocks_per_sm slots; each block, in launch order, starts on
    // the slot that frees first (waves, and the ragged waves of causal grids).
    const int64_t slots = std::max<int64_t>(1, saturating_mul(hw.sm_count, occupancy_blocks));
    const int64_t per_head = std::max<int64_t>(k.blocks_per_head, 1);
    const int64_t heads_scheduled = std::max<int64_t>(1, std::min(k.heads, kMaxScheduledBlocks / per_head));
    kt.waves = (grid + slots - 1) / slots;
    double makespan = 0;
    if (std::all_of(block_s.begin(), block_s.end(), [&](double t) { return t == block_s.front(); })) {
      // Equal blocks (standard's row kernels, dense flash2): the list schedule is whole waves,
      // and a last partial wave of R blocks, spread breadth first, has ⌈R / SMs⌉ on an SM, which
      // share its pipes among fewer (docs/time_model.md, "Waves").
      const int64_t full_waves = grid / slots, last = grid - full_waves * slots;
      const double one = block_s.empty() ? 0.0 : block_s.front();
      const int64_t last_resident = (last + sm_count - 1) / sm_count;
      makespan = static_cast<double>(full_waves) * one;
      if (last > 0 && !block_s.empty())
        makespan += last_resident < occupancy_blocks ? block_times(last_resident, false).front() : one;
    } else {
      std::priority_queue<double, std::vector<double>, std::greater<double>> free_at;
      for (int64_t s = 0; s < std::min(slots, heads_scheduled * per_head); ++s) free_at.push(0.0);
      size_t run = 0;  // the run of head h
      for (int64_t h = 0; h < heads_scheduled; ++h) {
        while (run + 1 < runs.size() && h >= runs[run + 1].first) ++run;
        for (int64_t b = 0; b < per_head; ++b) {
          const double start = free_at.top();
          free_at.pop();
          const double end = start + block_s[run_first_block[run] + static_cast<size_t>(b / run_stride[run])];
          makespan = std::max(makespan, end);
          free_at.push(end);
        }
      }
      makespan *= static_cast<double>(k.heads) / static_cast<double>(heads_scheduled);
    }
    const double waves_s = static_cast<double>(kt.waves) * *cal.wave_overhead_us * 1e-6;
    kt.time_ms = (makespan + launch_s + waves_s) * 1e3;
    kt.launch_ms = (launch_s + waves_s) * 1e3;

    // Pipe times of the whole kernel: all heads' sums, over the slots working at once.
    const double scale = 1.0 / static_cast<double>(std::min(slots, grid)) * 1e3;
    kt.dram_ms = sum.dram * scale, kt.l2_ms = sum.l2 * scale, kt.atomics_ms = sum.atomics * scale;
    kt.tensor_ms = sum.tensor * scale, kt.smem_ms = sum.smem * scale, kt.exp_ms = sum.exp * scale, kt.fp32_ms = sum.fp32 * scale;
    kt.issue_ms = sum.issue * scale;
    kt.sync_ms = sum.sync * scale, kt.latency_ms = sum.latency * scale;
    const std::pair<double, Pipe> terms[] = {
        {binding.dram, Pipe::dram},     {binding.l2, Pipe::l2},   {binding.atomics, Pipe::atomics},
        {binding.tensor, Pipe::tensor}, {binding.smem, Pipe::smem}, {binding.exp, Pipe::exp}, {binding.fp32, Pipe::fp32}, {binding.issue, Pipe::issue},
        {binding.sync, Pipe::sync},     {binding.latency, Pipe::latency},
        {kt.launch_ms / scale, Pipe::launch}};
    kt.bound_by = std::max_element(std::begin(terms), std::end(terms))->second;
    pass.kernels.push_back(kt);
    pass.time_ms += kt.time_ms;
  }
  return pass;
}

}  // namespace flashio::sim
