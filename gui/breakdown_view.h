// Breakdown view: bytes per tensor (Q, K, V, O, S, P, ℓ/m or LSE, dO, dQ, ...) as stacked bars,
// one bar per algorithm, at the panel's current configuration: standard attention's N×N
// matrices against FlashAttention's re-read Q/O (flash1) or K/V (flash2) tiles. Each tensor has
// its own colour (tensor_color, gui/chart_style.h); the y axis is linear from 0 (the
// segments' heights add) with ticks in B … GB.
#pragma once
#include <QCheckBox>

#include "gui/chart_panel.h"

#include "gui/workbench_view.h"

namespace flashio::gui {

class BreakdownView : public WorkbenchView {
  Q_OBJECT
 public:
  explicit BreakdownView(QWidget* parent = nullptr);
  QString view_name() const override { return QStringLiteral("breakdown"); }
  std::vector<std::pair<QString, QWidget*>> charts() override;
  std::vector<sim::Row> rows() const override;
  void redraw(const ViewInputs& inputs) override;

  ChartPanel* chart_view() const { return view_; }

 private:
  void rebuild();

  ChartPanel* view_;
  QCheckBox* percent_;
  ViewInputs inputs_;
};

}  // namespace flashio::gui
