// How the workbench names sim's inputs in its messages: by the labels beside its widgets (the
// parameter panel's "N (seqlen)", "M", "block mask"; the tiling view's "Br", "Bc", "row"), never
// by the runner's options, which a person using the window never typed.
#pragma once
#include <exception>
#include <string>
#include <string_view>

#include "sim/errors.h"

namespace flashio::gui {

// The one table from sim's fields to the workbench's labels.
std::string_view field_label(sim::Field field);

// An error as the workbench shows it: "M: 100 B holds 50 elements, ..." for a sim::InvalidInput
// naming a field, what() otherwise.
std::string error_message(const std::exception& error);

}  // namespace flashio::gui
