#include "gui/chart_style.h"

#include <array>
#include <cmath>

namespace flashio::gui {

QColor algo_color(sim::RowAlgo algo) {
  switch (algo) {
    case sim::RowAlgo::standard: return QColor(0xd6, 0x27, 0x28);
    case sim::RowAlgo::flash1: return QColor(0x1f, 0x77, 0xb4);
    case sim::RowAlgo::flash2: return QColor(0x2c, 0x8a, 0x2c);
    case sim::RowAlgo::blocksparse: return QColor(0x94, 0x67, 0xbd);
    case sim::RowAlgo::torch_flash:
    case sim::RowAlgo::torch_cudnn:
    case sim::RowAlgo::torch_efficient:
    case sim::RowAlgo::torch_math: return QColor(0xd3, 0x54, 0x00);
    case sim::RowAlgo::compulsory:
    case sim::RowAlgo::theorem2:
    case sim::RowAlgo::saha_ye:
    case sim::RowAlgo::standard_theta: break;
  }
  return bound_color(algo);
}

QColor bound_color(sim::RowAlgo bound) {
  switch (bound) {
    case sim::RowAlgo::compulsory: return QColor(0x22, 0x22, 0x22);
    case sim::RowAlgo::theorem2: return QColor(0x8c, 0x56, 0x4b);
    case sim::RowAlgo::saha_ye: return QColor(0xc0, 0x1f, 0x8a);
    case sim::RowAlgo::standard_theta: return QColor(0x6b, 0x6b, 0x00);
    default: break;
  }
  return QColor(0x60, 0x60, 0x60);
}

QColor crossover_marker_color() { return QColor(0x00, 0x8b, 0x8b); }
QColor current_sram_marker_color() { return QColor(0x9a, 0x6a, 0x00); }
QColor convention_color() { return QColor(0x70, 0x70, 0x70); }

QPen series_pen(SeriesKind kind, const QColor& color) {
  QPen pen(color);
  pen.setCapStyle(Qt::FlatCap);
  switch (kind) {
    case SeriesKind::model: pen.setWidthF(2.2); break;
    case SeriesKind::roofline: pen.setWidthF(2.0); pen.setStyle(Qt::DotLine); break;
    case SeriesKind::l2_model: pen.setWidthF(2.0); pen.setStyle(Qt::DashDotLine); break;
    case SeriesKind::bound: pen.setWidthF(1.6); pen.setStyle(Qt::DashLine); break;
    case SeriesKind::marker: pen.setWidthF(1.5); pen.setStyle(Qt::DashDotDotLine); break;
    case SeriesKind::measured:
    case SeriesKind::measured_dram: pen.setWidthF(1.0); break;
  }
  return pen;
}

bool is_point_kind(SeriesKind kind) {
  return kind == SeriesKind::measured || kind == SeriesKind::measured_dram;
}

QColor tensor_color(sim::Tensor tensor) {
  // Chosen greedily (largest smallest ΔE76 to the colours before it) among the sRGB colours
  // with contrast >= 3 against white, starting from the algorithms' hues; the smallest
  // pairwise ΔE76 is about 32 and the lowest contrast 3.2.
  static const std::array<QRgb, sim::kTensorCount> kColors = {
      0x1f77b4,  // Q
      0xd62728,  // K
      0x2c8a2c,  // V
      0x9467bd,  // O
      0x0022aa,  // dO
      0x0077ff,  // dQ
      0x994400,  // dK
      0x004433,  // dV
      0x8c564b,  // S
      0xbb8800,  // P
      0x555500,  // P_drop
      0xff4499,  // dP
      0xaa0099,  // dS
      0x009977,  // stat_l (ℓ)
      0xaa55ff,  // stat_m (m)
      0x889900,  // lse
      0x443355,  // delta (D)
      0x770044,  // o_accum
      0x0000ff,  // dq_accum
      0x000000,  // lse_accum (split-KV's partial lse)
      0xff00ee,  // block_table (a paged KV cache's)
  };
  const int i = static_cast<int>(tensor);
  return i >= 0 && i < sim::kTensorCount ? QColor(kColors[static_cast<size_t>(i)]) : QColor(Qt::black);
}

namespace {

double linear_channel(double c) {
  return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
}

struct Lab {
  double l, a, b;
};

Lab to_lab(const QColor& c) {
  const double r = linear_channel(c.redF()), g = linear_channel(c.greenF()),
               b = linear_channel(c.blueF());
  const double x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
  const double y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  const double z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
  auto f = [](double t) {
    return t > 216.0 / 24389.0 ? std::cbrt(t) : (24389.0 / 27.0 * t + 16.0) / 116.0;
  };
  return {116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))};
}

double luminance(const QColor& c) {
  return 0.2126 * linear_channel(c.redF()) + 0.7152 * linear_channel(c.greenF()) +
         0.0722 * linear_channel(c.blueF());
}

}  // namespace

double contrast_ratio(const QColor& a, const QColor& b) {
  const double la = luminance(a), lb = luminance(b);
  return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

double delta_e76(const QColor& a, const QColor& b) {
  const Lab p = to_lab(a), q = to_lab(b);
  return std::sqrt((p.l - q.l) * (p.l - q.l) + (p.a - q.a) * (p.a - q.a) + (p.b - q.b) * (p.b - q.b));
}

}  // namespace flashio::gui
