// sim's catalog of built kernels (sim/kernel_catalog.h) against the machine code: the registers
// and stack frame of every entry's main kernel and of flash2 backward's row kernels are what
// `cuobjdump --dump-resource-usage` reads from the built libflashio_kernels.a, and the kernels
// declare no static shared memory beyond what the catalog says. Needs the CUDA build (the
// library) and the toolkit's cuobjdump, not a GPU (docs/kernels.md, "Catalog").
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>

#include "kernels/standard_attention.h"
#include "sim/kernel_catalog.h"
#include "tests/kernels/compiled_kernels.h"

namespace fs = flashio::sim;
using flashio::test::demangle;
using flashio::test::main_function;

namespace {

// cuobjdump's SHARED is the kernel's static shared memory plus the 1 KiB per-block reserve,
// which the sm_90a code carries in every kernel's own shared section (1,024 B in a kernel that
// declares none).
constexpr int64_t kReservedSmemBytes = 1024;

struct Resources {
  int64_t registers = 0, stack_bytes = 0, shared_bytes = 0, local_bytes = 0;
  bool operator==(const Resources&) const = default;
};

// A flash kernel instance: the function template's name and its arguments (T, d[, Br, Bc[,
// stacked[, split[, paged]]]]). flash2's tiled kernels have two instances each: for one query head's rows
// (stacked = false, every problem without grouped-query attention) and for a group's stacked
// rows (kernels/key_limits.cuh); the forward's have each of those also for split-KV (split =
// true: one split of the key tiles, writing partial results; docs/kernels.md, "Split-KV"), and
// stacked instances over a paged KV cache (paged = true), without and with splits.
// window = true: the instances for a sliding window's left side (kernels/key_limits.cuh, kWindow),
// forward and backward, stacked rows.
// sparse = true: the block-sparse instances (kernels/block_sparse_tiles.h, kSparse), forward and
// backward, one head's rows.
// dropout = true: the instances for fused dropout and key padding (kDropout), flash1's and
// flash2's, forward and backward (flash2's: stacked rows; its forward's a paged, i.e. KV-cache, one).
using Instance = std::tuple<std::string, fs::DType, int64_t, int64_t, int64_t, bool, bool, bool, bool, bool, bool>;

// Runs cuobjdump on the library and keeps the flashio::kernels flash instances and standard's
// softmax (key: "softmax_kernel", T; the other standard kernels and the
// test-input kernels are not catalogued). Lines:
//   " Function <mangled>:" then "  REG:n STACK:n SHARED:n LOCAL:n ...".
std::map<Instance, Resources> compiled_kernels() {
  const std::string tool = FLASHIO_CUOBJDUMP, library = FLASHIO_KERNELS_LIBRARY;
  INFO("cuobjdump: '" << tool << "' (CMake looks in the CUDA toolkit's bin/; scripts/install_deps.sh installs it)");
  REQUIRE(std::filesystem::exists(tool));
  REQUIRE(std::filesystem::exists(library));
  const std::string command = "'" + tool + "' --dump-resource-usage '" + library + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[4096];
  while (const size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  INFO(command << " exited with " << status << ":\n" << output.substr(0, 2000));
  REQUIRE(status == 0);

  static const std::regex function_line(R"(^\s*Function (\S+):\s*$)");
  static const std::regex usage_line(R"(^\s*REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+))");
  static const std::regex instance(
      R"(^void flashio::kernels::(flash\w+_kernel)<(__half|__nv_bfloat16), (\d+)(?:, (\d+), (\d+)(?:, \d+)?)?((?:, (?:true|false))*)>\(.*$)");
  static const std::regex softmax(
      R"(^void flashio::kernels::\(anonymous namespace\)::(softmax_kernel)<(__half|__nv_bfloat16)>\(.*$)");
  std::map<Instance, Resources> kernels;
  std::istringstream lines(output);
  std::string line, function;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_match(line, m, function_line)) {
      function = demangle(m[1]);
      continue;
    }
    if (function.empty() || !std::regex_search(line, m, usage_line)) continue;
    const Resources r{std::stoll(m[1]), std::stoll(m[2]), std::stoll(m[3]), std::stoll(m[4])};
    std::smatch k;
    if (std::regex_match(function, k, instance) || std::regex_match(function, k, softmax)) {
      // The instance's flags in order: flash2_fwd(_wgmma)_kernel<T, d, Br, Bc, stacked, split, paged,
      // window, sparse, dropout>, flash2_bwd_kernel<…, stacked, window, sparse, dropout>,
      // flash2_bwd_wgmma_kernel<…, stacked>, flash1's <…, dropout>; flash2_fwd_ws_kernel<T, d, Br, Bc, stages> has none (one instance).
      std::vector<bool> flags;
      if (k.size() > 6 && k[6].matched) {
        const std::string list = k[6];
        for (size_t at = list.find(", "); at != std::string::npos; at = list.find(", ", at + 2))
          flags.push_back(list.compare(at + 2, 4, "true") == 0);
      }
      const std::string family = k[1];
      const std::vector<std::string> names =
          family == "flash2_bwd_kernel"                                         ? std::vector<std::string>{"stacked", "window", "sparse", "dropout"}
          : family == "flash2_bwd_wgmma_kernel"                                 ? std::vector<std::string>{"stacked"}
          : family.starts_with("flash1")                                       ? std::vector<std::string>{"dropout"}
                                                                               : std::vector<std::string>{"stacked", "split", "paged", "window", "sparse", "dropout"};
      auto flag = [&](const char* name) {
        for (size_t i = 0; i < names.size() && i < flags.size(); ++i)
          if (names[i] == name) return static_cast<bool>(flags[i]);
        return false;
      };
      const Instance key{family, k[2] == "__half" ? fs::DType::fp16 : fs::DType::bf16,
                         k.size() > 3 && k[3].matched ? std::stoll(k[3]) : 0,
                         k.size() > 4 && k[4].matched ? std::stoll(k[4]) : 0,
                         k.size() > 5 && k[5].matched ? std::stoll(k[5]) : 0,
                         flag("stacked"), flag("split"), flag("paged"), flag("window"), flag("sparse"), flag("dropout")};
      // One instance per template and arguments; a template that two instance files instantiate
      // (flash2's row kernels: the mma_sync and the wgmma backward launch them) is in both
      // object files, with the same resources.
      INFO("one instance in the library: " << function);
      const auto [at, added] = kernels.emplace(key, r);
      if (!added) CHECK(at->second == r);
    }
    function.clear();
  }
  return kernels;
}

std::string name_of(const fs::BuiltKernel& k) {
  return fs::to_string(k.algo) + " " + fs::to_string(k.pass) + " d=" + std::to_string(k.headdim) + " " +
         fs::to_string(k.dtype) + " " + std::to_string(k.tiling.block_r) + "x" + std::to_string(k.tiling.block_c);
}

}  // namespace

TEST_CASE("catalog: every entry's registers and stack are its compiled main kernel's (cuobjdump), "
          "which declares no static shared memory, and no compiled tiled kernel is missing from it "
          "(flash2's instances for stacked rows: their registers too)") {
  const std::map<Instance, Resources> compiled = compiled_kernels();
  std::map<Instance, const fs::BuiltKernel*> catalogued;
  for (const fs::BuiltKernel& k : fs::built_kernels()) {
    const Instance key{main_function(k), k.dtype, k.headdim, k.tiling.block_r, k.tiling.block_c, false, false, false, false, false, false};
    catalogued[key] = &k;
    const auto it = compiled.find(key);
    INFO("catalog entry " << name_of(k) << " (" << main_function(k) << ")");
    REQUIRE(it != compiled.end());
    const Resources& r = it->second;
    INFO("catalog: registers " << k.registers << ", stack " << k.stack_bytes << " B; cuobjdump: REG " << r.registers
                               << ", STACK " << r.stack_bytes << ", SHARED " << r.shared_bytes << ", LOCAL "
                               << r.local_bytes);
    CHECK(k.registers == r.registers);
    CHECK(k.stack_bytes == r.stack_bytes);
    CHECK(r.shared_bytes == kReservedSmemBytes);  // smem_bytes (dynamic) is all of it
    CHECK(r.local_bytes == 0);
  }
  for (const auto& [key, r] : compiled) {
    if (std::get<3>(key) == 0) continue;  // a row kernel or standard's softmax, below
    INFO("compiled " << std::get<0>(key) << " " << fs::to_string(std::get<1>(key)) << " d=" << std::get<2>(key) << " "
                     << std::get<3>(key) << "x" << std::get<4>(key) << (std::get<5>(key) ? " stacked" : "")
                     << (std::get<6>(key) ? " split" : "") << (std::get<7>(key) ? " paged" : "")
                     << (std::get<8>(key) ? " window" : "") << (std::get<9>(key) ? " sparse" : "")
                     << (std::get<10>(key) ? " dropout" : ""));
    Instance one_head = key;
    std::get<5>(one_head) = false;
    std::get<6>(one_head) = false;
    std::get<7>(one_head) = false;
    std::get<8>(one_head) = false;
    std::get<9>(one_head) = false;
    std::get<10>(one_head) = false;
    REQUIRE(catalogued.count(one_head) == 1);
    if (std::get<10>(key)) {
      // The instance for fused dropout and key padding (docs/kernels.md, "Fused dropout and key
      // padding"): flash2's with stacked rows (its forward's a KV-cache instance), no splits, no
      // window, no block mask; the entry's dropout_registers, which the time model takes.
      const fs::BuiltKernel& k = *catalogued.at(one_head);
      const bool flash2 = k.algo == fs::Algo::flash2;
      INFO("dropout instance: REG " << r.registers << ", STACK " << r.stack_bytes << "; catalog " << k.dropout_registers);
      CHECK(std::get<5>(key) == flash2);
      CHECK(std::get<7>(key) == (flash2 && k.pass == fs::Pass::fwd));
      CHECK_FALSE(std::get<6>(key));
      CHECK_FALSE(std::get<8>(key));
      CHECK_FALSE(std::get<9>(key));
      CHECK(k.dropout_registers == r.registers);
      CHECK(r.shared_bytes == kReservedSmemBytes);
      CHECK(r.local_bytes == 0);
      continue;
    }
    if (std::get<9>(key)) {
      // A block-sparse instance (docs/kernels.md, "Block-sparse kernels"): one head's rows, no
      // splits, contiguous, no window; the entry's sparse_registers.
      const fs::BuiltKernel& k = *catalogued.at(one_head);
      INFO("sparse instance: REG " << r.registers << ", STACK " << r.stack_bytes << "; catalog " << k.sparse_registers);
      CHECK_FALSE(std::get<5>(key));
      CHECK_FALSE(std::get<6>(key));
      CHECK_FALSE(std::get<7>(key));
      CHECK_FALSE(std::get<8>(key));
      CHECK(k.sparse_registers == r.registers);
      CHECK(r.shared_bytes == kReservedSmemBytes);
      CHECK(r.local_bytes == 0);
      continue;
    }
    if (std::get<8>(key)) {
      // A window instance (docs/shapes.md, "Causal and sliding windows"): stacked rows, no splits,
      // contiguous; the entry's window_registers, which the time model takes.
      const fs::BuiltKernel& k = *catalogued.at(one_head);
      INFO("window instance: REG " << r.registers << ", STACK " << r.stack_bytes << "; catalog " << k.window_registers);
      CHECK(std::get<5>(key));
      CHECK_FALSE(std::get<6>(key));
      CHECK_FALSE(std::get<7>(key));
      CHECK(k.window_registers == r.registers);
      CHECK(r.shared_bytes == kReservedSmemBytes);
      CHECK(r.local_bytes == 0);
      continue;
    }
    if (std::get<7>(key)) {
      // An instance over a paged KV cache (docs/shapes.md, "Paged KV cache"): stacked rows, the
      // entry's paged_registers or (with splits) paged_split_registers, which the time model takes.
      const fs::BuiltKernel& k = *catalogued.at(one_head);
      const int64_t catalogued_registers = std::get<6>(key) ? k.paged_split_registers : k.paged_registers;
      INFO("paged instance: REG " << r.registers << ", STACK " << r.stack_bytes << "; catalog " << catalogued_registers);
      CHECK(std::get<5>(key));
      CHECK(catalogued_registers == r.registers);
      CHECK(r.shared_bytes == kReservedSmemBytes);
      CHECK(r.local_bytes == 0);
      continue;
    }
    if (std::get<6>(key)) {
      // A split-KV instance (docs/shapes.md, "Split-KV"): the entry's split_registers, or
      // stacked_split_registers for stacked rows, which the time model's occupancy takes.
      const fs::BuiltKernel& k = *catalogued.at(one_head);
      const int64_t catalogued_registers = std::get<5>(key) ? k.stacked_split_registers : k.split_registers;
      INFO("split instance: REG " << r.registers << ", STACK " << r.stack_bytes << ", SHARED " << r.shared_bytes
                                  << ", LOCAL " << r.local_bytes << "; catalog " << catalogued_registers);
      CHECK(catalogued_registers == r.registers);
      CHECK(r.shared_bytes == kReservedSmemBytes);
      CHECK(r.local_bytes == 0);
      continue;
    }
    if (!std::get<5>(key)) continue;
    // The instance for a group's stacked rows (grouped-query attention): its registers are the
    // entry's stacked_registers, which the time model's occupancy takes for those problems.
    const fs::BuiltKernel& k = *catalogued.at(one_head);
    INFO("stacked instance: REG " << r.registers << ", STACK " << r.stack_bytes << "; catalog stacked_registers "
                                  << k.stacked_registers);
    CHECK(k.stacked_registers == r.registers);
    CHECK(r.shared_bytes == kReservedSmemBytes);
    CHECK(r.local_bytes == 0);
  }
}

TEST_CASE("catalog: flash2 backward's row kernels have the registers and static shared memory of their "
          "compiled instances (cuobjdump), and every compiled row kernel is catalogued") {
  const std::map<Instance, Resources> compiled = compiled_kernels();
  // The backward's preprocess and convert_dq, and split-KV's combine (flash2_fwd_combine_kernel).
  size_t row_kernels = 0;
  for (const auto& [key, r] : compiled)
    if (std::get<3>(key) == 0 && std::get<0>(key).starts_with("flash")) ++row_kernels;
  CHECK(row_kernels == fs::built_row_kernels().size());
  for (const fs::BuiltRowKernel& k : fs::built_row_kernels()) {
    const std::string function = fs::to_string(k.kind) + "_kernel";
    const auto it = compiled.find(Instance{function, k.dtype, k.headdim, 0, 0, false, false, false, false, false, false});
    INFO("row kernel " << function << " d=" << k.headdim << " " << fs::to_string(k.dtype));
    REQUIRE(it != compiled.end());
    INFO("catalog: registers " << k.registers << ", static shared " << k.static_smem_bytes << " B; cuobjdump: REG "
                               << it->second.registers << ", SHARED " << it->second.shared_bytes);
    CHECK(k.registers == it->second.registers);
    CHECK(k.static_smem_bytes + kReservedSmemBytes == it->second.shared_bytes);
    CHECK(it->second.stack_bytes == 0);
  }
}

TEST_CASE("catalog: standard's softmax has the registers, stack and static shared memory sim gives it "
          "(cuobjdump, fp16 and bf16), and sim's threads per row are the kernel's for every N") {
  const std::map<Instance, Resources> compiled = compiled_kernels();
  size_t instances = 0;
  for (const auto& [key, r] : compiled) instances += std::get<0>(key) == "softmax_kernel";
  CHECK(instances == 2);
  for (const fs::DType dtype : {fs::DType::fp16, fs::DType::bf16}) {
    const auto it = compiled.find(Instance{"softmax_kernel", dtype, 0, 0, 0, false, false, false, false, false, false});
    INFO("softmax_kernel<" << fs::to_string(dtype) << ">");
    REQUIRE(it != compiled.end());
    CHECK(it->second.registers == fs::kStandardSoftmaxRegisters);
    CHECK(it->second.stack_bytes == 0);
    CHECK(it->second.shared_bytes == kReservedSmemBytes + fs::kStandardSoftmaxStaticSmemBytes);
  }
  for (int64_t n = 1; n <= flashio::kernels::kStandardMaxSeqlen; n += n < 4096 ? 1 : 97) {
    INFO("N = " << n);
    REQUIRE(fs::standard_softmax_threads(n) == flashio::kernels::standard_softmax_threads(n));
  }
  CHECK(fs::standard_softmax_threads(1) == 32);
  CHECK(fs::standard_softmax_threads(1024) == 32);
  CHECK(fs::standard_softmax_threads(1025) == 64);
  CHECK(fs::standard_softmax_threads(2999) == 96);
  CHECK(fs::standard_softmax_threads(32768) == 1024);
}

TEST_CASE("catalog: standard's GEMMs split the keys where the kernels do (N rounded down to a multiple of 8, "
          "the rest a second cuBLAS call)") {
  for (int64_t n = 1; n <= flashio::kernels::kStandardMaxSeqlen; ++n) {
    INFO("N = " << n);
    REQUIRE(fs::standard_gemm_main_keys(n) == flashio::kernels::standard_gemm_main_keys(n));
    REQUIRE(fs::standard_gemm_calls(n) == flashio::kernels::standard_gemm_calls(n));
    REQUIRE(fs::standard_gemm_calls(n) == (n % 8 != 0 && n > 8 ? 2 : 1));
  }
  CHECK(fs::standard_gemm_main_keys(7) == 7);
  CHECK(fs::standard_gemm_main_keys(2999) == 2992);
  CHECK(fs::standard_gemm_main_keys(3000) == 3000);
}

TEST_CASE("catalog: softmax_bwd's 16-byte chunks in flight per thread are the kernel's") {
  CHECK(fs::kStandardSoftmaxBwdChunksInFlight == flashio::kernels::kSoftmaxBwdChunksInFlight);
}
