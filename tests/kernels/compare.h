// The kernel tests' comparison with the model's double-precision dense reference
// (sim::dense_reference, sim/execute.h: paper Section 2.2 and Appendix B.2), and the error
// statistics they check.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/attention.h"

namespace flashio::test {

// Max and mean |kernel − reference| over a tensor; NaNs (unwritten, poisoned elements) counted.
struct ErrorStats {
  double max_abs = 0.0, sum_abs = 0.0;
  // max of |err| / max(1, |reference|): an element's error relative to its size beyond 1, so that
  // the 16-bit rounding of a large output (dV of a sequence with one key: Σ of the queries' dO)
  // is judged relative to it.
  double max_scaled = 0.0;
  double sum_sq_err = 0.0, sum_sq_ref = 0.0;
  int64_t count = 0, nan_count = 0;
  double mean_abs() const { return count ? sum_abs / count : 0.0; }
  // ‖kernel − reference‖₂ / ‖reference‖₂ over the tensor.
  double relative() const { return sum_sq_ref > 0 ? std::sqrt(sum_sq_err / sum_sq_ref) : std::sqrt(sum_sq_err); }
  void add(float got, double want);
};

struct AttentionErrors {
  ErrorStats o, lse, dq, dk, dv;
};

// Compares each of `outs` (as copied from the device; empty tensors skipped) with the reference
// computed once from `in` for every (b, h): the outputs of several algorithms on the same
// inputs share one reference. The reference applies the configuration's causal mask, window,
// block mask and standard's key padding (sim::kept_scores, the rule of kernels/attention.h), and
// with dropout the kernels' keep decisions, regenerated from `dropout_seed` (AttentionRun::
// dropout_seed) by the model's sim::dropout_multipliers (the rule of kernels/dropout_keep.h).
// With grouped-query attention each query head takes its K/V head's K and V, and the reference
// dK, dV of a K/V head are the sums over its group. Runs the backward reference only when some
// output has dq.
std::vector<AttentionErrors> compare_with_reference(const kernels::AttentionConfig& config,
                                                    const kernels::HostInputs& in,
                                                    const std::vector<kernels::HostOutputs>& outs,
                                                    uint64_t dropout_seed = 0);

std::string describe(const ErrorStats& e);

}  // namespace flashio::test
