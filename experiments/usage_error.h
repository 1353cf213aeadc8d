// Bad input to the runner (experiments/README.md, "Errors and exit status"): one line naming the
// option and what is allowed. run_cli prints what() on one line of stderr and exits with
// status 2. sim::InvalidInput, which the model throws for configurations that cannot exist,
// names a sim::Field; option_name turns it into the option a user typed.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>

#include "experiments/option_name.h"
#include "sim/errors.h"

namespace flashio::cli {

class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& message) : std::runtime_error(message) {}
};


// The model's error as the runner prints it: "--seqlen: must be a positive integer (got 0)";
// what() when the error names no field.
std::string usage_message(const sim::InvalidInput& error);

// The exit statuses of `flashio`.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;  // an internal error (a bug), not the user's input
constexpr int kExitUsage = 2;    // bad input: one line on stderr, no output file

}  // namespace flashio::cli
