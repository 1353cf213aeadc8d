#include "sim/split_kv.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sim/checked.h"
#include "sim/schedule.h"
#include "sim/errors.h"
#include "sim/simulate.h"
#include "sim/time_model.h"

namespace flashio::sim {

int64_t forward_key_tiles(const Config& c) {
  return c.tiling.block_c > 0 ? ceil_div(c.problem.keys(), c.tiling.block_c) : 0;
}

namespace {
// The kernels split only a forward without fused dropout, a window or packed sequences (varlen;
// sim/config.cpp refuses the others): one split there, whatever the grid.
bool splits_built(const Config& c) { return c.problem.dropout <= 0.0 && !c.problem.windowed() && !c.problem.varlen; }
}  // namespace

int64_t auto_splits(const Config& c) {
  if (c.algo != Algo::flash2 || c.tiling.block_r <= 0 || c.tiling.block_c <= 0 || !splits_built(c)) return 1;
  const TileGrid g = tile_grid(c, c.gqa_pack);
  const double blocks = static_cast<double>(grid_heads(c.problem, c.gqa_pack)) * static_cast<double>(g.tr);
  const double sms = static_cast<double>(std::max<int64_t>(c.hw.sm_count, 1));
  if (blocks >= 0.8 * sms) return 1;
  const int64_t max_splits = std::min({kMaxAutoSplits, std::max<int64_t>(c.hw.sm_count, 1), g.tc});
  // S − 1 splits with the same chunk as S would leave S's last split empty: not a choice.
  const auto eligible = [&](int64_t s) { return s == 1 || ceil_div(g.tc, s) != ceil_div(g.tc, s - 1); };
  std::vector<double> efficiency(static_cast<size_t>(std::max<int64_t>(max_splits, 1)), 0.0);
  double best = 0.0;
  for (int64_t s = 1; s <= max_splits; ++s) {
    if (!eligible(s)) continue;
    const double waves = blocks * static_cast<double>(s) / sms;
    efficiency[s - 1] = waves / std::ceil(waves);
    best = std::max(best, efficiency[s - 1]);
  }
  for (int64_t s = 1; s <= max_splits; ++s)
    if (eligible(s) && efficiency[s - 1] >= 0.85 * best) return s;
  return 1;
}

int64_t best_splits(const Config& c) {
  if (c.algo != Algo::flash2 || c.tiling.block_c <= 0 || !splits_built(c)) return 1;
  if (const std::vector<std::string> missing = missing_calibration(c); !missing.empty()) {
    std::string names;
    for (const std::string& m : missing) names += (names.empty() ? "" : ", ") + m;
    throw InvalidInput(Field::splits, "best picks the count by the time model, which needs the hardware's calibration (" +
                                          c.hw.name + " lacks " + names +
                                          "); allowed: auto, a count, or a calibrated hardware file");
  }
  const int64_t tc = forward_key_tiles(c);
  int64_t best = 1;
  double best_ms = 0;
  for (int64_t s = 1; s <= std::min(kMaxAutoSplits, tc); ++s) {
    if (s > 1 && ceil_div(tc, s) == ceil_div(tc, s - 1)) continue;
    Config candidate = c;
    candidate.splits = s;
    const double ms = simulate(candidate, CountMethod::formula, TimeMethod::model).time_ms;
    if (s == 1 || ms < best_ms) best = s, best_ms = ms;
  }
  return best;
}

}  // namespace flashio::sim
