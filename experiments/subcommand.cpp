#include "experiments/subcommand.h"

#include <algorithm>

#include "experiments/usage_error.h"

namespace flashio::cli {
namespace {

// Function-local so that registrations from other files' static initialisers find it built.
std::vector<Subcommand>& registry() {
  static std::vector<Subcommand> table;
  return table;
}

}  // namespace

SubcommandRegistration::SubcommandRegistration(Subcommand subcommand) {
  registry().push_back(std::move(subcommand));
}

std::vector<const Subcommand*> subcommands() {
  std::vector<const Subcommand*> list;
  for (const auto& s : registry()) list.push_back(&s);
  std::stable_sort(list.begin(), list.end(),
                   [](const Subcommand* a, const Subcommand* b) { return a->order < b->order; });
  return list;
}

const Subcommand* find_subcommand(const std::string& name) {
  for (const auto& s : registry())
    if (s.name == name) return &s;
  return nullptr;
}

bool is_cuda_only_subcommand(const std::string& name) {
#ifdef FLASHIO_WITH_CUDA
  (void)name;
  return false;  // a CUDA build registers them from their cmd_<name>.cpp
#else
  // The list experiments/CMakeLists.txt leaves out of a build without CUDA, comma-separated.
  return ("," + std::string(FLASHIO_CUDA_ONLY_SUBCOMMANDS) + ",").find("," + name + ",") != std::string::npos;
#endif
}

po::typed_value<int64_t>* seed_value() { return po::value<int64_t>(); }

uint64_t read_seed(const po::variables_map& options) {
  const int64_t seed = options["seed"].as<int64_t>();
  if (seed < 0)
    throw UsageError("--seed must be an integer >= 0 (got " + std::to_string(seed) + ")");
  return static_cast<uint64_t>(seed);
}

std::unique_ptr<OutputTarget> Invocation::open_output() const {
  return std::make_unique<OutputTarget>(output.out_path, *out);
}

RunContext Invocation::context() const {
  RunContext c;
  c.subcommand = name;
  c.command_line = command_line;
  c.hardware = sweep.hardware;
  if (!sweep.hardware.empty()) c.count_method = sim::to_string(sweep.count);
  return c;
}

}  // namespace flashio::cli
