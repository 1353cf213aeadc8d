#include "sim/tiling_advisor.h"

#include <algorithm>
#include <set>

#include "sim/block_mask.h"
#include "sim/errors.h"
#include "sim/kernel_catalog.h"
#include "sim/kernel_choice.h"

namespace flashio::sim {

bool runs_built(const Config& config, Pass pass, const Tiling& tiling) {
  if (!built_kernel(config, pass, tiling)) return false;
  if (config.algo != Algo::blocksparse) return true;
  const int64_t t = block_mask_tokens(config.block_mask);  // tiles inside one mask block
  return t % tiling.block_r == 0 && t % tiling.block_c == 0;
}

std::span<const int64_t> default_candidate_blocks() {
  static constexpr int64_t kBlocks[] = {16, 32, 64, 128, 256};
  return kBlocks;
}

namespace {

std::vector<RankedTiling> rank(const Config& config, CountMethod method, const std::set<std::pair<int64_t, int64_t>>& tilings) {
  if (config.algo == Algo::standard)
    throw InvalidInput(Field::algo, "standard attention has no tiles to choose (its GEMMs are cuBLAS's); "
                                    "allowed: flash1, flash2, blocksparse");
  if (config.problem.pass == Pass::fwdbwd) throw std::logic_error("rank_tilings: one pass at a time");
  require_calibration(config);
  std::vector<RankedTiling> ranked;
  for (const auto& [br, bc] : tilings) {
    Config c = config;
    c.tiling = Tiling{br, bc};
    c.bwd_tiling.reset();
    c.tiling_source = TilingSource::given;
    // The family is the forward's: a backward's tilings are ranked without it (its kernels are
    // mma_sync; the forward a backward alone runs first is forward_tiling's, not the candidate).
    if (c.problem.pass == Pass::bwd) c.kernel_impl.reset();
    try {
      const SimResult r = simulate(c, method, TimeMethod::model);
      RankedTiling t;
      t.tiling = c.tiling;
      t.time_ms = r.time_ms;
      size_t longest = 0;
      for (size_t k = 0; k < r.kernel_time_ms.size(); ++k)
        if (r.kernel_time_ms[k] > r.kernel_time_ms[longest]) longest = k;
      if (longest < r.kernel_bound_by.size()) t.bound_by = r.kernel_bound_by[longest];
      t.built = runs_built(c, c.problem.pass, c.tiling);
      ranked.push_back(t);
    } catch (const InvalidInput&) {
      // Does not fit M, passes a limit of the model, or (Config::kernel_impl set) has no forward
      // kernel of that family: not a candidate.
    }
  }
  // Fastest first; ties by the smaller tile (fewer bytes of SRAM), then Br.
  std::stable_sort(ranked.begin(), ranked.end(), [](const RankedTiling& a, const RankedTiling& b) {
    if (a.time_ms != b.time_ms) return a.time_ms < b.time_ms;
    return a.tiling.block_r * a.tiling.block_c < b.tiling.block_r * b.tiling.block_c;
  });
  return ranked;
}

// The built tilings that run the configuration's pass (runs_built).
std::set<std::pair<int64_t, int64_t>> built_tilings(const Config& config) {
  std::set<std::pair<int64_t, int64_t>> out;
  for (const BuiltKernel& k : built_kernels())
    if (k.algo == built_algo(config.algo) && k.pass == config.problem.pass && runs_built(config, k.pass, k.tiling))
      out.insert({k.tiling.block_r, k.tiling.block_c});
  return out;
}

}  // namespace

std::vector<RankedTiling> rank_tilings(const Config& config, CountMethod method, std::span<const int64_t> block_rs,
                                       std::span<const int64_t> block_cs) {
  if (block_rs.empty()) block_rs = default_candidate_blocks();
  if (block_cs.empty()) block_cs = default_candidate_blocks();
  std::set<std::pair<int64_t, int64_t>> tilings = built_tilings(config);
  for (int64_t br : block_rs)
    for (int64_t bc : block_cs) tilings.insert({br, bc});
  return rank(config, method, tilings);
}

std::optional<Tiling> best_built_tiling(const Config& config, CountMethod method) {
  const std::vector<RankedTiling> ranked = rank(config, method, built_tilings(config));
  if (ranked.empty()) return std::nullopt;
  return ranked.front().tiling;
}

}  // namespace flashio::sim
