// PlottedRow: a row behind a chart and where the chart draws it (the rows table's "drawn at").
#pragma once
#include <QString>

#include "sim/row.h"

namespace flashio::gui {

struct PlottedRow {
  QString x_title;  // the x axis's title; empty for a row not drawn against an x
  QString x_text;   // the x in the axis's units ("64", "2 KiB")
  double x = 0;
  sim::Row row;
};

}  // namespace flashio::gui
