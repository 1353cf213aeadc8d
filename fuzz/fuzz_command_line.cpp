// The whole command line (experiments/cli.h): the input is the arguments, one per line, the
// first the subcommand; a line `@cfg` ends them, and what follows it is an experiment file
// passed as --config. Property and what is left out: fuzz/fuzz_cli.h.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_cli.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  flashio::fuzz::enter_sandbox();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = flashio::fuzz::text_of(data, size);
  std::vector<std::string> args;
  std::string experiment_file;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t end = std::min(text.find('\n', at), text.size());
    std::string line = text.substr(at, end - at);
    at = end + 1;
    if (line == "@cfg") {
      experiment_file = at < text.size() ? text.substr(at) : std::string();
      break;
    }
    args.push_back(std::move(line));
  }
  if (args.empty() || args.size() > 64) return 0;
  flashio::fuzz::run_and_check(std::move(args), experiment_file);
  return 0;
}
