// Bounds beside the counts (source=bound rows): Theorem 2's Θ(N²d²/M) with the schedule's
// constant, the compulsory traffic (inputs read once, outputs written once), the Saha–Ye shape
// Θ(min(N²d²/M, N²d/√M)), and standard attention's Θ(Nd + N²). All in bytes of the problem's
// type, for the whole problem (B·H heads) and its pass.
#pragma once
#include <string>
#include <vector>

#include "sim/config.h"
#include "sim/row_identity.h"

namespace flashio::sim {

struct Row;

struct Bound {
  RowAlgo algo;         // the row's algo column: compulsory, theorem2, saha_ye, standard_theta
  std::string formula;  // how it was computed, for tables and tooltips
  double read_bytes = 0;
  double write_bytes = 0;
  double total_bytes() const { return read_bytes + write_bytes; }
};

std::vector<Bound> bounds(const Config& config);
std::vector<Row> bound_rows(const Config& config);

}  // namespace flashio::sim
