// Sizes as people type and read them: one parser for the runner's --sram, hardware files and
// the GUI, and the formatters that print sizes in the same spellings. Plain bytes ("232448",
// "232448B"), 1024-based KiB, MiB, GiB and 1000-based KB (or kB), MB, GB (experiments/README.md,
// `--sram`). A decimal value is allowed when it names whole bytes ("1.5KiB"). The formatters
// write "KB", the spelling the docs use.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace flashio::sim {

// What the parser accepts, for error messages.
inline constexpr const char* kByteSizeSyntax =
    "a size in bytes, or with a unit: KiB, MiB, GiB (1024-based), KB, MB, GB (1000-based)";

struct ByteSizeParse {
  std::optional<int64_t> bytes;  // set when the text is a valid size
  std::string error;             // why not, otherwise ("expected ...", "too large", ...)
};
ByteSizeParse parse_byte_size(std::string_view text);

// Three significant digits (whole bytes below the first unit) in a unit parse_byte_size reads.
// "1.50 GB", "192 KB": 1000-based, for traffic, quoted as bandwidths and HBM traffic are, so
// bytes / (GB/s) reads off directly.
std::string format_bytes(double bytes);
// "227 KiB", "1.50 MiB": 1024-based, for shared memory and caches, quoted in KiB.
std::string format_bytes_binary(double bytes);

// "227 KiB", "192 KB", "1000001 B": the largest unit that divides `bytes` exactly, so
// parse_byte_size reads the text back to the same bytes (an SRAM size as it was given).
std::string format_size(int64_t bytes);

}  // namespace flashio::sim
