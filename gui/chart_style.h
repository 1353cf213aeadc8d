// The charts' visual language (docs/gui.md, "Charts"): one colour per algorithm, one line style
// per source of a number, bounds and markers in styles of their own, and the Breakdown view's
// colour per tensor. Every view takes its colours and pens from here, so a legend entry, a
// series and the docs say the same thing.
#pragma once
#include <QColor>
#include <QPen>

#include "sim/row.h"
#include "sim/tensor.h"

namespace flashio::gui {

// How a series is drawn, by where its numbers come from:
//   model      solid line with points: sim's closed form (the view's main curves)
//   roofline   dotted line: a second closed form beside the first (the roofline time, the
//              FLOP convention 4·B·H·N²·d)
//   l2_model   dash-dot line: the L2 model (sim::replay_cache's DRAM bytes)
//   measured   circles: measured io or time (`flashio profile` rows)
//   measured_dram  squares: measured DRAM bytes
//   bound      dashed line, thinner: a lower bound (sim::bounds), each bound its own colour
//   marker     dash-dot-dot vertical line: a value of the parameters (M = d², the current M)
enum class SeriesKind { model, roofline, l2_model, measured, measured_dram, bound, marker };

// The colour of an algorithm, whatever the source; every peer (PyTorch backend) shares one.
QColor algo_color(sim::RowAlgo algo);
// The colour of a bound (compulsory, theorem2, saha_ye, standard_theta): none is an
// algorithm's colour, and none is a marker's.
QColor bound_color(sim::RowAlgo bound);
// Vertical markers: the Saha–Ye crossover M = d² and the current M.
QColor crossover_marker_color();
QColor current_sram_marker_color();
// The dotted FLOP convention line (not an algorithm's curve).
QColor convention_color();

// The pen of a line kind (model, roofline, l2_model, bound, marker) in `color`.
QPen series_pen(SeriesKind kind, const QColor& color);
bool is_point_kind(SeriesKind kind);  // measured, measured_dram: drawn as markers, no line

// The Breakdown view's colour of a tensor: each has WCAG 2.1 non-text contrast >= 3 against
// the white background and differs from every other by CIE76 ΔE >= 30 (tested), so no bar
// segment is near-white and ℓ, m, LSE and o_accum are told apart.
QColor tensor_color(sim::Tensor tensor);

// WCAG 2.1 contrast ratio of two colours (1 … 21) and CIE76 colour difference in L*a*b*
// (D65), the measures the tests and the palette's comment use.
double contrast_ratio(const QColor& a, const QColor& b);
double delta_e76(const QColor& a, const QColor& b);

}  // namespace flashio::gui
