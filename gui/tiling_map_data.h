// The tiling map's numbers (docs/gui.md, "Tiling map"): for the panel's problem, one Br × Bc grid
// per tiled algorithm and pass, each cell the whole pass of one configuration as sim computes
// it: the closed form's io and time (sim::simulate, CountMethod::formula, the default time
// method: the calibrated time model where the hardware has its calibration, the roofline
// otherwise), the L2 model's dram bytes (CountMethod::cache, slow: computed cell by cell in the
// background), whether a CUDA kernel of that tiling is built (sim::find_built), measured rows
// loaded for it, and the fastest built tiling (sim::best_built_tiling). Computed from sim alone,
// so any thread may run it; the view (gui/tiling_map_view.h) only draws it.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gui/workbench_params.h"
#include "sim/config.h"
#include "sim/row.h"
#include "sim/time_model.h"

namespace flashio::gui {

// The block sizes on both axes: 16 to 256 rows in eight steps (each power of two and, between
// them, 1.5×), every one a multiple of 16 (the mma's row count, as the kernels' tiles are), so
// the grid is 8 × 8 = 64 cells and holds every candidate of sim::default_candidate_blocks and
// every built tiling (sim/kernel_catalog.h).
std::span<const int64_t> map_blocks();

// What a map shows in its cells.
enum class MapQuantity { time, io, dram };
std::string to_string(MapQuantity quantity);

struct MapCell {
  sim::Tiling tiling;
  std::optional<sim::Row> model;  // the closed form's total row; empty when the model refuses
  std::string reason;             // why `model` is empty (sim's message)
  bool built = false;             // a CUDA kernel of this tiling exists (sim::find_built)
  std::optional<sim::Row> cache;  // the L2 model's total row, once computed
  std::string cache_reason;       // why the L2 model has no row for this cell
  std::vector<sim::Row> measured;  // loaded measured total rows of this tiling

  // The cell's value of a quantity: time_ms, io or dram bytes (dram from the L2 model).
  std::optional<double> value(MapQuantity quantity) const;
  // The first measured row's value of a quantity, when it has one.
  std::optional<double> measured_value(MapQuantity quantity) const;
};

struct TilingMap {
  sim::Algo algo = sim::Algo::flash2;
  sim::Pass pass = sim::Pass::fwd;  // fwd or bwd
  sim::TimeMethod time_method = sim::TimeMethod::roofline;  // of every cell's time_ms
  std::vector<MapCell> cells;       // row-major: Br = map_blocks()[r], Bc = map_blocks()[c]
  std::optional<sim::Tiling> best;  // sim::best_built_tiling of the pass
  std::string best_note;            // why there is no best cell (nothing built, no calibration)
  std::string note;                 // a reason every cell shares (e.g. a problem the model refuses)

  MapCell& at(size_t r, size_t c) { return cells[r * map_blocks().size() + c]; }
  const MapCell& at(size_t r, size_t c) const { return cells[r * map_blocks().size() + c]; }
  // The cell of a tiling, or nullptr when the tiling is not on the grid.
  const MapCell* find(const sim::Tiling& tiling) const;
};

// The algorithms the map draws: the panel's tiled ones (standard has no tiling), and the passes:
// fwd, bwd, or both for fwdbwd.
std::vector<sim::Algo> map_algos(const WorkbenchParams& params);
std::vector<sim::Pass> map_passes(const WorkbenchParams& params);

// The configuration of one cell: the panel's problem, hardware and M (sim::make_config through
// config_of), one pass, the tiling given outright. Not validated (simulate validates).
sim::Config map_cell_config(const WorkbenchParams& params, sim::Algo algo, sim::Pass pass,
                            const sim::Tiling& tiling);

// The closed-form map of one (algorithm, pass): every cell, the built marks and the best cell.
TilingMap compute_tiling_map(const WorkbenchParams& params, sim::Algo algo, sim::Pass pass);
// Every map of the panel's parameters, algorithms outer, passes inner; the maps are computed in
// parallel on Qt's global thread pool and the call returns when all are done.
std::vector<TilingMap> compute_tiling_maps(const WorkbenchParams& params);

// Puts each loaded measured total row of the maps' problem (source measured, the same B, H, Hkv,
// N, Nk, d, dtype, causal and pass, and gqa_pack where grouped: row_matches) on the cell of its
// (block_r, block_c); replaces earlier ones.
void attach_measured(std::vector<TilingMap>& maps, const WorkbenchParams& params,
                     const std::vector<sim::Row>& loaded_rows);

// One cell of the L2 model: its total row (CountMethod::cache), or the reason it has none.
struct CacheCell {
  size_t map = 0, cell = 0;  // indices into the maps and their cells
  std::optional<sim::Row> row;
  std::string reason;
};
CacheCell compute_cache_cell(const WorkbenchParams& params, const TilingMap& map, size_t map_index,
                             size_t cell_index);
// The cells the L2 model replays, in the order it replays them: the built tilings first (the
// ones a GPU can run), then the rest row by row; cells the closed form refused are left out.
std::vector<std::pair<size_t, size_t>> cache_cell_order(const std::vector<TilingMap>& maps);

// The parameters the cells depend on: the panel's, without the current tiling and the
// block-size sweep (a click on a cell changes the tiling, which moves the marker only).
WorkbenchParams map_key(const WorkbenchParams& params);

}  // namespace flashio::gui
