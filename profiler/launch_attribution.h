// Which of a pass's kernels each captured launch belongs to: our kernels launch once each, but
// cuBLAS may split one GEMM into several kernels (a split-K reduction, say). Pure C++.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace flashio::profiler {

// Groups captured kernel launches under the pass's kernel names: one launch per name when the
// counts agree; otherwise a name starting with "gemm_" takes, after its first launch, the
// following launches whose function looks like cuBLAS's (cuBLAS may split one GEMM into several
// kernels). Returns, for each launch, the index of its name. Throws ProfilerError when the
// launches cannot be attributed.
std::vector<size_t> attribute_launches(const std::vector<std::string>& names,
                                       const std::vector<std::string>& functions);

}  // namespace flashio::profiler
