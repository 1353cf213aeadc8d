// What a tooltip says about a row: its configuration and every known value, exactly.
#pragma once
#include <QString>

#include "sim/row.h"

namespace flashio::gui {

QString row_tooltip(const sim::Row& row);

// Whether a loaded row (measured or peer) is of the problem the panel shows: the same B, H, N,
// d, dtype, causal flag and pass, and a whole-pass (kernel=total) row.
struct ProblemKey {
  int64_t batch, heads, seqlen, headdim;
  sim::DType dtype;
  sim::Pass pass;
  int causal;
};
bool row_matches(const sim::Row& row, const ProblemKey& key);

}  // namespace flashio::gui
