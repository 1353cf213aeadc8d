// ParameterPanel: the left-hand panel (problem, hardware, M, algorithms, block-size range).
// It emits params_changed on every edit; the main window recomputes off the GUI thread. The
// problem's fields include the shapes people serve (docs/shapes.md): K/V heads Hkv and keys Nk
// ("= H" and "= N" at their lowest value, 0, which sim reads as "the same"), whether a forward
// block packs a K/V group's query heads, and a one-click decoding preset; the window, dropout
// ("none" at 0) and the key-padding mask (the built-in lengths); the key lengths file and whether
// its sequences are packed (varlen, greyed out without a file); beside the tiling, the forward
// kernel's family; a problem sim refuses is named under the fields by the panel's labels.
#pragma once
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QWidget>

#include "gui/workbench_params.h"

namespace flashio::gui {

class ParameterPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ParameterPanel(QWidget* parent = nullptr);

  WorkbenchParams params() const;
  // Sets every widget without emitting params_changed for each; emits once at the end.
  void set_params(const WorkbenchParams& params);

  // The widgets, for tests that drive the panel the way a person would.
  QSpinBox* batch_box() const { return batch_; }
  QSpinBox* heads_box() const { return heads_; }
  QSpinBox* seqlen_box() const { return seqlen_; }
  QSpinBox* kv_heads_box() const { return kv_heads_; }
  QSpinBox* seqlen_k_box() const { return seqlen_k_; }
  QCheckBox* gqa_pack_box() const { return gqa_pack_; }
  QSpinBox* splits_box() const { return splits_; }
  QSpinBox* page_size_box() const { return page_size_; }
  QLineEdit* lengths_file_box() const { return lengths_file_; }
  QCheckBox* varlen_box() const { return varlen_; }  // packed (varlen); greyed out without a lengths file
  QCheckBox* causal_box() const { return causal_; }
  QSpinBox* window_left_box() const { return window_left_; }
  QSpinBox* window_right_box() const { return window_right_; }
  QDoubleSpinBox* dropout_box() const { return dropout_; }  // "none" at 0
  QCheckBox* mask_box() const { return mask_; }             // the built-in key lengths
  QPushButton* decode_button() const { return decode_; }
  // sim's reason (by the panel's labels) when the problem cannot exist; empty when it can.
  QString problem_error_text() const { return problem_error_->text(); }
  QSpinBox* headdim_box() const { return headdim_; }
  QSpinBox* sram_box() const { return sram_; }
  QSpinBox* block_r_box() const { return block_r_; }
  QSpinBox* block_c_box() const { return block_c_; }
  QComboBox* kernel_box() const { return kernel_; }  // the forward's family: default, mma_sync, wgmma, wgmma_ws
  QSlider* sram_slider() const { return sram_slider_; }
  QCheckBox* algo_box(sim::Algo algo) const;

 Q_SIGNALS:
  void params_changed();

 private:
  void sync_sram_label();
  void on_sram_slider(int position);
  void on_sram_box(int bytes);
  void emit_changed();
  void sync_problem_error();
  void sync_gqa_pack_enabled();
  void sync_varlen_enabled();

  QSpinBox *batch_, *heads_, *seqlen_, *headdim_, *kv_heads_, *seqlen_k_;
  QCheckBox* gqa_pack_;
  QSpinBox* splits_;
  QSpinBox* page_size_;
  QLineEdit* lengths_file_;
  QCheckBox* varlen_;
  QPushButton* decode_;
  QLabel* problem_error_;
  QComboBox *dtype_, *pass_, *hw_, *shape_, *kernel_;
  QCheckBox* causal_;
  QSpinBox* window_left_;   // −1 ("none"): unbounded
  QSpinBox* window_right_;
  QDoubleSpinBox* dropout_;  // 0 ("none") … 0.99
  QCheckBox* mask_;
  QSpinBox* sram_;
  QSlider* sram_slider_;
  QLabel* sram_label_;
  QCheckBox* algos_[4];
  QLineEdit* block_mask_;
  QSpinBox *sweep_min_, *sweep_max_, *block_r_, *block_c_;
  bool quiet_ = false;
};

}  // namespace flashio::gui
