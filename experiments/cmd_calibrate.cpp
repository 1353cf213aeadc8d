// flashio calibrate: measure, on the GPU it runs on, the rates a kernel's time depends on
// (sim/calibration.h), and write them as a hardware file that --hw FILE reads (CUDA builds; needs
// an sm_90 GPU). Each figure's microbenchmark is in kernels/calibrate/ and its method in
// docs/calibration.md. Every point: warm-up runs, then timed runs, CUDA events around each
// (profiler::time_runs, the one timer), the median taken, the benchmark's checksum verified.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "experiments/calibrated_hardware.h"
#include "experiments/subcommand.h"
#include "experiments/usage_error.h"
#include "kernels/attention.h"
#include "kernels/calibrate/calibrate.h"
#include "profiler/driver_api.h"
#include "profiler/pass_timer.h"

#ifndef FLASHIO_VERSION
#define FLASHIO_VERSION "unknown"
#endif

namespace flashio::cli {
namespace {

namespace cal = kernels::calibrate;

// How long each point runs: --quick takes the fewest timed runs the median allows and a
// quarter of the work per run (a smoke run); the figures are then rougher.
struct Plan {
  int warmup = 3;
  int repeats = 31;
  int work_divisor = 1;  // iterations and steps per run are divided by this
};

constexpr int64_t kKiB = 1024, kMiB = 1024 * kKiB, kGiB = 1024 * kMiB;

int64_t power_of_two_at_least(int64_t bytes) {
  int64_t p = 1;
  while (p < bytes) p *= 2;
  return p;
}
// The power of two nearest `bytes` on a log scale (16 MiB for a quarter of a 60 MiB L2).
int64_t power_of_two_nearest(int64_t bytes) {
  const int64_t up = power_of_two_at_least(bytes), down = up / 2;
  return down > 0 && bytes * bytes < up * down ? down : up;
}

// The median of any list: the one median, profiler::summarize_times's.
double median(std::vector<double> values) { return profiler::summarize_times(std::move(values)).time_ms; }

class Calibrator {
 public:
  Calibrator(const Plan& plan, std::ostream& err) : plan_(plan), err_(err) {}

  // The median time of one run of `bench` in seconds, after its checksum is verified.
  double median_run_s(cal::Bench& bench) {
    const profiler::Timing t = profiler::time_runs([&](cudaStream_t s) { bench.enqueue(s); },
                                                   [&](cudaStream_t s) { bench.prepare(s); }, plan_.warmup,
                                                   plan_.repeats, nullptr);
    bench.check();
    return t.time_ms * 1e-3;
  }
  // work() per second.
  double rate(cal::Bench& bench) { return bench.work() / median_run_s(bench); }
  int work(int full) const { return std::max(1, full / plan_.work_divisor); }

  void curve(const std::string& key, const std::vector<double>& xs,
             const std::function<std::unique_ptr<cal::Bench>(size_t)>& make,
             const std::function<double(cal::Bench&)>& measure) {
    MeasuredFigure figure{key, 0, {}};
    for (size_t i = 0; i < xs.size(); ++i) {
      const auto bench = make(i);
      const double value = measure(*bench);
      note(key + " at " + exact(xs[i]), value);
      figure.points.emplace_back(xs[i], value);
      if (i + 1 == xs.size()) last_point_clocks(*bench);
    }
    figures_.push_back(std::move(figure));
  }
  void number(const std::string& key, double value) {
    note(key, value);
    figures_.push_back(MeasuredFigure{key, value, {}});
  }
  // The tensor benchmarks' clock at their busiest point (every SM's tensor cores in use).
  void last_point_clocks(cal::Bench& bench) {
    for (double hz : bench.clock_samples_hz()) clocks_hz_.push_back(hz);
  }
  const std::vector<double>& clocks_hz() const { return clocks_hz_; }
  const std::vector<MeasuredFigure>& figures() const { return figures_; }

 private:
  static std::string exact(double x) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", x);
    return text;
  }
  void note(const std::string& what, double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", value);
    err_ << "flashio calibrate: " << what << ": " << text << '\n' << std::flush;
  }
  Plan plan_;
  std::ostream& err_;
  std::vector<MeasuredFigure> figures_;
  std::vector<double> clocks_hz_;
};

void measure_memory(Calibrator& c, const cal::Device& device) {
  // Bytes in flight per SM from 2 KiB to 128 KiB (blocks per SM, 16-byte loads per thread):
  // blocks first (more warps to issue), then loads per thread.
  const std::vector<std::pair<int, int>> shapes = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {16, 1}, {16, 2}, {12, 4}, {16, 4}};
  std::vector<double> xs;
  for (const auto& [blocks, loads] : shapes) xs.push_back(double(cal::stream_bytes_in_flight_per_sm(blocks, loads)));
  // DRAM: a buffer of at least 2 GiB and 4 × the L2, streamed once per run.
  const int64_t dram_bytes = std::max(2 * kGiB, power_of_two_at_least(4 * device.l2_bytes));
  const auto rate = [&](cal::Bench& b) { return c.rate(b); };
  for (const auto& [key, kind] : {std::pair{"dram_read_bytes_per_s", cal::Stream::read},
                                  std::pair{"dram_write_bytes_per_s", cal::Stream::write},
                                  std::pair{"dram_copy_bytes_per_s", cal::Stream::copy}})
    c.curve(key, xs, [&, kind = kind](size_t i) { return cal::stream_bench(kind, shapes[i].first, shapes[i].second, dram_bytes, 1); }, rate);
  // L2 hits: about a quarter of the L2, read 2 GiB's worth per run (the warm-up runs load it).
  const int64_t l2_buffer = power_of_two_nearest(device.l2_bytes / 4);
  const int passes = c.work(static_cast<int>(std::max<int64_t>(1, 2 * kGiB / l2_buffer)));
  c.curve("l2_hit_bytes_per_s", xs,
          [&](size_t i) { return cal::stream_bench(cal::Stream::read, shapes[i].first, shapes[i].second, l2_buffer, passes); },
          rate);
}

void measure_tensor(Calibrator& c) {
  const auto rate = [&](cal::Bench& b) { return c.rate(b); };
  const std::vector<double> warps = {1, 2, 4, 8, 12, 16};
  for (const auto& [key, elem] : {std::pair{"mma_sync_fp16_flops_per_s", cal::Elem::fp16},
                                  std::pair{"mma_sync_bf16_flops_per_s", cal::Elem::bf16}})
    c.curve(key, warps, [&, elem = elem](size_t i) { return cal::mma_sync_bench(elem, int(warps[i]), c.work(16384)); }, rate);
  for (const auto& [type, elem] : {std::pair{"fp16", cal::Elem::fp16}, std::pair{"bf16", cal::Elem::bf16}}) {
    for (int n : {64, 128, 256}) {
      std::vector<double> groups;
      for (int g = 1; g <= cal::max_wgmma_warpgroups_per_sm(n); ++g) groups.push_back(g);
      // 4096 iterations of 4 instructions: a few ms per run at N = 256 (fewer iterations at larger N).
      const int iterations = c.work(4096 * 128 / std::max(n, 128));
      c.curve("wgmma_n" + std::to_string(n) + "_" + type + "_flops_per_s", groups,
              [&, elem = elem, n](size_t i) { return cal::wgmma_bench(elem, n, int(groups[i]), iterations); }, rate);
      // Each GEMM waited for: a quarter of the iterations (its runs are latency-bound, longer).
      c.curve("wgmma_waited_n" + std::to_string(n) + "_" + type + "_flops_per_s", groups,
              [&, elem = elem, n](size_t i) {
                return cal::wgmma_waited_bench(elem, n, int(groups[i]), std::max(1, iterations / 4));
              },
              rate);
    }
  }
}

void measure_pipes(Calibrator& c, const cal::Device& device) {
  { auto b = cal::exp2_bench(c.work(4096)); c.number("exp2_per_s", c.rate(*b)); }
  { auto b = cal::fma_bench(c.work(16384)); c.number("fma_flops_per_s", c.rate(*b)); }
  { auto b = cal::integer_bench(c.work(4096)); c.number("integer_ops_per_s", c.rate(*b)); }
  { auto b = cal::shuffle_bench(c.work(8192)); c.number("shuffle_per_s", c.rate(*b)); }
  { auto b = cal::ldmatrix_bench(c.work(4096)); c.number("smem_bytes_per_s", c.rate(*b)); }
  {
    auto b = cal::atomic_bench(power_of_two_nearest(device.l2_bytes / 4), c.work(1024));
    c.number("atomic_f32_per_s", c.rate(*b));
  }
}

// The tensor cores and the SFU at once (docs/calibration.md, "Tensor cores and the SFU together"):
// the SFU side's iterations scaled so that alone it takes as long as the tensor side alone, then
// both together; the figure is the time of both over the sum of the two alone (0.5: they overlap
// wholly, 1: one waits for the other). Once with ex2.approx alone on the SFU side
// (tensor_exp_corun_ratio), once with a softmax's instructions per score (tensor_softmax_corun_ratio).
void measure_corun(Calibrator& c) {
  const int mma_iterations = c.work(2048);
  const auto ratio = [&](cal::CorunSide side, double tensor_s) {
    const int probe_iterations = c.work(4096);
    auto probe = cal::tensor_corun_bench(side, 0, probe_iterations);
    const double probe_s = c.median_run_s(*probe);
    const int exp_iterations = std::max(64, static_cast<int>(std::lround(probe_iterations * tensor_s / probe_s)));
    auto sfu = cal::tensor_corun_bench(side, 0, exp_iterations);
    const double sfu_s = c.median_run_s(*sfu);
    auto both = cal::tensor_corun_bench(side, mma_iterations, exp_iterations);
    return c.median_run_s(*both) / (tensor_s + sfu_s);
  };
  auto tensor = cal::tensor_corun_bench(cal::CorunSide::exp, mma_iterations, 0);
  const double tensor_s = c.median_run_s(*tensor);
  c.number("tensor_exp_corun_ratio", ratio(cal::CorunSide::exp, tensor_s));
  c.number("tensor_softmax_corun_ratio", ratio(cal::CorunSide::softmax, tensor_s));
}

void measure_latencies(Calibrator& c, const cal::Device& device) {
  // Chases over 4 × the L2: a run's steps never meet a line the L2 still holds.
  const int64_t chase_bytes = power_of_two_at_least(4 * device.l2_bytes);
  const int steps = c.work(16384);
  {
    auto b = cal::cp_async_chase_bench(chase_bytes, steps);
    c.number("cp_async_latency_ns", c.median_run_s(*b) / b->work() * 1e9);
  }
  {
    auto b = cal::tma_chase_bench(chase_bytes, steps, &profiler::driver_symbol);
    c.number("tma_latency_ns", c.median_run_s(*b) / b->work() * 1e9);
  }
  const std::vector<double> threads = {128, 256, 512};
  c.curve("barrier_ns", threads, [&](size_t i) { return cal::barrier_bench(int(threads[i]), c.work(65536)); },
          [&](cal::Bench& b) { return c.median_run_s(b) / b.work() * 1e9; });
  {
    auto b = cal::launch_bench(256);
    c.number("kernel_overhead_us", c.median_run_s(*b) / b->work() * 1e6);
  }
  {
    // The slope between a short and a long kernel: what each wave adds, the launch cancelled.
    constexpr int kFew = 4, kMany = 132;
    auto few = cal::wave_bench(kFew);
    auto many = cal::wave_bench(kMany);
    const double few_s = c.median_run_s(*few), many_s = c.median_run_s(*many);
    c.number("wave_overhead_us", (many_s - few_s) / (kMany - kFew) * 1e6);
  }
}

std::string utc_date() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[16];
  std::strftime(date, sizeof date, "%Y-%m-%d", &utc);
  return date;
}

int run_calibrate(Invocation& inv) {
  const bool quick = inv.options["quick"].as<bool>();
  const std::string out_path = inv.options.count("out") ? inv.options["out"].as<std::string>() : "";
  // The destination is checked before the GPU is touched: a file that cannot be written is
  // refused at once, not after the run.
  OutputTarget target(out_path, *inv.out);
  if (!kernels::gpu_available())
    throw UsageError("no CUDA GPU found; flashio calibrate measures the GPU it runs on (run it on the GPU machine)");
  const cal::Device device = cal::current_device();
  if (device.cc_major != 9 || device.cc_minor != 0)
    throw UsageError("the calibration benchmarks are built for sm_90a (H100, H200); this GPU is " + device.name +
                     ", compute capability " + std::to_string(device.cc_major) + "." +
                     std::to_string(device.cc_minor));

  Plan plan;
  if (quick) plan = Plan{1, profiler::kMinTimedRuns, 4};
  std::ostream& err = *inv.err;
  err << "flashio calibrate: " << device.name << ", " << device.sm_count << " SMs; median of " << plan.repeats
      << " timed runs after " << plan.warmup << " warm-up runs per point" << (quick ? " (--quick)" : "") << '\n';
  Calibrator c(plan, err);
  measure_tensor(c);
  measure_memory(c, device);
  measure_pipes(c, device);
  measure_corun(c);
  measure_latencies(c, device);

  std::vector<MeasuredFigure> figures = c.figures();
  figures.insert(figures.begin(), MeasuredFigure{"sm_clock_hz", median(c.clocks_hz()), {}});
  err << "flashio calibrate: sm_clock_hz (median over the tensor benchmarks' busiest points): "
      << figures.front().value << '\n';
  const DeviceGeometry geometry{device.name,
                                device.sm_count,
                                device.l2_bytes,
                                device.smem_per_block_optin_bytes,
                                device.smem_per_sm_bytes,
                                device.max_threads_per_sm,
                                device.max_blocks_per_sm};
  const sim::Hardware hw =
      calibrated_hardware(geometry, figures, calibration_stamp(device.name, utc_date(), FLASHIO_VERSION));
  target.stream() << "# flashio calibrate" << (quick ? " --quick" : "") << ": each figure the median of "
                  << plan.repeats << " timed runs (docs/calibration.md)\n"
                  << sim::hardware_file_text(hw);
  target.commit();
  return kExitOk;
}

const SubcommandRegistration registration({
    .name = "calibrate",
    .summary = "measure this GPU's rates (DRAM, L2, tensor cores, latencies) into a hardware file for --hw",
    .order = 45,
    .takes_sweep = false,
    .takes_output = false,
    .add_options =
        [](po::options_description& o) {
          o.add_options()("out", po::value<std::string>(),
                          "write the hardware file to FILE (replaced only when the run succeeds; "
                          "experiments/README.md, \"Output\") instead of standard output")(
              "quick", po::bool_switch(), "a smoke run: fewest repeats, a quarter of the work per point");
        },
    .run = run_calibrate,
});

}  // namespace
}  // namespace flashio::cli
