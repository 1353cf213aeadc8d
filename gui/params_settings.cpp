#include "gui/params_settings.h"

#include <algorithm>

#include <QStringList>

#include "sim/hardware.h"

namespace flashio::gui {

void save_params(QSettings& s, const WorkbenchParams& p) {
  s.setValue("problem/batch", static_cast<qlonglong>(p.problem.batch));
  s.setValue("problem/heads", static_cast<qlonglong>(p.problem.heads));
  s.setValue("problem/kv_heads", static_cast<qlonglong>(p.problem.kv_heads));
  s.setValue("problem/seqlen", static_cast<qlonglong>(p.problem.seqlen));
  s.setValue("problem/seqlen_k", static_cast<qlonglong>(p.problem.seqlen_k));
  s.setValue("problem/headdim", static_cast<qlonglong>(p.problem.headdim));
  s.setValue("problem/dtype", QString::fromStdString(sim::to_string(p.problem.dtype)));
  s.setValue("problem/pass", QString::fromStdString(sim::to_string(p.problem.pass)));
  s.setValue("problem/causal", p.problem.causal);
  s.setValue("problem/window_left", static_cast<qlonglong>(p.problem.window_left));
  s.setValue("problem/window_right", static_cast<qlonglong>(p.problem.window_right));
  s.setValue("problem/dropout", p.problem.dropout);
  s.setValue("problem/mask", p.problem.mask);
  s.setValue("problem/gqa_pack", p.gqa_pack);
  s.setValue("problem/splits", static_cast<qlonglong>(p.splits));
  s.setValue("problem/page_size", static_cast<qlonglong>(p.page_size));
  s.setValue("problem/lengths_file", QString::fromStdString(p.lengths_file));
  s.setValue("problem/varlen", p.varlen);
  s.setValue("hw/name", QString::fromStdString(p.hw_name));
  s.setValue("hw/sram_bytes", static_cast<qlonglong>(p.sram_bytes));
  QStringList algos;
  for (auto a : p.algos) algos << QString::fromStdString(sim::to_string(a));
  s.setValue("algos", algos.join(","));
  s.setValue("blocks/mask", QString::fromStdString(p.block_mask));
  s.setValue("blocks/min", static_cast<qlonglong>(p.sweep_min));
  s.setValue("blocks/max", static_cast<qlonglong>(p.sweep_max));
  s.setValue("blocks/shape", QString::fromStdString(to_string(p.shape)));
  s.setValue("blocks/block_r", static_cast<qlonglong>(p.block_r));
  s.setValue("blocks/block_c", static_cast<qlonglong>(p.block_c));
  s.setValue("blocks/kernel", QString::fromStdString(p.kernel_impl ? sim::to_string(*p.kernel_impl) : ""));
}

std::optional<WorkbenchParams> restore_params(const QSettings& s) {
  if (!s.contains("problem/seqlen")) return std::nullopt;
  WorkbenchParams p;
  p.problem.batch = s.value("problem/batch", 64).toLongLong();
  p.problem.heads = s.value("problem/heads", 16).toLongLong();
  p.problem.kv_heads = s.value("problem/kv_heads", 0).toLongLong();
  p.problem.seqlen = s.value("problem/seqlen", 1024).toLongLong();
  p.problem.seqlen_k = s.value("problem/seqlen_k", 0).toLongLong();
  p.problem.headdim = s.value("problem/headdim", 64).toLongLong();
  p.problem.dtype = sim::parse_dtype(s.value("problem/dtype").toString().toStdString()).value_or(sim::DType::fp16);
  p.problem.pass = sim::parse_pass(s.value("problem/pass").toString().toStdString()).value_or(sim::Pass::fwd);
  p.problem.causal = s.value("problem/causal", false).toBool();
  // A window side is none (−1) or 0..2^20 keys (the panel's range); anything else reads as none.
  for (auto [key, side] : {std::pair{"problem/window_left", &p.problem.window_left},
                           std::pair{"problem/window_right", &p.problem.window_right}}) {
    *side = s.value(key, static_cast<qlonglong>(sim::kNoWindow)).toLongLong();
    if (*side < 0 || *side > (1 << 20)) *side = sim::kNoWindow;
  }
  // Dropout is what the panel's box holds (0 … 0.99 in three decimals); anything else reads as none.
  bool is_number = false;
  p.problem.dropout = s.value("problem/dropout", 0.0).toDouble(&is_number);
  if (!is_number || !is_panel_dropout(p.problem.dropout)) p.problem.dropout = 0.0;
  p.problem.mask = s.value("problem/mask", false).toBool();
  p.gqa_pack = s.value("problem/gqa_pack", true).toBool();
  p.splits = std::clamp<qlonglong>(s.value("problem/splits", 1).toLongLong(), 0, 128);  // 0: auto
  // A multiple of 16 in 0..4096 (0: contiguous); anything else a settings file holds reads as 0.
  p.page_size = s.value("problem/page_size", 0).toLongLong();
  if (p.page_size < 0 || p.page_size > 4096 || p.page_size % 16 != 0) p.page_size = 0;
  p.lengths_file = s.value("problem/lengths_file", "").toString().toStdString();
  p.varlen = s.value("problem/varlen", false).toBool();
  const std::string hw = s.value("hw/name", "h200").toString().toStdString();
  p.hw_name = sim::is_hardware_preset(hw) ? hw : "h200";
  p.sram_bytes = s.value("hw/sram_bytes", 0).toLongLong();
  p.algos.clear();
  for (const QString& a : s.value("algos").toString().split(',', Qt::SkipEmptyParts))
    if (auto algo = sim::parse_algo(a.toStdString())) p.algos.push_back(*algo);
  p.block_mask = s.value("blocks/mask", "banded:2").toString().toStdString();
  p.sweep_min = s.value("blocks/min", 16).toLongLong();
  p.sweep_max = s.value("blocks/max", 512).toLongLong();
  p.shape = parse_sweep_shape(s.value("blocks/shape").toString().toStdString()).value_or(SweepShape::outer);
  p.block_r = s.value("blocks/block_r", 0).toLongLong();
  p.block_c = s.value("blocks/block_c", 0).toLongLong();
  // A family's spelling; empty (or anything else a settings file holds) reads as the default.
  p.kernel_impl = sim::parse_mma_kind(s.value("blocks/kernel", "").toString().toStdString());
  return p;
}

}  // namespace flashio::gui
