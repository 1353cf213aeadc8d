// Trimming of text as people type it (option values, hardware files, sizes): the one
// definition of what counts as surrounding blank space.
#pragma once
#include <string_view>

namespace flashio::sim {

// `text` without leading and trailing spaces, tabs, carriage returns and newlines.
std::string_view trim(std::string_view text);

// `text` without a leading UTF-8 byte-order mark (the bytes EF BB BF), which some editors write
// at the start of a text file. Every reader of a text file (experiment, hardware, block-mask and
// rows files) passes its first line through this, so the mark is never part of a key or cell.
std::string_view without_utf8_bom(std::string_view text);

}  // namespace flashio::sim
