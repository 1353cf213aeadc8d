// Calibration figures (sim/calibration.h) in hardware files: curves interpolate in log x and
// hold their ends, malformed figures are refused naming the key and the line, and a hardware
// file written by hardware_file_text reads back to the same figures, bit for bit.
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/calibration.h"
#include "sim/errors.h"
#include "sim/hardware.h"

using namespace flashio::sim;

TEST_CASE("a rate curve is linear in log x between its points and holds its end values") {
  const RateCurve c({{4, 100}, {16, 300}});
  CHECK(c.at(4) == 100);
  CHECK(c.at(16) == 300);
  CHECK(c.at(8) == Approx(200));      // halfway in log x
  CHECK(c.at(1) == 100);              // below the first point: the first value
  CHECK(c.at(1e9) == 300);            // beyond the last: the last value, never extrapolated
  const RateCurve one({{3, 7.5}});
  CHECK(one.at(0.1) == 7.5);
  CHECK(one.at(100) == 7.5);
}

TEST_CASE("a rate curve's text reads back to the same points exactly") {
  const RateCurve c({{1, 0.1}, {2.5, 1.0 / 3.0}, {4096, 4.123456789012345e12}});
  const RateCurve back = RateCurve::parse(c.text());
  CHECK(back.points() == c.points());
}

TEST_CASE("malformed curves are refused with a reason") {
  for (const char* bad : {"", "4", "4:", ":5", "4:1e14,4:2e14", "8:1, 4:2", "4:-1", "0:5", "4:inf",
                          "4:nan", "4:0x10", "4:1e14;8:2e14"}) {
    INFO(bad);
    CHECK_THROWS_AS(RateCurve::parse(bad), std::invalid_argument);
  }
}

namespace {

Hardware calibrated_hardware() {
  Hardware h = hardware_preset("a100-40gb");
  h.name = "calibrated, awkward";
  h.calibration.calibrated = "a test machine, 2026-12-01 # not a comment";
  h.calibration.sm_clock_hz = 1.755e9;
  h.calibration.dram_read_bytes_per_s = RateCurve({{4096, 1.1e12}, {65536, 4.1e12}});
  h.calibration.mma_sync_bf16_flops_per_s = RateCurve({{1, 3.3e13}, {3, 1e14 / 3}, {16, 4.4e14}});
  h.calibration.atomic_f32_per_s = 1.0 / 7.0 * 1e12;
  h.calibration.barrier_ns = RateCurve({{128, 21.5}, {256, 30}});
  return h;
}

}  // namespace

TEST_CASE("hardware_file_text reads back to the same hardware, calibration included") {
  const Hardware h = calibrated_hardware();
  const Hardware back = parse_hardware_text(hardware_file_text(h), "written");
  CHECK(back.name == h.name);
  CHECK(back.sram_bytes == h.sram_bytes);
  CHECK(back.l2_partitions == h.l2_partitions);
  CHECK(back.exp_per_s == h.exp_per_s);
  CHECK(back.calibration.calibrated == "a test machine, 2026-12-01   not a comment");
  CHECK(back.calibration.sm_clock_hz == h.calibration.sm_clock_hz);
  CHECK(back.calibration.atomic_f32_per_s == h.calibration.atomic_f32_per_s);
  REQUIRE(back.calibration.mma_sync_bf16_flops_per_s);
  CHECK(back.calibration.mma_sync_bf16_flops_per_s->points() == h.calibration.mma_sync_bf16_flops_per_s->points());
  CHECK(back.calibration.barrier_ns->points() == h.calibration.barrier_ns->points());
  CHECK_FALSE(back.calibration.dram_write_bytes_per_s);  // absent stays absent
  CHECK(hardware_file_text(back) == hardware_file_text(h));
}

TEST_CASE("a malformed calibration figure is refused naming the file, the line and the key") {
  const std::string base = hardware_file_text(hardware_preset("a100-40gb"));  // no calibration
  const auto refused = [&](const std::string& line, const std::string& says) {
    INFO(line);
    CHECK_THROWS_WITH(parse_hardware_text(base + line + "\n", "cal.hw"), Catch::Contains(says));
  };
  const std::string line_no = ":" + std::to_string(std::count(base.begin(), base.end(), '\n') + 1) + ": ";
  refused("dram_read_bytes_per_s = 4096", "cal.hw" + line_no + "dram_read_bytes_per_s '4096'");
  refused("dram_read_bytes_per_s = 8:2e12, 4:1e12", "x must increase");
  refused("exp2_per_s = -3e12", "exp2_per_s '-3e12'");
  refused("exp2_per_s = 1:3e12", "exp2_per_s");
  refused("tma_latency_ns = inf", "tma_latency_ns");
  refused("wgmma_n96_fp16_flops_per_s = 1:1e14", "unknown key 'wgmma_n96_fp16_flops_per_s'");
  refused("exp2_per_s = 3e12\nexp2_per_s = 3e12", "duplicate key 'exp2_per_s'");
}
