// Sizes as people type them, one parser for the runner's --sram and the GUI's M box (hardware
// files read plain integers, sim/hardware.cpp, so `sram_bytes = 227KiB` is refused there):
// plain bytes ("232448", "232448B"), 1024-based KiB, MiB, GiB and 1000-based KB (or kB), MB, GB
// (experiments/README.md, "Options"). A decimal value is allowed when it names whole bytes
// ("1.5KiB").
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

}  // namespace flashio::sim
