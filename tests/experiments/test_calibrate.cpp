// flashio calibrate without a GPU: what it writes from what it measured (calibrated_hardware,
// experiments/calibrated_hardware.h) reads back through a hardware file exactly, every bad
// measurement is refused by name, and the command line refuses bad input with one line and
// exit 2 before any GPU is touched (and, in a build without CUDA, says it needs CUDA). The
// measurements themselves are checked on the GPU (tests/kernels/test_calibrate_gpu.cpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cli_harness.h"
#include "experiments/calibrated_hardware.h"
#include "sim/calibration.h"
#include "sim/errors.h"
#include "sim/hardware.h"
#ifdef FLASHIO_WITH_CUDA
#include "kernels/attention.h"
#endif

using namespace flashio;
using namespace flashio::cli::test;
using flashio::cli::DeviceGeometry;
using flashio::cli::MeasuredFigure;

namespace {

DeviceGeometry h200_geometry() {
  // docs/gpu.md, "The H200": what cudaGetDeviceProperties reported there.
  return DeviceGeometry{"NVIDIA H200", 132, 62914560, 232448, 233472, 2048, 32};
}

// An awkward device: 97 SMs, an L2 that is no power of two, odd shared-memory sizes.
DeviceGeometry awkward_geometry() { return DeviceGeometry{"Test GPU #7\nrev b", 97, 41943040 + 3 * 128, 101 * 1024 + 16, 103 * 1024, 1536, 24}; }

// Every figure of sim::calibration_fields() but the L2's near and far hits (which calibrate
// cannot place), with awkward values: numbers like 3.0000000000000004e11, curves at x = 3, 7.5, 97.
std::vector<MeasuredFigure> every_measured_figure() {
  std::vector<MeasuredFigure> figures;
  double scale = 1.0 / 3.0;
  for (const sim::CalibrationField& f : sim::calibration_fields()) {
    const std::string key = f.key;
    if (key == "l2_near_hit_bytes_per_s" || key == "l2_far_hit_bytes_per_s") continue;
    scale *= 1.7;
    if (f.number) {
      figures.push_back(MeasuredFigure{key, 9e11 * scale, {}});
    } else {
      figures.push_back(MeasuredFigure{key, 0, {{3, 1e11 * scale}, {7.5, 2.3e11 * scale}, {97, 2.30000001e11 * scale}}});
    }
  }
  return figures;
}

const sim::CalibrationField& field(const std::string& key) {
  const auto& fields = sim::calibration_fields();
  return *std::find_if(fields.begin(), fields.end(), [&](const sim::CalibrationField& f) { return key == f.key; });
}

}  // namespace

TEST_CASE("calibrate's hardware reads back from its file exactly: geometry, stamp and every figure measured") {
  for (const DeviceGeometry& device : {h200_geometry(), awkward_geometry()}) {
    INFO(device.name);
    const std::vector<MeasuredFigure> measured = every_measured_figure();
    const sim::Hardware hw = cli::calibrated_hardware(
        device, measured, cli::calibration_stamp(device.name, "2026-12-01", "0.1.0"));
    const std::string text = sim::hardware_file_text(hw);
    const sim::Hardware back = sim::parse_hardware_text(text, "calibrated.hw");
    CHECK(back.name == hw.name);
    CHECK(back.sm_count == device.sm_count);
    CHECK(back.l2_bytes == device.l2_bytes);
    CHECK(back.sram_bytes == device.smem_per_block_bytes);
    CHECK(back.smem_per_sm_bytes == device.smem_per_sm_bytes);
    CHECK(back.max_threads_per_sm == device.max_threads_per_sm);
    CHECK(back.max_blocks_per_sm == device.max_blocks_per_sm);
    CHECK(back.calibration.calibrated == hw.calibration.calibrated);
    for (const MeasuredFigure& m : measured) {
      INFO(m.key);
      const sim::CalibrationField& f = field(m.key);
      if (f.number) {
        REQUIRE(back.calibration.*(f.number));
        CHECK(*(back.calibration.*(f.number)) == m.value);  // exactly: the shortest exact decimal
      } else {
        REQUIRE(back.calibration.*(f.curve));
        CHECK((back.calibration.*(f.curve))->points() == m.points);
      }
    }
    // What was not measured is not in the file.
    CHECK(!back.calibration.l2_near_hit_bytes_per_s);
    CHECK(!back.calibration.l2_far_hit_bytes_per_s);
    CHECK(text.find("l2_near_hit_bytes_per_s") == std::string::npos);
    // The file written again from what was read is the same file.
    CHECK(sim::hardware_file_text(back) == text);
  }
}

TEST_CASE("on an H200 calibrate keeps the h200 preset's name and datasheet figures, the stamp is one line") {
  const sim::Hardware hw =
      cli::calibrated_hardware(h200_geometry(), every_measured_figure(), cli::calibration_stamp("NVIDIA H200", "2026-12-01", "0.1.0"));
  const sim::Hardware preset = sim::hardware_preset("h200");
  CHECK(hw.name == "h200");
  CHECK(hw.hbm_bytes_per_s == preset.hbm_bytes_per_s);
  CHECK(hw.tensor_flops_per_s == preset.tensor_flops_per_s);
  CHECK(hw.cuda_core_flops_per_s == preset.cuda_core_flops_per_s);
  CHECK(hw.exp_per_s == preset.exp_per_s);
  CHECK(hw.l2_partitions == preset.l2_partitions);
  CHECK(hw.calibration.calibrated == "NVIDIA H200, 2026-12-01, flashio calibrate 0.1.0");
  // A name with a comment character or a line break still makes one `calibrated` line.
  CHECK(cli::calibration_stamp("GPU #2\nb", "2026-12-01", "0.1.0") == "GPU  2 b, 2026-12-01, flashio calibrate 0.1.0");
}

TEST_CASE("a device whose geometry is not its preset's gets its own name and geometry, the nearest preset's datasheet rates") {
  // An H200 with fewer SMs (a MIG slice, say): the preset's geometry would be wrong.
  DeviceGeometry slice = h200_geometry();
  slice.sm_count = 97;
  const sim::Hardware hw = cli::calibrated_hardware(slice, {}, "stamp");
  CHECK(hw.name == "NVIDIA H200");
  CHECK(hw.sm_count == 97);
  CHECK(hw.hbm_bytes_per_s == sim::hardware_preset("h200").hbm_bytes_per_s);
  // An H100 takes the h100-sxm datasheet's rates; a name no preset matches, the H200's (the same die).
  DeviceGeometry h100 = awkward_geometry();
  h100.name = "NVIDIA H100 80GB HBM3";
  CHECK(cli::calibrated_hardware(h100, {}, "stamp").hbm_bytes_per_s == sim::hardware_preset("h100-sxm").hbm_bytes_per_s);
  CHECK(cli::nearest_preset("NVIDIA GH200 480GB") == "h200");
  const sim::Hardware awkward = cli::calibrated_hardware(awkward_geometry(), {}, "stamp");
  CHECK(awkward.name == "Test GPU  7 rev b");  // one line, no comment character
  CHECK(awkward.l2_bytes == 41943040 + 3 * 128);
  // Nothing measured: no figure, and the file still reads back.
  CHECK(!awkward.calibration.sm_clock_hz);
  CHECK(sim::parse_hardware_text(sim::hardware_file_text(awkward), "x").sm_count == 97);
}

TEST_CASE("calibrate refuses a measurement that is not a figure, by the figure's name") {
  const DeviceGeometry device = awkward_geometry();
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<std::pair<std::vector<MeasuredFigure>, std::string>> bad = {
      {{{"dram_bandwidth", 1e12, {}}}, "dram_bandwidth"},                           // no such key
      {{{"exp2_per_s", 1e12, {}}, {"exp2_per_s", 2e12, {}}}, "exp2_per_s"},          // twice
      {{{"exp2_per_s", 1e12, {{1, 1e12}}}}, "exp2_per_s"},                           // a number with points
      {{{"barrier_ns", 20, {}}}, "barrier_ns"},                                      // a curve without
      {{{"fma_flops_per_s", 0, {}}}, "fma_flops_per_s"},                             // zero
      {{{"fma_flops_per_s", -4e13, {}}}, "fma_flops_per_s"},                         // negative
      {{{"tma_latency_ns", nan, {}}}, "tma_latency_ns"},                             // a failed timing
      {{{"kernel_overhead_us", inf, {}}}, "kernel_overhead_us"},
      {{{"dram_read_bytes_per_s", 0, {{2048, 1e11}, {4096, nan}}}}, "dram_read_bytes_per_s"},
      {{{"l2_hit_bytes_per_s", 0, {{4096, 1e12}, {2048, 2e12}}}}, "l2_hit_bytes_per_s"},  // x decreasing
  };
  for (const auto& [figures, key] : bad) {
    INFO(key);
    try {
      cli::calibrated_hardware(device, figures, "stamp");
      FAIL("accepted");
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()).find(key) != std::string::npos);
    }
  }
  DeviceGeometry empty = device;
  empty.sm_count = 0;
  CHECK_THROWS_AS(cli::calibrated_hardware(empty, {}, "stamp"), std::invalid_argument);
}

#ifdef FLASHIO_WITH_CUDA
TEST_CASE("calibrate refuses bad options with one line and exit 2, writing nothing", "[calibrate]") {
  TempDir dir;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"calibrate", "--bogus"},
        std::vector<std::string>{"calibrate", "--quick=1"},
        std::vector<std::string>{"calibrate", "--seqlen", "97"},  // no sweep options
        std::vector<std::string>{"calibrate", "--format", "csv"},  // a hardware file has one format
        std::vector<std::string>{"calibrate", "--out", (dir / "missing" / "h200.hw").string()},
        std::vector<std::string>{"calibrate", "--out"}}) {
    const CliResult res = run_in_process(args);
    INFO(command_text(args) << ": " << res.err);
    CHECK(res.status == 2);
    CHECK(res.err_lines().size() == 1);
    CHECK(res.out.empty());
  }
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("without a GPU, calibrate says it needs one, exit 2, and leaves --out as it was", "[calibrate]") {
  if (kernels::gpu_available()) return;  // it would calibrate; tests/kernels/test_calibrate_gpu.cpp does
  TempDir dir;
  write_file(dir / "old.hw", "name = old\n");
  const CliResult res = run_in_process({"calibrate", "--quick", "--out", (dir / "old.hw").string()});
  CHECK(res.status == 2);
  REQUIRE(res.err_lines().size() == 1);
  CHECK(res.err.find("no CUDA GPU") != std::string::npos);
  CHECK(read_file(dir / "old.hw") == "name = old\n");
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()) == 1);
}
#else
TEST_CASE("without CUDA, calibrate says the build has none, exit 2") {
  const CliResult res = run_in_process({"calibrate", "--quick"});
  CHECK(res.status == 2);
  REQUIRE(res.err_lines().size() == 1);
  CHECK(res.err.find("flashio was built without CUDA") != std::string::npos);
}
#endif

TEST_CASE("each calibrated preset carries its committed calibration file's figures, to the 4 significant digits written "
          "in sim/hardware.cpp, and no figure the file lacks") {
  for (const auto& [preset, file] : std::vector<std::pair<std::string, std::string>>{
           {"h200", "h200_calibration.hw"}, {"h100-sxm", "h100_calibration.hw"}}) {
    INFO(preset << " against " << file);
    std::ifstream in(std::string(FLASHIO_EXPERIMENTS_DIR) + "/results/" + file);
    REQUIRE(in);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const sim::Calibration measured = sim::parse_hardware_text(text, file).calibration;
    const sim::Calibration carried = sim::hardware_preset(preset).calibration;
    const auto close = [](double a, double b) { return std::abs(a - b) <= 5e-4 * std::abs(b); };
    for (const sim::CalibrationField& f : sim::calibration_fields()) {
      INFO(f.key);
      if (f.number) {
        REQUIRE((carried.*(f.number)).has_value() == (measured.*(f.number)).has_value());
        if ((measured.*(f.number)).has_value()) CHECK(close(*(carried.*(f.number)), *(measured.*(f.number))));
      } else if (f.curve) {
        REQUIRE((carried.*(f.curve)).has_value() == (measured.*(f.curve)).has_value());
        if (!(measured.*(f.curve)).has_value()) continue;
        const auto& a = (carried.*(f.curve))->points();
        const auto& b = (measured.*(f.curve))->points();
        REQUIRE(a.size() == b.size());
        for (size_t i = 0; i < a.size(); ++i) {
          CHECK(a[i].first == b[i].first);
          CHECK(close(a[i].second, b[i].second));
        }
      }
    }
  }
}
