// Reading a text file the user names (experiment, hardware, block-mask and rows files): the one
// way each reader opens its file. The read is bounded, so a path to /dev/zero or /dev/urandom,
// or a file far larger than its kind ever is, is refused by name in well under a second instead
// of hanging or exhausting memory; a directory is refused by name (it would read as an empty
// file). A pipe (`--config <(…)`) or /dev/stdin is read like a file. A leading UTF-8
// byte-order mark is dropped (sim/trim.h).
#pragma once
#include <cstdint>
#include <string>

namespace flashio::sim {

// The largest text files read (docs/architecture.md, "Limits"). Experiment and hardware files
// are a few dozen `key = value` lines.
inline constexpr int64_t kMaxSettingsFileBytes = int64_t{1} << 20;
// A block-mask file is ⌈N/T⌉ lines of ⌈N/T⌉ characters (sim/limits.h bounds their product by
// 2^26) plus line ends, so 2^27 bytes leave room for comments.
inline constexpr int64_t kMaxMaskFileBytes = int64_t{1} << 27;
// A rows csv (flashio's own output, read by compare): about 500,000 rows.
inline constexpr int64_t kMaxRowsFileBytes = int64_t{1} << 27;

struct TextFile {
  std::string text;     // the file's bytes, without a leading byte-order mark
  std::string problem;  // empty when read; else why not, as a phrase ("is a directory")
};

// Reads all of `path`, refusing (TextFile::problem) a directory, an unreadable file or one of
// more than `max_bytes` bytes.
TextFile read_text_file(const std::string& path, int64_t max_bytes);

}  // namespace flashio::sim
