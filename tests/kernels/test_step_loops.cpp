// sim's catalog of built kernels against their machine code, instruction by instruction: each
// entry's step_instructions and step_matrix_instructions (sim/kernel_catalog.h) are what the
// SASS of its main kernel's one-head instance in the built libflashio_kernels.a holds in its
// tile-step loop — the innermost loop closed by a backward branch that holds an HMMA or HGMMA —
// counted once each, and of those the matrix ones (HMMA, HGMMA, LDSM, WARPGROUP). The time
// model's issue slots take them (docs/time_model.md, "Issue slots"). Needs the CUDA build and the
// toolkit's cuobjdump with nvdisasm beside it (scripts/install_deps.sh), not a GPU.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "sim/kernel_catalog.h"
#include "tests/kernels/compiled_kernels.h"

namespace fs = flashio::sim;

namespace {

struct Instruction {
  uint64_t address = 0;
  std::string opcode;             // "HGMMA", "BRA" (no predicate, no modifiers)
  std::optional<uint64_t> target;  // a branch's
};

struct StepLoop {
  int64_t instructions = 0, matrix_instructions = 0;
};

// "        /*0ce0*/                   @!P0 BRA 0xc50 ;  /* 0x... */" -> address, opcode, target.
std::optional<Instruction> instruction_of(const std::string& line) {
  const size_t open = line.find("/*");
  if (open == std::string::npos) return std::nullopt;
  const size_t close = line.find("*/", open);
  if (close == std::string::npos || close == open + 2) return std::nullopt;
  const std::string address = line.substr(open + 2, close - open - 2);
  if (address.find_first_not_of("0123456789abcdef") != std::string::npos) return std::nullopt;
  const size_t end = line.find(';', close);
  if (end == std::string::npos) return std::nullopt;
  std::string text = line.substr(close + 2, end - close - 2);
  size_t at = text.find_first_not_of(' ');
  if (at == std::string::npos) return std::nullopt;
  if (text[at] == '@') at = text.find(' ', at);  // a predicate guards it
  at = text.find_first_not_of(' ', at);
  if (at == std::string::npos) return std::nullopt;
  const size_t word_end = text.find_first_of(" .", at);
  Instruction i;
  i.address = std::stoull(address, nullptr, 16);
  i.opcode = text.substr(at, word_end == std::string::npos ? std::string::npos : word_end - at);
  if (i.opcode == "BRA") {
    const size_t hex = text.find("0x", at);
    if (hex != std::string::npos) i.target = std::stoull(text.substr(hex + 2), nullptr, 16);
  }
  return i;
}

bool is_matrix(const std::string& opcode) {
  return opcode == "HMMA" || opcode == "HGMMA" || opcode == "LDSM" || opcode == "WARPGROUP";
}

// The innermost loop holding a matrix-multiply instruction: of the spans [target, branch] of the
// backward branches that hold an HMMA or HGMMA, the shortest.
std::optional<StepLoop> step_loop(const std::vector<Instruction>& code) {
  std::optional<std::pair<uint64_t, uint64_t>> best;
  for (const Instruction& branch : code) {
    if (!branch.target || *branch.target >= branch.address) continue;
    const uint64_t lo = *branch.target, hi = branch.address;
    if (best && hi - lo >= best->second - best->first) continue;
    bool mma = false;
    for (const Instruction& i : code) mma = mma || (i.address >= lo && i.address <= hi && (i.opcode == "HMMA" || i.opcode == "HGMMA"));
    if (mma) best = {lo, hi};
  }
  if (!best) return std::nullopt;
  StepLoop loop;
  for (const Instruction& i : code) {
    if (i.address < best->first || i.address > best->second) continue;
    ++loop.instructions;
    if (is_matrix(i.opcode)) ++loop.matrix_instructions;
  }
  return loop;
}

// The catalog's key of a tiled kernel's one-head instance: "flash2_bwd_wgmma_kernel fp16 128
// 64x128"; flash2's instance for one head's rows has every flag false, the warp-specialised
// forward has one instance (its last argument is its stages).
std::optional<std::string> instance_key(const std::string& function) {
  static const std::regex instance(
      R"(^void flashio::kernels::(flash\w+_kernel)<(__half|__nv_bfloat16), (\d+), (\d+), (\d+)((?:, \w+)*)>\(.*$)");
  std::smatch m;
  if (!std::regex_match(function, m, instance)) return std::nullopt;
  const std::string family = m[1], rest = m[6];
  if (family != "flash2_fwd_ws_kernel" && rest.find("true") != std::string::npos) return std::nullopt;
  return family + " " + (m[2] == "__half" ? "fp16" : "bf16") + " " + std::string(m[3]) + " " + std::string(m[4]) + "x" +
         std::string(m[5]);
}

std::map<std::string, StepLoop> compiled_step_loops() {
  const std::string tool = FLASHIO_CUOBJDUMP, library = FLASHIO_KERNELS_LIBRARY;
  INFO("cuobjdump: '" << tool << "', with nvdisasm in the same folder (scripts/install_deps.sh installs both)");
  REQUIRE(std::filesystem::exists(tool));
  REQUIRE(std::filesystem::exists(library));
  const std::string folder = std::filesystem::path(tool).parent_path().string();
  const std::string command = "PATH='" + folder + "':\"$PATH\" '" + tool + "' -sass '" + library + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::map<std::string, StepLoop> loops;
  std::string line, key_of_function, head;
  std::vector<Instruction> code;
  const auto finish = [&] {
    if (!key_of_function.empty())
      if (const auto loop = step_loop(code)) loops.emplace(key_of_function, *loop);
    key_of_function.clear();
    code.clear();
  };
  char buffer[4096];
  while (fgets(buffer, sizeof buffer, pipe)) {
    line = buffer;
    if (head.size() < 2000) head += line;
    const size_t function = line.find("Function : ");
    if (function != std::string::npos) {
      finish();
      std::string mangled = line.substr(function + 11);
      mangled.erase(mangled.find_last_not_of(" \t\r\n") + 1);
      key_of_function = instance_key(flashio::test::demangle(mangled)).value_or("");
      continue;
    }
    if (key_of_function.empty()) continue;
    if (const auto i = instruction_of(line)) code.push_back(*i);
  }
  finish();
  const int status = pclose(pipe);
  INFO(command << " exited with " << status << "; its output began:\n" << head);
  REQUIRE(status == 0);
  REQUIRE_FALSE(loops.empty());
  return loops;
}

std::string catalog_key(const fs::BuiltKernel& k) {
  return flashio::test::main_function(k) + " " + fs::to_string(k.dtype) + " " + std::to_string(k.headdim) + " " +
         std::to_string(k.tiling.block_r) + "x" + std::to_string(k.tiling.block_c);
}

}  // namespace

TEST_CASE("catalog: every entry's step-loop instructions, and of them the matrix ones, are what its compiled "
          "main kernel's tile-step loop holds (cuobjdump -sass)") {
  const std::map<std::string, StepLoop> compiled = compiled_step_loops();
  for (const fs::BuiltKernel& k : fs::built_kernels()) {
    const std::string key = catalog_key(k);
    INFO("catalog entry " << key);
    const auto it = compiled.find(key);
    REQUIRE(it != compiled.end());
    INFO("catalog: " << k.step_instructions << " instructions, " << k.step_matrix_instructions
                     << " matrix; SASS: " << it->second.instructions << ", " << it->second.matrix_instructions);
    CHECK(k.step_instructions == it->second.instructions);
    CHECK(k.step_matrix_instructions == it->second.matrix_instructions);
    // Every step loop multiplies matrices and does more besides (the softmax, the addresses).
    CHECK(k.step_matrix_instructions > 0);
    CHECK(k.step_instructions > k.step_matrix_instructions);
  }
}
