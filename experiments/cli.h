// The `flashio` command line as a function, so that tests run it in-process with string streams
// as well as through the binary (experiments/main.cpp is only this call).
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "experiments/sweep.h"

namespace flashio::cli {

// args[0] is the program name, args[1] the subcommand. Results go to `out` (or --out), messages
// and progress to `err`; progress only when `err_is_terminal`. Returns the exit status:
// 0 success, 2 bad input (one line on `err`, no output file), 1 an internal error.
// `max_sweep_configs` is the largest sweep accepted (the fuzz harness of the whole command line
// lowers it so that every input it tries runs in well under a second, docs/fuzzing.md).
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
            bool err_is_terminal = false, int64_t max_sweep_configs = kMaxSweepConfigs);

// `flashio --help`: the subcommands and where to read more.
std::string usage_text();

}  // namespace flashio::cli
