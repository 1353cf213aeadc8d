// What a tooltip says about a row: its configuration and every known value, exactly; and the
// one spelling of a problem's shape that every title and tooltip uses.
#pragma once
#include <optional>

#include <QString>

#include "gui/workbench_params.h"
#include "sim/row.h"

namespace flashio::gui {

// "B=8 H=32 Hkv=8 N=1 Nk=32768 d=128": Hkv and Nk only where they differ from H and N (0 means
// the same), so a square problem reads as it always has.
QString shape_text(int64_t batch, int64_t heads, int64_t kv_heads, int64_t seqlen, int64_t seqlen_k,
                   int64_t headdim);
QString shape_text(const sim::Problem& problem);
// ", groups packed" / ", groups not packed" where the problem groups query heads (gqa_pack
// changes the schedule only then); empty otherwise.
QString packing_text(int64_t heads, int64_t kv_heads, bool gqa_pack);
// What a heading adds for a problem's window, dropout, key-padding mask and packed sequences, in
// the runner's words (sim::band_label's for the window): ", window left L, right R" (a side "none"
// when unbounded; only where a window side is given, causal being said apart), ", dropout p",
// ", key-padding mask" and ", packed (varlen)"; empty for none of them.
QString problem_options_text(int64_t window_left, int64_t window_right, bool causal, double dropout, bool mask,
                             bool varlen = false);
QString problem_options_text(const sim::Problem& problem);
// The panel's: its problem's, packed where packs_sequences says so.
QString problem_options_text(const WorkbenchParams& params);

QString row_tooltip(const sim::Row& row);

// Whether a loaded row (measured or peer) is of the problem the panel shows: the same B, H, Hkv,
// N, Nk, d, dtype, causal flag, window, dropout, key-padding mask, packing (varlen) and pass, the same gqa_pack where the problem groups query heads
// (without grouping both values are one schedule, docs/shapes.md), and a whole-pass
// (kernel=total) row. kv_heads and seqlen_k are resolved (never 0), as sim's row reader
// resolves a file's. A flash2 row's splits must be the panel's splits resolved for that row's
// tiling (resolved_splits: "auto" and the clamp to ⌈Nk / Bc⌉ depend on it); a row of another
// algorithm must have 1. A flash2 forward row's page size and lengths file must be the panel's; every other row's 0 and
// none. A row's kernel family, where it has one (kernel_impl; a file without the column has none),
// must be the panel's, or with the panel's default the family its Config runs at the row's tiling
// (sim::row_kernel_impl: the backward's for a backward row).
struct ProblemKey {
  int64_t batch, heads, seqlen, headdim;
  sim::DType dtype;
  sim::Pass pass;
  int causal;
  int64_t window_left = sim::kNoWindow, window_right = sim::kNoWindow;  // the panel's window
  int64_t kv_heads, seqlen_k;
  int gqa_pack;
  double dropout = 0.0;                 // the panel's dropout (same_dropout: as rows print it)
  int mask = 0;                         // the panel's key-padding mask
  int64_t splits = 1;                   // the panel's request (0: auto)
  int64_t page_size = 0;                // the panel's page size (flash2 forward rows only)
  std::string lengths;                  // the panel's lengths file (flash2 forward rows only)
  int varlen = 0;                       // the panel packs the lengths file's sequences (packs_sequences)
  std::optional<sim::MmaKind> kernel_impl;  // the panel's kernel family (nullopt: default)
  std::optional<sim::Config> flash2;    // the panel's flash2 Config of this pass, to resolve it
};
// The key of the panel's problem, for `pass` (the tiling map's maps are one pass each).
ProblemKey problem_key(const WorkbenchParams& params, sim::Pass pass);
ProblemKey problem_key(const WorkbenchParams& params);
bool row_matches(const sim::Row& row, const ProblemKey& key);

}  // namespace flashio::gui
