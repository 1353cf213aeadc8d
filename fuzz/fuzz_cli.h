// Driving the runner in-process (experiments/cli.h) on fuzzed arguments and experiment files,
// for fuzz_command_line and fuzz_experiment_file (docs/fuzzing.md). The property checked: the
// exit status is 0 or 2, never 1 (an internal error); a refusal (2) is exactly one line on
// standard error and nothing on standard output.
//
// What the harnesses leave out, so that a fuzzed input neither writes files nor waits nor runs
// past the fuzzer's timeout on work a user may rightly ask for (each is tested elsewhere):
// - `--out` (any option spelled from "--o", which Program_options completes to it) and an
//   experiment file that mentions `out`: the runner's output safety has its own tests;
// - paths under /proc and terminals (they may block); standard input is /dev/null;
//   relative paths are read from the working folder (nothing is written there);
// - `--count walk`, `cache` and `execute`, whose limits allow up to a minute of work per
//   configuration (sim/limits.h); fuzz_hardware_file runs cache on a small problem;
// - sweeps of more than kMaxFuzzSweepConfigs configurations (refused as a user's sweep past
//   kMaxSweepConfigs is), and output past kMaxFuzzOutputBytes (the run stops there).
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "experiments/cli.h"
#include "experiments/usage_error.h"
#include "fuzz/fuzz_input.h"

namespace flashio::fuzz {

inline constexpr int64_t kMaxFuzzSweepConfigs = 8;
inline constexpr std::streamsize kMaxFuzzOutputBytes = 1 << 18;

// Standard output of the run: counts what is written, keeps none of it, and fails (as a full
// disk does) past its budget.
class BudgetStreambuf : public std::streambuf {
 public:
  std::streamsize written() const { return written_; }
  bool spent() const { return spent_; }

 protected:
  int_type overflow(int_type ch) override {
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    return xsputn(nullptr, 1) == 1 ? ch : traits_type::eof();
  }
  std::streamsize xsputn(const char*, std::streamsize n) override {
    if (written_ + n > kMaxFuzzOutputBytes) {
      spent_ = true;
      return 0;
    }
    written_ += n;
    return n;
  }

 private:
  std::streamsize written_ = 0;
  bool spent_ = false;
};

// Once per process: /dev/null as standard input (a fuzzed `--config /dev/stdin` reads nothing
// rather than waiting).
inline void enter_sandbox() {
  const int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd < 0 || dup2(null_fd, STDIN_FILENO) < 0) violated("cannot read standard input from /dev/null");
  close(null_fd);
}

inline bool contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

// True when the input asks for something the harnesses leave out (above).
inline bool left_out(const std::vector<std::string>& args, const std::string& experiment_file) {
  for (const std::string& a : args) {
    if (a.rfind("--o", 0) == 0 || contains(a, "/proc") || contains(a, "tty")) return true;
    for (const char* slow : {"walk", "cache", "execute"})
      if (contains(a, slow)) return true;
  }
  // The file's lines without their `#` comments (Program_options' syntax), so that a comment
  // like "without the mask" is no reason to leave a file out.
  std::istringstream lines(experiment_file);
  for (std::string line; std::getline(lines, line);) {
    line = line.substr(0, line.find('#'));
    for (const char* word : {"out", "walk", "cache", "execute"})
      if (contains(line, word)) return true;
  }
  return false;
}

// Runs `flashio args...` (args[0] the subcommand) with `experiment_file` as --config when it is
// not empty, and checks the property above.
inline void run_and_check(std::vector<std::string> args, const std::string& experiment_file) {
  if (left_out(args, experiment_file)) return;
  args.insert(args.begin(), "flashio");
  if (!experiment_file.empty()) {
    args.push_back("--config");
    args.push_back(as_file(experiment_file, "cfg"));
  }
  BudgetStreambuf out_buffer;
  std::ostream out(&out_buffer);
  std::ostringstream err;
  const int status = cli::run_cli(args, out, err, /*err_is_terminal=*/false, kMaxFuzzSweepConfigs);
  if (out_buffer.spent()) return;  // stopped by the harness's own budget
  if (status == cli::kExitFailure) {
    std::fprintf(stderr, "%s", err.str().c_str());
    violated("an internal error (exit 1)");
  }
  if (status != cli::kExitOk && status != cli::kExitUsage) violated("an exit status other than 0, 1 and 2");
  if (status == cli::kExitUsage) {
    const std::string message = err.str();
    if (message.empty() || message.back() != '\n' || message.find('\n') != message.size() - 1)
      violated("a refusal is not exactly one line");
    if (out_buffer.written() != 0) violated("a refusal wrote to standard output");
  }
}

}  // namespace flashio::fuzz
