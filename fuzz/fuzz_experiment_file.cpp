// Experiment files (`--config FILE`, experiments/cli.cpp): the first byte picks the subcommand
// that reads the file (simulate, bound, explain or compare), the rest is the file. Property and
// what is left out: fuzz/fuzz_cli.h.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_cli.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  flashio::fuzz::enter_sandbox();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* const kSubcommands[] = {"simulate", "bound", "explain", "compare"};
  const std::string subcommand = kSubcommands[data[0] % 4];
  std::string file = flashio::fuzz::text_of(data + 1, size - 1);
  // An empty --config value would be the harness's choice, not the input's: skip nothing, the
  // file is written even when empty.
  if (file.empty()) file = "\n";
  flashio::fuzz::run_and_check({subcommand}, file);
  return 0;
}
