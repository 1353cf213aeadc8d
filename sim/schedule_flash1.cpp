// FlashAttention as the paper writes it (Algorithms 1 and 4: K/V outside, Q/O inside):
// docs/schedules.md, "flash1". One thread block per (b, h).
#include <memory>

#include "sim/flops_model.h"
#include "sim/schedule.h"

namespace flashio::sim {
namespace {

// For each row tile i, the first and last column tile the schedule visits: the first step
// starts from the initial O = 0, ℓ = 0, m = −∞ (Algorithm 1 line 2) without reading them, and
// the last writes the final output instead of the running one. flash1 has no block mask (only
// blocksparse does), so a row tile visits its band's column tiles, a contiguous range (all of them,
// or 0 … the causal frontier): TileGrid::first_col, last_col, O(1) each, not a scan of Tr·Tc tiles.
struct RowSpan {
  TileFilter filter;
  RowSpan(const Config& c, bool group_rows) : filter(c, group_rows) {}
  int64_t first_j(int64_t i) const { return filter.grid().first_col(i); }
  int64_t last_j(int64_t i) const { return filter.grid().last_col(i); }
};

// The closed form's row sums (sim/schedule.h, TileVisits): every visit of row tile i reads its
// Q rows; all visits after the first re-read (and all before the last re-write) the running
// output and statistics.
struct Flash1Rows {
  int64_t tiles = 0;     // visited tiles
  int64_t all_rows = 0;  // Σ_i vis_i·r_i
  int64_t rerows = 0;    // Σ_i (vis_i − 1)·r_i
  int64_t nk = 0;
  Flash1Rows(const Config& c, const TileGrid& g) : nk(g.nk) {
    const TileVisits v = tile_visits(c, g.group_rows);
    tiles = v.tiles();
    all_rows = v.weighted_rows(g, 0);
    rerows = v.weighted_rows(g, 1);
  }
  // K, V once (the outer loop, Algorithm 1 line 6 / Algorithm 4 line 7); Q once per visit.
  Counts outer_loop_reads(int64_t d, int64_t e) const {
    Counts h;
    h.add_transfer(Tensor::K, Dir::read, checked_mul(nk, d, e));
    h.add_transfer(Tensor::V, Dir::read, checked_mul(nk, d, e));
    h.add_transfer(Tensor::Q, Dir::read, checked_mul(all_rows, d, e));
    return h;
  }
};

}  // namespace

std::vector<KernelSchedule> flash1_schedule(const Config& c) {
  const int64_t d = c.problem.headdim;
  const int64_t e = element_bytes(c.problem.dtype);
  const bool dropout = c.problem.dropout > 0;  // fused: the same transfers, more CUDA-core work
  const auto base = std::make_shared<const Config>(c);  // the runs' configurations: run_config
  std::vector<KernelSchedule> kernels;

  if (has_forward(c.problem.pass)) {
    // A block per query head, or per K/V head over its group's rows (gqa_pack; sim/config.h).
    // Per-sequence key lengths: a sequence's block runs the schedule of a problem of its Nk_b
    // keys, its ⌈Nk_b / Bc⌉ key tiles (sim/schedule.h, SequenceRuns).
    const auto runs = sequence_runs<RowSpan>(c, c.gqa_pack, [](const Config& rc) { return RowSpan(rc, rc.gqa_pack); });
    const TileGrid g = tile_grid(c, c.gqa_pack);  // Nk's: the longest sequence's at most
    KernelSchedule k;
    k.kind = KernelKind::flash1_fwd;
    k.heads = grid_heads(c.problem, c.gqa_pack);
    k.head_runs = runs->head_runs;
    k.blocks_per_head = 1;
    k.threads_per_block = flash1_fwd_threads(c.tiling.block_r);
    k.smem_bytes = saturating_mul(tile_footprint_elements(c.problem, c.tiling), e);
    // Per outer step K, V; per inner step at most Q, o_accum, ℓ, m in and O (or o_accum), ℓ, m out.
    k.transfers_per_block = saturating_mul(g.tc, saturating_add(2, saturating_mul(7, g.tr)));
    k.emit_block = [runs, d, dropout](int64_t gh, int64_t, ScheduleSink& s) {
      const RowSpan& span = runs->of(gh);
      const TileGrid& g = span.filter.grid();  // the sequence's
      const int64_t bh = g.query_head(gh), kvh = g.kv_head(gh);
      for (int64_t j = 0; j < g.tc; ++j) {  // Algorithm 1 line 5
        const int64_t cj = g.cols_in(j);
        s.transfer({Tensor::K, Dir::read, kvh, j * g.bc, cj, 0, d});  // line 6
        s.transfer({Tensor::V, Dir::read, kvh, j * g.bc, cj, 0, d});
        for (int64_t i = 0; i < g.tr; ++i) {  // line 7
          if (!span.filter.visits(i, j)) continue;
          const int64_t r = g.rows_in(i);
          const int64_t row0 = i * g.br;
          s.transfer({Tensor::Q, Dir::read, bh, row0, r, 0, d});  // line 8
          if (j != span.first_j(i)) {
            s.transfer({Tensor::o_accum, Dir::read, bh, row0, r, 0, d});
            s.transfer({Tensor::stat_l, Dir::read, bh, row0, r, 0, 1});
            s.transfer({Tensor::stat_m, Dir::read, bh, row0, r, 0, 1});
          }
          s.compute(flops_model::flash1_fwd_tile(g.br, g.bc, d, dropout));  // lines 9-11
          if (j == span.last_j(i))  // line 12, final step: the output in the element type
            s.transfer({Tensor::O, Dir::write, bh, row0, r, 0, d});
          else
            s.transfer({Tensor::o_accum, Dir::write, bh, row0, r, 0, d});
          s.transfer({Tensor::stat_l, Dir::write, bh, row0, r, 0, 1});  // line 13
          s.transfer({Tensor::stat_m, Dir::write, bh, row0, r, 0, 1});
        }
      }
    };
    k.head_counts = [runs, base, d, e, dropout](int64_t gh) {
      const TileGrid& g = runs->of(gh).filter.grid();
      const Flash1Rows rows(runs->run_config(*base, gh), g);
      Counts h = rows.outer_loop_reads(d, e);
      h.add_transfer(Tensor::o_accum, Dir::read, checked_mul(rows.rerows, d, 4));
      h.add_transfer(Tensor::stat_l, Dir::read, checked_mul(rows.rerows, 4));
      h.add_transfer(Tensor::stat_m, Dir::read, checked_mul(rows.rerows, 4));
      h.add_transfer(Tensor::o_accum, Dir::write, checked_mul(rows.rerows, d, 4));
      h.add_transfer(Tensor::O, Dir::write, checked_mul(g.n, d, e));
      h.add_transfer(Tensor::stat_l, Dir::write, checked_mul(rows.all_rows, 4));
      h.add_transfer(Tensor::stat_m, Dir::write, checked_mul(rows.all_rows, 4));
      h.flops = flops_model::flash1_fwd_tile(g.br, g.bc, d, dropout).scaled(rows.tiles);
      return h;
    };
    kernels.push_back(std::move(k));
  }

  if (has_backward(c.problem.pass)) {
    // A block per K/V head over its group's rows: dK, dV summed over the group on chip. Per-sequence
    // key lengths: the block still loops over all ⌈Nk / Bc⌉ key tiles; a tile holding keys of the
    // sequence (j·Bc < Nk_b) runs as a problem of Nk_b keys would (its K, V rows below Nk_b, its
    // row tiles), one past them reads nothing; each writes all its rows of dK, dV, zero past Nk_b.
    const auto runs = sequence_runs<RowSpan>(c, true, [](const Config& rc) { return RowSpan(rc, true); });
    const TileGrid g = tile_grid(c, true);  // Nk's: the tiles of dK and dV
    KernelSchedule k;
    k.kind = KernelKind::flash1_bwd;
    k.heads = c.problem.batch_kv_heads();
    k.head_runs = runs->head_runs;
    k.blocks_per_head = 1;
    k.threads_per_block = 256;
    k.smem_bytes = saturating_mul(tile_footprint_elements(c.problem, c.tiling), e);
    // Per outer step K, V in and dK, dV out; per inner step at most Q, O, dO, ℓ, m, dq_accum in
    // and dQ (or dq_accum) out.
    k.transfers_per_block = saturating_mul(g.tc, saturating_add(4, saturating_mul(7, g.tr)));
    k.emit_block = [runs, g, d, dropout](int64_t gh, int64_t, ScheduleSink& s) {
      const RowSpan& span = runs->of(gh);
      const TileGrid& gb = span.filter.grid();  // the sequence's: Nk_b keys
      const int64_t bh = g.query_head(gh), kvh = g.kv_head(gh);
      for (int64_t j = 0; j < g.tc; ++j) {  // Algorithm 4 line 6
        if (j < gb.tc) {
          const int64_t cj = gb.cols_in(j);
          s.transfer({Tensor::K, Dir::read, kvh, j * g.bc, cj, 0, d});  // line 7
          s.transfer({Tensor::V, Dir::read, kvh, j * g.bc, cj, 0, d});
          for (int64_t i = 0; i < gb.tr; ++i) {  // line 9
            if (!span.filter.visits(i, j)) continue;
            const int64_t r = gb.rows_in(i);
            const int64_t row0 = i * gb.br;
            s.transfer({Tensor::Q, Dir::read, bh, row0, r, 0, d});  // line 10
            s.transfer({Tensor::O, Dir::read, bh, row0, r, 0, d});
            s.transfer({Tensor::dO, Dir::read, bh, row0, r, 0, d});
            s.transfer({Tensor::stat_l, Dir::read, bh, row0, r, 0, 1});
            s.transfer({Tensor::stat_m, Dir::read, bh, row0, r, 0, 1});
            if (j != span.first_j(i))
              s.transfer({Tensor::dq_accum, Dir::read, bh, row0, r, 0, d});
            s.compute(flops_model::flash1_bwd_tile(gb.br, gb.bc, d, dropout));  // lines 11-20
            if (j == span.last_j(i))  // line 21, final step: dQ in the element type
              s.transfer({Tensor::dQ, Dir::write, bh, row0, r, 0, d});
            else
              s.transfer({Tensor::dq_accum, Dir::write, bh, row0, r, 0, d});
          }
        }
        s.transfer({Tensor::dK, Dir::write, kvh, j * g.bc, g.cols_in(j), 0, d});  // line 24
        s.transfer({Tensor::dV, Dir::write, kvh, j * g.bc, g.cols_in(j), 0, d});
      }
    };
    k.head_counts = [runs, base, g, d, e, dropout](int64_t gh) {
      const TileGrid& gb = runs->of(gh).filter.grid();
      const Flash1Rows rows(runs->run_config(*base, gh), gb);
      Counts h = rows.outer_loop_reads(d, e);  // K, V of the sequence's keys
      h.add_transfer(Tensor::O, Dir::read, checked_mul(rows.all_rows, d, e));
      h.add_transfer(Tensor::dO, Dir::read, checked_mul(rows.all_rows, d, e));
      h.add_transfer(Tensor::stat_l, Dir::read, checked_mul(rows.all_rows, 4));
      h.add_transfer(Tensor::stat_m, Dir::read, checked_mul(rows.all_rows, 4));
      h.add_transfer(Tensor::dq_accum, Dir::read, checked_mul(rows.rerows, d, 4));
      h.add_transfer(Tensor::dq_accum, Dir::write, checked_mul(rows.rerows, d, 4));
      h.add_transfer(Tensor::dQ, Dir::write, checked_mul(gb.n, d, e));
      h.add_transfer(Tensor::dK, Dir::write, checked_mul(g.nk, d, e));  // every key's row, zero past Nk_b
      h.add_transfer(Tensor::dV, Dir::write, checked_mul(g.nk, d, e));
      h.flops = flops_model::flash1_bwd_tile(gb.br, gb.bc, d, dropout).scaled(rows.tiles);
      return h;
    };
    kernels.push_back(std::move(k));
  }
  return kernels;
}

}  // namespace flashio::sim
