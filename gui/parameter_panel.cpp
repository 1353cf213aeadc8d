#include "gui/parameter_panel.h"

#include <algorithm>
#include <cmath>

#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include "gui/field_label.h"
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

QString label(sim::Field field) {
  const std::string_view text = field_label(field);
  return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

// Hkv and Nk at their lowest value, 0: sim's "the same as H / N" (sim/problem.h), shown as such
// so that 0 is never a value a person reads.
QSpinBox* same_as_spin(int hi, const QString& same_text, const QString& tip) {
  QSpinBox* s = spin(0, hi, 0, tip);
  s->setSpecialValueText(same_text);
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
  kv_heads_ = same_as_spin(
      1024, "= H",
      "Hkv: K/V heads (grouped-query attention). Each K/V head is shared by H / Hkv query heads, "
      "so Hkv must divide H; 1 is multi-query attention. \"= H\" (the lowest value): a K/V head "
      "per query head.");
  seqlen_k_ = same_as_spin(
      1 << 20, "= N",
      "Nk: keys per head; N is then the queries per head (Nq). Decoding is N = 1 against a cache "
      "of Nk keys. Causal is aligned bottom-right, as FlashAttention does: query i sees the keys "
      "j <= i + Nk - N, so the last query sees every key and causal needs Nk >= N. \"= N\" (the "
      "lowest value): square attention.");
  gqa_pack_ = new QCheckBox("pack a group's query heads");
  gqa_pack_->setChecked(true);
  gqa_pack_->setToolTip(
      "With Hkv < H: a forward thread block takes the rows of all H / Hkv query heads of a K/V "
      "head's group, so each K/V tile is read once for the group (FlashAttention's PackGQA). "
      "Unticked: a block takes one query head's rows, and every query head reads its group's K "
      "and V again (their io H / Hkv times the packed one). The backward's dK, dV kernels always "
      "take the group's rows. No effect without grouping (Hkv = H), where it is greyed out.");
  splits_ = spin(
      0, 128, 1,
      "S: split-KV (flash2's forward only). Each row tile's key tiles are split into S chunks of "
      "ceil(Tc / S) tiles, each run by a thread block of its own that writes a partial O and lse "
      "(fp32); a combine kernel then merges the partial results. More blocks fill the GPU when "
      "B·H·Tr is small (decoding), at the cost of the partials' io. At most Tc = ceil(Nk / Bc): "
      "where a tiling has fewer key tiles than asked (the block-size view's larger Bc), it runs "
      "one split per key tile, so no view shows a refused configuration. Other algorithms and "
      "the backward run one split. \"auto\" (the lowest value): FlashAttention's heuristic "
      "(sim::auto_splits), chosen for each configuration.");
  splits_->setSpecialValueText("auto");
  page_size_ = spin(
      0, 4096, 0,
      "P: a paged KV cache (flash2's forward only, pass fwd). K and V lie in pages of P tokens (a "
      "multiple of 16), each sequence's found through a block table, as inference servers keep "
      "their caches; every K/V tile first reads the table entries of the pages it touches (P < "
      "Bc: several; a page holding whole tiles: one), 4 bytes each. Other algorithms and passes "
      "read the contiguous cache. \"contiguous\" (0): no paging.");
  page_size_->setSpecialValueText("contiguous");
  page_size_->setSingleStep(16);
  decode_ = new QPushButton("decode preset");
  decode_->setToolTip("Decoding: one new token per sequence against a 32,768-token K/V cache with "
                      "grouped-query heads (Llama-3-8B's shape): B = 8, H = 32, Hkv = 8, N = 1, "
                      "Nk = 32,768, d = 128; dtype, pass, causal, hardware, M, algorithms and "
                      "blocks are kept");
  problem_error_ = new QLabel();
  problem_error_->setWordWrap(true);
  problem_error_->setStyleSheet("color: #b00");  // the tiling view's error colour
  problem_error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  problem_error_->setVisible(false);
  dtype_ = new QComboBox();
  for (auto t : {sim::DType::fp16, sim::DType::bf16, sim::DType::fp32})
    dtype_->addItem(QString::fromStdString(sim::to_string(t)));
  pass_ = new QComboBox();
  for (auto p : {sim::Pass::fwd, sim::Pass::bwd, sim::Pass::fwdbwd})
    pass_->addItem(QString::fromStdString(sim::to_string(p)));
  causal_ = new QCheckBox("causal");
  causal_->setToolTip("Causal: query i sees keys j <= i + Nk - N (the same attention as window right = 0)");
  const char* window_help =
      "A sliding window (local attention): query i sees keys i + Nk - N - L ... i + Nk - N + R, so each "
      "query its L keys before its own position and R after. Tiles wholly outside the band are skipped "
      "(the tiling view greys them), so io grows with N·(L + R + tile) instead of N². \"none\": that side "
      "unbounded. Causal is R = 0 (give causal or R, not both).";
  window_left_ = spin(-1, 1 << 20, -1, window_help);
  window_left_->setSpecialValueText("none");
  window_right_ = spin(-1, 1 << 20, -1, window_help);
  window_right_->setSpecialValueText("none");
  dropout_ = new QDoubleSpinBox();
  dropout_->setRange(0.0, kMaxDropout);
  dropout_->setDecimals(kDropoutDecimals);
  dropout_->setSingleStep(0.05);
  dropout_->setValue(0.0);
  dropout_->setSpecialValueText("none");
  dropout_->setKeyboardTracking(false);
  dropout_->setToolTip(
      "p: the probability of dropping an attention probability (an element of P), the kept ones scaled by "
      "1 / (1 - p). Standard attention runs it as separate passes over P in HBM; flash1 and flash2 fuse it "
      "into their tiles (the same bytes, extra CUDA-core work for the keep decisions). p is rounded to a "
      "multiple of 2^-16 by the kernels' rule (kernels/dropout_keep.h: 0.1 drops with 6554 / 65536). "
      "\"none\" (0): no dropout.");
  mask_ = new QCheckBox("key-padding mask (built-in lengths)");
  mask_->setToolTip(
      "The paper's benchmark mask: sequence b of the batch keeps its first N - floor(b·N / (2B)) keys, the "
      "rest padding. Standard attention masks S in a separate pass; flash1 and flash2 skip the keys past each "
      "sequence's length (tiles wholly past it are not visited). Or give per-sequence lengths in the key "
      "lengths file box.");

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
  lengths_file_ = new QLineEdit();
  lengths_file_->setPlaceholderText("every sequence Nk keys");
  lengths_file_->setToolTip(
      "Per-sequence key lengths (flash1 and flash2, forward and backward): a file of one key length per line, "
      "one line per sequence (B of them, each 1 to Nk), as a KV cache whose sequences differ in length or a "
      "padded batch. Each sequence visits only its own key tiles; causal aligns its last query with its last "
      "key. Empty: every sequence has Nk keys. Packed (varlen), beside it, packs the sequences without padding.");
  varlen_ = new QCheckBox("packed (varlen)");
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
  kernel_ = new QComboBox();
  kernel_->addItem("default", QStringLiteral("default"));  // parse_mma_kind's nullopt
  for (auto m : {sim::MmaKind::mma_sync, sim::MmaKind::wgmma, sim::MmaKind::wgmma_ws})
    kernel_->addItem(QString::fromStdString(sim::to_string(m)), QString::fromStdString(sim::to_string(m)));
  kernel_->setToolTip(
      "The forward kernel's family (--kernel): mma_sync (one warp's mma.sync), wgmma (Hopper's warpgroup mma) "
      "or wgmma_ws (warp-specialised, FlashAttention-3's structure: dense attention only, not with the "
      "padding mask, dropout, a window's left side, split-KV, a page size, key lengths, packing or a block "
      "mask). The views model that family's built kernel at each tiling, and sim leaves out (with its "
      "reason) a tiling that has none; standard has no family, and the backward's is not asked for (wgmma at its "
      "default tiling for dense attention, else mma_sync). "
      "\"default\": each tiling's first built kernel that runs the problem.");

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
  // Labels from field_label (sim's errors name the fields by them). Each query-side count sits
  // beside its key-side one: H beside Hkv, N beside Nk.
  using sim::Field;
  pf->addRow(label(Field::batch), pair(batch_, label(Field::headdim), headdim_));
  pf->addRow(label(Field::heads), pair(heads_, label(Field::kv_heads), kv_heads_));
  pf->addRow(label(Field::seqlen), pair(seqlen_, label(Field::seqlen_k), seqlen_k_));
  pf->addRow("dtype", pair(dtype_, "pass", pass_));
  auto* causal_row = new QHBoxLayout();
  causal_row->addWidget(causal_, 1);
  causal_row->addWidget(decode_);
  pf->addRow("", causal_row);
  pf->addRow(label(Field::window_left), pair(window_left_, label(Field::window_right), window_right_));
  pf->addRow("", gqa_pack_);
  pf->addRow(label(Field::splits), pair(splits_, label(Field::page_size), page_size_));
  auto* dropout_row = new QHBoxLayout();
  dropout_row->addWidget(dropout_, 1);
  dropout_row->addWidget(mask_, 2);
  pf->addRow(label(Field::dropout), dropout_row);
  auto* lengths_row = new QHBoxLayout();
  lengths_row->addWidget(lengths_file_, 1);
  lengths_row->addWidget(varlen_);
  pf->addRow(label(Field::key_lengths), lengths_row);
  pf->addRow(problem_error_);

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
  bf->addRow(label(sim::Field::kernel_impl), kernel_);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(problem);
  layout->addWidget(hardware);
  layout->addWidget(algos);
  layout->addWidget(blocks);
  layout->addStretch(1);

  for (QSpinBox* s : {batch_, heads_, seqlen_, headdim_, kv_heads_, seqlen_k_, sweep_min_, sweep_max_,
                      block_r_, block_c_, splits_, page_size_, window_left_, window_right_})
    connect(s, &QSpinBox::valueChanged, this, &ParameterPanel::emit_changed);
  for (QSpinBox* s : {heads_, kv_heads_})
    connect(s, &QSpinBox::valueChanged, this, &ParameterPanel::sync_gqa_pack_enabled);
  connect(gqa_pack_, &QCheckBox::toggled, this, &ParameterPanel::emit_changed);
  connect(decode_, &QPushButton::clicked, this, [this] { set_params(decode_preset(params())); });
  for (QComboBox* c : {dtype_, pass_, shape_, kernel_})
    connect(c, &QComboBox::currentIndexChanged, this, &ParameterPanel::emit_changed);
  connect(dtype_, &QComboBox::currentIndexChanged, this, &ParameterPanel::sync_sram_label);
  connect(headdim_, &QSpinBox::valueChanged, this, &ParameterPanel::sync_sram_label);
  connect(causal_, &QCheckBox::toggled, this, &ParameterPanel::emit_changed);
  connect(mask_, &QCheckBox::toggled, this, &ParameterPanel::emit_changed);
  connect(dropout_, &QDoubleSpinBox::valueChanged, this, &ParameterPanel::emit_changed);
  for (auto* a : algos_) connect(a, &QCheckBox::toggled, this, &ParameterPanel::emit_changed);
  connect(block_mask_, &QLineEdit::editingFinished, this, &ParameterPanel::emit_changed);
  connect(lengths_file_, &QLineEdit::editingFinished, this, &ParameterPanel::emit_changed);
  connect(lengths_file_, &QLineEdit::textChanged, this, &ParameterPanel::sync_varlen_enabled);
  connect(varlen_, &QCheckBox::toggled, this, &ParameterPanel::emit_changed);
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
  sync_gqa_pack_enabled();
  sync_varlen_enabled();
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
  if (quiet_) return;
  sync_problem_error();
  Q_EMIT params_changed();
}

void ParameterPanel::sync_problem_error() {
  // sim decides what can exist (Hkv dividing H, causal with Nk >= N, a lengths file that fits, what
  // packing its sequences allows: validate_panel_problem); the panel only says it,
  // at once, beside the fields that set it. The views show no numbers for such a problem
  // (compute_workbench computes none).
  QString error;
  try {
    validate_panel_problem(params());
  } catch (const sim::InvalidInput& invalid) {
    error = QString::fromStdString(error_message(invalid));
  }
  problem_error_->setText(error);
  problem_error_->setVisible(!error.isEmpty());
}

void ParameterPanel::sync_gqa_pack_enabled() {
  // Packing changes the schedule only where query heads share a K/V head.
  const int kv_heads = kv_heads_->value();
  gqa_pack_->setEnabled(kv_heads > 0 && kv_heads != heads_->value());
}

void ParameterPanel::sync_varlen_enabled() {
  // Packing needs sequences to pack: the lengths file's. Without one the box keeps its tick (as
  // packing keeps its own where Hkv = H) and packs nothing (packs_sequences).
  static const QString what =
      "Packed (varlen): the key lengths file's sequences one after another without padding, as "
      "FlashAttention-2's varlen API packs them (cumulative offsets): sequence b has n_b = its length "
      "queries and keys, and no tile of padding is read, computed or written. Unticked: the padded (B, H, "
      "N, d) layout, the lengths being key padding (each sequence's N queries against its first n_b keys). "
      "flash2 only (the other algorithms are left out with sim's reason), with Nk = N and without dropout, "
      "the mask, a window, split-KV or a page size. The breakdown shows flash2's padded bytes beside "
      "the packed ones.";
  const bool has_file = !lengths_file_->text().trimmed().isEmpty();
  varlen_->setEnabled(has_file);
  varlen_->setToolTip(has_file ? what
                               : what + "\n\nGreyed out: give a key lengths file first (its sequences are what "
                                        "is packed).");
}

WorkbenchParams ParameterPanel::params() const {
  WorkbenchParams p;
  p.problem.batch = batch_->value();
  p.problem.heads = heads_->value();
  p.problem.seqlen = seqlen_->value();
  p.problem.headdim = headdim_->value();
  p.problem.kv_heads = kv_heads_->value();  // 0: "= H"
  p.problem.seqlen_k = seqlen_k_->value();  // 0: "= N"
  p.gqa_pack = gqa_pack_->isChecked();
  p.splits = splits_->value();  // 0: auto
  p.page_size = page_size_->value();  // 0: contiguous
  p.lengths_file = lengths_file_->text().trimmed().toStdString();
  p.varlen = varlen_->isChecked();
  p.problem.dtype = sim::parse_dtype(dtype_->currentText().toStdString()).value_or(sim::DType::fp16);
  p.problem.pass = sim::parse_pass(pass_->currentText().toStdString()).value_or(sim::Pass::fwd);
  p.problem.causal = causal_->isChecked();
  p.problem.window_left = window_left_->value();  // −1 is sim::kNoWindow
  p.problem.window_right = window_right_->value();
  p.problem.dropout = dropout_->value();  // 0: none
  p.problem.mask = mask_->isChecked();
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
  p.kernel_impl = sim::parse_mma_kind(kernel_->currentData().toString().toStdString());  // "default": none
  return p;
}

void ParameterPanel::set_params(const WorkbenchParams& p) {
  quiet_ = true;
  batch_->setValue(static_cast<int>(p.problem.batch));
  heads_->setValue(static_cast<int>(p.problem.heads));
  seqlen_->setValue(static_cast<int>(p.problem.seqlen));
  headdim_->setValue(static_cast<int>(p.problem.headdim));
  kv_heads_->setValue(static_cast<int>(p.problem.kv_heads));
  seqlen_k_->setValue(static_cast<int>(p.problem.seqlen_k));
  gqa_pack_->setChecked(p.gqa_pack);
  splits_->setValue(static_cast<int>(std::clamp<int64_t>(p.splits, 0, 128)));
  page_size_->setValue(static_cast<int>(std::clamp<int64_t>(p.page_size, 0, 4096)));
  lengths_file_->setText(QString::fromStdString(p.lengths_file));
  varlen_->setChecked(p.varlen);
  dtype_->setCurrentText(QString::fromStdString(sim::to_string(p.problem.dtype)));
  pass_->setCurrentText(QString::fromStdString(sim::to_string(p.problem.pass)));
  causal_->setChecked(p.problem.causal);
  window_left_->setValue(static_cast<int>(std::clamp<int64_t>(p.problem.window_left, -1, 1 << 20)));
  window_right_->setValue(static_cast<int>(std::clamp<int64_t>(p.problem.window_right, -1, 1 << 20)));
  dropout_->setValue(std::clamp(p.problem.dropout, 0.0, kMaxDropout));
  mask_->setChecked(p.problem.mask);
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
  kernel_->setCurrentIndex(
      kernel_->findData(p.kernel_impl ? QString::fromStdString(sim::to_string(*p.kernel_impl)) : QStringLiteral("default")));
  quiet_ = false;
  sync_sram_label();
  sync_gqa_pack_enabled();
  sync_problem_error();
  Q_EMIT params_changed();
}

}  // namespace flashio::gui
