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

}  // namespace flashio::gui
