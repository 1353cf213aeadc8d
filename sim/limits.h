// The model's limits (docs/architecture.md, "Limits"): what one configuration may ask of the
// model, so that every count fits in 64 bits and no way of counting runs for minutes or
// exhausts memory. check_limits refuses every configuration past one of them before any work,
// in well under a second, with InvalidInput naming the field and the limit; the CLI prints it
// as one line with exit status 2, and a sweep skips the configuration.
#pragma once
#include <cstdint>

#include "sim/config.h"
#include "sim/simulate.h"

namespace flashio::sim {

// Tiled algorithms: the closed form keeps one sum per row tile and per column tile
// (sim/schedule.h, TileVisits; 16 bytes each, 64 MiB at the limit): Tr + Tc at most this, so
// that the closed form, evaluated for every configuration, takes well under a second.
inline constexpr int64_t kMaxTileRowsAndCols = int64_t{1} << 22;
// Per-sequence key lengths (--lengths, or the mask's padding in flash1 and flash2): the model
// keeps each run of consecutive sequences of one length its own schedule facts, and the closed
// form, the walk and the time model take one head of each run (sim/config.h, key_length_runs): at
// most this many runs (a batch of the kernels' largest B, 65535, has no more).
inline constexpr int64_t kMaxKeyLengthRuns = int64_t{1} << 16;
// ...and the time model keeps the work of every block of one head of each run (sim/time_model.h,
// BlockWork, about 100 bytes; 400 MiB at the limit): runs × blocks per head of a kernel at most
// this, where a kernel's heads run in more than one run.
inline constexpr int64_t kMaxKeyLengthRunBlocks = int64_t{1} << 22;
// blocksparse with a block mask: the mask is a byte and a 32-bit prefix sum per T × T-token
// block (sim/block_mask.h; 320 MiB at the limit: N = 1,048,576 at T = 128): ⌈N/T⌉² at most this.
inline constexpr int64_t kMaxMaskBlocks = int64_t{1} << 26;
// --count walk visits every thread block of one head: its transfers at most this (half a
// minute at the limit: the walk takes 3-7 ns per transfer).
inline constexpr int64_t kMaxWalkTransfers = int64_t{1} << 32;
// --count cache replays every thread block of every head through the L2 model, at 2-3 GB of
// transfers per second: at most this many transfers and bytes (about a minute at the limit)...
inline constexpr int64_t kMaxCacheTransfers = int64_t{1} << 31;
inline constexpr int64_t kMaxCacheBytes = int64_t{1} << 37;
// ...holding the transfer lists of all resident thread blocks at once: at most this many bytes.
inline constexpr int64_t kMaxCacheMemoryBytes = int64_t{1} << 31;
// The L2 model keeps a 16-byte entry per line: l2_bytes / l2_line_bytes at most this (256 MiB).
inline constexpr int64_t kMaxL2Lines = int64_t{1} << 24;

// Throws InvalidInput when the configuration passes a limit of the model (the tile grid, the
// block mask, 64-bit counts) or of counting it by `method` (walk's and cache's work; execute's
// limits are checked by execute itself, sim/execute.h). Call after validate(config); simulate,
// replay_cache and execute call it.
void check_limits(const Config& config, CountMethod method);

// The part of check_limits every method shares: the tile grid, the block mask, and every count
// (bytes per tensor, FLOPs per kind, their totals, read + write, grid blocks, extra memory) within 64 bits,
// found by evaluating the closed form with checked arithmetic (sim/checked.h). The field named
// is the input that contributes the most bits to the largest count (B, H, N², d, or the tiles'
// excess over N: the tiling, or M where the rule derived it).
void check_counts(const Config& config);

// "2^32 (4294967296)": a limit as the messages print it.
std::string limit_text(int64_t limit);

}  // namespace flashio::sim
