// Tiling view (teaching): steps through the tiled algorithm's forward pass for a small N
// (16–64) and chosen Br, Bc: the score grid with the current tile, the Q, K, V, O tiles in SRAM,
// the online-softmax statistics of one row, and the running byte tally against standard
// attention. It draws sim::explain's trace (sim/explain.h: the schedule's own tile steps, and the
// row's merge rule on head 0 of random_inputs(problem, seed)), so for the same configuration,
// row and seed it shows the steps, statistics and tallies of `flashio explain`. The panel's
// window, dropout and key padding (the mask, or the lengths file's first length: the traced
// sequence is sequence 0) reach its problem, and what sim cannot trace is shown as sim's refusal.
#pragma once
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QTimer>

#include "gui/workbench_view.h"
#include "sim/explain.h"

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

  // For tests and the command line: choose the teaching problem (order, N, d, Br, Bc, causal).
  void set_teaching(sim::Algo algo, int64_t seqlen, int64_t headdim, int64_t block_r, int64_t block_c,
                    bool causal);
  // The row whose statistics are followed and the seed of Q, K, V (`flashio explain --row
  // --seed`); the seed box holds 0 to 2^31 - 1.
  void set_tracked(int64_t row, uint64_t seed);
  void step();
  void reset();
  void run_to_end();
  int step_index() const { return step_; }  // −1 before the first step
  int step_count() const { return static_cast<int>(trace_.steps.size()); }
  int64_t tally_bytes() const;  // one head's bytes read + written up to this step
  int64_t standard_bytes() const {
    return trace_.standard_read_bytes + trace_.standard_write_bytes;
  }
  const sim::ExplainTrace& trace() const { return trace_; }
  QString error_text() const { return error_->text(); }
  QString status_text() const { return status_->text(); }   // the followed row, under the canvas
  // Why FlashAttention moves more than standard here (sim::more_than_standard_note), or empty.
  QString note_text() const { return note_->text(); }
  QString step_text() const { return transfers_->toPlainText(); }  // this step's transfers

 private:
  void rebuild();
  void show_step();

  QComboBox* algo_;
  QSpinBox* seqlen_;
  QSpinBox* headdim_;
  QSpinBox* block_r_;
  QSpinBox* block_c_;
  QCheckBox* causal_;
  QSpinBox* row_;
  QSpinBox* seed_;
  QPushButton* reset_button_;
  QPushButton* step_button_;
  QPushButton* play_button_;
  QSlider* speed_;
  QLabel* status_;
  QLabel* note_;
  QLabel* error_;
  QPlainTextEdit* transfers_;
  TilingCanvas* canvas_;
  QTimer timer_;

  // dtype, the window, dropout and the key-padding mask from the parameter panel; N, d the view's own.
  sim::Problem base_problem_;
  // The panel's key lengths file: the traced sequence (0, of a batch of one) takes its first length.
  std::string lengths_file_;
  bool varlen_ = false;  // the panel packs the lengths file's sequences (packs_sequences)
  int64_t sram_bytes_ = 0;
  sim::Hardware hw_;
  sim::ExplainTrace trace_;
  int step_ = -1;
  std::vector<sim::Row> rows_;
};

}  // namespace flashio::gui
