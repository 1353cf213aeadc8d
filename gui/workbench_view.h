// WorkbenchView: what the main window needs from each view: its charts (for export), the rows
// behind them (for the table and CSV export), and a redraw from the latest data.
#pragma once
#include <memory>
#include <utility>
#include <vector>

#include <QString>
#include <QWidget>

#include "gui/plotted_row.h"
#include "gui/workbench_data.h"
#include "sim/row.h"

namespace flashio::gui {

// Everything a view draws from: sim's closed-form data, L2-model rows when they are ready
// (source=cache, x = block size), and rows loaded from results files.
struct ViewInputs {
  std::shared_ptr<const WorkbenchData> data;
  std::shared_ptr<const std::vector<PlotRow>> cache_rows;  // null until computed
  std::shared_ptr<const std::vector<sim::Row>> loaded_rows;
  bool cache_pending = false;  // the L2-model curves are being computed
};

class WorkbenchView : public QWidget {
  Q_OBJECT
 public:
  using QWidget::QWidget;
  virtual QString view_name() const = 0;  // --view NAME: block, scaling, breakdown, tiling
  virtual std::vector<std::pair<QString, QWidget*>> charts() = 0;
  virtual std::vector<sim::Row> rows() const = 0;
  // The table's rows: rows() with the x each is drawn at, where the view draws against an x.
  virtual std::vector<PlottedRow> plotted_rows() const {
    std::vector<PlottedRow> out;
    for (sim::Row& r : rows()) out.push_back({{}, {}, 0, std::move(r)});
    return out;
  }
  virtual void redraw(const ViewInputs& inputs) = 0;

 Q_SIGNALS:
  void rows_changed();
};

}  // namespace flashio::gui
