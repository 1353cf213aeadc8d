// Tiling view (teaching): steps through the tiled algorithm for a small N (16–64) and chosen
// Br, Bc: the score grid with the current tile, the Q, K, V, O tiles in SRAM, the running max
// and sum of one row (online softmax), and the running byte tally against standard attention.
// Driven by sim's schedule (gui/tiling_trace.h), so flash1 and flash2 show their real orders.
#pragma once
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QTimer>

#include "gui/tiling_trace.h"
#include "gui/workbench_view.h"

namespace flashio::gui {

class TilingCanvas;

class TilingView : public WorkbenchView {
  Q_OBJECT
 public:
  explicit TilingView(QWidget* parent = nullptr);
  QString view_name() const override { return QStringLiteral("tiling"); }
  std::vector<std::pair<QString, QWidget*>> charts() override;
  std::vector<sim::Row> rows() const override { return rows_; }
  void redraw(const ViewInputs& inputs) override;

  // For tests and the command line: choose the teaching problem (N, Br, Bc, causal, order).
  void set_teaching(sim::Algo algo, int64_t seqlen, int64_t block_r, int64_t block_c, bool causal);
  void step();
  void reset();
  void run_to_end();
  int step_index() const { return step_; }  // −1 before the first step
  int step_count() const { return static_cast<int>(trace_.steps.size()); }
  int64_t tally_bytes() const;
  int64_t standard_bytes() const { return standard_bytes_; }
  const TilingTrace& trace() const { return trace_; }
  QString error_text() const { return error_->text(); }

 private:
  void rebuild();
  void show_step();

  QComboBox* algo_;
  QSpinBox* seqlen_;
  QSpinBox* block_r_;
  QSpinBox* block_c_;
  QCheckBox* causal_;
  QSpinBox* row_;
  QPushButton* reset_button_;
  QPushButton* step_button_;
  QPushButton* play_button_;
  QSlider* speed_;
  QLabel* status_;
  QLabel* error_;
  QPlainTextEdit* transfers_;
  TilingCanvas* canvas_;
  QTimer timer_;

  sim::Problem base_problem_;  // d, dtype from the parameter panel
  int64_t sram_bytes_ = 0;
  sim::Hardware hw_;
  TilingTrace trace_;
  RowStats row_stats_;
  int64_t standard_bytes_ = 0;
  int step_ = -1;
  std::vector<sim::Row> rows_;
};

}  // namespace flashio::gui
