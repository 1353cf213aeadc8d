#include "sim/kernel_choice.h"

#include <string>

#include "sim/errors.h"

namespace flashio::sim {

bool runs_only_dense(const Config& c) {
  const Problem& p = c.problem;
  return !p.mask && p.dropout == 0.0 && p.window_left == kNoWindow && c.splits == 1 && c.page_size == 0 &&
         p.key_lengths.empty() && !p.varlen && c.algo != Algo::blocksparse;  // blocksparse: a block mask
}

const BuiltKernel* built_kernel(const Config& c, Pass pass, const Tiling& tiling, std::span<const BuiltKernel> entries) {
  if (c.algo == Algo::standard) return nullptr;  // cuBLAS and row kernels: no catalog entry
  const std::optional<MmaKind> family = pass == Pass::fwd ? c.kernel_impl : std::nullopt;
  // The default kernel's tiling, chosen as the default (TilingSource::kernel), runs the default
  // kernel itself, whose family may not be the tiling's first (wgmma_ws at d=128 128x128).
  if (!family && c.tiling_source == TilingSource::kernel)
    if (const BuiltKernel* d = default_kernel(c, pass, entries); d != nullptr && d->tiling == tiling) return d;
  return find_built(built_algo(c.algo), pass, c.problem.headdim, c.problem.dtype, tiling, family, runs_only_dense(c),
                    entries);
}

const BuiltKernel* default_kernel(const Config& c, Pass pass, std::span<const BuiltKernel> entries) {
  if (c.algo == Algo::standard) return nullptr;
  const std::optional<MmaKind> family = pass == Pass::fwd ? c.kernel_impl : std::nullopt;
  return default_built(built_algo(c.algo), pass, c.problem.headdim, c.problem.dtype, family, runs_only_dense(c),
                       entries);
}

const BuiltKernel* built_kernel(const Config& c, KernelKind kind) {
  switch (kind) {
    case KernelKind::flash1_fwd:
    case KernelKind::flash1_bwd:
    case KernelKind::flash2_fwd:
    case KernelKind::flash2_bwd:
    case KernelKind::blocksparse_fwd:
    case KernelKind::blocksparse_bwd: break;
    default: return nullptr;  // the row kernels and the GEMMs have no entry
  }
  const Pass pass = pass_of(kind);
  return built_kernel(c, pass, pass_config(c, pass).tiling);
}

std::optional<MmaKind> forward_kernel_impl(const Config& c, std::span<const BuiltKernel> entries) {
  const std::optional<Tiling> tiling = forward_tiling(c);
  if (!tiling) return std::nullopt;
  const BuiltKernel* k = built_kernel(c, Pass::fwd, *tiling, entries);
  return k ? std::optional<MmaKind>(k->mma) : std::nullopt;
}

bool forward_loads_whole_boxes(const Config& c) {
  const BuiltKernel* k = built_kernel(c, Pass::fwd, c.tiling);
  return k != nullptr && loads_whole_boxes(*k);
}

std::optional<MmaKind> row_kernel_impl(const Config& c, std::span<const BuiltKernel> entries) {
  if (c.problem.pass != Pass::bwd) return forward_kernel_impl(c, entries);
  const BuiltKernel* k = built_kernel(c, Pass::bwd, pass_config(c, Pass::bwd).tiling, entries);
  return k ? std::optional<MmaKind>(k->mma) : std::nullopt;
}

namespace {

// The families of the forward entries at the tiling that run a problem (dense or not), for the
// messages' "allowed": "mma_sync, wgmma", or "none (the family unset)".
std::string families_at(std::span<const BuiltKernel> entries, Algo algo, const Problem& p, const Tiling& tiling,
                        bool dense) {
  std::string text;
  for (MmaKind family : {MmaKind::mma_sync, MmaKind::wgmma, MmaKind::wgmma_ws})
    if (find_built(algo, Pass::fwd, p.headdim, p.dtype, tiling, family, dense, entries))
      text += (text.empty() ? "" : ", ") + to_string(family);
  return text.empty() ? "none (the family unset)" : text;
}

}  // namespace

void validate_kernel_impl(const Config& c, std::span<const BuiltKernel> entries) {
  if (!c.kernel_impl) return;
  const MmaKind family = *c.kernel_impl;
  if (c.algo == Algo::standard)
    throw InvalidInput(Field::kernel_impl, "standard runs cuBLAS's GEMMs and its own row kernels, no tiled kernel of "
                                           "a family (got " + to_string(family) +
                                               "); allowed with standard: none (the family unset)");
  const Algo algo = built_algo(c.algo);
  const Problem& p = c.problem;
  const std::optional<Tiling> tiling = forward_tiling(c);
  if (!tiling)
    throw InvalidInput(Field::kernel_impl, "no " + to_string(c.algo) + " fwd kernel is built for d=" +
                                               std::to_string(p.headdim) + " " + to_string(p.dtype) + " (built: " +
                                               built_tilings_text(algo, Pass::fwd) + ")");
  const std::string tiling_text = std::to_string(tiling->block_r) + "x" + std::to_string(tiling->block_c);
  if (!find_built(algo, Pass::fwd, p.headdim, p.dtype, *tiling, family, /*dense=*/true, entries))
    throw InvalidInput(Field::kernel_impl,
                       "no " + to_string(c.algo) + " fwd kernel for d=" + std::to_string(p.headdim) + " " +
                           to_string(p.dtype) + " " + tiling_text + " on " + to_string(family) + " (built: " +
                           built_tilings_text(algo, Pass::fwd) + "); allowed at that tiling: " +
                           families_at(entries, algo, p, *tiling, runs_only_dense(c)));
  // The kernels' wording (kernels/registry.cpp, find_impl), so that the model and the GPU refuse alike.
  if (!built_kernel(c, Pass::fwd, *tiling, entries))
    throw InvalidInput(Field::kernel_impl,
                       to_string(family) + " runs dense attention only (causal or not, grouped-query heads, Nq != Nk, "
                                           "a window's right side); not a padding mask, dropout, a window's left side, "
                                           "splits, a paged cache, key lengths, varlen or a block mask; allowed for this "
                                           "problem at " + tiling_text + ": " +
                           families_at(entries, algo, p, *tiling, /*dense=*/false));
}

}  // namespace flashio::sim
