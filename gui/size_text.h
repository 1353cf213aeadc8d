// Sizes as people type and read them: "227KiB" (1024-based), "192KB" (1000-based), "4096" or
// "4096B" (bytes), the same spellings as the runner's --sram. Parsing and formatting are sim's
// (sim/byte_size.h), as QStrings; formatting picks the unit so tooltips stay short, and exact
// values sit beside it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <QString>

namespace flashio::gui {

// nullopt when the text is not a positive whole number of bytes (sim::parse_byte_size).
std::optional<int64_t> parse_size_bytes(const std::string& text);

// "227 KiB", "1.50 MiB", "512 B": sim::format_bytes_binary.
QString format_bytes_binary(double bytes);
// "2.29 GB", "192 KB": sim::format_bytes, as the runner's tables print traffic.
QString format_bytes_decimal(double bytes);
// "1,234,567": every digit, for tooltips ("exact values").
QString format_exact(double value);

// Short forms for axis ticks: `digits` significant digits, trailing zeros dropped, the unit
// chosen so the number is below the unit's base ("1.5 GB", "500 MB", "64 KiB", "79.3 GFLOP",
// "250 µs"). Every chart axis labels its ticks with these (docs/gui.md, "Charts").
QString format_bytes_short(double bytes, int digits = 3);         // B, KB, MB, GB, TB (1000)
QString format_bytes_binary_short(double bytes, int digits = 3);  // B, KiB, MiB, GiB (1024)
QString format_flops_short(double flops, int digits = 3);         // FLOP, kFLOP … PFLOP
QString format_time_ms_short(double time_ms, int digits = 3);     // ns, µs, ms, s

}  // namespace flashio::gui
