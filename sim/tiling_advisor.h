// The tiling advisor (docs/time_model.md, "Choosing a tiling"): the tilings of one pass of a
// configuration ranked by the time model's prediction, fastest first, with whether each is built
// (sim/kernel_catalog.h) and the pipe that bounds it. `flashio tune` prints the ranking;
// `--tiling best` (TilingSource::best) runs the fastest built tiling.
#pragma once
#include <optional>
#include <span>
#include <vector>

#include "sim/config.h"
#include "sim/simulate.h"
#include "sim/time_model.h"

namespace flashio::sim {

struct RankedTiling {
  Tiling tiling;
  double time_ms = 0;
  Pipe bound_by = Pipe::launch;  // of the pass's longest kernel
  bool built = false;            // a CUDA kernel runs this tiling for (algo, pass, d, dtype) (runs_built)
};

// Whether a built CUDA kernel runs `config`'s pass `pass` at `tiling`: its entry is built
// (sim/kernel_choice.h, built_kernel: of Config::kernel_impl's family for the forward, a
// dense_only one only for a dense configuration; blocksparse: flash2's), and for blocksparse the tiles divide
// the mask's T, as its kernels need (kernels/block_sparse_tiles.h). RankedTiling::built, the
// GUI's tiling map and --tiling best all ask this.
bool runs_built(const Config& config, Pass pass, const Tiling& tiling);

// Block sizes tried when none are given: powers of two from 16 to 256 rows (the kernels' tiles
// are multiples of 16, the mma's row count).
std::span<const int64_t> default_candidate_blocks();

// `config`'s pass (fwd or bwd; not fwdbwd) with every candidate tiling Br × Bc (Br from
// `block_rs`, Bc from `block_cs`; the defaults when empty) that fits its M, plus every built
// tiling of (algo, pass, d, dtype), ranked by the time model (counting by `method`). Tilings that
// do not fit or pass the model's limits are left out, and with Config::kernel_impl set those
// without a forward kernel of the family (validate refuses them), so that `tune --kernel F`
// ranks F's tilings and `--tiling best` picks among them. Throws InvalidInput when the hardware lacks
// a figure the model needs, or for a config that is not tiled (standard) or a pass of fwdbwd.
std::vector<RankedTiling> rank_tilings(const Config& config, CountMethod method,
                                       std::span<const int64_t> block_rs = {},
                                       std::span<const int64_t> block_cs = {});

// The fastest built tiling of the pass (rank_tilings over the built ones only); nullopt when
// nothing is built for it.
std::optional<Tiling> best_built_tiling(const Config& config, CountMethod method = CountMethod::formula);

}  // namespace flashio::sim
