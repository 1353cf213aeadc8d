// The subcommand table of `flashio`. Each subcommand lives in its own file,
// experiments/cmd_<name>.cpp, and registers itself with a file-scope SubcommandRegistration:
//
//   namespace {
//   int run_bench(flashio::cli::Invocation& inv) { ...; return flashio::cli::kExitOk; }
//   const flashio::cli::SubcommandRegistration registration({
//       .name = "bench", .summary = "time the CUDA kernels", .order = 40,
//       .add_options = [](po::options_description& o) { o.add_options()("repeats", ...); },
//       .run = run_bench});
//   }
//
// experiments/CMakeLists.txt compiles every cmd_*.cpp into the object library flashio_cli (so
// the linker keeps the registrations); the CUDA-only ones (bench, profile) only when
// FLASHIO_CUDA is ON, and otherwise `flashio bench` says "flashio was built without CUDA".
#pragma once
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "experiments/output.h"
#include "experiments/sweep.h"

namespace flashio::cli {

namespace po = boost::program_options;

// Everything a subcommand gets: the parsed options (command line over --config), the sweep
// lists, where to write, and the streams.
struct Invocation {
  std::string name;                       // "simulate"
  std::vector<std::string> command_line;  // as typed, for the json context block
  po::variables_map options;              // every option, including the subcommand's own
  SweepSpec sweep;                        // when the subcommand takes the sweep options
  OutputOptions output;                   // --format, --out, --kernels
  std::ostream* out = nullptr;            // standard output (results go through open_output)
  std::ostream* err = nullptr;            // standard error
  bool progress = false;                  // stderr is a terminal: show progress there

  // The results destination: standard output, or --out (OutputTarget: a file through a
  // temporary that replaces it only on commit(), so no partial or truncated file on errors).
  std::unique_ptr<OutputTarget> open_output() const;
  // The context block of json output (version, command line, hardware, date).
  RunContext context() const;
};

struct Subcommand {
  std::string name;
  std::string summary;   // one line for `flashio --help`
  int order = 100;       // position in `flashio --help`
  bool takes_sweep = true;      // registers the problem/tiling options and fills Invocation::sweep
  bool takes_output = true;     // registers --format, --out, --kernels
  SweepDefaults defaults;       // what the sweep options default to
  std::function<void(po::options_description&)> add_options;  // its own options, may be empty
  std::function<int(Invocation&)> run;  // returns the exit status; throws UsageError for input
  // Options that bare arguments fill, in order (`flashio compare PREDICTED MEASURED`).
  std::vector<std::string> positional;
};

class SubcommandRegistration {
 public:
  explicit SubcommandRegistration(Subcommand subcommand);
};

// The registered subcommands, in `order`.
std::vector<const Subcommand*> subcommands();
const Subcommand* find_subcommand(const std::string& name);

// Subcommands that exist only in a CUDA build; without CUDA they answer
// "flashio was built without CUDA" with exit status 2.
bool is_cuda_only_subcommand(const std::string& name);

// --seed (explain, bench, profile, validate): declared with seed_value() as a signed integer, so
// that "-1" is refused by read_seed instead of wrapping to 2^64 - 1 as an unsigned parse would.
po::typed_value<int64_t>* seed_value();
uint64_t read_seed(const po::variables_map& options);

}  // namespace flashio::cli
