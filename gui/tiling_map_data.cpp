#include "gui/tiling_map_data.h"

#include <exception>

#include <QList>

#include "gui/field_label.h"
#include "gui/row_text.h"
#include "gui/workbench_data.h"
#include "sim/kernel_catalog.h"
#include "sim/parallel_for.h"
#include "sim/simulate.h"
#include "sim/tiling_advisor.h"

namespace flashio::gui {
namespace {

std::optional<sim::Row> total_row(const sim::SimResult& result) {
  for (auto& row : sim::rows_from_result(result))
    if (row.is_total()) return row;
  return std::nullopt;
}

}  // namespace

std::span<const int64_t> map_blocks() {
  static constexpr int64_t kBlocks[] = {16, 32, 48, 64, 96, 128, 192, 256};
  return kBlocks;
}

std::string to_string(MapQuantity quantity) {
  switch (quantity) {
    case MapQuantity::time: return "time";
    case MapQuantity::io: return "io";
    case MapQuantity::dram: return "dram";
  }
  return "time";
}

std::optional<double> MapCell::value(MapQuantity quantity) const {
  switch (quantity) {
    case MapQuantity::time: return model ? model->time_ms : std::nullopt;
    case MapQuantity::io: return model ? io_bytes(*model) : std::nullopt;
    case MapQuantity::dram: return cache ? dram_bytes(*cache) : std::nullopt;
  }
  return std::nullopt;
}

std::optional<double> MapCell::measured_value(MapQuantity quantity) const {
  if (measured.empty()) return std::nullopt;
  const sim::Row& row = measured.front();
  switch (quantity) {
    case MapQuantity::time: return row.time_ms;
    case MapQuantity::io: return io_bytes(row);
    case MapQuantity::dram: return dram_bytes(row);
  }
  return std::nullopt;
}

const MapCell* TilingMap::find(const sim::Tiling& tiling) const {
  for (const MapCell& cell : cells)
    if (cell.tiling == tiling) return &cell;
  return nullptr;
}

std::vector<sim::Algo> map_algos(const WorkbenchParams& params) {
  std::vector<sim::Algo> algos;
  for (const sim::Algo algo : params.algos)
    if (algo != sim::Algo::standard) algos.push_back(algo);
  return algos;
}

std::vector<sim::Pass> map_passes(const WorkbenchParams& params) {
  if (params.problem.pass == sim::Pass::fwdbwd) return {sim::Pass::fwd, sim::Pass::bwd};
  return {params.problem.pass};
}

sim::Config map_cell_config(const WorkbenchParams& params, sim::Algo algo, sim::Pass pass,
                            const sim::Tiling& tiling) {
  WorkbenchParams p = params;
  p.problem.pass = pass;
  sim::TilingRequest request;  // both parts given: the rule's choice is overridden
  request.block_r = tiling.block_r;
  request.block_c = tiling.block_c;
  return config_of(p, algo, effective_sram_bytes(p), request);
}

TilingMap compute_tiling_map(const WorkbenchParams& params, sim::Algo algo, sim::Pass pass) {
  TilingMap map;
  map.algo = algo;
  map.pass = pass;
  const auto blocks = map_blocks();
  map.cells.reserve(blocks.size() * blocks.size());
  try {
    const sim::Config base = map_cell_config(params, algo, pass, {blocks[0], blocks[0]});
    map.time_method = sim::default_time_method(base);
  } catch (const std::exception& e) {
    map.note = error_message(e);
  }
  size_t refused = 0;
  for (const int64_t br : blocks)
    for (const int64_t bc : blocks) {
      MapCell cell;
      cell.tiling = {br, bc};
      try {
        const sim::Config config = map_cell_config(params, algo, pass, cell.tiling);
        cell.built = sim::runs_built(config, pass, cell.tiling);
        // simulate validates (sim::validate: the tiles fit in M) and checks the model's limits
        // first; InvalidInput says which, and the cell stays empty with that reason.
        cell.model = total_row(sim::simulate(config, sim::CountMethod::formula));
      } catch (const std::exception& e) {
        cell.reason = error_message(e);
        ++refused;
      }
      map.cells.push_back(std::move(cell));
    }
  if (refused == map.cells.size() && map.note.empty()) map.note = map.cells.front().reason;
  try {
    map.best = sim::best_built_tiling(map_cell_config(params, algo, pass, {blocks[0], blocks[0]}));
    if (!map.best)
      map.best_note = "no built kernel for d = " + std::to_string(params.problem.headdim) + ", " +
                      sim::to_string(params.problem.dtype) + " fits (sim/kernel_catalog.h)";
  } catch (const std::exception& e) {
    map.best_note = error_message(e);
  }
  return map;
}

std::vector<TilingMap> compute_tiling_maps(const WorkbenchParams& params) {
  std::vector<std::pair<sim::Algo, sim::Pass>> jobs;
  for (const sim::Algo algo : map_algos(params))
    for (const sim::Pass pass : map_passes(params)) jobs.emplace_back(algo, pass);
  // The maps on every core (the calling thread takes part), in the jobs' order.
  std::vector<TilingMap> maps(jobs.size());
  sim::parallel_for(static_cast<int>(jobs.size()), [&](int k) {
    const auto& [algo, pass] = jobs[static_cast<size_t>(k)];
    maps[static_cast<size_t>(k)] = compute_tiling_map(params, algo, pass);
  });
  return maps;
}

void attach_measured(std::vector<TilingMap>& maps, const WorkbenchParams& params,
                     const std::vector<sim::Row>& loaded_rows) {
  for (TilingMap& map : maps) {
    for (MapCell& cell : map.cells) cell.measured.clear();
    const ProblemKey key = problem_key(params, map.pass);
    for (const sim::Row& row : loaded_rows) {
      if (row.source != sim::RowSource::measured || !row_matches(row, key) || !row.block_r ||
          !row.block_c || sim::model_algo(row.algo) != map.algo)
        continue;
      for (MapCell& cell : map.cells)
        if (cell.tiling == sim::Tiling{*row.block_r, *row.block_c}) cell.measured.push_back(row);
    }
  }
}

CacheCell compute_cache_cell(const WorkbenchParams& params, const TilingMap& map, size_t map_index,
                             size_t cell_index) {
  CacheCell out;
  out.map = map_index;
  out.cell = cell_index;
  try {
    const sim::Config config = map_cell_config(params, map.algo, map.pass, map.cells[cell_index].tiling);
    out.row = total_row(sim::simulate(config, sim::CountMethod::cache));
  } catch (const std::exception& e) {
    // The L2 model's own limits (sim/limits.h: transfers, bytes, memory of a replay) are
    // tighter than the closed form's.
    out.reason = error_message(e);
  }
  return out;
}

std::vector<std::pair<size_t, size_t>> cache_cell_order(const std::vector<TilingMap>& maps) {
  std::vector<std::pair<size_t, size_t>> order;
  for (const bool built : {true, false})
    for (size_t m = 0; m < maps.size(); ++m)
      for (size_t c = 0; c < maps[m].cells.size(); ++c)
        if (maps[m].cells[c].model && maps[m].cells[c].built == built) order.emplace_back(m, c);
  return order;
}

WorkbenchParams map_key(const WorkbenchParams& params) {
  WorkbenchParams key = params;
  key.block_r = key.block_c = 0;
  key.sweep_min = key.sweep_max = 0;
  key.shape = SweepShape::outer;
  return key;
}

}  // namespace flashio::gui
