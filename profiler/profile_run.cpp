#include "profiler/profile_run.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/attention.h"
#include "profiler/captured_pass.h"
#include "profiler/kernel_bridge.h"
#include "profiler/l2_flush.h"
#include "profiler/launch_attribution.h"
#include "profiler/metric_set.h"
#include "profiler/pass_timer.h"
#include "profiler/profiler_error.h"
#include "profiler/range_profiler.h"
#include "sim/errors.h"

namespace flashio::profiler {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw ProfilerError(ErrorKind::cuda_failure, std::string(what) + ": " + cudaGetErrorString(e));
}

constexpr size_t kMaxRangesPerMeasurement = 32;

}  // namespace

struct Profiler::Impl {
  std::unique_ptr<RangeProfiler> ranges;
  std::unique_ptr<L2Flush> flush;
  cudaStream_t stream = nullptr;
  std::vector<Profiler::Note> notes;
  std::vector<sim::MeasuredOccupancy> occupancy;
  void note(Profiler::Note::Kind kind, const std::string& text) {
    const Profiler::Note n{kind, text};
    if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
  }
};

Profiler::Profiler() : impl_(std::make_unique<Impl>()) {
  check_profiling_possible();
  // Ranges per measurement: a kernel and its drain when a pass replays one kernel at a time; the
  // whole pass plus a drain when it cannot be captured (standard's backward: 6 names, and
  // cuBLAS may split a GEMM into more kernels).
  impl_->ranges = std::make_unique<RangeProfiler>(profile_metrics(), kMaxRangesPerMeasurement);
  impl_->flush = std::make_unique<L2Flush>();
  check(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking), "cudaStreamCreate");
  discard_first_measurement(*impl_->ranges, *impl_->flush, impl_->stream);
  for (const auto& m : impl_->ranges->unsupported())
    impl_->note(Note::Kind::counter_unavailable, "counter " + m + " is not available on " + impl_->ranges->chip_name());
  impl_->note(Note::Kind::setup, "counters: each kernel launched alone after an L2 flush, replayed by CUPTI for " +
                                     std::to_string(impl_->ranges->passes()) + " hardware passes");
}

Profiler::~Profiler() {
  if (impl_ && impl_->stream) cudaStreamDestroy(impl_->stream);
}

std::vector<Profiler::Note> Profiler::notes() const { return impl_->notes; }
std::vector<sim::MeasuredOccupancy> Profiler::occupancy() const { return impl_->occupancy; }

std::vector<sim::Row> Profiler::profile(const sim::Config& c, const ProfileOptions& options) {
  Impl& m = *impl_;
  kernels::AttentionConfig kc;
  std::unique_ptr<kernels::AttentionRun> run;
  kernels::Pass pass;
  try {
    kc = kernel_config(c);
    pass = to_kernels(c.problem.pass);
    run = std::make_unique<kernels::AttentionRun>(kc);
  } catch (const std::invalid_argument& e) {
    throw sim::InvalidInput(e.what());  // a configuration the kernels do not build
  } catch (const std::runtime_error& e) {
    throw ProfilerError(ErrorKind::cuda_failure, e.what());
  }
  run->fill_inputs(options.seed);

  std::vector<kernels::Pass> passes;
  if (pass == kernels::Pass::bwd) {
    // The backward needs a forward's outputs: run it unmeasured first.
    run->enqueue(kernels::Pass::fwd, m.stream);
    check(cudaStreamSynchronize(m.stream), "cudaStreamSynchronize (forward before bwd)");
    passes = {kernels::Pass::bwd};
  } else if (pass == kernels::Pass::fwd) {
    passes = {kernels::Pass::fwd};
  } else {
    passes = {kernels::Pass::fwd, kernels::Pass::bwd};
  }

  // One unmeasured run of the measured passes first, so that no kernel's first launch in the
  // process (lazy module loading, cuBLAS's first call) happens inside the capture or a
  // measurement. (It did not remove the first configuration's extra ~28 MB of DRAM writes; the
  // thrown-away measurement in the constructor did — docs/profiler.md.)
  try {
    for (kernels::Pass p : passes) run->enqueue(p, m.stream);
  } catch (const std::invalid_argument& e) {
    throw sim::InvalidInput(e.what());  // a pass this tiling has no kernel for
  }
  check(cudaStreamSynchronize(m.stream), "cudaStreamSynchronize (warm-up run)");

  // The key columns: the configuration's, with the tiling the kernels really use.
  const sim::Row key = measured_row(c, pass == kernels::Pass::bwd ? run->backward_entry() : run->forward_entry());

  const std::vector<std::string>& metrics = m.ranges->metrics();
  auto flush = [&](cudaStream_t s) { m.flush->enqueue(s); };
  std::vector<sim::Row> rows;
  for (kernels::Pass p : passes) {
    std::vector<sim::KernelKind> kinds;  // the model's kind of each launch (the rows' kernel column)
    std::vector<std::string> names;      // its spelling, which attribute_launches matches
    std::vector<size_t> calls;           // its library calls (kernels::library_calls)
    for (kernels::Launch l : kernels::launch_sequence(kc, p)) {
      kinds.push_back(to_sim(l));
      names.push_back(sim::to_string(kinds.back()));
      calls.push_back(static_cast<size_t>(kernels::library_calls(kc, l)));
    }
    size_t call_count = 0;
    for (size_t c : calls) call_count += c;
    std::unique_ptr<CapturedPass> capture;
    std::string capture_error;
    try {
      capture = std::make_unique<CapturedPass>([&](cudaStream_t s) { run->enqueue(p, s); });
    } catch (const ProfilerError& e) {
      // cuBLAS allocates its workspace inside the capture (a memory-allocation node) unless the
      // handle has one: then the pass runs whole, flushed before and drained after.
      capture_error = e.what();
      m.note(Note::Kind::back_to_back, sim::to_string(key.algo) + " " + kernels::to_string(p) +
                                           ": kernels measured back to back, no flush between them (" + e.what() + ")");
    }
    if (!capture) {
      const auto records = m.ranges->measure(
          [&] {
            run->enqueue(p, m.stream);
            flush(m.stream);
          },
          [&] { flush(m.stream); });
      if (records.size() != call_count + 1)
        throw ProfilerError(ErrorKind::cuda_failure,
                            "the " + kernels::to_string(p) + " pass launched " +
                                std::to_string(records.size() - 1) + " kernels for " +
                                std::to_string(names.size()) + " names (" + std::to_string(call_count) +
                                " library calls); cannot attribute them (the pass could not be captured "
                                "for one-by-one replay: " + capture_error + ")");
      size_t first = 0;  // the name's first record: one record per library call
      for (size_t n = 0; n < names.size(); first += calls[n], ++n) {
        MetricValues v;
        for (size_t i = 0; i < metrics.size(); ++i) {
          double x = 0;
          for (size_t r = first; r < first + calls[n]; ++r) x += records[r].values[i];
          if (metrics[i] == metric::dram_write && n + 1 == names.size()) x += records[first + calls[n]].values[i];
          if (x == x) v[metrics[i]] = x;
        }
        sim::Row r = key;
        r.kernel = kinds[n];
        fill_measured_values(r, v, 0.0);
        rows.push_back(std::move(r));
      }
      continue;
    }
    CapturedPass& captured = *capture;
    std::vector<std::string> functions;
    for (size_t k = 0; k < captured.kernel_count(); ++k) functions.push_back(captured.kernel_function(k));
    const std::vector<size_t> owner = attribute_launches(names, calls, functions);
    if (functions.size() != call_count)
      m.note(Note::Kind::split_gemm, sim::to_string(key.algo) + " " + kernels::to_string(p) + ": " +
                                         std::to_string(functions.size()) + " launches for " +
                                         std::to_string(names.size()) + " kernels (cuBLAS split a GEMM)");

    // The real occupancy, for the L2 model's blocks_per_sm (registers can lower it below what
    // the schedule's shared memory and threads allow): our tiled kernels, each with the tiling
    // of its own pass.
    const kernels::KernelEntry* entry = p == kernels::Pass::bwd ? run->backward_entry() : run->forward_entry();
    for (size_t k = 0; entry && k < functions.size(); ++k) {
      sim::MeasuredOccupancy o;
      o.hw = c.hw.name;
      o.kernel = names[owner[k]];
      o.headdim = c.problem.headdim;
      o.dtype = c.problem.dtype;
      o.tiling = {entry->block_r, entry->block_c};
      o.blocks_per_sm = captured.launch_shape(k).blocks_per_sm;
      const auto same = [&](const sim::MeasuredOccupancy& x) {
        return x.hw == o.hw && x.kernel == o.kernel && x.headdim == o.headdim && x.dtype == o.dtype &&
               x.tiling == o.tiling;
      };
      if (std::none_of(m.occupancy.begin(), m.occupancy.end(), same)) m.occupancy.push_back(o);
    }
    std::vector<MetricValues> values(names.size());
    std::vector<double> time_ms(names.size(), 0.0);
    for (size_t k = 0; k < functions.size(); ++k) {
      // Before every launch of kernel k (each hardware pass, each timed run): the pass's steps
      // before it, so it finds the state it would find in the pass (CapturedPass::run_prefix),
      // then two flushes, so it starts from a cold L2 with the earlier kernels' writes drained.
      auto prepare = [&](cudaStream_t s) {
        captured.run_prefix(k, s);
        flush(s);
        flush(s);
      };
      // The kernel, then a drain (the flush again, in its own range): the drain's reads evict
      // what the kernel left dirty in the L2, so the drain's DRAM writes are the kernel's
      // write-backs (docs/profiler.md; the L2 model counts them the same way).
      const auto records = m.ranges->measure(
          [&] {
            captured.launch_kernel(k, m.stream);
            flush(m.stream);
          },
          [&] { prepare(m.stream); });
      if (records.size() != 2)
        throw ProfilerError(ErrorKind::cuda_failure,
                            "expected 2 profiled ranges (kernel, drain), got " + std::to_string(records.size()));
      for (size_t i = 0; i < metrics.size(); ++i) {
        double v = records[0].values[i];
        if (metrics[i] == metric::dram_write) v += records[1].values[i];
        if (v == v) values[owner[k]][metrics[i]] += v;
      }
      if (options.repeats > 0)
        time_ms[owner[k]] += time_runs([&](cudaStream_t s) { captured.launch_kernel(k, s); },
                                       prepare, options.warmup, options.repeats, m.stream)
                                 .time_ms;
    }
    captured.run_remaining_steps(m.stream);
    check(cudaStreamSynchronize(m.stream), "cudaStreamSynchronize");
    for (size_t n = 0; n < names.size(); ++n) {
      sim::Row r = key;
      r.kernel = kinds[n];
      fill_measured_values(r, values[n], time_ms[n]);
      rows.push_back(std::move(r));
    }
  }

  double pass_ms = 0;
  if (options.repeats > 0) {
    PassTimingOptions t;
    t.warmup = options.warmup;
    t.repeats = options.repeats;
    t.stream = m.stream;
    try {
      pass_ms = time_pass(*run, pass, *m.flush, t).time_ms;
    } catch (const std::runtime_error& e) {
      throw ProfilerError(ErrorKind::cuda_failure, e.what());
    }
  }
  sim::Row total_key = key;
  total_key.flops = sim::convention_flops(c);  // the Config's: its key lengths, its block mask
  rows.push_back(total_row(total_key, rows, pass_ms));
  return rows;
}

}  // namespace flashio::profiler
