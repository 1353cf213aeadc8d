// Which built kernel a configuration runs (docs/kernels.md, "Catalog"): two entries of the
// catalog may share a tiling (flash2's forward d=128 128x128 on wgmma, and warp-specialised on
// wgmma_ws), so a configuration's kernel is its tiling's entry of the forward's family
// (Config::kernel_impl) where one is asked for, else the tiling's first entry that runs the
// configuration, as the kernels' find_impl picks it (kernels/registry.cpp). Every model lookup of
// a configuration's entry (the time model, the L2 model's occupancy, the tiling advisor, a row's
// kernel_impl) goes through here.
#pragma once
#include <optional>
#include <span>

#include "sim/config.h"
#include "sim/kernel_catalog.h"

namespace flashio::sim {

// Whether the configuration is dense attention, the problems a dense_only kernel runs
// (BuiltKernel::dense_only; mirrors the kernels' runs_only_dense): causal or not, grouped-query
// heads, Nq != Nk and a window's right side allowed; none of the padding mask, dropout, a window's
// left side, splits, a paged KV cache, per-sequence key lengths, varlen or a block mask.
bool runs_only_dense(const Config& config);

// The entry of `entries` (the catalog unless a test gives its own) that pass `pass` (fwd or bwd)
// of `config` runs at `tiling`: the forward's of config.kernel_impl's family where set (the family
// names the forward; a backward is never asked for by family), else the default entry where the
// default tiling was chosen (TilingSource::kernel) and is `tiling`, else the tiling's first; a
// dense_only entry only for a dense configuration. nullptr for standard and where none is built.
const BuiltKernel* built_kernel(const Config& config, Pass pass, const Tiling& tiling,
                                std::span<const BuiltKernel> entries = built_kernels());
// The entry of the configuration's main kernel `kind` (flash1_fwd/bwd, flash2_fwd/bwd,
// blocksparse_fwd/bwd: flash2's entries) at its pass's tiling (pass_config); nullptr for the other
// kinds (row kernels, GEMMs) and for tilings not built.
const BuiltKernel* built_kernel(const Config& config, KernelKind kind);

// The default entry of pass `pass` (fwd or bwd) for the configuration (default_built): of
// config.kernel_impl's family for the forward where set, running the configuration (a dense_only
// default only for a dense one); nullptr for standard and where none is built. `--tiling kernel`
// runs its tiling (make_config, forward_tiling, the bridge).
const BuiltKernel* default_kernel(const Config& config, Pass pass,
                                  std::span<const BuiltKernel> entries = built_kernels());

// The family of the forward kernel the configuration runs (at forward_tiling; a row's
// kernel_impl): nullopt for standard and where no built kernel runs it.
std::optional<MmaKind> forward_kernel_impl(const Config& config,
                                           std::span<const BuiltKernel> entries = built_kernels());

// Whether the configuration's forward runs a kernel that loads whole TMA boxes
// (loads_whole_boxes, sim/kernel_catalog.h) at its tiling: the schedule, the closed form and
// execute then count a box's rows past the matrix as moved.
bool forward_loads_whole_boxes(const Config& config);

// The family a row of the configuration names (Row::kernel_impl): for a backward alone (pass bwd)
// the backward kernel's, the one the row times (at pass_config's tiling: wgmma at the default
// tiling of a dense problem, else the tiling's first, mma_sync); else the forward's
// (forward_kernel_impl; a fwdbwd row's forward and backward families are the two passes' rows').
std::optional<MmaKind> row_kernel_impl(const Config& config, std::span<const BuiltKernel> entries = built_kernels());

// Throws InvalidInput (Field::kernel_impl) where config.kernel_impl is set and the forward's
// tiling has no kernel of that family among `entries` (standard has none; flash1's are all
// mma_sync), or has only one that runs dense attention and the configuration is not dense. The
// messages say what is built and which families the tiling allows. validate (sim/config.h) calls it.
void validate_kernel_impl(const Config& config, std::span<const BuiltKernel> entries = built_kernels());

}  // namespace flashio::sim
