// GPU tests of the profiler (skipped, exit 77, without a GPU): the counters read what a copy of
// known traffic moves, the flush empties the L2, a captured pass replays kernel by kernel, a
// flash2 forward's io and tensor FLOPs match the model, standard attention is measured kernel
// by kernel, several profilers live in one process (one after another and at the same time),
// and the one timer times what it is given. Every case passes alone (as CTest runs them) and
// all of them in one process.
#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "profiler/captured_pass.h"
#include "profiler/l2_flush.h"
#include "profiler/metric_set.h"
#include "profiler/range_profiler.h"
#include "tests/profiler/copy_kernel.h"
#ifdef FLASHIO_PROFILER_HAS_KERNELS
#include "kernels/attention.h"
#include "profiler/pass_timer.h"
#include "profiler/profile_run.h"
#include "sim/simulate.h"
#endif

using namespace flashio::profiler;

namespace {

struct DeviceBuffer {
  explicit DeviceBuffer(size_t n) : bytes(n) { REQUIRE(cudaMalloc(&ptr, n) == cudaSuccess); }
  ~DeviceBuffer() { cudaFree(ptr); }
  void* ptr = nullptr;
  size_t bytes = 0;
};

double value(const RangeProfiler& p, const RangeRecord& r, const std::string& metric) {
  for (size_t i = 0; i < p.metrics().size(); ++i)
    if (p.metrics()[i] == metric) return r.values[i];
  FAIL("metric " << metric << " was not measured");
  return 0;
}

const std::vector<std::string> kCopyMetrics = {metric::io_read, metric::io_write, metric::dram_read,
                                               metric::dram_write, metric::duration_ns};

}  // namespace

TEST_CASE("a 256 MiB copy reads and writes 256 MiB per SM, and reads and writes it in DRAM, "
          "within 1 %",
          "[gpu][profiler]") {
  const size_t bytes = size_t(256) << 20;  // over 4× the H200's 60 MiB L2
  DeviceBuffer src(bytes), dst(bytes);
  REQUIRE(cudaMemset(src.ptr, 0x5a, bytes) == cudaSuccess);
  REQUIRE(cudaMemset(dst.ptr, 0, bytes) == cudaSuccess);
  RangeProfiler ranges(kCopyMetrics, 4);
  L2Flush flush;
  discard_first_measurement(ranges, flush, nullptr);  // as Profiler does
  // The copy, then a drain (the flush in its own range) that evicts what the copy left dirty.
  const auto records = ranges.measure(
      [&] {
        testing::enqueue_copy(src.ptr, dst.ptr, bytes, nullptr);
        flush.enqueue(nullptr);
      },
      [&] { flush.enqueue(nullptr); });
  REQUIRE(records.size() == 2);
  const double b = static_cast<double>(bytes);
  CHECK(value(ranges, records[0], metric::io_read) == Approx(b).epsilon(0.01));
  CHECK(value(ranges, records[0], metric::io_write) == Approx(b).epsilon(0.01));
  CHECK(value(ranges, records[0], metric::dram_read) == Approx(b).epsilon(0.01));
  // What the copy left dirty in the L2 is written back during the drain: the two together
  // write the copy's bytes once (docs/l2_model.md, kernel boundaries). Seen on the H200: the
  // copy's range 244.5 MB, the drain's 24.2 MB, +0.1 % in all (+2.6 % without the discarded
  // first measurement).
  const double written = value(ranges, records[0], metric::dram_write) +
                         value(ranges, records[1], metric::dram_write);
  INFO("copy range " << value(ranges, records[0], metric::dram_write) << " B, drain "
                      << value(ranges, records[1], metric::dram_write) << " B");
  CHECK(written == Approx(b).epsilon(0.01));
  CHECK(value(ranges, records[1], metric::dram_write) <= 64.0 * (1 << 20));  // at most an L2
  CHECK(value(ranges, records[0], metric::duration_ns) > 0);
}

TEST_CASE("after the flush a buffer read just before comes from DRAM again, without the flush "
          "the L2 serves it", "[gpu][profiler]") {
  const size_t bytes = size_t(16) << 20;
  DeviceBuffer buf(bytes), sink(64);
  REQUIRE(cudaMemset(buf.ptr, 1, bytes) == cudaSuccess);
  RangeProfiler ranges(kCopyMetrics, 4);
  L2Flush flush;
  auto read = [&] { testing::enqueue_read(buf.ptr, bytes, static_cast<unsigned*>(sink.ptr), nullptr); };
  const auto cold = ranges.measure(read, [&] { read(); flush.enqueue(nullptr); });
  const auto warm = ranges.measure(read, [&] { read(); });
  REQUIRE(cold.size() == 1);
  REQUIRE(warm.size() == 1);
  CHECK(value(ranges, cold[0], metric::dram_read) >= 0.99 * bytes);
  CHECK(value(ranges, warm[0], metric::dram_read) <= 0.10 * bytes);
  CHECK(value(ranges, warm[0], metric::io_read) == Approx(double(bytes)).epsilon(0.01));
}

TEST_CASE("a captured pass runs nothing while captured, then replays its kernels one at a time "
          "with their own arguments", "[gpu][capture]") {
  const size_t bytes = size_t(1) << 20;
  DeviceBuffer a(bytes), b(bytes), c(bytes);
  std::vector<uint8_t> host(bytes);
  for (size_t i = 0; i < bytes; ++i) host[i] = static_cast<uint8_t>(i * 7 + 3);
  REQUIRE(cudaMemcpy(a.ptr, host.data(), bytes, cudaMemcpyHostToDevice) == cudaSuccess);
  REQUIRE(cudaMemset(c.ptr, 0xff, bytes) == cudaSuccess);
  CapturedPass pass([&](cudaStream_t s) {
    REQUIRE(cudaMemsetAsync(b.ptr, 0, bytes, s) == cudaSuccess);
    testing::enqueue_copy(a.ptr, b.ptr, bytes, s);
    testing::enqueue_copy(b.ptr, c.ptr, bytes, s);
  });
  REQUIRE(pass.kernel_count() == 2);
  CHECK(pass.kernel_function(0).find("copy16") != std::string::npos);
  std::vector<uint8_t> out(bytes);
  REQUIRE(cudaMemcpy(out.data(), c.ptr, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(out[0] == 0xff);  // capturing launched nothing
  for (size_t k = 0; k < pass.kernel_count(); ++k) {
    pass.run_prefix(k, nullptr);
    pass.launch_kernel(k, nullptr);
  }
  pass.run_remaining_steps(nullptr);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  REQUIRE(cudaMemcpy(out.data(), c.ptr, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(out == host);
}

TEST_CASE("a captured kernel launched again after its prefix finds the state the pass gives it: "
          "a tile counter reset by an earlier step, as cuBLAS's persistent GEMMs keep one",
          "[gpu][capture]") {
  const int tiles = 1000;
  DeviceBuffer counter(sizeof(unsigned)), claimed(tiles * sizeof(unsigned));
  CapturedPass pass([&](cudaStream_t s) {
    REQUIRE(cudaMemsetAsync(counter.ptr, 0, sizeof(unsigned), s) == cudaSuccess);
    testing::enqueue_claim_tiles(static_cast<unsigned*>(counter.ptr), static_cast<unsigned*>(claimed.ptr), tiles, s);
  });
  REQUIRE(pass.kernel_count() == 1);
  auto claimed_tiles = [&] {
    std::vector<unsigned> host(tiles);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    REQUIRE(cudaMemcpy(host.data(), claimed.ptr, tiles * sizeof(unsigned), cudaMemcpyDeviceToHost) == cudaSuccess);
    return std::count(host.begin(), host.end(), 1u);
  };
  for (int launch = 0; launch < 3; ++launch) {  // as often as a measurement's hardware passes
    REQUIRE(cudaMemset(claimed.ptr, 0, tiles * sizeof(unsigned)) == cudaSuccess);
    pass.run_prefix(0, nullptr);
    pass.launch_kernel(0, nullptr);
    INFO("launch " << launch);
    CHECK(claimed_tiles() == tiles);
  }
  // Without the prefix the counter stays exhausted and the kernel claims nothing.
  REQUIRE(cudaMemset(claimed.ptr, 0, tiles * sizeof(unsigned)) == cudaSuccess);
  pass.launch_kernel(0, nullptr);
  CHECK(claimed_tiles() == 0);
}

TEST_CASE("two RangeProfilers alive at once share the process's CUPTI session: each measures "
          "every counter, after the other measured, after a measurement inside another was "
          "refused, and after the other ended",
          "[gpu][profiler][sessions]") {
  const size_t bytes = size_t(64) << 20;
  DeviceBuffer src(bytes), dst(bytes);
  REQUIRE(cudaMemset(src.ptr, 1, bytes) == cudaSuccess);
  L2Flush flush;
  auto copy = [&] { testing::enqueue_copy(src.ptr, dst.ptr, bytes, nullptr); };
  auto cold = [&] { flush.enqueue(nullptr); };
  const double b = double(bytes);
  RangeProfiler first(kCopyMetrics, 4);
  // After a flush the copy reads its source from DRAM: every counter of `first` has a value.
  auto check_first = [&](const char* when) {
    INFO(when);
    const auto r = first.measure(copy, cold);
    REQUIRE(r.size() == 1);
    CHECK(value(first, r[0], metric::io_read) == Approx(b).epsilon(0.01));
    CHECK(value(first, r[0], metric::io_write) == Approx(b).epsilon(0.01));
    CHECK(value(first, r[0], metric::dram_read) == Approx(b).epsilon(0.05));
    CHECK(value(first, r[0], metric::dram_write) >= 0);  // a number: NaN compares false
    CHECK(value(first, r[0], metric::duration_ns) > 0);
  };
  check_first("alone");
  {
    // A different metric list: its own configuration in the shared session.
    RangeProfiler second({metric::io_read, metric::io_write}, 2);
    auto check_second = [&](const char* when) {
      INFO(when);
      const auto r = second.measure(copy);
      REQUIRE(r.size() == 1);
      CHECK(value(second, r[0], metric::io_read) == Approx(b).epsilon(0.01));
      CHECK(value(second, r[0], metric::io_write) == Approx(b).epsilon(0.01));
    };
    check_second("beside the first");
    check_first("after the second measured");
    CHECK_THROWS_AS(first.measure([&] { second.measure(copy); }), std::logic_error);
    check_first("after a measurement inside it was refused");
    check_second("after the refusal");
  }
  check_first("after the second ended");
}

#ifdef FLASHIO_PROFILER_HAS_KERNELS
TEST_CASE("flash2 forward: measured io within 2 % and tensor FLOPs within 1 % of the model (mma.sync and "
          "wgmma kernels)",
          "[gpu][flash2]") {
  using namespace flashio;
  Profiler p;
  // 128 x 128 at d = 64 is an mma.sync kernel; 0 x 0 is the default, the wgmma kernel (128 x 64).
  for (const sim::Tiling tiling : {sim::Tiling{128, 128}, sim::Tiling{0, 0}})
    for (int64_t n : {1024, 1025}) {
      sim::Problem prob;
      prob.batch = 4;
      prob.heads = 16;
      prob.seqlen = n;
      prob.headdim = 64;
      // 0 × 0: the built kernels' default tiling (--tiling kernel); otherwise the given one.
      sim::TilingRequest request{sim::TilingSource::kernel, std::nullopt, std::nullopt};
      if (tiling.block_r != 0) request = {sim::TilingSource::rule, tiling.block_r, tiling.block_c};
      sim::Config c = sim::make_config(sim::Algo::flash2, prob, sim::hardware_preset("h200"), std::nullopt, request);
      ProfileOptions o;
      o.repeats = 0;  // counters only
      const auto rows = p.profile(c, o);
      REQUIRE(!rows.empty());
      const sim::Row& measured = rows.back();
      c.tiling = {*measured.block_r, *measured.block_c};  // the tiling the kernel really used
      const auto model = sim::simulate(c, sim::CountMethod::walk);
      INFO("N=" << n << " tiling " << c.tiling.block_r << "x" << c.tiling.block_c);
      REQUIRE(measured.io_read_bytes.has_value());
      CHECK(*measured.io_read_bytes == Approx(double(model.total.io_read_bytes())).epsilon(0.02));
      CHECK(*measured.io_write_bytes == Approx(double(model.total.io_write_bytes())).epsilon(0.02));
      REQUIRE(measured.flops_tensor.has_value());
      CHECK(*measured.flops_tensor == Approx(double(model.total.flops.tensor)).epsilon(0.01));
    }
}

TEST_CASE("standard attention fwdbwd is measured kernel by kernel: every pass captured, one row per "
          "kernel and a total, rowsum_do_o reads dO and O once",
          "[gpu][standard]") {
  using namespace flashio;
  // cuBLAS gets its own workspace, so the backward is
  // captured and replayed kernel by kernel (no "back to back" note); rowsum_do_o's coalesced
  // reads move each byte of dO and O once (one thread per row read 1.5x that per SM).
  Profiler p;
  sim::Problem prob;
  prob.batch = 4;
  prob.heads = 16;
  prob.seqlen = 1024;
  prob.headdim = 64;
  prob.pass = sim::Pass::fwdbwd;
  const sim::Config c = sim::make_config(sim::Algo::standard, prob, sim::hardware_preset("h200"));
  ProfileOptions o;
  o.repeats = 0;
  const auto rows = p.profile(c, o);
  for (const auto& note : p.notes()) {
    INFO(note.text);
    CHECK(note.kind != Profiler::Note::Kind::back_to_back);
  }
  REQUIRE(rows.size() == 10);  // gemm_qk softmax gemm_pv gemm_dv gemm_dp rowsum_do_o softmax_bwd gemm_dq gemm_dk, total
  CHECK(rows.back().is_total());
  // cuBLAS's GEMMs are wgmma of shapes we do not know: their FLOPs come from the tensor ops
  // counters, and the six GEMMs add up to the model's.
  REQUIRE(rows.back().flops_tensor.has_value());
  CHECK(*rows.back().flops_tensor ==
        Approx(double(sim::simulate(c, sim::CountMethod::walk).total.flops.tensor)).epsilon(0.01));
  // S = Q Kᵀ is written whole by gemm_qk (cuBLAS stores it with TMA, which the per-SM write
  // counter includes), and Q and K are read at least once: a GEMM replayed without its state
  // did far less (CapturedPass::run_prefix).
  const double s_bytes = 4.0 * 16 * 1024 * 1024 * 2, qk_bytes = 2.0 * 4 * 16 * 1024 * 64 * 2;
  for (const auto& r : rows)
    if (r.kernel == sim::KernelKind::gemm_qk) {
      REQUIRE(r.io_write_bytes.has_value());
      CHECK(*r.io_write_bytes == Approx(s_bytes).epsilon(0.02));
      CHECK(*r.io_read_bytes >= qk_bytes);
    }
  bool seen = false;
  for (const auto& r : rows)
    if (r.kernel == sim::KernelKind::rowsum_do_o) {
      seen = true;
      REQUIRE(r.io_read_bytes.has_value());
      CHECK(*r.io_read_bytes == Approx(2.0 * 4 * 16 * 1024 * 64 * 2).epsilon(0.01));
    }
  CHECK(seen);
}

namespace sim = flashio::sim;

namespace {

// flash2's forward at B = 4, H = 16, N = 1024, d = 64 (the default wgmma tiling), profiled.
std::vector<sim::Row> profile_flash2_forward(Profiler& p, int repeats) {
  sim::Problem prob;
  prob.batch = 4;
  prob.heads = 16;
  prob.seqlen = 1024;
  prob.headdim = 64;
  // The built kernels' default tiling (what `flashio profile` runs unless told otherwise).
  const sim::Config c =
      sim::make_config(sim::Algo::flash2, prob, sim::hardware_preset("h200"), std::nullopt, {sim::TilingSource::kernel});
  ProfileOptions o;
  o.repeats = repeats;
  return p.profile(c, o);
}

}  // namespace

TEST_CASE("two Profilers one after another in one process: each is made, profiles and ends, and "
          "the second measures what the first did (a long-lived process profiles again and again)",
          "[gpu][profiler][sessions]") {
  // Nothing else holds a RangeProfiler here, so the first Profiler's end also ends the CUPTI
  // session, and the second starts a new one (cuptiProfilerInitialize after DeInitialize).
  std::vector<std::vector<sim::Row>> runs;
  for (int round = 0; round < 2; ++round) {
    Profiler p;
    runs.push_back(profile_flash2_forward(p, round == 0 ? 0 : kMinTimedRuns));
  }
  for (const auto& rows : runs) {
    REQUIRE(rows.size() == 2);  // flash2_fwd, total
    REQUIRE(rows.back().io_read_bytes.has_value());
    REQUIRE(rows.back().flops_tensor.has_value());
  }
  const sim::Row& a = runs[0].back();
  const sim::Row& b = runs[1].back();
  // The same kernel on the same inputs: the per-SM byte counters and the tensor ops repeat.
  CHECK(*b.io_read_bytes == Approx(*a.io_read_bytes).epsilon(0.005));
  CHECK(*b.io_write_bytes == Approx(*a.io_write_bytes).epsilon(0.005));
  CHECK(*b.flops_tensor == Approx(*a.flops_tensor).epsilon(0.001));
  REQUIRE(b.time_ms.has_value());  // timed in the second round only
  CHECK(*b.time_ms > 0);
}

TEST_CASE("a Profiler beside a live RangeProfiler: both measure, and the RangeProfiler still "
          "measures after the Profiler ends", "[gpu][profiler][sessions]") {
  const size_t bytes = size_t(64) << 20;
  DeviceBuffer src(bytes), dst(bytes);
  REQUIRE(cudaMemset(src.ptr, 1, bytes) == cudaSuccess);
  RangeProfiler ranges(kCopyMetrics, 4);
  auto copied = [&] {
    const auto r = ranges.measure([&] { testing::enqueue_copy(src.ptr, dst.ptr, bytes, nullptr); });
    REQUIRE(r.size() == 1);
    return value(ranges, r[0], metric::io_write);
  };
  CHECK(copied() == Approx(double(bytes)).epsilon(0.01));
  {
    Profiler p;
    const auto rows = profile_flash2_forward(p, 0);
    REQUIRE(rows.size() == 2);
    REQUIRE(rows.back().io_read_bytes.has_value());
    CHECK(*rows.back().io_read_bytes > 0);
    CHECK(copied() == Approx(double(bytes)).epsilon(0.01));
  }
  CHECK(copied() == Approx(double(bytes)).epsilon(0.01));
}

TEST_CASE("the one timer: a 256 MiB copy after a flush takes at least the time the H200's HBM "
          "(4.8 TB/s) needs to move its bytes, and the median lies between the fastest and "
          "slowest runs", "[gpu][timer]") {
  const size_t bytes = size_t(256) << 20;
  DeviceBuffer src(bytes), dst(bytes);
  REQUIRE(cudaMemset(src.ptr, 1, bytes) == cudaSuccess);
  int device = 0, l2_bytes = 0;
  REQUIRE(cudaGetDevice(&device) == cudaSuccess);
  REQUIRE(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device) == cudaSuccess);
  L2Flush flush;
  const Timing t = time_runs([&](cudaStream_t s) { testing::enqueue_copy(src.ptr, dst.ptr, bytes, s); },
                             [&](cudaStream_t s) { flush.enqueue(s); }, 2, 11, nullptr);
  CHECK(t.repeats == 11);
  CHECK(t.min_ms <= t.time_ms);
  CHECK(t.time_ms <= t.max_ms);
  // After the flush every source byte comes from DRAM, and all but at most an L2 of the copy's
  // writes reach DRAM before it ends.
  const double dram_bytes = 2.0 * double(bytes) - double(l2_bytes);
  INFO("median " << t.time_ms << " ms, min " << t.min_ms << " ms: at least "
                 << dram_bytes / (t.min_ms * 1e-3) / 1e12 << " TB/s of DRAM traffic in the fastest run");
  CHECK(dram_bytes / (t.min_ms * 1e-3) <= 4.8e12 * 1.02);  // no run faster than HBM allows
  CHECK(2.0 * double(bytes) / (t.time_ms * 1e-3) >= 1.0e12);  // nor slowed by more than the copy
}

TEST_CASE("time_pass: forward, backward alone and both, each a positive median of the runs asked "
          "for, and the backward alone takes less than forward and backward (N = 1025, d = 128)",
          "[gpu][timer]") {
  using namespace flashio;
  kernels::AttentionConfig c;
  c.algo = kernels::Algo::flash2, c.batch = 2, c.heads = 4, c.seqlen = 1025, c.headdim = 128, c.causal = true;
  kernels::AttentionRun run(c);
  run.fill_inputs(3);
  L2Flush flush;
  Timing t[3];
  const kernels::Pass passes[3] = {kernels::Pass::fwd, kernels::Pass::bwd, kernels::Pass::fwdbwd};
  for (int i = 0; i < 3; ++i) {
    t[i] = time_pass(run, passes[i], flush);
    INFO(kernels::to_string(passes[i]) << ": " << t[i].min_ms << " <= " << t[i].time_ms << " <= " << t[i].max_ms);
    CHECK(t[i].repeats == PassTimingOptions{}.repeats);
    CHECK(t[i].time_ms > 0);
    CHECK(t[i].min_ms <= t[i].time_ms);
    CHECK(t[i].time_ms <= t[i].max_ms);
  }
  CHECK(t[1].time_ms < t[2].time_ms);
}
#endif
