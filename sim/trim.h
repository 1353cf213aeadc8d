// Trimming of text as people type it (option values, hardware files, sizes): the one
// definition of what counts as surrounding blank space.
#pragma once
#include <string_view>

namespace flashio::sim {

// `text` without leading and trailing spaces, tabs, carriage returns and newlines.
std::string_view trim(std::string_view text);

}  // namespace flashio::sim
