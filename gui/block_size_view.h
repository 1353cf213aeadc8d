// Block-size view: FLOPs, bytes and runtime against the block size B, on charts sharing the x
// axis (the paper's Figure 2, middle: more FLOPs, fewer HBM accesses, lower runtime until the
// tiles no longer fit or arithmetic dominates). Model curves from sim's closed form, L2-model
// curves when replay_cache has run, bounds dashed, measured rows as points.
#pragma once
#include <QLabel>

#include "gui/chart_panel.h"
#include "gui/workbench_view.h"

namespace flashio::gui {

class BlockSizeView : public WorkbenchView {
  Q_OBJECT
 public:
  explicit BlockSizeView(QWidget* parent = nullptr);
  QString view_name() const override { return QStringLiteral("block"); }
  std::vector<std::pair<QString, QWidget*>> charts() override;
  std::vector<sim::Row> rows() const override;
  std::vector<PlottedRow> plotted_rows() const override;
  void redraw(const ViewInputs& inputs) override;

  ChartPanel* flops_chart() const { return flops_; }
  ChartPanel* bytes_chart() const { return bytes_; }
  ChartPanel* time_chart() const { return time_; }

 private:
  ChartPanel* flops_;
  ChartPanel* bytes_;
  ChartPanel* time_;
  QLabel* note_;
};

}  // namespace flashio::gui
