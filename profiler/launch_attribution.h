// Which of a pass's kernels each captured launch belongs to: our kernels launch once each, but
// cuBLAS may split one GEMM into several kernels (a split-K reduction, say). Pure C++.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace flashio::profiler {

// Groups captured kernel launches under the pass's kernel names. calls[n] is how many library
// calls name n makes (standard's GEMMs call cuBLAS twice when N is not a multiple of 8,
// kernels/standard_layout.h), at least 1: it takes at least that many launches. One launch per call
// when the counts agree; otherwise a name starting with "gemm_" takes, after its calls'
// launches, the following launches whose function looks like cuBLAS's while enough are left
// for the names after it (cuBLAS may split one GEMM into several kernels). Returns, for each
// launch, the index of its name. Throws ProfilerError when the launches cannot be attributed.
std::vector<size_t> attribute_launches(const std::vector<std::string>& names, const std::vector<size_t>& calls,
                                       const std::vector<std::string>& functions);

}  // namespace flashio::profiler
