#include "profiler/launch_attribution.h"

#include "profiler/profiler_error.h"

namespace flashio::profiler {
namespace {

bool looks_like_cublas(const std::string& function) {
  for (const char* mark : {"gemm", "Gemm", "xmma", "cutlass", "splitK", "sm90_", "sm80_", "cublas"})
    if (function.find(mark) != std::string::npos) return true;
  return false;
}

}  // namespace

std::vector<size_t> attribute_launches(const std::vector<std::string>& names,
                                       const std::vector<std::string>& functions) {
  std::vector<size_t> owner;
  if (names.empty() && !functions.empty())
    throw ProfilerError(ErrorKind::cuda_failure, "kernel launches in a pass that has no kernels");
  if (names.size() == functions.size()) {
    for (size_t i = 0; i < names.size(); ++i) owner.push_back(i);
    return owner;
  }
  size_t launch = 0;
  for (size_t n = 0; n < names.size(); ++n) {
    if (launch >= functions.size()) break;
    owner.push_back(n);
    ++launch;
    if (names[n].rfind("gemm_", 0) == 0) {
      // Extra launches left to place: take them while they look like cuBLAS's.
      while (launch < functions.size() && functions.size() - launch > names.size() - n - 1 &&
             looks_like_cublas(functions[launch])) {
        owner.push_back(n);
        ++launch;
      }
    }
  }
  if (owner.size() != functions.size() || owner.back() != names.size() - 1)
    throw ProfilerError(ErrorKind::cuda_failure,
                        "cannot attribute " + std::to_string(functions.size()) +
                            " kernel launches to the pass's " + std::to_string(names.size()) +
                            " kernels");
  return owner;
}

}  // namespace flashio::profiler
