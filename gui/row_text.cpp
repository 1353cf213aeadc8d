#include "gui/row_text.h"

#include "gui/size_text.h"

namespace flashio::gui {

QString row_tooltip(const sim::Row& row) {
  QString text = QStringLiteral("%1 %2 %3, %4\nB=%5 H=%6 N=%7 d=%8 %9%10")
                     .arg(QString::fromStdString(sim::to_string(row.source)),
                          QString::fromStdString(sim::to_string(row.algo)),
                          QString::fromStdString(sim::to_string(row.pass)),
                          QString::fromStdString(sim::kernel_text(row.kernel)))
                     .arg(row.batch).arg(row.heads).arg(row.seqlen).arg(row.headdim)
                     .arg(QString::fromStdString(sim::to_string(row.dtype)), row.causal ? " causal" : "");
  if (row.sram_bytes)
    text += QStringLiteral("\nM = %1 B (%2)").arg(format_exact(static_cast<double>(*row.sram_bytes)),
                                                  format_bytes_binary(static_cast<double>(*row.sram_bytes)));
  if (row.block_r && row.block_c)
    text += QStringLiteral("\nBr × Bc = %1 × %2").arg(*row.block_r).arg(*row.block_c);
  if (!row.hw.empty()) text += QStringLiteral("  hw %1").arg(QString::fromStdString(row.hw));
  auto add = [&](const char* label, const std::optional<double>& v, bool bytes) {
    if (!v) return;
    text += QStringLiteral("\n%1 = %2").arg(label, format_exact(*v));
    if (bytes) text += QStringLiteral(" B (%1)").arg(format_bytes_decimal(*v));
  };
  add("flops (convention)", row.flops, false);
  add("flops_tensor", row.flops_tensor, false);
  add("io_read_bytes", row.io_read_bytes, true);
  add("io_write_bytes", row.io_write_bytes, true);
  add("dram_read_bytes", row.dram_read_bytes, true);
  add("dram_write_bytes", row.dram_write_bytes, true);
  add("extra_memory_bytes", row.extra_memory_bytes, true);
  if (row.time_ms) text += QStringLiteral("\ntime_ms = %1").arg(*row.time_ms, 0, 'g', 8);
  if (row.tflops) text += QStringLiteral("\ntflops = %1").arg(*row.tflops, 0, 'g', 6);
  return text;
}

bool row_matches(const sim::Row& row, const ProblemKey& key) {
  return row.is_total() && row.batch == key.batch && row.heads == key.heads &&
         row.seqlen == key.seqlen && row.headdim == key.headdim && row.dtype == key.dtype &&
         row.pass == key.pass && row.causal == key.causal;
}

}  // namespace flashio::gui
