#include "gui/row_text.h"

#include <algorithm>

#include "gui/size_text.h"
#include "sim/kernel_choice.h"

namespace flashio::gui {
namespace {

// A row's K/V heads and keys as the schema means them: 0 (a row not read through sim's reader,
// which resolves them) is "the same as heads / seqlen".
int64_t resolved(int64_t value, int64_t same_as) { return value > 0 ? value : same_as; }

}  // namespace

QString shape_text(int64_t batch, int64_t heads, int64_t kv_heads, int64_t seqlen, int64_t seqlen_k,
                   int64_t headdim) {
  QString text = QStringLiteral("B=%1 H=%2").arg(batch).arg(heads);
  if (resolved(kv_heads, heads) != heads) text += QStringLiteral(" Hkv=%1").arg(kv_heads);
  text += QStringLiteral(" N=%1").arg(seqlen);
  if (resolved(seqlen_k, seqlen) != seqlen) text += QStringLiteral(" Nk=%1").arg(seqlen_k);
  return text + QStringLiteral(" d=%1").arg(headdim);
}

QString shape_text(const sim::Problem& p) {
  return shape_text(p.batch, p.heads, p.kv_heads, p.seqlen, p.seqlen_k, p.headdim);
}

QString packing_text(int64_t heads, int64_t kv_heads, bool gqa_pack) {
  if (resolved(kv_heads, heads) == heads) return {};
  return gqa_pack ? QStringLiteral(", groups packed") : QStringLiteral(", groups not packed");
}

QString problem_options_text(int64_t window_left, int64_t window_right, bool causal, double dropout, bool mask,
                             bool varlen) {
  QString text;
  if (window_left != sim::kNoWindow || window_right != sim::kNoWindow) {
    const auto side = [](int64_t v) { return v == sim::kNoWindow ? QStringLiteral("none") : QString::number(v); };
    text += QStringLiteral(", window left %1, right %2").arg(side(window_left), side(causal ? 0 : window_right));
  }
  if (dropout > 0) text += QStringLiteral(", dropout %1").arg(dropout, 0, 'g', 9);
  if (mask) text += QStringLiteral(", key-padding mask");
  if (varlen) text += QStringLiteral(", packed (varlen)");
  return text;
}

QString problem_options_text(const sim::Problem& p) {
  return problem_options_text(p.window_left, p.window_right, p.causal, p.dropout, p.mask, p.varlen);
}

QString problem_options_text(const WorkbenchParams& params) {
  sim::Problem p = params.problem;
  p.varlen = packs_sequences(params);
  return problem_options_text(p);
}

QString row_tooltip(const sim::Row& row) {
  QString text = QStringLiteral("%1 %2 %3, %4\n%5 %6%7%8%9")
                     .arg(QString::fromStdString(sim::to_string(row.source)),
                          QString::fromStdString(sim::to_string(row.algo)),
                          QString::fromStdString(sim::to_string(row.pass)),
                          QString::fromStdString(sim::kernel_text(row.kernel)))
                     .arg(shape_text(row.batch, row.heads, row.kv_heads, row.seqlen, row.seqlen_k, row.headdim),
                          QString::fromStdString(sim::to_string(row.dtype)), row.causal ? " causal" : "",
                          packing_text(row.heads, row.kv_heads, row.gqa_pack != 0),
                          problem_options_text(row.window_left, row.window_right, row.causal != 0, row.dropout,
                                               row.mask != 0, row.varlen != 0));
  if (row.sram_bytes)
    text += QStringLiteral("\nM = %1 B (%2)").arg(format_exact(static_cast<double>(*row.sram_bytes)),
                                                  format_bytes_binary(static_cast<double>(*row.sram_bytes)));
  if (row.block_r && row.block_c)
    text += QStringLiteral("\nBr × Bc = %1 × %2").arg(*row.block_r).arg(*row.block_c);
  if (row.kernel_impl) text += QStringLiteral("  kernel %1").arg(QString::fromStdString(sim::to_string(*row.kernel_impl)));
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

ProblemKey problem_key(const WorkbenchParams& params, sim::Pass pass) {
  const sim::Problem& p = params.problem;
  ProblemKey key{p.batch, p.heads, p.seqlen, p.headdim, p.dtype, pass, p.causal ? 1 : 0,
                 p.window_left, p.window_right, p.kv_heads_count(), p.keys(), params.gqa_pack ? 1 : 0, p.dropout,
                 p.mask ? 1 : 0, params.splits, params.page_size, params.lengths_file,
                 packs_sequences(params) ? 1 : 0, params.kernel_impl, std::nullopt};
  try {
    WorkbenchParams of_pass = params;
    of_pass.problem.pass = pass;
    key.flash2 = current_config(of_pass, sim::Algo::flash2);
  } catch (const std::exception&) {
    key.flash2.reset();  // no such Config: flash2 rows are matched at one split
  }
  return key;
}

ProblemKey problem_key(const WorkbenchParams& params) { return problem_key(params, params.problem.pass); }

namespace {

int64_t expected_splits(const sim::Row& row, const ProblemKey& key) {
  if (row.algo != sim::RowAlgo::flash2 || !key.flash2) return 1;
  sim::Config config = *key.flash2;
  if (row.block_r) config.tiling.block_r = *row.block_r;
  if (row.block_c) config.tiling.block_c = *row.block_c;
  return resolved_splits(config, key.splits);
}

// The family a row of the panel's problem runs at its tiling: the panel's where it asks one, else
// what the panel's Config of the row's algorithm resolves to there (the flash2 Config with the
// row's algorithm: flash1's kernels are all mma_sync, blocksparse runs flash2's); nullopt: not known.
std::optional<sim::MmaKind> expected_kernel_impl(const sim::Row& row, const ProblemKey& key) {
  if (key.kernel_impl) return key.kernel_impl;
  const std::optional<sim::Algo> algo = sim::model_algo(row.algo);
  if (!key.flash2 || !algo || !row.block_r || !row.block_c) return std::nullopt;
  sim::Config config = *key.flash2;
  config.algo = *algo;
  config.problem.pass = row.pass;
  config.tiling = {*row.block_r, *row.block_c};  // a row's tiling is its pass's
  config.bwd_tiling.reset();
  return sim::row_kernel_impl(config);
}

}  // namespace

bool row_matches(const sim::Row& row, const ProblemKey& key) {
  const bool grouped = key.kv_heads != key.heads;
  const bool reads_cache = row.algo == sim::RowAlgo::flash2 && row.pass == sim::Pass::fwd;  // sim::reads_kv_cache
  const bool takes_lengths = row.algo == sim::RowAlgo::flash1 || row.algo == sim::RowAlgo::flash2;  // sim::takes_key_lengths
  return row.is_total() && row.batch == key.batch && row.heads == key.heads &&
         row.seqlen == key.seqlen && row.headdim == key.headdim && row.dtype == key.dtype &&
         row.pass == key.pass && row.causal == key.causal && row.window_left == key.window_left &&
         row.window_right == key.window_right && same_dropout(row.dropout, key.dropout) &&
         (row.mask != 0) == (key.mask != 0) && (row.varlen != 0) == (key.varlen != 0) &&
         resolved(row.kv_heads, row.heads) == key.kv_heads &&
         resolved(row.seqlen_k, row.seqlen) == key.seqlen_k &&
         (!grouped || (row.gqa_pack != 0) == (key.gqa_pack != 0)) &&
         std::max<int64_t>(row.splits, 1) == expected_splits(row, key) &&
         row.page_size == (reads_cache ? key.page_size : 0) && row.lengths == (takes_lengths ? key.lengths : std::string()) &&
         (!row.kernel_impl || [&] {
           const std::optional<sim::MmaKind> expected = expected_kernel_impl(row, key);
           return !expected || *row.kernel_impl == *expected;
         }());
}

}  // namespace flashio::gui
