// The one typed bridge between the CUDA kernels' vocabulary (kernels/attention.h: their own
// enums, since kernels/ depends on nothing of ours) and the model's (sim/types.h,
// sim/kernel_kind.h, sim/kernel_catalog.h). Every conversion is a switch over the enum, so an
// identity added on one side without the other is a compile error (-Werror=switch), and
// tests/profiler checks, for every algorithm × pass × variant, that the kernels' launch
// sequence maps onto the model's schedule kernel for kernel. Pure C++: built without CUDA too.
#pragma once
#include "kernels/attention.h"
#include "sim/config.h"
#include "sim/kernel_catalog.h"
#include "sim/kernel_kind.h"
#include "sim/row.h"

namespace flashio::profiler {

// sim → kernels. Throw std::invalid_argument (one line naming the field and what the kernels
// have) for what the kernels do not build: fp32. blocksparse is flash2 over a block mask
// (kernel_config sets AttentionConfig::block_mask).
kernels::DType to_kernels(sim::DType dtype);
kernels::Algo to_kernels(sim::Algo algo);
kernels::Pass to_kernels(sim::Pass pass);
kernels::MmaKind to_kernels(sim::MmaKind mma);

// kernels → sim.
sim::DType to_sim(kernels::DType dtype);
sim::Algo to_sim(kernels::Algo algo);
sim::Pass to_sim(kernels::Pass pass);
sim::MmaKind to_sim(kernels::MmaKind mma);
sim::KernelKind to_sim(kernels::Launch launch);

// The kernels' view of a configuration: the problem, and the tilings the kernels run — the
// configuration's own (rule or given: both passes run it), or for TilingSource::kernel the
// catalog's defaults of each pass (sim/kernel_catalog.h), the forward's by sim::forward_tiling;
// bwd_block_* are set only where the backward's differs; AttentionConfig::kernel is
// Config::kernel_impl. Throws std::invalid_argument for an algorithm or element type the kernels
// do not have.
kernels::AttentionConfig kernel_config(const sim::Config& config);
// blocksparse's mask (sim/block_mask.h, config.block_mask at config.problem's N) as the kernels
// take it: the bits of its T × T blocks (kernels/block_sparse_tiles.h). Throws sim::InvalidInput
// for a malformed mask.
kernels::TokenBlockMask token_block_mask(const sim::Config& config);

// A source=measured row with the configuration's key columns and the tiling the kernels ran for
// the pass: `entry` is the backward's for bwd, the forward's otherwise (standard: none), whose
// family is the row's kernel_impl.
sim::Row measured_row(const sim::Config& config, const kernels::KernelEntry* entry);

}  // namespace flashio::profiler
