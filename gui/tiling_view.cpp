#include "gui/tiling_view.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QPainter>
#include <QPainterPath>
#include <QSplitter>
#include <QVBoxLayout>

#include "gui/field_label.h"
#include "gui/size_text.h"
#include "sim/errors.h"
#include "sim/key_lengths_file.h"
#include "sim/simulate.h"

namespace flashio::gui {

// Paints the score grid, the Q/K/V/O tiles and the byte tally for one step of a trace.
class TilingCanvas : public QWidget {
 public:
  explicit TilingCanvas(QWidget* parent = nullptr) : QWidget(parent) {
    setMinimumSize(640, 380);
    setAutoFillBackground(true);
    setBackgroundRole(QPalette::Base);
  }
  // A trace without steps (an invalid configuration) draws nothing.
  void set_trace(const sim::ExplainTrace* trace) {
    trace_ = trace && !trace->steps.empty() ? trace : nullptr;
    visited_.clear();
    if (trace_) {
      const sim::TileFilter filter(trace_->config);
      const sim::TileGrid& g = trace_->grid;
      for (int64_t i = 0; i < g.tr; ++i)
        for (int64_t j = 0; j < g.tc; ++j) visited_.push_back(filter.visits(i, j));
    }
    step_ = -1;
    update();
  }
  void show_step(int step) {
    step_ = step;
    update();
  }

 protected:
  void paintEvent(QPaintEvent*) override;

 private:
  bool visits(int64_t i, int64_t j) const {
    return visited_[static_cast<size_t>(i * trace_->grid.tc + j)] != 0;
  }
  const sim::ExplainTrace* trace_ = nullptr;
  std::vector<unsigned char> visited_;  // Tr × Tc: whether the schedule visits tile (i, j)
  int step_ = -1;
};

namespace {
const QColor kDone(0xc7, 0xe9, 0xc0), kCurrent(0xfd, 0x8d, 0x3c), kSkipped(0xe0, 0xe0, 0xe0),
    kSram(0xfd, 0xd0, 0xa2), kRead(0xd6, 0x27, 0x28), kWrite(0x1f, 0x77, 0xb4);
}

namespace {

// What the legend calls the tiles the schedule does not visit (sim::TileFilter decides which):
// a block mask's zero tiles, tiles outside the band, tiles wholly past the traced sequence's keys
// (its key length below Nk; under the key-padding mask, sequence 0 keeps all N keys).
QString skipped_text(const sim::Config& c) {
  if (c.algo == sim::Algo::blocksparse) return QStringLiteral("skipped (block mask)");
  const bool padded = c.problem.keys_of(0) < c.problem.keys();
  const QString past = QStringLiteral("past the sequence's N_k = %1 keys").arg(c.problem.keys_of(0));
  if (padded && c.problem.banded()) return QStringLiteral("skipped (outside the band or %1)").arg(past);
  if (padded) return QStringLiteral("skipped (%1)").arg(past);
  if (c.problem.banded()) return QStringLiteral("skipped (outside the band)");
  return QStringLiteral("skipped");
}

}  // namespace

void TilingCanvas::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  if (!trace_) return;
  const sim::TileGrid& g = trace_->grid;
  const sim::ExplainStep* step =
      step_ >= 0 ? &trace_->steps[static_cast<size_t>(step_)] : nullptr;
  const int64_t n = g.n;
  const double top = 34, left = 40;
  const double side = std::min(height() - top - 110.0, width() * 0.48);
  const double cell = side / static_cast<double>(n);

  QFont bold = font();
  bold.setBold(true);
  p.setFont(bold);
  p.drawText(QPointF(left, 18), QStringLiteral("score matrix S = QKᵀ (%1 × %1), tiles %2 × %3")
                                    .arg(n).arg(g.br).arg(g.bc));
  p.setFont(font());

  // Which tiles were computed before this step (in the forward kernel's order).
  std::vector<char> done(static_cast<size_t>(g.tr * g.tc), 0);
  for (int s = 0; s < step_; ++s) {
    const auto& st = trace_->steps[static_cast<size_t>(s)];
    if (st.computes_tile()) done[static_cast<size_t>(st.i * g.tc + st.j)] = 1;
  }
  for (int64_t i = 0; i < g.tr; ++i)
    for (int64_t j = 0; j < g.tc; ++j) {
      const QRectF r(left + j * g.bc * cell, top + i * g.br * cell, g.cols_in(j) * cell,
                     g.rows_in(i) * cell);
      QColor fill = Qt::white;
      if (!visits(i, j)) fill = kSkipped;
      else if (step && step->computes_tile() && step->i == i && step->j == j) fill = kCurrent;
      else if (done[static_cast<size_t>(i * g.tc + j)]) fill = kDone;
      p.fillRect(r, fill);
      if (!visits(i, j)) {
        p.fillRect(r, QBrush(QColor(150, 150, 150), Qt::BDiagPattern));
        if (r.width() > 40 && r.height() > 14) {
          p.setPen(QColor(110, 110, 110));
          p.drawText(r, Qt::AlignCenter, QStringLiteral("skipped"));
        }
      }
    }
  // Scores the band hides inside visited tiles are masked, not computed (square: query i sees
  // keys i − L … i + R): right of the diagonal R + 1 over (causal: R = 0), left of it L + 1 under.
  const sim::KeyBand band = trace_->config.problem.band_of();
  // A hatched triangle: from a on one edge, round the matrix corner, to b on the other.
  auto hatch_triangle = [&](QPointF a, QPointF corner, QPointF b) {
    QPainterPath masked;
    masked.moveTo(a);
    masked.lineTo(corner);
    masked.lineTo(b);
    masked.closeSubpath();
    p.fillPath(masked, QBrush(QColor(120, 120, 120, 90), Qt::Dense6Pattern));
  };
  if (band.right != sim::kNoWindow && band.right + 1 < n) {  // above: keys > query + R
    const double k = static_cast<double>(band.right + 1) * cell;
    hatch_triangle({left + k, top}, {left + side, top}, {left + side, top + side - k});
  }
  if (band.left != sim::kNoWindow && band.left + 1 < n) {  // below: keys < query − L
    const double k = static_cast<double>(band.left + 1) * cell;
    hatch_triangle({left, top + k}, {left, top + side}, {left + side - k, top + side});
  }
  p.setPen(QPen(QColor(235, 235, 235), 0.5));
  if (cell >= 4)
    for (int64_t x = 0; x <= n; ++x) {
      p.drawLine(QPointF(left + x * cell, top), QPointF(left + x * cell, top + side));
      p.drawLine(QPointF(left, top + x * cell), QPointF(left + side, top + x * cell));
    }
  p.setPen(QPen(QColor(60, 60, 60), 1.5));
  for (int64_t j = 0; j <= g.tc; ++j) {
    const double x = left + std::min(j * g.bc, n) * cell;
    p.drawLine(QPointF(x, top), QPointF(x, top + side));
  }
  for (int64_t i = 0; i <= g.tr; ++i) {
    const double y = top + std::min(i * g.br, n) * cell;
    p.drawLine(QPointF(left, y), QPointF(left + side, y));
  }
  p.setPen(QPen(QColor(0x1f, 0x77, 0xb4), 2));  // the followed row
  p.drawRect(QRectF(left, top + static_cast<double>(trace_->tracked_row) * cell, side, cell));
  p.setPen(Qt::black);
  p.drawText(QRectF(left, top + side + 2, side, 16), Qt::AlignCenter, "j: K, V tiles (Bc) →");
  p.save();
  p.translate(left - 8, top + side / 2);
  p.rotate(-90);
  p.drawText(QRectF(-side / 2, -14, side, 16), Qt::AlignCenter, "i: Q, O tiles (Br) →");
  p.restore();

  // Q, K, V, O strips: the tiles in SRAM this step, and what moved.
  const double sx = left + side + 30, strip_w = 34, gap = 18;
  const char* names[4] = {"Q", "K", "V", "O"};
  for (int k = 0; k < 4; ++k) {
    const bool by_rows = k == 0 || k == 3;
    const int64_t block = by_rows ? g.br : g.bc;
    const int64_t tiles = by_rows ? g.tr : g.tc;
    const int64_t current = step ? (by_rows ? step->i : step->j) : -1;
    const double x = sx + k * (strip_w + gap);
    p.setFont(bold);
    p.setPen(Qt::black);
    p.drawText(QRectF(x, top - 16, strip_w, 14), Qt::AlignCenter, names[k]);
    p.setFont(font());
    for (int64_t t = 0; t < tiles; ++t) {
      const double y0 = top + t * block * cell;
      const double h = static_cast<double>(std::min(block, n - t * block)) * cell;
      const QRectF r(x, y0, strip_w, h);
      p.fillRect(r, t == current ? kSram : QColor(250, 250, 250));
      bool read = false, written = false;
      if (step)
        for (const sim::TileMove& m : step->moves) {
          const sim::Tensor tensor = m.transfer.tensor;
          const bool same_tensor =
              (k == 0 && tensor == sim::Tensor::Q) || (k == 1 && tensor == sim::Tensor::K) ||
              (k == 2 && tensor == sim::Tensor::V) ||
              (k == 3 && (tensor == sim::Tensor::O || tensor == sim::Tensor::o_accum));
          if (same_tensor && m.tile == t)
            (m.transfer.dir == sim::Dir::read ? read : written) = true;
        }
      p.setPen(QPen(read ? kRead : written ? kWrite : QColor(120, 120, 120), read || written ? 3 : 1));
      p.drawRect(r.adjusted(1, 1, -1, -1));
    }
  }
  // Legend.
  const double ly = top + side + 24;
  auto swatch = [&](double x, const QColor& c, const QString& text, bool outline = false) {
    if (outline) {
      p.setPen(QPen(c, 3));
      p.setBrush(Qt::NoBrush);
      p.drawRect(QRectF(x, ly, 14, 14));
    } else {
      p.fillRect(QRectF(x, ly, 14, 14), c);
    }
    p.setPen(Qt::black);
    p.drawText(QPointF(x + 18, ly + 12), text);
  };
  swatch(left, kCurrent, "current tile");
  swatch(left + 110, kDone, "done");
  swatch(left + 170, kSkipped, skipped_text(trace_->config));
  swatch(sx, kSram, "in SRAM");
  swatch(sx + 80, kRead, "read", true);
  swatch(sx + 135, kWrite, "written", true);

  // Byte tally against standard attention.
  const double by = ly + 26, bar_w = width() - left - 260;
  const double flash_total = static_cast<double>(trace_->read_bytes + trace_->write_bytes);
  const double so_far =
      step ? static_cast<double>(step->read_bytes + step->write_bytes) : 0.0;
  const double standard_bytes =
      static_cast<double>(trace_->standard_read_bytes + trace_->standard_write_bytes);
  const double scale = std::max({flash_total, standard_bytes, 1.0});
  auto bar = [&](double y, double value, const QColor& c, const QString& label) {
    p.fillRect(QRectF(left + 250, y, bar_w, 14), QColor(245, 245, 245));
    p.fillRect(QRectF(left + 250, y, bar_w * value / scale, 14), c);
    p.setPen(Qt::black);
    p.drawText(QRectF(left, y - 1, 246, 16), Qt::AlignRight | Qt::AlignVCenter, label);
  };
  const QString algo = QString::fromStdString(sim::to_string(trace_->config.algo));
  bar(by, so_far, kCurrent,
      QStringLiteral("%1 so far: %2 B").arg(algo, format_exact(so_far)));
  bar(by + 18, flash_total, kDone,
      QStringLiteral("%1 whole pass: %2 B").arg(algo, format_exact(flash_total)));
  bar(by + 36, standard_bytes, QColor(0xd6, 0x27, 0x28, 160),
      QStringLiteral("standard attention: %1 B").arg(format_exact(standard_bytes)));
}

TilingView::TilingView(QWidget* parent) : WorkbenchView(parent) {
  algo_ = new QComboBox();
  algo_->addItem("flash1 (K/V outside, Algorithm 1)", "flash1");
  algo_->addItem("flash2 (Q outside, FlashAttention-2)", "flash2");
  // The defaults are `flashio explain`'s (N = 64, d = 16, flash1's 16 × 32 tiles, row 0, the
  // same seed): the same steps and numbers, and a problem where the paper's lesson shows
  // (flash1 moves 48.75 % of standard's bytes).
  algo_->setCurrentIndex(0);
  seqlen_ = new QSpinBox();
  seqlen_->setRange(1, static_cast<int>(sim::kExplainMaxSeqlen));
  seqlen_->setValue(64);
  headdim_ = new QSpinBox();
  headdim_->setRange(1, 128);
  headdim_->setValue(16);
  headdim_->setToolTip("Head dimension d of the teaching problem (the view's own; the panel's d is for the charts)");
  block_r_ = new QSpinBox();
  block_r_->setRange(1, 64);
  block_r_->setValue(16);
  block_c_ = new QSpinBox();
  block_c_->setRange(1, 64);
  block_c_->setValue(32);
  causal_ = new QCheckBox("causal");
  row_ = new QSpinBox();
  row_->setRange(0, 63);
  row_->setValue(static_cast<int>(sim::ExplainOptions{}.tracked_row));
  row_->setToolTip("The row whose running max m, sum ℓ and output are shown (online softmax; "
                   "flashio explain --row)");
  seed_ = new QSpinBox();
  seed_->setRange(0, std::numeric_limits<int>::max());
  seed_->setValue(static_cast<int>(sim::ExplainOptions{}.seed));
  seed_->setToolTip("Seed of the random Q, K, V (flashio explain --seed; the same default)");
  reset_button_ = new QPushButton("Reset");
  step_button_ = new QPushButton("Step");
  play_button_ = new QPushButton("Play");
  play_button_->setCheckable(true);
  speed_ = new QSlider(Qt::Horizontal);
  speed_->setRange(50, 1500);
  speed_->setValue(400);
  speed_->setToolTip("milliseconds per step");
  status_ = new QLabel();
  status_->setWordWrap(true);
  status_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  // Room for the longest status (the last step's outputs) so the layout does not jump while
  // stepping.
  status_->setMinimumHeight(status_->fontMetrics().lineSpacing() * 4 + 4);
  note_ = new QLabel();
  note_->setWordWrap(true);
  note_->setStyleSheet("color: #8a4b00");
  error_ = new QLabel();
  error_->setStyleSheet("color: #b00");
  transfers_ = new QPlainTextEdit();
  transfers_->setReadOnly(true);
  transfers_->setMinimumWidth(260);
  canvas_ = new TilingCanvas();

  auto* controls = new QHBoxLayout();
  for (QWidget* w : std::initializer_list<QWidget*>{
           new QLabel("order"), algo_, new QLabel("N"), seqlen_, new QLabel("d"), headdim_, new QLabel("Br"), block_r_,
           new QLabel("Bc"), block_c_, causal_, new QLabel("row"), row_, new QLabel("seed"),
           seed_, reset_button_,
           step_button_, play_button_, new QLabel("speed"), speed_})
    controls->addWidget(w);
  controls->addStretch(1);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(canvas_);
  split->addWidget(transfers_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(controls);
  layout->addWidget(error_);
  layout->addWidget(note_);
  layout->addWidget(split, 1);
  layout->addWidget(status_);

  for (QSpinBox* s : {seqlen_, headdim_, block_r_, block_c_})
    connect(s, &QSpinBox::valueChanged, this, [this] { rebuild(); });
  for (QSpinBox* s : {row_, seed_})
    connect(s, &QSpinBox::valueChanged, this, [this] { rebuild(); });
  connect(causal_, &QCheckBox::toggled, this, [this] { rebuild(); });
  connect(algo_, &QComboBox::currentIndexChanged, this, [this] { rebuild(); });
  connect(reset_button_, &QPushButton::clicked, this, [this] { reset(); });
  connect(step_button_, &QPushButton::clicked, this, [this] { step(); });
  connect(play_button_, &QPushButton::toggled, this, [this](bool on) {
    play_button_->setText(on ? "Pause" : "Play");
    if (on) {
      if (step_ + 1 >= step_count()) reset();
      timer_.start(speed_->value());
    } else {
      timer_.stop();
    }
  });
  connect(speed_, &QSlider::valueChanged, this, [this](int ms) { timer_.setInterval(ms); });
  connect(&timer_, &QTimer::timeout, this, [this] {
    if (step_ + 1 >= step_count()) {
      play_button_->setChecked(false);
      return;
    }
    step();
  });
  base_problem_.batch = 1;
  base_problem_.heads = 1;
  hw_ = sim::hardware_preset("h200");
  sram_bytes_ = hw_.sram_bytes;
  rebuild();
}

std::vector<std::pair<QString, QWidget*>> TilingView::charts() { return {{"tiling", canvas_}}; }

void TilingView::redraw(const ViewInputs& inputs) {
  if (!inputs.data) return;
  const auto& params = inputs.data->params;
  // The teaching problem keeps one head and the view's own N and d; dtype and M follow the panel.
  sim::Problem p = params.problem;
  p.batch = 1;
  p.heads = 1;
  // sim::explain traces one head of square attention: the panel's Hkv and Nk stay the charts'.
  p.kv_heads = 0;
  p.seqlen_k = 0;
  p.pass = sim::Pass::fwd;
  p.seqlen = base_problem_.seqlen;
  p.headdim = base_problem_.headdim;
  p.causal = base_problem_.causal;
  // The window, dropout and the key-padding mask are the panel's (the teaching view has no
  // control of its own for them), and so is the lengths file: sim decides what it can trace.
  const sim::Hardware hw = hardware_of(params);
  const int64_t m = effective_sram_bytes(params);
  if (p.dtype == base_problem_.dtype && m == sram_bytes_ && hw.name == hw_.name &&
      p.window_left == base_problem_.window_left && p.window_right == base_problem_.window_right &&
      p.dropout == base_problem_.dropout && p.mask == base_problem_.mask && params.lengths_file == lengths_file_ &&
      packs_sequences(params) == varlen_)
    return;  // nothing the teaching view shows has changed: keep the current step
  base_problem_ = p;
  lengths_file_ = params.lengths_file;
  varlen_ = packs_sequences(params);
  hw_ = hw;
  sram_bytes_ = m;
  rebuild();
}

void TilingView::set_teaching(sim::Algo algo, int64_t seqlen, int64_t headdim, int64_t block_r, int64_t block_c,
                              bool causal) {
  const QSignalBlocker b1(algo_), b2(seqlen_), b3(block_r_), b4(block_c_), b5(causal_), b6(headdim_);
  algo_->setCurrentIndex(algo == sim::Algo::flash1 ? 0 : 1);
  seqlen_->setValue(static_cast<int>(seqlen));
  headdim_->setValue(static_cast<int>(headdim));
  block_r_->setValue(static_cast<int>(block_r));
  block_c_->setValue(static_cast<int>(block_c));
  causal_->setChecked(causal);
  rebuild();
}

void TilingView::set_tracked(int64_t row, uint64_t seed) {
  const QSignalBlocker b1(row_), b2(seed_);
  row_->setValue(static_cast<int>(row));
  seed_->setValue(static_cast<int>(seed));
  rebuild();
}

void TilingView::rebuild() {
  timer_.stop();
  play_button_->setChecked(false);
  sim::Config config;
  config.algo = algo_->currentData().toString() == "flash1" ? sim::Algo::flash1 : sim::Algo::flash2;
  config.problem = base_problem_;
  config.problem.seqlen = seqlen_->value();
  config.problem.headdim = headdim_->value();
  config.problem.causal = causal_->isChecked();
  config.problem.batch = 1;
  config.problem.heads = 1;
  config.problem.pass = sim::Pass::fwd;
  config.hw = hw_;
  config.sram_bytes = sram_bytes_;
  config.tiling = {block_r_->value(), block_c_->value()};
  row_->setMaximum(seqlen_->value() - 1);
  base_problem_.seqlen = config.problem.seqlen;
  base_problem_.headdim = config.problem.headdim;
  base_problem_.causal = config.problem.causal;
  error_->clear();
  note_->clear();
  rows_.clear();
  try {
    // The traced sequence is sequence 0 (of a batch of one): with a lengths file it has the
    // file's first length where the charts' Configs read the file (config_of: sim::takes_key_lengths),
    // and a file sim cannot read is its refusal. sim::explain refuses key lengths today, and the
    // view shows its reason as for any configuration it cannot trace. Packed (varlen), the traced
    // sequence is that length's alone, on every algorithm (config_of's rule): sim refuses flash1's,
    // and explain flash2's.
    config.problem.varlen = varlen_;
    if (!lengths_file_.empty() && (varlen_ || sim::takes_key_lengths(config))) {
      const sim::KeyLengths all = sim::read_key_lengths(lengths_file_);
      if (all.values && !all.values->empty())
        config.problem.key_lengths = {std::make_shared<const std::vector<int64_t>>(1, all.values->front()), all.source};
    }
    sim::validate(config);
    trace_ = sim::explain(config, {row_->value(), static_cast<uint64_t>(seed_->value())});
    if (const auto note = sim::more_than_standard_note(trace_)) note_->setText(QString::fromStdString(*note));
    // The Rows dock: the walk's rows of this pass, and standard attention's for comparison.
    rows_ = sim::rows_from_result(sim::simulate(config, sim::CountMethod::walk));
    sim::Config standard = config;
    standard.algo = sim::Algo::standard;
    for (auto& r : sim::rows_from_result(sim::simulate(standard, sim::CountMethod::formula)))
      rows_.push_back(r);
  } catch (const std::exception& e) {
    error_->setText(QString::fromStdString(error_message(e)));
    trace_ = sim::ExplainTrace{};
  }
  step_ = -1;
  canvas_->set_trace(&trace_);
  show_step();
  Q_EMIT rows_changed();
}

void TilingView::step() {
  if (step_ + 1 < step_count()) ++step_;
  show_step();
}

void TilingView::reset() {
  step_ = -1;
  show_step();
}

void TilingView::run_to_end() {
  step_ = step_count() - 1;
  show_step();
}

int64_t TilingView::tally_bytes() const {
  if (step_ < 0) return 0;
  const sim::ExplainStep& s = trace_.steps[static_cast<size_t>(step_)];
  return s.read_bytes + s.write_bytes;
}

void TilingView::show_step() {
  canvas_->show_step(step_);
  step_button_->setEnabled(step_ + 1 < step_count());
  const QString total = format_exact(static_cast<double>(trace_.read_bytes + trace_.write_bytes));
  auto text_of = [](const std::string& s) { return QString::fromStdString(s); };
  QString text;
  if (step_ < 0) {
    text = QStringLiteral("Before the first step. %1 steps; the walk counts %2 B for the pass.")
               .arg(step_count()).arg(total);
    transfers_->setPlainText(
        "Press Step or Play.\n\nEach step is one visited tile (i, j) of the score matrix: the "
        "reads that bring its tiles into SRAM, the tile's compute, and the writes after it.");
  } else {
    const sim::ExplainStep& s = trace_.steps[static_cast<size_t>(step_)];
    QString lines = QStringLiteral("%1 forward, step %2 of %3: tile (i=%4, j=%5)\n\n")
                        .arg(text_of(sim::to_string(trace_.config.algo))).arg(step_ + 1)
                        .arg(step_count()).arg(s.i).arg(s.j);
    int64_t step_bytes = 0;
    auto move_line = [&](const sim::TileMove& m) {
      const sim::Transfer& t = m.transfer;
      step_bytes += m.bytes;
      lines += QStringLiteral("%1 %2%3 rows %4..%5 × %6 cols = %7 B\n")
                   .arg(t.dir == sim::Dir::read ? "read " : "write")
                   .arg(text_of(sim::to_string(t.tensor))).arg(m.tile)
                   .arg(t.row0).arg(t.row0 + t.rows - 1).arg(t.cols).arg(m.bytes);
    };
    for (size_t k = 0; k < s.moves_before_compute; ++k) move_line(s.moves[k]);
    lines += QStringLiteral("compute: %1 tensor FLOPs\n")
                 .arg(format_exact(static_cast<double>(s.flops().tensor)));
    for (size_t k = s.moves_before_compute; k < s.moves.size(); ++k) move_line(s.moves[k]);
    lines += QStringLiteral("\nthis step: %1 B\nrunning tally: %2 B read + %3 B written = %4 B "
                            "of %5 B")
                 .arg(format_exact(static_cast<double>(step_bytes)),
                      format_exact(static_cast<double>(s.read_bytes)),
                      format_exact(static_cast<double>(s.write_bytes)),
                      format_exact(static_cast<double>(s.read_bytes + s.write_bytes)), total);
    transfers_->setPlainText(lines);
    text = QStringLiteral("Step %1 of %2.").arg(step_ + 1).arg(step_count());
    // The followed row after this step: sim::explain's statistics, printed as `flashio
    // explain` prints them (sim::statistics_text).
    text += QStringLiteral("  Row %1 (blue outline): %2")
                .arg(trace_.tracked_row).arg(text_of(sim::statistics_text(s.row)));
    if (!s.tracked_row_in_tile)
      text += QStringLiteral(" (unchanged: this tile holds none of its scores)");
    if (s.max_moved)
      text += QStringLiteral(". Max moved: old l and old output × e^(m_old − m_new); the "
                             "l-only rescale would give %1")
                  .arg(text_of(sim::explain_values(s.wrong_row.output)));
    if (step_ + 1 == step_count())
      text += QStringLiteral(". Tiled output %1, reference softmax(QKᵀ/√d)V %2, max error %3; "
                             "l-only rescale %4, max error %5")
                  .arg(text_of(sim::explain_values(trace_.output)),
                       text_of(sim::explain_values(trace_.reference_output)),
                       text_of(sim::explain_number(trace_.output_error)),
                       text_of(sim::explain_values(trace_.wrong_output)),
                       text_of(sim::explain_number(trace_.wrong_output_error)));
    text += '.';
  }
  status_->setText(text);
}

}  // namespace flashio::gui
