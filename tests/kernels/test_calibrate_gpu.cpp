// `flashio calibrate --quick` on the GPU (in-process, through run_cli): it succeeds, its file reads
// back as a hardware file, and every figure lies where an H100/H200 SXM can put it
// (docs/calibration.md, "Sanity ranges"): no rate above the per-clock peak at the measured clock,
// DRAM between 2 and 5 TB/s at the most bytes in flight, curves that rise with the work in flight.
// Skipped (exit 77) without a GPU, like every GPU test (tests/kernels/main.cpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>

#include "experiments/cli.h"
#include "sim/hardware.h"

using namespace flashio;

namespace {

struct Run {
  int status = -1;
  std::string file, err;
  sim::Hardware hw;
};

// One calibration for every test case (a few seconds of GPU time).
const Run& calibration() {
  static const Run run = [] {
    Run r;
    std::ostringstream out, err;
    r.status = cli::run_cli({"flashio", "calibrate", "--quick"}, out, err);
    r.file = out.str();
    r.err = err.str();
    if (r.status == 0) r.hw = sim::parse_hardware_text(r.file, "calibrate output");
    return r;
  }();
  return run;
}

const sim::Calibration& figures() {
  const Run& r = calibration();
  INFO(r.err);
  REQUIRE(r.status == 0);
  return r.hw.calibration;
}

double last(const std::optional<sim::RateCurve>& curve) {
  REQUIRE(curve);
  return curve->points().back().second;
}

// Rises with the work in flight: the last point is at least `gain` × the first, and no point
// falls below 80 % of the best before it (a plateau may wobble; a collapse is a broken point).
void check_rising(const char* key, const std::optional<sim::RateCurve>& curve, double gain) {
  INFO(key << " = " << (curve ? curve->text() : "missing"));
  REQUIRE(curve);
  const auto& p = curve->points();
  CHECK(p.back().second >= gain * p.front().second);
  double best = 0;
  for (const auto& [x, v] : p) {
    CHECK(v >= 0.8 * best);
    best = std::max(best, v);
  }
}

}  // namespace

TEST_CASE("calibrate --quick writes a hardware file with every figure but the L2's near/far split", "[calibrate]") {
  const Run& r = calibration();
  INFO(r.err);
  REQUIRE(r.status == 0);
  const sim::Calibration& c = figures();
  CHECK(c.calibrated.find("flashio calibrate") != std::string::npos);
  for (const sim::CalibrationField& f : sim::calibration_fields()) {
    const std::string key = f.key;
    INFO(key);
    const bool present = f.number ? bool(c.*(f.number)) : bool(c.*(f.curve));
    CHECK(present == (key != "l2_near_hit_bytes_per_s" && key != "l2_far_hit_bytes_per_s"));
  }
  CHECK(r.hw.sm_count > 0);
  if (r.hw.calibration.calibrated.find("H200") != std::string::npos) CHECK(r.hw.name == "h200");
}

TEST_CASE("calibrate's figures are physically sane for a Hopper GPU", "[calibrate]") {
  const sim::Calibration& c = figures();
  const double sms = double(calibration().hw.sm_count);
  REQUIRE(c.sm_clock_hz);
  const double clock = *c.sm_clock_hz;
  INFO("sm_clock_hz = " << clock);
  CHECK(clock > 0.8e9);
  CHECK(clock < 2.1e9);  // the H200's highest SM clock is 1.98 GHz
  // Peaks per SM per clock (docs/calibration.md): tensor 4096 FLOPs, FMA 256 FLOPs, SFU 16,
  // shuffle 32 lanes, shared memory 128 B, at Hopper's highest SM clock, 1.98 GHz: sm_clock_hz is
  // the clock under tensor load (1.6-1.7 GHz seen on the H200), and the lighter pipes run faster;
  // 5 % of slack.
  const double per_clock = sms * 1.98e9 * 1.05;

  CHECK(last(c.dram_read_bytes_per_s) > 2e12);
  CHECK(last(c.dram_read_bytes_per_s) < 5e12);
  CHECK(last(c.dram_write_bytes_per_s) > 1.5e12);
  CHECK(last(c.dram_write_bytes_per_s) < 5e12);
  CHECK(last(c.dram_copy_bytes_per_s) > 1.5e12);
  CHECK(last(c.dram_copy_bytes_per_s) < 5e12);
  check_rising("dram_read_bytes_per_s", c.dram_read_bytes_per_s, 3);
  // Stores do not wait for an answer, so even few of them may keep DRAM busy: no gain asked.
  check_rising("dram_write_bytes_per_s", c.dram_write_bytes_per_s, 0.9);  // seen flat, 4.06 to 3.96 TB/s
  check_rising("dram_copy_bytes_per_s", c.dram_copy_bytes_per_s, 2);
  check_rising("l2_hit_bytes_per_s", c.l2_hit_bytes_per_s, 3);
  CHECK(last(c.l2_hit_bytes_per_s) > last(c.dram_read_bytes_per_s));
  CHECK(last(c.l2_hit_bytes_per_s) < 30e12);

  for (const auto* curve : {&c.mma_sync_fp16_flops_per_s, &c.mma_sync_bf16_flops_per_s}) {
    check_rising("mma_sync", *curve, 2);
    CHECK(last(*curve) > 100e12);
    CHECK(last(*curve) < 989.4e12);  // the datasheet's dense peak
  }
  for (const auto* curve : {&c.wgmma_n64_fp16_flops_per_s, &c.wgmma_n128_fp16_flops_per_s, &c.wgmma_n256_fp16_flops_per_s,
                            &c.wgmma_n64_bf16_flops_per_s, &c.wgmma_n128_bf16_flops_per_s, &c.wgmma_n256_bf16_flops_per_s}) {
    check_rising("wgmma", *curve, 1.0);
    CHECK(last(*curve) > 300e12);
    CHECK(last(*curve) < 4096 * per_clock);
  }
  CHECK(last(c.wgmma_n256_fp16_flops_per_s) > last(c.mma_sync_fp16_flops_per_s));
  // Waiting for every GEMM costs its latency: never faster than streaming (within the runs'
  // spread), and still a tensor-core rate.
  const std::pair<const std::optional<sim::RateCurve>*, const std::optional<sim::RateCurve>*> waited_pairs[] = {
      {&c.wgmma_waited_n64_fp16_flops_per_s, &c.wgmma_n64_fp16_flops_per_s},
      {&c.wgmma_waited_n128_fp16_flops_per_s, &c.wgmma_n128_fp16_flops_per_s},
      {&c.wgmma_waited_n256_fp16_flops_per_s, &c.wgmma_n256_fp16_flops_per_s},
      {&c.wgmma_waited_n64_bf16_flops_per_s, &c.wgmma_n64_bf16_flops_per_s},
      {&c.wgmma_waited_n128_bf16_flops_per_s, &c.wgmma_n128_bf16_flops_per_s},
      {&c.wgmma_waited_n256_bf16_flops_per_s, &c.wgmma_n256_bf16_flops_per_s}};
  for (const auto& [waited, streaming] : waited_pairs) {
    REQUIRE(*waited);
    REQUIRE((*waited)->points().size() == (*streaming)->points().size());
    for (size_t i = 0; i < (*waited)->points().size(); ++i) {
      CHECK((*waited)->points()[i].second < 1.05 * (*streaming)->points()[i].second);
      CHECK((*waited)->points()[i].second > 50e12);
    }
  }

  REQUIRE(c.exp2_per_s);
  CHECK(*c.exp2_per_s > 1e12);
  CHECK(*c.exp2_per_s < 16 * per_clock);
  REQUIRE(c.fma_flops_per_s);
  CHECK(*c.fma_flops_per_s > 20e12);
  CHECK(*c.fma_flops_per_s < 256 * per_clock);
  // Both sides together take between the longer alone (half the sum of two equal sides) and the
  // two one after the other, within the runs' spread.
  REQUIRE(c.tensor_exp_corun_ratio);
  CHECK(*c.tensor_exp_corun_ratio > 0.45);
  CHECK(*c.tensor_exp_corun_ratio < 1.05);
  REQUIRE(c.tensor_softmax_corun_ratio);
  CHECK(*c.tensor_softmax_corun_ratio > 0.45);
  CHECK(*c.tensor_softmax_corun_ratio < 1.05);
  REQUIRE(c.integer_ops_per_s);
  CHECK(*c.integer_ops_per_s > 5e12);
  CHECK(*c.integer_ops_per_s < 128 * per_clock);  // no more 32-bit results a clock than the SM's 128 lanes
  REQUIRE(c.shuffle_per_s);
  CHECK(*c.shuffle_per_s > 1e12);
  CHECK(*c.shuffle_per_s < 32 * per_clock);
  REQUIRE(c.smem_bytes_per_s);
  CHECK(*c.smem_bytes_per_s > 5e12);
  CHECK(*c.smem_bytes_per_s < 128 * per_clock);
  REQUIRE(c.atomic_f32_per_s);
  CHECK(*c.atomic_f32_per_s > 1e10);
  CHECK(*c.atomic_f32_per_s < 32 * per_clock);  // one warp's red instruction per SM per clock at most

  REQUIRE(c.cp_async_latency_ns);
  CHECK(*c.cp_async_latency_ns > 300);
  CHECK(*c.cp_async_latency_ns < 2000);
  REQUIRE(c.tma_latency_ns);
  CHECK(*c.tma_latency_ns > 300);
  CHECK(*c.tma_latency_ns < 3000);
  REQUIRE(c.barrier_ns);
  for (const auto& [threads, ns] : c.barrier_ns->points()) {
    INFO(threads << " threads: " << ns << " ns");
    CHECK(ns > 2);
    CHECK(ns < 500);
  }
  CHECK(c.barrier_ns->points().back().second >= 0.8 * c.barrier_ns->points().front().second);
  REQUIRE(c.kernel_overhead_us);
  CHECK(*c.kernel_overhead_us > 0.1);
  CHECK(*c.kernel_overhead_us < 20);
  REQUIRE(c.wave_overhead_us);
  CHECK(*c.wave_overhead_us > 0.02);
  CHECK(*c.wave_overhead_us < 20);
}
