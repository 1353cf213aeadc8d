#include "sim/hardware.h"
#include <filesystem>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "sim/byte_size.h"
#include "sim/errors.h"
#include "sim/text_file.h"
#include "sim/trim.h"

namespace flashio::sim {
namespace {

Hardware a100_40gb() {
  Hardware h;
  h.name = "a100-40gb";
  // NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020), table 3 / CUDA C Programming
  // Guide, compute capability 8.0: 164 KiB shared memory per SM, 163 KiB per block (opt-in).
  h.sram_bytes = 163 * 1024;
  h.smem_per_sm_bytes = 164 * 1024;
  h.sm_count = 108;                 // whitepaper: 108 SMs on A100
  h.l2_bytes = 40LL * 1024 * 1024;  // whitepaper: 40 MB L2
  // Whitepaper: "The L2 cache is divided into two partitions ... Each L2 partition localizes
  // and caches data for memory accesses from SMs in the GPCs directly connected to the
  // partition" (the same on H100).
  h.l2_partitions = 2;
  h.hbm_bytes_per_s = 1555e9;       // A100 40GB datasheet: 1,555 GB/s
  h.tensor_flops_per_s = 312e12;    // datasheet: FP16 tensor core 312 TFLOPS dense
  h.cuda_core_flops_per_s = 19.5e12;  // datasheet: FP32 19.5 TFLOPS
  // 16 SFU results per clock per SM (CUDA Guide, arithmetic instruction throughput table,
  // cc 8.0) × 108 SMs × 1.41 GHz boost clock.
  h.exp_per_s = 16.0 * 108 * 1.41e9;
  return h;
}

Hardware h100_sxm() {
  Hardware h;
  h.name = "h100-sxm";
  // NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022) / CUDA C Programming Guide,
  // compute capability 9.0: 228 KiB shared memory per SM, 227 KiB per block (opt-in).
  h.sram_bytes = 227 * 1024;
  h.smem_per_sm_bytes = 228 * 1024;
  h.sm_count = 132;                 // H100 SXM5: 132 SMs
  h.l2_bytes = 50LL * 1024 * 1024;  // whitepaper: 50 MB L2
  h.l2_partitions = 2;              // whitepaper: two partitions (as on A100, above)
  h.hbm_bytes_per_s = 3.35e12;      // H100 SXM datasheet: 3.35 TB/s HBM3
  h.tensor_flops_per_s = 989.4e12;  // datasheet: FP16 tensor core 1,979 TFLOPS with sparsity
  h.cuda_core_flops_per_s = 66.9e12;  // datasheet: FP32 67 TFLOPS
  // 16 SFU results per clock per SM (CUDA Guide, cc 9.0) × 132 SMs × 1.83 GHz boost.
  h.exp_per_s = 16.0 * 132 * 1.83e9;
  // The time model's rates: `flashio calibrate` on a lent NVIDIA H100 80GB HBM3 (SXM), 2026-12-07
  // (experiments/results/h100_calibration.hw, 4 significant digits here; each microbenchmark's
  // method is docs/calibration.md's section of the same name). Curves as in the h200 preset below.
  Calibration& c = h.calibration;
  c.calibrated = "NVIDIA H100 80GB HBM3, 2026-12-07, flashio calibrate 0.1.0 (experiments/results/h100_calibration.hw)";
  c.sm_clock_hz = 1.681e+09;
  c.dram_read_bytes_per_s = RateCurve({{2048, 6.614e+11}, {4096, 1.277e+12}, {8192, 2.231e+12}, {16384, 3.012e+12}, {32768, 3.171e+12}, {65536, 3.179e+12}, {98304, 3.147e+12}, {131072, 3.17e+12}});
  c.dram_write_bytes_per_s = RateCurve({{2048, 3.18e+12}, {4096, 3.169e+12}, {8192, 3.156e+12}, {16384, 3.195e+12}, {32768, 3.186e+12}, {65536, 3.087e+12}, {98304, 3.194e+12}, {131072, 3.19e+12}});
  c.dram_copy_bytes_per_s = RateCurve({{2048, 1.025e+12}, {4096, 1.746e+12}, {8192, 2.483e+12}, {16384, 2.766e+12}, {32768, 2.882e+12}, {65536, 2.854e+12}, {98304, 2.887e+12}, {131072, 2.885e+12}});
  c.l2_hit_bytes_per_s = RateCurve({{2048, 1.513e+12}, {4096, 2.988e+12}, {8192, 5.555e+12}, {16384, 7.716e+12}, {32768, 7.887e+12}, {65536, 8.133e+12}, {98304, 7.569e+12}, {131072, 7.831e+12}});
  c.mma_sync_fp16_flops_per_s = RateCurve({{1, 1.152e+14}, {2, 2.312e+14}, {4, 4.631e+14}, {8, 6.249e+14}, {12, 6.48e+14}, {16, 6.477e+14}});
  c.mma_sync_bf16_flops_per_s = RateCurve({{1, 1.166e+14}, {2, 2.338e+14}, {4, 4.688e+14}, {8, 6.293e+14}, {12, 6.532e+14}, {16, 6.549e+14}});
  c.wgmma_n64_fp16_flops_per_s = RateCurve({{1, 9.528e+14}, {2, 9.745e+14}, {3, 8.596e+14}, {4, 8.298e+14}});
  c.wgmma_n128_fp16_flops_per_s = RateCurve({{1, 8.49e+14}, {2, 8.612e+14}, {3, 8.627e+14}, {4, 8.624e+14}});
  c.wgmma_n256_fp16_flops_per_s = RateCurve({{1, 8.579e+14}, {2, 8.855e+14}, {3, 8.839e+14}});
  c.wgmma_n64_bf16_flops_per_s = RateCurve({{1, 8.862e+14}, {2, 9.068e+14}, {3, 8.998e+14}, {4, 8.917e+14}});
  c.wgmma_n128_bf16_flops_per_s = RateCurve({{1, 9.055e+14}, {2, 9.213e+14}, {3, 9.27e+14}, {4, 9.365e+14}});
  c.wgmma_n256_bf16_flops_per_s = RateCurve({{1, 9.262e+14}, {2, 9.545e+14}, {3, 9.561e+14}});
  c.wgmma_waited_n64_fp16_flops_per_s = RateCurve({{1, 4.896e+14}, {2, 7.891e+14}, {3, 8.06e+14}, {4, 8.526e+14}});
  c.wgmma_waited_n128_fp16_flops_per_s = RateCurve({{1, 6.363e+14}, {2, 8.335e+14}, {3, 8.789e+14}, {4, 8.849e+14}});
  c.wgmma_waited_n256_fp16_flops_per_s = RateCurve({{1, 6.839e+14}, {2, 8.383e+14}, {3, 8.913e+14}});
  c.wgmma_waited_n64_bf16_flops_per_s = RateCurve({{1, 5.233e+14}, {2, 8.319e+14}, {3, 8.851e+14}, {4, 8.959e+14}});
  c.wgmma_waited_n128_bf16_flops_per_s = RateCurve({{1, 6.717e+14}, {2, 9.104e+14}, {3, 9.253e+14}, {4, 9.52e+14}});
  c.wgmma_waited_n256_bf16_flops_per_s = RateCurve({{1, 7.257e+14}, {2, 8.925e+14}, {3, 9.102e+14}});
  c.exp2_per_s = 4.157e+12;
  c.fma_flops_per_s = 4.567e+13;
  c.integer_ops_per_s = 2.181e+13;
  c.shuffle_per_s = 8.176e+12;
  c.smem_bytes_per_s = 3.343e+13;
  c.tensor_exp_corun_ratio = 0.6507;
  c.atomic_f32_per_s = 7.936e+11;
  c.cp_async_latency_ns = 365.1;
  c.tma_latency_ns = 388.8;
  c.barrier_ns = RateCurve({{128, 15.77}, {256, 19.82}, {512, 28.18}});
  c.kernel_overhead_us = 1.89;
  c.wave_overhead_us = 0.1683;
  return h;
}

Hardware h200() {
  Hardware h = h100_sxm();  // same GH100 die and SM configuration as H100 SXM
  h.name = "h200";
  // Read off the lent H200 with cudaGetDeviceProperties (docs/gpu.md, "The H200", 2026-12-01):
  // 132 SMs, L2 62,914,560 B, 232,448 B shared memory per block, 233,472 B per SM.
  h.sram_bytes = 232448;
  h.smem_per_sm_bytes = 233472;
  h.l2_bytes = 62914560;
  h.hbm_bytes_per_s = 4.8e12;  // H200 datasheet: 4.8 TB/s HBM3e
  // Its own calibration, none of the H100's: a figure the H200's run did not measure stays absent.
  h.calibration = Calibration{};
  // The time model's rates: `flashio calibrate` on the lent H200, 2026-12-01
  // (experiments/results/h200_calibration.hw, 4 significant digits here; each microbenchmark's
  // method is docs/calibration.md's section of the same name). Curves: x is bytes in flight per
  // SM (DRAM, L2), warps per SM (mma.sync m16n8k16) or warpgroups per SM (wgmma m64nNk16),
  // threads per block (barrier).
  Calibration& c = h.calibration;
  c.calibrated = "NVIDIA H200, 2026-12-01, flashio calibrate 0.1.0 (experiments/results/h200_calibration.hw)";
  c.sm_clock_hz = 1.612e+09;
  c.dram_read_bytes_per_s = RateCurve({{2048, 6.824e+11}, {4096, 1.326e+12}, {8192, 2.452e+12}, {16384, 3.855e+12}, {32768, 4.392e+12}, {65536, 4.429e+12}, {98304, 4.327e+12}, {131072, 4.399e+12}});
  c.dram_write_bytes_per_s = RateCurve({{2048, 4.445e+12}, {4096, 4.434e+12}, {8192, 4.429e+12}, {16384, 4.392e+12}, {32768, 4.293e+12}, {65536, 4.349e+12}, {98304, 4.283e+12}, {131072, 4.33e+12}});
  c.dram_copy_bytes_per_s = RateCurve({{2048, 1.134e+12}, {4096, 1.969e+12}, {8192, 3.115e+12}, {16384, 3.888e+12}, {32768, 3.993e+12}, {65536, 3.939e+12}, {98304, 3.87e+12}, {131072, 3.892e+12}});
  c.l2_hit_bytes_per_s = RateCurve({{2048, 1.508e+12}, {4096, 2.991e+12}, {8192, 5.712e+12}, {16384, 8.762e+12}, {32768, 9.141e+12}, {65536, 9.243e+12}, {98304, 8.777e+12}, {131072, 9.056e+12}});
  c.mma_sync_fp16_flops_per_s = RateCurve({{1, 1.153e+14}, {2, 2.312e+14}, {4, 4.63e+14}, {8, 6.174e+14}, {12, 6.41e+14}, {16, 6.42e+14}});
  c.mma_sync_bf16_flops_per_s = RateCurve({{1, 1.156e+14}, {2, 2.313e+14}, {4, 4.631e+14}, {8, 6.192e+14}, {12, 6.427e+14}, {16, 6.401e+14}});
  c.wgmma_n64_fp16_flops_per_s = RateCurve({{1, 9.396e+14}, {2, 9.624e+14}, {3, 7.883e+14}, {4, 7.897e+14}});
  c.wgmma_n128_fp16_flops_per_s = RateCurve({{1, 7.587e+14}, {2, 8.186e+14}, {3, 8.148e+14}, {4, 8.157e+14}});
  c.wgmma_n256_fp16_flops_per_s = RateCurve({{1, 7.893e+14}, {2, 8.342e+14}, {3, 8.309e+14}});
  c.wgmma_n64_bf16_flops_per_s = RateCurve({{1, 8.025e+14}, {2, 8.34e+14}, {3, 8.516e+14}, {4, 8.538e+14}});
  c.wgmma_n128_bf16_flops_per_s = RateCurve({{1, 8.302e+14}, {2, 8.838e+14}, {3, 8.792e+14}, {4, 8.884e+14}});
  c.wgmma_n256_bf16_flops_per_s = RateCurve({{1, 8.592e+14}, {2, 8.88e+14}, {3, 9.055e+14}});
  c.exp2_per_s = 4.169e+12;
  c.fma_flops_per_s = 4.554e+13;
  c.shuffle_per_s = 8.173e+12;
  c.smem_bytes_per_s = 3.343e+13;
  c.atomic_f32_per_s = 9.434e+11;
  c.cp_async_latency_ns = 353.3;
  c.tma_latency_ns = 377.1;
  c.barrier_ns = RateCurve({{128, 15.73}, {256, 19.77}, {512, 28.13}});
  c.kernel_overhead_us = 1.427;
  c.wave_overhead_us = 0.1885;
  return h;
}

const std::map<std::string, Hardware (*)()>& presets() {
  static const std::map<std::string, Hardware (*)()> table = {
      {"a100-40gb", &a100_40gb}, {"h100-sxm", &h100_sxm}, {"h200", &h200}};
  return table;
}

// "a100-40gb, h100-sxm, h200", for error messages.
std::string preset_list() {
  std::string names;
  for (const auto& [name, make] : presets()) names += (names.empty() ? "" : ", ") + name;
  return names;
}

std::string calibration_key_list() {
  std::string keys;
  for (const CalibrationField& f : calibration_fields()) keys += (keys.empty() ? "" : ", ") + std::string(f.key);
  return keys;
}

}  // namespace

std::vector<std::string> hardware_preset_names() {
  std::vector<std::string> names;
  for (const auto& [name, make] : presets()) names.push_back(name);
  return names;
}

bool is_hardware_preset(const std::string& name) { return presets().count(name) > 0; }

Hardware hardware_preset(const std::string& name) {
  const auto it = presets().find(name);
  if (it == presets().end())
    throw InvalidInput(Field::hardware,
                       "'" + name + "' is not a preset or a readable file; presets: " +
                           preset_list());
  return it->second();
}

Hardware load_hardware_file(const std::string& path) {
  const TextFile file = read_text_file(path, kMaxSettingsFileBytes);
  if (!file.problem.empty())
    throw InvalidInput(Field::hardware, "hardware file '" + path + "' " + file.problem +
                                            "; expected a file of key = value lines");
  return parse_hardware_text(file.text, path);
}

Hardware parse_hardware_text(const std::string& text_of_file, const std::string& path) {
  std::istringstream in(text_of_file);
  Hardware h;
  // Sizes take the units of sim/byte_size.h ("227KiB"); counts are plain integers.
  std::map<std::string, int64_t*> sizes = {
      {"sram_bytes", &h.sram_bytes},       {"smem_per_sm_bytes", &h.smem_per_sm_bytes},
      {"l2_bytes", &h.l2_bytes},           {"l2_line_bytes", &h.l2_line_bytes},
      {"l2_sector_bytes", &h.l2_sector_bytes}};
  std::map<std::string, int64_t*> counts = {
      {"sm_count", &h.sm_count},                   {"max_threads_per_sm", &h.max_threads_per_sm},
      {"max_blocks_per_sm", &h.max_blocks_per_sm}, {"l2_ways", &h.l2_ways},
      {"l2_partitions", &h.l2_partitions}};
  std::map<std::string, double*> reals = {{"hbm_bytes_per_s", &h.hbm_bytes_per_s},
                                          {"tensor_flops_per_s", &h.tensor_flops_per_s},
                                          {"cuda_core_flops_per_s", &h.cuda_core_flops_per_s},
                                          {"exp_per_s", &h.exp_per_s}};
  std::string line;
  int line_no = 0;
  std::set<std::string> seen_keys;
  auto fail = [&](const std::string& why) {
    throw InvalidInput(Field::hardware, path + ":" + std::to_string(line_no) + ": " + why);
  };
  while (std::getline(in, line)) {
    ++line_no;
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    const std::string_view text = trim(line);
    if (text.empty()) continue;
    const auto eq = text.find('=');
    if (eq == std::string_view::npos) fail("expected 'key = value'");
    const std::string key(trim(text.substr(0, eq)));
    const std::string value(trim(text.substr(eq + 1)));
    // A second line for a key would silently replace the first; the file must say one thing.
    if (!seen_keys.insert(key).second) fail("duplicate key '" + key + "'; each key is given once");
    try {
      size_t used = 0;
      const auto calibration = std::find_if(calibration_fields().begin(), calibration_fields().end(),
                                            [&](const CalibrationField& f) { return key == f.key; });
      if (key == "name") {
        h.name = value;
      } else if (key == "calibrated") {
        h.calibration.calibrated = value;
      } else if (calibration != calibration_fields().end()) {
        try {
          if (calibration->curve) {
            h.calibration.*(calibration->curve) = RateCurve::parse(value);
          } else {
            const RateCurve one = RateCurve::parse("1:" + value);
            h.calibration.*(calibration->number) = one.points().front().second;
          }
        } catch (const std::invalid_argument& e) {
          fail(key + " '" + value + "': " + e.what() +
               (calibration->curve ? " (a curve: x:value points, comma-separated, x increasing)"
                                   : " (a finite positive decimal number)"));
        }
      } else if (auto st = sizes.find(key); st != sizes.end()) {
        const ByteSizeParse parsed = parse_byte_size(value);
        if (!parsed.bytes) fail(key + " '" + value + "': " + parsed.error);
        if (*parsed.bytes <= 0) fail(key + " must be a positive size");
        *st->second = *parsed.bytes;
      } else if (auto it = counts.find(key); it != counts.end()) {
        *it->second = std::stoll(value, &used);
        if (used != value.size() || *it->second <= 0) fail(key + " must be a positive integer");
      } else if (auto jt = reals.find(key); jt != reals.end()) {
        // Decimal notation only: stod would also take "inf", "nan" and hexadecimal floats.
        if (value.find_first_not_of("0123456789.eE+-") != std::string::npos)
          fail(key + " '" + value + "': must be a finite positive decimal number (like 4.8e12)");
        *jt->second = std::stod(value, &used);
        if (used != value.size() || !std::isfinite(*jt->second) || !(*jt->second > 0))
          fail(key + " '" + value + "': must be a finite positive decimal number (like 4.8e12)");
      } else {
        fail("unknown key '" + key +
             "'; allowed: name, sram_bytes, smem_per_sm_bytes, sm_count, max_threads_per_sm, "
             "max_blocks_per_sm, l2_bytes, l2_line_bytes, l2_sector_bytes, l2_ways, l2_partitions, "
             "hbm_bytes_per_s, tensor_flops_per_s, cuda_core_flops_per_s, exp_per_s, calibrated, "
             "and the calibration figures of docs/calibration.md (" + calibration_key_list() + ")");
      }
    } catch (const std::logic_error&) {
      fail("'" + value + "' is not a number for " + key);
    }
  }
  line_no = 0;
  if (h.name.empty()) fail("missing 'name'");
  // The L2 model addresses lines and sectors by bit shifts, 1 to 8 sectors a line
  // (docs/l2_model.md).
  auto power_of_two = [](int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
  if (!power_of_two(h.l2_line_bytes))
    fail("l2_line_bytes must be a power of two (got " + std::to_string(h.l2_line_bytes) + ")");
  if (!power_of_two(h.l2_sector_bytes))
    fail("l2_sector_bytes must be a power of two (got " + std::to_string(h.l2_sector_bytes) + ")");
  if (h.l2_sector_bytes > h.l2_line_bytes || h.l2_line_bytes / h.l2_sector_bytes > 8)
    fail("l2_line_bytes must hold 1 to 8 sectors of l2_sector_bytes (got " +
         std::to_string(h.l2_line_bytes) + " and " + std::to_string(h.l2_sector_bytes) + ")");
  if (h.sram_bytes <= 0 || h.sm_count <= 0 || h.l2_bytes <= 0 || h.hbm_bytes_per_s <= 0 ||
      h.tensor_flops_per_s <= 0 || h.cuda_core_flops_per_s <= 0 || h.exp_per_s <= 0)
    fail("required keys: name, sram_bytes, sm_count, l2_bytes, hbm_bytes_per_s, "
         "tensor_flops_per_s, cuda_core_flops_per_s, exp_per_s");
  if (h.smem_per_sm_bytes <= 0) h.smem_per_sm_bytes = h.sram_bytes;
  return h;
}

Hardware resolve_hardware(const std::string& name_or_path) {
  if (is_hardware_preset(name_or_path)) return hardware_preset(name_or_path);
  if (std::ifstream(name_or_path).good()) return load_hardware_file(name_or_path);
  return hardware_preset(name_or_path);  // throws with the list of presets
}

}  // namespace flashio::sim

namespace flashio::sim {

std::string hardware_file_text(const Hardware& h) {
  std::ostringstream out;
  out << "name = " << h.name << '\n';
  for (const auto& [key, value] : std::initializer_list<std::pair<const char*, int64_t>>{
           {"sram_bytes", h.sram_bytes}, {"smem_per_sm_bytes", h.smem_per_sm_bytes},
           {"sm_count", h.sm_count}, {"max_threads_per_sm", h.max_threads_per_sm},
           {"max_blocks_per_sm", h.max_blocks_per_sm}, {"l2_bytes", h.l2_bytes},
           {"l2_line_bytes", h.l2_line_bytes}, {"l2_sector_bytes", h.l2_sector_bytes},
           {"l2_ways", h.l2_ways}, {"l2_partitions", h.l2_partitions}})
    out << key << " = " << value << '\n';
  for (const auto& [key, value] : std::initializer_list<std::pair<const char*, double>>{
           {"hbm_bytes_per_s", h.hbm_bytes_per_s}, {"tensor_flops_per_s", h.tensor_flops_per_s},
           {"cuda_core_flops_per_s", h.cuda_core_flops_per_s}, {"exp_per_s", h.exp_per_s}})
    out << key << " = " << exact_decimal(value) << '\n';
  if (!h.calibration.calibrated.empty()) {
    // One line, and no '#' (a comment would cut it short when read back).
    std::string text = h.calibration.calibrated;
    for (char& ch : text)
      if (ch == '#' || ch == '\n' || ch == '\r') ch = ' ';
    out << "calibrated = " << trim(text) << '\n';
  }
  for (const CalibrationField& f : calibration_fields()) {
    if (f.number && h.calibration.*(f.number)) out << f.key << " = " << exact_decimal(*(h.calibration.*(f.number))) << '\n';
    if (f.curve && h.calibration.*(f.curve)) out << f.key << " = " << (h.calibration.*(f.curve))->text() << '\n';
  }
  return out.str();
}

}  // namespace flashio::sim
