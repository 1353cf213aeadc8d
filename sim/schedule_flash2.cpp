// FlashAttention-2's order (Q outside) and block-sparse over it: docs/schedules.md, "flash2".
#include <memory>
#include <numeric>

#include "sim/flops_model.h"
#include "sim/paged_kv.h"
#include "sim/kernel_choice.h"
#include "sim/schedule.h"

namespace flashio::sim {
namespace {

int64_t sum(const std::vector<int64_t>& xs) {
  return std::accumulate(xs.begin(), xs.end(), int64_t{0}, [](int64_t a, int64_t b) { return checked_add(a, b); });
}

// A paged KV cache (Config::page_size, sim/paged_kv.h): which sequence a grid head's K/V lie in,
// and the block-table entries of the pages each key tile touches.
struct KvPages {
  int64_t page_size = 0;       // 0: contiguous
  int64_t grid_heads_per_batch = 1;
  int64_t batch_of(int64_t grid_head) const { return grid_head / grid_heads_per_batch; }
  // [j]: Σ over the key tiles < j of Nk's grid of the pages each touches (Tc + 1 of them; empty
  // when contiguous), shared by the runs of per-sequence key lengths.
  std::shared_ptr<const std::vector<int64_t>> full_before;
  // Σ over key tiles j < visited of grid g (a run's: Nk_b ≤ Nk) of the pages tile j touches: the
  // entries a row tile reads. g's tiles before its last are whole, as Nk's grid's are.
  int64_t entries_before(const TileGrid& g, int64_t visited) const {
    if (visited == 0) return 0;
    const int64_t last = visited - 1;
    return (*full_before)[static_cast<size_t>(last)] + pages_touched(last * g.bc, g.cols_in(last), page_size);
  }
};
KvPages kv_pages(const Config& c, bool group_rows) {
  KvPages kp;
  kp.page_size = c.page_size;
  kp.grid_heads_per_batch = grid_heads_per_batch(c.problem, group_rows);
  if (c.page_size <= 0) return kp;
  const TileGrid g = tile_grid(c, group_rows);
  auto before = std::make_shared<std::vector<int64_t>>(static_cast<size_t>(g.tc + 1), 0);
  for (int64_t j = 0; j < g.tc; ++j) (*before)[j + 1] = (*before)[j] + pages_touched(j * g.bc, g.cols_in(j), c.page_size);
  kp.full_before = std::move(before);
  return kp;
}
// At most the runs one block's transfers make in the L2 model beyond one a tile: a paged K/V
// tile is one run per page it touches (sim/cache_replay.h), and its table entries one more.
int64_t paged_runs_per_tile(const Config& c) {
  return c.page_size > 0 ? 2 * (ceil_div(c.tiling.block_c, c.page_size) + 1) + 1 : 0;
}

// A forward block's reads and work over key tiles [j0, j1) of row tile i: Q_i once (it stays on
// chip), then K_j, V_j of every visited j ascending (from a paged cache: first the block-table
// entries of the pages the tile touches, which the kernel reads to find the tile's rows), and the finish.
// With fused dropout (`dropout`) the same transfers and each tile's dropout work.
// `boxes`: the kernel loads whole TMA boxes (loads_whole_boxes), Q_i's Br rows and each K_j's,
// V_j's Bc, the rows past the matrix as zeros.
void emit_row_tile(ScheduleSink& s, const TileFilter& filter, const TileGrid& g, const KvPages& pages, int64_t gh,
                   int64_t i, int64_t j0, int64_t j1, int64_t d, bool dropout, bool boxes = false) {
  const int64_t qh = g.query_head(gh), kvh = g.kv_head(gh);
  Transfer q{Tensor::Q, Dir::read, qh, i * g.br, g.rows_in(i), 0, d};
  if (boxes) q.zero_rows = g.br - q.rows;
  s.transfer(q);
  for (int64_t j = j0; j < j1; ++j) {
    if (!filter.visits(i, j)) continue;
    const int64_t cj = g.cols_in(j);
    if (pages.page_size > 0) {
      const int64_t first = j * g.bc / pages.page_size;
      s.transfer({Tensor::block_table, Dir::read, pages.batch_of(gh), first,
                  pages_touched(j * g.bc, cj, pages.page_size), 0, 1});
    }
    for (Tensor kv : {Tensor::K, Tensor::V}) {
      Transfer t{kv, Dir::read, kvh, j * g.bc, cj, 0, d};
      if (boxes) t.zero_rows = g.bc - cj;
      s.transfer(t);
    }
    s.compute(flops_model::flash2_fwd_tile(g.br, g.bc, d, dropout));
  }
  s.compute(flops_model::flash2_fwd_finish(g.br, d));
}

// Split-KV's forward (docs/shapes.md, "Split-KV"): the block (s, i) of a grid head runs row tile
// i over split s's key tiles [s·chunk, min((s + 1)·chunk, Tc)), chunk = ⌈Tc / S⌉, and writes its
// rows' partial O (normalised by its own ℓ) and lse, fp32, into split s's copy of o_accum and
// lse_accum (head s·B·H + the rows' query head, sim/tensor.h); a split that visits no tile
// writes zeros and −∞ there without reading anything. Then the combine kernel, a block per 64
// query rows of each query head, merges the S partials into O and lse.
struct KeySplits {
  int64_t splits = 1, chunk = 1;
  int64_t first(int64_t s) const { return s * chunk; }
  int64_t end(int64_t s, int64_t tc) const { return std::min(tc, (s + 1) * chunk); }
  // Splits holding some of the first `visited` key tiles (flash2 visits a prefix of each row's).
  int64_t holding(int64_t visited) const { return std::min(splits, ceil_div(visited, chunk)); }
};
KeySplits key_splits(const Config& c, const TileGrid& g) {
  return {c.splits, ceil_div(g.tc, std::max<int64_t>(c.splits, 1))};
}

// The block-table entries (int32) of a grid head's forward: row tile i visits key tiles
// 0 … vis_i − 1 of its run's grid g (a prefix, flash2's filter; with splits too, their ranges cut
// the prefix), each reading the entries of the pages it touches.
void add_table_reads(Counts& h, const KvPages& pages, const TileGrid& g, const TileVisits& v) {
  if (pages.page_size <= 0) return;
  int64_t entries = 0;
  for (const int64_t visited : v.per_row) entries = checked_add(entries, pages.entries_before(g, visited));
  h.add_transfer(Tensor::block_table, Dir::read, checked_mul(entries, 4));
}

// The forward's tiles of a run of sequences of one key length (sim/schedule.h, SequenceRuns; docs/shapes.md
// "Per-sequence key lengths"): a split's chunk is ⌈Tc_b / S⌉ of the sequence's own key tiles.
struct ForwardRun {
  TileFilter filter;  // the run's: its grid g
  KeySplits ks;
};
std::shared_ptr<const SequenceRuns<ForwardRun>> forward_runs(const Config& c) {
  return sequence_runs<ForwardRun>(c, c.gqa_pack, [](const Config& rc) {
    TileFilter filter(rc, rc.gqa_pack);
    const KeySplits ks = key_splits(rc, filter.grid());
    return ForwardRun{std::move(filter), ks};
  });
}

void add_split_forward(const Config& c, std::vector<KernelSchedule>& kernels) {
  const int64_t d = c.problem.headdim, e = element_bytes(c.problem.dtype);
  const auto runs = forward_runs(c);
  const auto base = std::make_shared<const Config>(c);  // the runs' configurations: run_config
  const KvPages pages = kv_pages(c, c.gqa_pack);
  const bool dropout = c.problem.dropout > 0;  // fused: the same transfers, more CUDA-core work
  const TileGrid& g0 = runs->values.front().filter.grid();  // rows and Tr: every run's
  int64_t max_chunk = 0;
  for (const ForwardRun& r : runs->values) max_chunk = std::max(max_chunk, r.ks.chunk);
  const int64_t bh_total = c.problem.batch_heads();
  KernelSchedule k;
  k.kind = KernelKind::flash2_fwd;
  k.heads = grid_heads(c.problem, c.gqa_pack);
  k.head_runs = runs->head_runs;
  k.blocks_per_head = saturating_mul(c.splits, g0.tr);  // block s·Tr + i: row tile i, split s
  k.threads_per_block = 128;
  k.smem_bytes = saturating_mul(saturating_add(g0.br, saturating_mul(2, g0.bc)), d, e);
  // Q; K, V per tile (and their pages); O, L partials
  k.transfers_per_block = saturating_add(3, saturating_mul(2 + paged_runs_per_tile(c), max_chunk));
  k.emit_block = [runs, pages, d, bh_total, dropout](int64_t gh, int64_t block, ScheduleSink& s) {
    const ForwardRun& run = runs->of(gh);
    const TileGrid& g = run.filter.grid();
    const KeySplits& ks = run.ks;
    const int64_t split = block / g.tr, i = block % g.tr;
    const int64_t r = g.rows_in(i), qh = g.query_head(gh);
    const int64_t partial_head = split * bh_total + qh;  // split s's copy (sim/tensor.h)
    const int64_t end = ks.end(split, g.tc);
    bool any = false;
    for (int64_t j = ks.first(split); j < end && !any; ++j) any = run.filter.visits(i, j);
    if (any) emit_row_tile(s, run.filter, g, pages, gh, i, ks.first(split), end, d, dropout);
    s.transfer({Tensor::o_accum, Dir::write, partial_head, i * g.br, r, 0, d});
    s.transfer({Tensor::lse_accum, Dir::write, partial_head, i * g.br, r, 0, 1});
  };
  k.head_counts = [runs, base, pages, d, e, dropout](int64_t gh) {
    const ForwardRun& run = runs->of(gh);
    const Config rc = runs->run_config(*base, gh);
    const TileGrid& g = run.filter.grid();
    const KeySplits& ks = run.ks;
    const TileVisits v = tile_visits(rc, rc.gqa_pack);
    int64_t q_rows = 0, holding_blocks = 0;  // Q read by every split that visits a tile
    for (int64_t i = 0; i < g.tr; ++i) {
      const int64_t h = ks.holding(v.per_row[i]);
      q_rows = checked_add(q_rows, checked_mul(h, g.rows_in(i)));
      holding_blocks = checked_add(holding_blocks, h);
    }
    Counts h;
    add_table_reads(h, pages, g, v);
    h.add_transfer(Tensor::Q, Dir::read, checked_mul(q_rows, d, e));
    h.add_transfer(Tensor::K, Dir::read, checked_mul(sum(v.kv_rows), d, e));
    h.add_transfer(Tensor::V, Dir::read, checked_mul(sum(v.kv_rows), d, e));
    h.add_transfer(Tensor::o_accum, Dir::write, checked_mul(ks.splits, g.n, d, 4));
    h.add_transfer(Tensor::lse_accum, Dir::write, checked_mul(ks.splits, g.n, 4));
    h.flops = flops_model::flash2_fwd_tile(g.br, g.bc, d, dropout).scaled(v.tiles());
    h.flops += flops_model::flash2_fwd_finish(g.br, d).scaled(holding_blocks);
    return h;
  };
  kernels.push_back(std::move(k));

  // The combine: one query head's rows, kSplitCombineRows a block, in the row kernels' order.
  const int64_t nq = c.problem.seqlen, rows_per_block = kSplitCombineRows;
  const KeySplits ks{c.splits, 1};  // the combine merges S partials whatever each sequence's chunk
  KernelSchedule m;
  m.kind = KernelKind::flash2_fwd_combine;
  m.heads = c.problem.batch_heads();
  m.blocks_per_head = ceil_div(nq, rows_per_block);
  m.threads_per_block = kSplitCombineThreads;
  m.smem_bytes = 0;
  m.transfers_per_block = saturating_add(2, saturating_mul(2, ks.splits));
  m.emit_block = [ks, d, nq, rows_per_block, bh_total](int64_t bh, int64_t b, ScheduleSink& s) {
    const int64_t row0 = b * rows_per_block, r = std::min(rows_per_block, nq - row0);
    for (int64_t split = 0; split < ks.splits; ++split)
      s.transfer({Tensor::lse_accum, Dir::read, split * bh_total + bh, row0, r, 0, 1});
    for (int64_t split = 0; split < ks.splits; ++split)
      s.transfer({Tensor::o_accum, Dir::read, split * bh_total + bh, row0, r, 0, d});
    s.compute(flops_model::flash2_fwd_combine_rows(r, ks.splits, d));
    s.transfer({Tensor::O, Dir::write, bh, row0, r, 0, d});
    s.transfer({Tensor::lse, Dir::write, bh, row0, r, 0, 1});
  };
  m.head_counts = [ks, d, e, nq](int64_t) {
    Counts h;
    h.add_transfer(Tensor::lse_accum, Dir::read, checked_mul(ks.splits, nq, 4));
    h.add_transfer(Tensor::o_accum, Dir::read, checked_mul(ks.splits, nq, d, 4));
    h.add_transfer(Tensor::O, Dir::write, checked_mul(nq, d, e));
    h.add_transfer(Tensor::lse, Dir::write, checked_mul(nq, 4));
    h.flops = flops_model::flash2_fwd_combine_rows(nq, ks.splits, d);
    return h;
  };
  kernels.push_back(std::move(m));
}

}  // namespace

std::vector<KernelSchedule> flash2_schedule(const Config& c) {
  const int64_t d = c.problem.headdim;
  const int64_t e = element_bytes(c.problem.dtype);
  std::vector<KernelSchedule> kernels;

  if (has_forward(c.problem.pass) && c.splits > 1) {
    add_split_forward(c, kernels);
  } else if (has_forward(c.problem.pass)) {
    // A block's rows: one query head's, or its K/V head's group's (gqa_pack; sim/config.h).
    // Heads in runs of one key length (forward_runs).
    const auto runs = forward_runs(c);
    const auto base = std::make_shared<const Config>(c);  // the runs' configurations: run_config
    const KvPages pages = kv_pages(c, c.gqa_pack);
    const bool dropout = c.problem.dropout > 0;  // fused: the same transfers, more CUDA-core work
    // The launch's grid: rows and Tr every run's (a varlen batch's: its longest sequence's), Tc at most this.
    const TileGrid g0 = tile_grid(c, c.gqa_pack);
    KernelSchedule k;
    k.kind = flash2_kind(c.algo, Flash2Role::fwd);
    k.heads = grid_heads(c.problem, c.gqa_pack);
    k.head_runs = runs->head_runs;
    k.blocks_per_head = g0.tr;
    k.threads_per_block = 128;
    k.smem_bytes = saturating_mul(saturating_add(g0.br, saturating_mul(2, g0.bc)), d, e);  // Q tile + one K and one V tile
    // Q; K, V per tile (and their pages); O, L
    k.transfers_per_block = saturating_add(3, saturating_mul(2 + paged_runs_per_tile(c), g0.tc));
    // The built kernel's block order (BuiltKernel::grid_order): the warp-specialised forward
    // runs a causal head's row tiles last-first.
    const BuiltKernel* built = built_kernel(c, Pass::fwd, c.tiling);
    const bool last_first =
        c.problem.causal && built != nullptr && built->grid_order == GridOrder::causal_last_first;
    const bool boxes = forward_loads_whole_boxes(c);  // whole TMA boxes: zero rows moved
    k.emit_block = [runs, pages, d, dropout, last_first, boxes](int64_t gh, int64_t block, ScheduleSink& s) {
      const ForwardRun& run = runs->of(gh);
      const TileGrid& g = run.filter.grid();
      if (block >= g.tr) return;  // a varlen batch's block past its sequence's rows: nothing at all
      const int64_t i = last_first ? g.tr - 1 - block : block;
      const int64_t r = g.rows_in(i), qh = g.query_head(gh);
      emit_row_tile(s, run.filter, g, pages, gh, i, 0, g.tc, d, dropout, boxes);
      s.transfer({Tensor::O, Dir::write, qh, i * g.br, r, 0, d});  // written once, normalised (a box's rows past N not)
      s.transfer({Tensor::lse, Dir::write, qh, i * g.br, r, 0, 1});
    };
    k.head_counts = [runs, base, pages, d, e, dropout, boxes](int64_t gh) {
      const Config rc = runs->run_config(*base, gh);
      const TileGrid& g = runs->of(gh).filter.grid();
      const int64_t n = g.n;
      const TileVisits v = tile_visits(rc, rc.gqa_pack);
      // Rows moved: whole boxes (Tr·Br of Q, Bc a visited tile of K and V), else the matrix's.
      const int64_t q_rows = boxes ? checked_mul(g.tr, g.br) : n;
      const int64_t kv_rows = boxes ? checked_mul(v.tiles(), g.bc) : sum(v.kv_rows);
      Counts h;
      add_table_reads(h, pages, g, v);
      h.add_transfer(Tensor::Q, Dir::read, checked_mul(q_rows, d, e));
      h.add_transfer(Tensor::K, Dir::read, checked_mul(kv_rows, d, e));  // K, V once per row tile
      h.add_transfer(Tensor::V, Dir::read, checked_mul(kv_rows, d, e));
      h.add_transfer(Tensor::O, Dir::write, checked_mul(n, d, e));
      h.add_transfer(Tensor::lse, Dir::write, checked_mul(n, 4));
      h.flops = flops_model::flash2_fwd_tile(g.br, g.bc, d, dropout).scaled(v.tiles());
      h.flops += flops_model::flash2_fwd_finish(g.br, d).scaled(g.tr);
      return h;
    };
    kernels.push_back(std::move(k));
  }

  if (has_backward(c.problem.pass)) {
    // The row kernels take one query head's rows; the backward a K/V head's group's, so that
    // dK and dV are summed over the group on chip (sim/config.h, gqa_pack). The row kernels take
    // every query row whatever the key lengths (a varlen batch's heads: their sequence's n_b rows,
    // in runs of one length); the main kernel's heads run in runs of one key length
    // (sim/schedule.h, SequenceRuns) over the grid of Nk, the cache's keys (a varlen batch's: n_max).
    const TileGrid gq = tile_grid(c);
    const TileGrid g = tile_grid(c, true);
    const bool packed = c.problem.varlen;  // no rows past a sequence's own: no dK, dV written there
    const auto rows = sequence_runs<TileGrid>(c, false, [](const Config& rc) { return tile_grid(rc); }, RunsBy::queries);
    KernelSchedule pre;
    pre.kind = flash2_kind(c.algo, Flash2Role::bwd_preprocess);
    pre.heads = c.problem.batch_heads();
    pre.head_runs = rows->head_runs;
    pre.blocks_per_head = gq.tr;
    pre.threads_per_block = 128;
    pre.smem_bytes = 0;
    pre.transfers_per_block = 4;
    pre.emit_block = [rows, d](int64_t bh, int64_t i, ScheduleSink& s) {
      const TileGrid& g = rows->of(bh);
      if (i >= g.tr) return;  // a varlen batch's block past its sequence's rows
      const int64_t r = g.rows_in(i);
      s.transfer({Tensor::O, Dir::read, bh, i * g.br, r, 0, d});
      s.transfer({Tensor::dO, Dir::read, bh, i * g.br, r, 0, d});
      s.compute(flops_model::rowsum_rows(r, d));
      s.transfer({Tensor::delta, Dir::write, bh, i * g.br, r, 0, 1});
      s.transfer({Tensor::dq_accum, Dir::write, bh, i * g.br, r, 0, d});  // zeroed for atomics
    };
    pre.head_counts = [rows, d, e](int64_t bh) {
      const int64_t n = rows->of(bh).n;
      Counts h;
      h.add_transfer(Tensor::O, Dir::read, checked_mul(n, d, e));
      h.add_transfer(Tensor::dO, Dir::read, checked_mul(n, d, e));
      h.add_transfer(Tensor::delta, Dir::write, checked_mul(n, 4));
      h.add_transfer(Tensor::dq_accum, Dir::write, checked_mul(n, d, 4));
      h.flops = flops_model::rowsum_rows(n, d);
      return h;
    };
    kernels.push_back(std::move(pre));

    KernelSchedule k;
    k.kind = flash2_kind(c.algo, Flash2Role::bwd);
    k.heads = c.problem.batch_kv_heads();
    k.blocks_per_head = g.tc;
    k.threads_per_block = 256;
    k.smem_bytes = saturating_mul(tile_footprint_elements(c.problem, c.tiling), e);  // K, V resident; Q, dO streamed
    k.transfers_per_block = saturating_add(4, saturating_mul(5, g.tr));  // K, V, dK, dV; Q, dO, L, D, dQ per tile
    // Block j of a sequence of Nk_b keys (docs/schedules.md, "Per-sequence key lengths"): its K, V
    // rows below Nk_b and the row tiles a problem of Nk_b keys visits from key tile j (none when
    // j·Bc ≥ Nk_b), then all its rows of dK and dV, zero past Nk_b.
    const auto runs = sequence_runs<TileFilter>(c, true, [](const Config& rc) { return TileFilter(rc, true); });
    const auto base = std::make_shared<const Config>(c);  // the runs' configurations: run_config
    const bool dropout = c.problem.dropout > 0;  // fused: the same transfers, more CUDA-core work
    k.head_runs = runs->head_runs;
    k.emit_block = [runs, g, d, dropout, packed](int64_t gh, int64_t j, ScheduleSink& s) {
      const TileFilter& filter = runs->of(gh);
      const TileGrid& gb = filter.grid();  // the sequence's: Nk_b keys
      const int64_t qh = g.query_head(gh), kvh = g.kv_head(gh);
      if (packed && j >= gb.tc) return;  // a varlen batch's block past its sequence's keys: nothing at all
      if (j < gb.tc) {
        const int64_t cj = gb.cols_in(j);
        s.transfer({Tensor::K, Dir::read, kvh, j * g.bc, cj, 0, d});
        s.transfer({Tensor::V, Dir::read, kvh, j * g.bc, cj, 0, d});
        for (int64_t i = 0; i < gb.tr; ++i) {
          if (!filter.visits(i, j)) continue;
          const int64_t r = gb.rows_in(i);
          s.transfer({Tensor::Q, Dir::read, qh, i * gb.br, r, 0, d});
          s.transfer({Tensor::dO, Dir::read, qh, i * gb.br, r, 0, d});
          s.transfer({Tensor::lse, Dir::read, qh, i * gb.br, r, 0, 1});
          s.transfer({Tensor::delta, Dir::read, qh, i * gb.br, r, 0, 1});
          s.compute(flops_model::flash2_bwd_tile(gb.br, gb.bc, d, dropout));
          Transfer dq{Tensor::dq_accum, Dir::write, qh, i * gb.br, r, 0, d};
          dq.atomic = true;  // FA2: dQ accumulated with fp32 atomic adds
          s.transfer(dq);
        }
      }
      // Summed over the group's rows; every row of the layout's tile (packed: the sequence's own).
      const int64_t written = packed ? gb.cols_in(j) : g.cols_in(j);
      s.transfer({Tensor::dK, Dir::write, kvh, j * g.bc, written, 0, d});
      s.transfer({Tensor::dV, Dir::write, kvh, j * g.bc, written, 0, d});
    };
    k.head_counts = [runs, base, d, e, dropout, packed](int64_t gh) {
      const Config rc = runs->run_config(*base, gh);
      const int64_t nk_b = rc.problem.keys(), nk = packed ? nk_b : base->problem.keys();
      const TileVisits v = tile_visits(rc, true);
      const int64_t q_rows = sum(v.q_rows);  // Q, dO, L, D once per visited (i, j)
      Counts h;
      h.add_transfer(Tensor::K, Dir::read, checked_mul(nk_b, d, e));  // the sequence's keys once
      h.add_transfer(Tensor::V, Dir::read, checked_mul(nk_b, d, e));
      h.add_transfer(Tensor::Q, Dir::read, checked_mul(q_rows, d, e));
      h.add_transfer(Tensor::dO, Dir::read, checked_mul(q_rows, d, e));
      h.add_transfer(Tensor::lse, Dir::read, checked_mul(q_rows, 4));
      h.add_transfer(Tensor::delta, Dir::read, checked_mul(q_rows, 4));
      h.add_transfer(Tensor::dq_accum, Dir::write, checked_mul(q_rows, d, 4));
      h.add_transfer(Tensor::dK, Dir::write, checked_mul(nk, d, e));  // every key's row of the layout, zero past Nk_b
      h.add_transfer(Tensor::dV, Dir::write, checked_mul(nk, d, e));
      h.flops = flops_model::flash2_bwd_tile(rc.tiling.block_r, rc.tiling.block_c, d, dropout).scaled(v.tiles());
      return h;
    };
    kernels.push_back(std::move(k));

    KernelSchedule conv;
    conv.kind = flash2_kind(c.algo, Flash2Role::bwd_convert_dq);
    conv.heads = c.problem.batch_heads();
    conv.head_runs = rows->head_runs;
    conv.blocks_per_head = gq.tr;
    conv.threads_per_block = 128;
    conv.smem_bytes = 0;
    conv.transfers_per_block = 2;
    conv.emit_block = [rows, d](int64_t bh, int64_t i, ScheduleSink& s) {
      const TileGrid& g = rows->of(bh);
      if (i >= g.tr) return;  // a varlen batch's block past its sequence's rows
      const int64_t r = g.rows_in(i);
      s.transfer({Tensor::dq_accum, Dir::read, bh, i * g.br, r, 0, d});
      s.transfer({Tensor::dQ, Dir::write, bh, i * g.br, r, 0, d});
    };
    conv.head_counts = [rows, d, e](int64_t bh) {
      const int64_t n = rows->of(bh).n;
      Counts h;
      h.add_transfer(Tensor::dq_accum, Dir::read, checked_mul(n, d, 4));
      h.add_transfer(Tensor::dQ, Dir::write, checked_mul(n, d, e));
      return h;
    };
    kernels.push_back(std::move(conv));
  }
  return kernels;
}

}  // namespace flashio::sim
