#include "gui/parameter_panel.h"

#include <cmath>

#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include "gui/size_spin_box.h"
#include "gui/size_text.h"
#include "sim/hardware.h"

namespace flashio::gui {
namespace {

// The M slider is logarithmic: eight steps per doubling, 256 B to 4 MiB, so the paper's
// range d ≤ M ≤ Nd and every GPU's shared memory sit on one slider.
constexpr int kSliderStepsPerDoubling = 8;
constexpr int kSliderMinLog2 = 8, kSliderMaxLog2 = 22;

int slider_position(int64_t bytes) {
  const double l = std::log2(static_cast<double>(std::max<int64_t>(bytes, 1)));
  return static_cast<int>(std::lround(l * kSliderStepsPerDoubling));
}

QSpinBox* spin(int lo, int hi, int value, const QString& tip) {
  auto* s = new QSpinBox();
  s->setRange(lo, hi);
  s->setValue(value);
  s->setToolTip(tip);
  s->setKeyboardTracking(false);  // recompute on Enter or focus change, not every keystroke
  return s;
}

const sim::Algo kAlgos[4] = {sim::Algo::standard, sim::Algo::flash1, sim::Algo::flash2,
                             sim::Algo::blocksparse};

}  // namespace

ParameterPanel::ParameterPanel(QWidget* parent) : QWidget(parent) {
  batch_ = spin(1, 4096, 64, "B: batch size");
  heads_ = spin(1, 1024, 16, "H: heads");
  seqlen_ = spin(1, 1 << 20, 1024, "N: sequence length");
  headdim_ = spin(1, 1024, 64, "d: head dimension");
  dtype_ = new QComboBox();
  for (auto t : {sim::DType::fp16, sim::DType::bf16, sim::DType::fp32})
    dtype_->addItem(QString::fromStdString(sim::to_string(t)));
  pass_ = new QComboBox();
  for (auto p : {sim::Pass::fwd, sim::Pass::bwd, sim::Pass::fwdbwd})
    pass_->addItem(QString::fromStdString(sim::to_string(p)));
  causal_ = new QCheckBox("causal");

  hw_ = new QComboBox();
  for (const auto& name : sim::hardware_preset_names()) hw_->addItem(QString::fromStdString(name));
  hw_->setCurrentText("h200");

  sram_ = new SizeSpinBox();
  sram_->setRange(1, 1 << 30);
  sram_->setValue(232448);
  sram_->setToolTip("M: shared memory one thread block may use: bytes, or a size with its unit "
                    "(227KiB, 192KB, as --sram takes them)");
  sram_->setKeyboardTracking(false);
  sram_slider_ = new QSlider(Qt::Horizontal);
  sram_slider_->setRange(kSliderMinLog2 * kSliderStepsPerDoubling,
                         kSliderMaxLog2 * kSliderStepsPerDoubling);
  sram_slider_->setToolTip("M on a log scale (256 B to 4 MiB)");
  sram_label_ = new QLabel();
  sram_label_->setWordWrap(true);
  auto* preset_m = new QPushButton("preset M");
  preset_m->setToolTip("Set M to the hardware preset's shared memory per block");

  for (int k = 0; k < 4; ++k) {
    algos_[k] = new QCheckBox(QString::fromStdString(sim::to_string(kAlgos[k])));
    algos_[k]->setChecked(k < 3);
  }
  block_mask_ = new QLineEdit("banded:2");
  block_mask_->setToolTip("blocksparse's block mask, on blocks of 128 × 128 tokens whatever the tiling "
                          "(@T for T × T: banded:1@16 at small N): banded:W (|bi − bj| ≤ W) or random:DENSITY[:SEED]");

  sweep_min_ = spin(1, 65536, 16, "smallest block size of the sweep");
  sweep_max_ = spin(1, 65536, 512, "largest block size of the sweep (doubling from the smallest)");
  shape_ = new QComboBox();
  shape_->addItem("outer block = B, other min(B, d)", "outer");
  shape_->addItem("square: Br = Bc = B", "square");
  shape_->addItem("Bc = B, Br fixed", "block-c");
  shape_->addItem("Br = B, Bc fixed", "block-r");
  block_r_ = spin(0, 65536, 0, "Br of the current tiling (breakdown, fixed sweeps); 0: the paper's rule");
  block_c_ = spin(0, 65536, 0, "Bc of the current tiling (breakdown, fixed sweeps); 0: the paper's rule");
  block_r_->setSpecialValueText("rule");
  block_c_->setSpecialValueText("rule");

  auto* problem = new QGroupBox("Problem");
  auto* pf = new QFormLayout(problem);
  // Two fields a row, so that the whole panel fits the default window's height.
  auto pair = [](QWidget* a, const QString& b_label, QWidget* b) {
    auto* row = new QHBoxLayout();
    row->addWidget(a, 1);
    row->addWidget(new QLabel(b_label));
    row->addWidget(b, 1);
    return row;
  };
  pf->addRow("B (batch)", pair(batch_, "H (heads)", heads_));
  pf->addRow("N (seqlen)", pair(seqlen_, "d (headdim)", headdim_));
  pf->addRow("dtype", pair(dtype_, "pass", pass_));
  pf->addRow("", causal_);

  auto* hardware = new QGroupBox("Hardware and SRAM size M");
  auto* hf = new QFormLayout(hardware);
  hf->addRow("preset", hw_);
  auto* m_row = new QHBoxLayout();
  m_row->addWidget(sram_, 1);
  m_row->addWidget(preset_m);
  hf->addRow("M", m_row);
  hf->addRow(sram_slider_);
  hf->addRow(sram_label_);

  auto* algos = new QGroupBox("Algorithms");
  auto* af = new QVBoxLayout(algos);
  for (auto* a : algos_) af->addWidget(a);
  auto* mask_row = new QFormLayout();
  mask_row->addRow("block mask", block_mask_);
  af->addLayout(mask_row);

  auto* blocks = new QGroupBox("Block sizes");
  auto* bf = new QFormLayout(blocks);
  auto* range = new QHBoxLayout();
  range->addWidget(sweep_min_);
  range->addWidget(new QLabel("to"));
  range->addWidget(sweep_max_);
  bf->addRow("sweep B", range);
  bf->addRow("shape", shape_);
  auto* tiling = new QHBoxLayout();
  tiling->addWidget(new QLabel("Br"));
  tiling->addWidget(block_r_);
  tiling->addWidget(new QLabel("Bc"));
  tiling->addWidget(block_c_);
  bf->addRow("tiling", tiling);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(problem);
  layout->addWidget(hardware);
  layout->addWidget(algos);
  layout->addWidget(blocks);
  layout->addStretch(1);

  for (QSpinBox* s : {batch_, heads_, seqlen_, headdim_, sweep_min_, sweep_max_, block_r_, block_c_})
    connect(s, &QSpinBox::valueChanged, this, &ParameterPanel::emit_changed);
  for (QComboBox* c : {dtype_, pass_, shape_})
    connect(c, &QComboBox::currentIndexChanged, this, &ParameterPanel::emit_changed);
  connect(dtype_, &QComboBox::currentIndexChanged, this, &ParameterPanel::sync_sram_label);
  connect(headdim_, &QSpinBox::valueChanged, this, &ParameterPanel::sync_sram_label);
  connect(causal_, &QCheckBox::toggled, this, &ParameterPanel::emit_changed);
  for (auto* a : algos_) connect(a, &QCheckBox::toggled, this, &ParameterPanel::emit_changed);
  connect(block_mask_, &QLineEdit::editingFinished, this, &ParameterPanel::emit_changed);
  connect(hw_, &QComboBox::currentTextChanged, this, [this](const QString& name) {
    sram_->setValue(static_cast<int>(sim::hardware_preset(name.toStdString()).sram_bytes));
    emit_changed();
  });
  connect(preset_m, &QPushButton::clicked, this, [this] {
    sram_->setValue(static_cast<int>(sim::hardware_preset(hw_->currentText().toStdString()).sram_bytes));
  });
  connect(sram_slider_, &QSlider::valueChanged, this, &ParameterPanel::on_sram_slider);
  connect(sram_, &QSpinBox::valueChanged, this, &ParameterPanel::on_sram_box);
  on_sram_box(sram_->value());
}

QCheckBox* ParameterPanel::algo_box(sim::Algo algo) const {
  for (int k = 0; k < 4; ++k)
    if (kAlgos[k] == algo) return algos_[k];
  return nullptr;
}

void ParameterPanel::on_sram_slider(int position) {
  // A slider step lands on a whole multiple of 256 B (of 1 KiB above 64 KiB), as M is quoted.
  const double bytes = std::exp2(static_cast<double>(position) / kSliderStepsPerDoubling);
  const double unit = bytes >= 65536 ? 1024 : 256;
  const int64_t rounded = static_cast<int64_t>(std::max(unit, std::round(bytes / unit) * unit));
  if (slider_position(sram_->value()) == position) return;  // the box already says this
  sram_->setValue(static_cast<int>(rounded));
}

void ParameterPanel::on_sram_box(int bytes) {
  {
    const QSignalBlocker block(sram_slider_);
    sram_slider_->setValue(slider_position(bytes));
  }
  sync_sram_label();
  emit_changed();
}

void ParameterPanel::sync_sram_label() {
  const auto dtype = sim::parse_dtype(dtype_->currentText().toStdString()).value_or(sim::DType::fp16);
  const int64_t e = sim::element_bytes(dtype);
  const int64_t elements = sram_->value() / e;
  const int64_t d = headdim_->value();
  sram_label_->setText(QStringLiteral("%1 = %2 %3 elements (M/d² = %4)")
                           .arg(format_bytes_binary(sram_->value()),
                                format_exact(static_cast<double>(elements)), dtype_->currentText())
                           .arg(static_cast<double>(elements) / static_cast<double>(d * d), 0, 'f', 2));
}

void ParameterPanel::emit_changed() {
  if (!quiet_) Q_EMIT params_changed();
}

WorkbenchParams ParameterPanel::params() const {
  WorkbenchParams p;
  p.problem.batch = batch_->value();
  p.problem.heads = heads_->value();
  p.problem.seqlen = seqlen_->value();
  p.problem.headdim = headdim_->value();
  p.problem.dtype = sim::parse_dtype(dtype_->currentText().toStdString()).value_or(sim::DType::fp16);
  p.problem.pass = sim::parse_pass(pass_->currentText().toStdString()).value_or(sim::Pass::fwd);
  p.problem.causal = causal_->isChecked();
  p.hw_name = hw_->currentText().toStdString();
  p.sram_bytes = sram_->value();
  p.algos.clear();
  for (int k = 0; k < 4; ++k)
    if (algos_[k]->isChecked()) p.algos.push_back(kAlgos[k]);
  p.block_mask = block_mask_->text().toStdString();
  p.sweep_min = sweep_min_->value();
  p.sweep_max = sweep_max_->value();
  p.shape = parse_sweep_shape(shape_->currentData().toString().toStdString()).value_or(SweepShape::outer);
  p.block_r = block_r_->value();
  p.block_c = block_c_->value();
  return p;
}

void ParameterPanel::set_params(const WorkbenchParams& p) {
  quiet_ = true;
  batch_->setValue(static_cast<int>(p.problem.batch));
  heads_->setValue(static_cast<int>(p.problem.heads));
  seqlen_->setValue(static_cast<int>(p.problem.seqlen));
  headdim_->setValue(static_cast<int>(p.problem.headdim));
  dtype_->setCurrentText(QString::fromStdString(sim::to_string(p.problem.dtype)));
  pass_->setCurrentText(QString::fromStdString(sim::to_string(p.problem.pass)));
  causal_->setChecked(p.problem.causal);
  hw_->setCurrentText(QString::fromStdString(p.hw_name));
  sram_->setValue(static_cast<int>(p.sram_bytes > 0 ? p.sram_bytes
                                                    : sim::hardware_preset(p.hw_name).sram_bytes));
  for (int k = 0; k < 4; ++k) algos_[k]->setChecked(p.shows(kAlgos[k]));
  block_mask_->setText(QString::fromStdString(p.block_mask));
  sweep_min_->setValue(static_cast<int>(p.sweep_min));
  sweep_max_->setValue(static_cast<int>(p.sweep_max));
  shape_->setCurrentIndex(shape_->findData(QString::fromStdString(to_string(p.shape))));
  block_r_->setValue(static_cast<int>(p.block_r));
  block_c_->setValue(static_cast<int>(p.block_c));
  quiet_ = false;
  sync_sram_label();
  Q_EMIT params_changed();
}

}  // namespace flashio::gui
