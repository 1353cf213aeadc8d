// Split-KV's choice of the number of key splits (docs/shapes.md, "Split-KV"; the splits
// themselves are Config::splits, scheduled in sim/schedule_flash2.cpp).
#pragma once
#include <cstdint>

#include "sim/config.h"

namespace flashio::sim {

// The forward's key tiles ⌈Nk / Bc⌉: the most splits the configuration takes (0 without a tiling).
int64_t forward_key_tiles(const Config& config);

// The most splits `auto` considers (FlashAttention's cap).
inline constexpr int64_t kMaxAutoSplits = 128;

// FlashAttention's heuristic for its split-KV forward, on the configuration's forward grid:
// with W = (blocks of the unsplit forward) · S / SMs waves, a split count's wave efficiency is
// W / ⌈W⌉; among S = 1 … min(128, SMs, Tc) whose chunks ⌈Tc / S⌉ differ from S − 1's, the
// fewest reaching 85 % of the best efficiency. 1 when the unsplit grid already fills 80 % of
// the SMs. flash2 only (every other algorithm: 1).
int64_t auto_splits(const Config& config);

// The split count whose configuration the time model (sim/time_model.h) predicts fastest, among
// 1 and every S ≤ min(128, Tc) whose chunk ⌈Tc / S⌉ differs from S − 1's (the others repeat a
// partition with an empty split); the smallest S on a tie. flash2 only (every other algorithm:
// 1). Throws InvalidInput (Field::splits) naming the calibration figures the hardware lacks.
int64_t best_splits(const Config& config);

}  // namespace flashio::sim
