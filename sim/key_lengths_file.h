// Reading per-sequence key lengths (sim/problem.h, KeyLengths) from the file a user names with
// `--lengths FILE` (docs/shapes.md, "Per-sequence key lengths"): one positive integer per line,
// one line per sequence of the batch in order; blank lines and lines starting with '#' are
// skipped. Whether there are B of them and each fits the cache is Problem's check (validate).
#pragma once
#include <string>

#include "sim/problem.h"

namespace flashio::sim {

// The most bytes a lengths file may hold: 2^20 sequences of a few digits each.
inline constexpr int64_t kMaxLengthsFileBytes = int64_t{1} << 24;

// The file's lengths, with `path` as their source. Throws InvalidInput (Field::key_lengths)
// naming the file and, for a bad line, its number and what is allowed.
KeyLengths read_key_lengths(const std::string& path);

}  // namespace flashio::sim
