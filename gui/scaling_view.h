// Scaling view: io against N and against M, log–log, with the fitted slope printed beside
// Theorem 2's (2 in N, −1 in M) and the M = d² crossover of Saha & Ye's bound marked
// (docs/paper.md, "Saha & Ye"). Tilings follow the paper's rule at every point, so
// flash2's Q block grows with M as Theorem 2 assumes.
#pragma once
#include <QLabel>

#include "gui/chart_panel.h"
#include "gui/workbench_view.h"

namespace flashio::gui {

class ScalingView : public WorkbenchView {
  Q_OBJECT
 public:
  explicit ScalingView(QWidget* parent = nullptr);
  QString view_name() const override { return QStringLiteral("scaling"); }
  std::vector<std::pair<QString, QWidget*>> charts() override;
  std::vector<sim::Row> rows() const override;
  std::vector<PlottedRow> plotted_rows() const override;
  void redraw(const ViewInputs& inputs) override;

  ChartPanel* seqlen_chart() const { return seqlen_; }
  ChartPanel* sram_chart() const { return sram_; }
  // io and time of flash2 against split-KV's S (shown for decode-like problems only).
  ChartPanel* splits_chart() const { return splits_; }
  ChartPanel* splits_time_chart() const { return splits_time_; }
  QString fit_text() const { return fits_->text(); }

 private:
  ChartPanel* seqlen_;
  ChartPanel* sram_;
  ChartPanel* splits_;
  ChartPanel* splits_time_;
  QWidget* splits_column_;
  QLabel* fits_;
};

}  // namespace flashio::gui
