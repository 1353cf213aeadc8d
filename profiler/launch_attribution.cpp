#include "profiler/launch_attribution.h"

#include <algorithm>
#include <stdexcept>

#include "profiler/profiler_error.h"

namespace flashio::profiler {
namespace {

bool looks_like_cublas(const std::string& function) {
  for (const char* mark : {"gemm", "Gemm", "xmma", "cutlass", "splitK", "sm90_", "sm80_", "cublas"})
    if (function.find(mark) != std::string::npos) return true;
  return false;
}

}  // namespace

std::vector<size_t> attribute_launches(const std::vector<std::string>& names, const std::vector<size_t>& calls,
                                       const std::vector<std::string>& functions) {
  if (calls.size() != names.size() || std::find(calls.begin(), calls.end(), size_t{0}) != calls.end())
    throw std::logic_error("attribute_launches: one call count, at least 1, per name");
  std::vector<size_t> owner;
  if (names.empty() && !functions.empty())
    throw ProfilerError(ErrorKind::cuda_failure, "kernel launches in a pass that has no kernels");
  // Launches the names from n on need at least.
  std::vector<size_t> needed_from(names.size() + 1, 0);
  for (size_t n = names.size(); n-- > 0;) needed_from[n] = needed_from[n + 1] + calls[n];
  size_t launch = 0;
  for (size_t n = 0; n < names.size(); ++n) {
    for (size_t c = 0; c < calls[n] && launch < functions.size(); ++c, ++launch)
      owner.push_back(n);
    if (names[n].rfind("gemm_", 0) == 0) {
      // Extra launches left to place: take them while they look like cuBLAS's.
      while (launch < functions.size() && functions.size() - launch > needed_from[n + 1] &&
             looks_like_cublas(functions[launch])) {
        owner.push_back(n);
        ++launch;
      }
    }
  }
  if (owner.size() != functions.size() || owner.empty() || owner.back() != names.size() - 1 ||
      functions.size() < needed_from[0])
    throw ProfilerError(ErrorKind::cuda_failure,
                        "cannot attribute " + std::to_string(functions.size()) +
                            " kernel launches to the pass's " + std::to_string(names.size()) +
                            " kernels");
  return owner;
}

}  // namespace flashio::profiler
