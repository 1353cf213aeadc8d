// Shared by the GPU tests: run one configuration on fresh random inputs with poisoned outputs,
// and the tolerance rule (docs/kernels.md, "Tests").
#pragma once
#include <catch2/catch.hpp>
#include <random>

#include "kernels/attention.h"
#include "compare.h"

namespace flashio::test {

// A fresh seed per run (printed by the tests on failure), so every run sees new inputs.
inline uint64_t fresh_seed() {
  static std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

// Runs `pass` (fwd or fwdbwd) of `config` on the inputs `seed` generates, after poisoning every
// output with NaN; returns the outputs and (when `inputs` is given) the inputs.
// dropout_seed: where given, the seed of the run's dropout decisions (AttentionRun::dropout_seed).
inline kernels::HostOutputs run_config(const kernels::AttentionConfig& config, kernels::Pass pass, uint64_t seed,
                                       kernels::HostInputs* inputs = nullptr, uint64_t* dropout_seed = nullptr) {
  kernels::AttentionRun run(config);
  run.fill_inputs(seed);
  run.poison_outputs(kernels::Pass::fwdbwd);
  run.enqueue(pass);
  if (inputs) *inputs = run.copy_inputs();
  if (dropout_seed) *dropout_seed = run.dropout_seed();
  return run.copy_outputs();
}

// The rule (docs/kernels.md, "Tests"): max |error| ≤ 2× the standard path's in the same precision,
// or max ≤ 1e-2 and mean ≤ 1e-3 (fp16), whichever is looser; an element of magnitude above 1 has
// its error taken relative to it (ErrorStats::max_scaled). bf16 keeps 3 fewer mantissa bits than
// fp16, so its absolute limits are 8× looser. No element may be NaN (every output element written).
// `terms`: how many per-head results the tensor sums (dK, dV with grouped-query attention: the g
// query heads of a group), each within the per-head limits, so the absolute limits are × terms.
inline bool within_tolerance(const ErrorStats& kernel, const ErrorStats& standard, kernels::DType dtype,
                             double terms = 1.0) {
  if (kernel.nan_count > 0) return false;
  const double looser = (dtype == kernels::DType::bf16 ? 8.0 : 1.0) * terms;
  const bool absolute = kernel.max_scaled <= 1e-2 * looser && kernel.mean_abs() <= 1e-3 * looser;
  const bool relative_to_standard = standard.count > 0 && kernel.max_abs <= 2.0 * standard.max_abs;
  return absolute || relative_to_standard;
}

}  // namespace flashio::test
