// Closed forms of every kernel's counts (docs/architecture.md, "Ways to count", 1): the sums of
// docs/schedules.md written as formulas. Per-row-tile sums appear only where causal or a block
// mask makes rows differ; they are arithmetic over Tr or Tc terms, not a walk of the schedule.
// tests/sim checks they equal the walk exactly for every shape.
#include "sim/flops_model.h"
#include "sim/schedule.h"
#include "sim/simulate.h"

namespace flashio::sim {
namespace {

// How many tiles each row tile i and column tile j visits, and how many rows they cover.
struct Visits {
  std::vector<int64_t> per_row;       // vis_i: visited column tiles of row tile i
  std::vector<int64_t> kv_rows;       // Σ over visited j of c_j (K/V rows row tile i reads)
  std::vector<int64_t> per_col;       // vis_j: visited row tiles of column tile j
  std::vector<int64_t> q_rows;        // Σ over visited i of r_i
};

Visits visits(const Config& c) {
  const TileGrid g = tile_grid(c);
  Visits v;
  v.per_row.resize(g.tr);
  v.kv_rows.resize(g.tr);
  v.per_col.resize(g.tc);
  v.q_rows.resize(g.tc);
  const bool masked = c.algo == Algo::blocksparse && !c.block_mask.text.empty();
  if (!masked) {
    for (int64_t i = 0; i < g.tr; ++i) {
      // Causal: the last visited column tile holds the row tile's last row (i·Br + r_i − 1).
      const int64_t last = c.problem.causal ? std::min(g.tc - 1, (i * g.br + g.rows_in(i) - 1) / g.bc)
                                            : g.tc - 1;
      v.per_row[i] = last + 1;
      v.kv_rows[i] = std::min(g.n, (last + 1) * g.bc);
    }
    for (int64_t j = 0; j < g.tc; ++j) {
      // Causal: the first row tile that reaches column j·Bc is ⌊j·Bc / Br⌋.
      const int64_t first = c.problem.causal ? (j * g.bc) / g.br : 0;
      v.per_col[j] = g.tr - first;
      v.q_rows[j] = g.n - first * g.br;
    }
    return v;
  }
  const TileFilter f(c);  // a block mask is data: count its tiles
  for (int64_t i = 0; i < g.tr; ++i)
    for (int64_t j = 0; j < g.tc; ++j)
      if (f.visits(i, j)) {
        ++v.per_row[i];
        v.kv_rows[i] += g.cols_in(j);
        ++v.per_col[j];
        v.q_rows[j] += g.rows_in(i);
      }
  return v;
}

int64_t sum(const std::vector<int64_t>& xs) {
  int64_t s = 0;
  for (auto x : xs) s += x;
  return s;
}

// Σ_i (vis_i − k)·r_i: rows re-read or re-written across a row tile's visits.
int64_t weighted_rows(const Visits& v, const TileGrid& g, int64_t minus) {
  int64_t s = 0;
  for (int64_t i = 0; i < g.tr; ++i) s += (v.per_row[i] - minus) * g.rows_in(i);
  return s;
}

void flash2_counts(const Config& c, const std::string& name, Counts& k) {
  const TileGrid g = tile_grid(c);
  const int64_t n = g.n, d = c.problem.headdim, e = element_bytes(c.problem.dtype);
  const Visits v = visits(c);
  const int64_t tiles = sum(v.per_row);
  if (name.ends_with("_fwd")) {
    k.add_transfer(Tensor::Q, Dir::read, n * d * e);
    k.add_transfer(Tensor::K, Dir::read, sum(v.kv_rows) * d * e);  // K, V once per row tile
    k.add_transfer(Tensor::V, Dir::read, sum(v.kv_rows) * d * e);
    k.add_transfer(Tensor::O, Dir::write, n * d * e);
    k.add_transfer(Tensor::lse, Dir::write, n * 4);
    k.flops = flops_model::flash2_fwd_tile(g.br, g.bc, d).scaled(tiles);
    k.flops += flops_model::flash2_fwd_finish(g.br, d).scaled(g.tr);
  } else if (name.ends_with("_bwd_preprocess")) {
    k.add_transfer(Tensor::O, Dir::read, n * d * e);
    k.add_transfer(Tensor::dO, Dir::read, n * d * e);
    k.add_transfer(Tensor::delta, Dir::write, n * 4);
    k.add_transfer(Tensor::dq_accum, Dir::write, n * d * 4);
    k.flops = flops_model::rowsum_rows(n, d);
  } else if (name.ends_with("_bwd")) {
    const int64_t q_rows = sum(v.q_rows);  // Q, dO, L, D once per visited (i, j)
    k.add_transfer(Tensor::K, Dir::read, n * d * e);
    k.add_transfer(Tensor::V, Dir::read, n * d * e);
    k.add_transfer(Tensor::Q, Dir::read, q_rows * d * e);
    k.add_transfer(Tensor::dO, Dir::read, q_rows * d * e);
    k.add_transfer(Tensor::lse, Dir::read, q_rows * 4);
    k.add_transfer(Tensor::delta, Dir::read, q_rows * 4);
    k.add_transfer(Tensor::dq_accum, Dir::write, q_rows * d * 4);
    k.add_transfer(Tensor::dK, Dir::write, n * d * e);
    k.add_transfer(Tensor::dV, Dir::write, n * d * e);
    k.flops = flops_model::flash2_bwd_tile(g.br, g.bc, d).scaled(tiles);
  } else {  // _bwd_convert_dq
    k.add_transfer(Tensor::dq_accum, Dir::read, n * d * 4);
    k.add_transfer(Tensor::dQ, Dir::write, n * d * e);
  }
}

void flash1_counts(const Config& c, const std::string& name, Counts& k) {
  const TileGrid g = tile_grid(c);
  const int64_t n = g.n, d = c.problem.headdim, e = element_bytes(c.problem.dtype);
  const Visits v = visits(c);
  const int64_t tiles = sum(v.per_row);
  const int64_t all_rows = weighted_rows(v, g, 0);   // Σ_i vis_i·r_i
  const int64_t rerows = weighted_rows(v, g, 1);     // Σ_i (vis_i − 1)·r_i
  k.add_transfer(Tensor::K, Dir::read, n * d * e);   // K, V once (the outer loop)
  k.add_transfer(Tensor::V, Dir::read, n * d * e);
  k.add_transfer(Tensor::Q, Dir::read, all_rows * d * e);
  if (name == "flash1_fwd") {
    k.add_transfer(Tensor::o_accum, Dir::read, rerows * d * 4);
    k.add_transfer(Tensor::stat_l, Dir::read, rerows * 4);
    k.add_transfer(Tensor::stat_m, Dir::read, rerows * 4);
    k.add_transfer(Tensor::o_accum, Dir::write, rerows * d * 4);
    k.add_transfer(Tensor::O, Dir::write, n * d * e);
    k.add_transfer(Tensor::stat_l, Dir::write, all_rows * 4);
    k.add_transfer(Tensor::stat_m, Dir::write, all_rows * 4);
    k.flops = flops_model::flash1_fwd_tile(g.br, g.bc, d).scaled(tiles);
  } else {  // flash1_bwd
    k.add_transfer(Tensor::O, Dir::read, all_rows * d * e);
    k.add_transfer(Tensor::dO, Dir::read, all_rows * d * e);
    k.add_transfer(Tensor::stat_l, Dir::read, all_rows * 4);
    k.add_transfer(Tensor::stat_m, Dir::read, all_rows * 4);
    k.add_transfer(Tensor::dq_accum, Dir::read, rerows * d * 4);
    k.add_transfer(Tensor::dq_accum, Dir::write, rerows * d * 4);
    k.add_transfer(Tensor::dQ, Dir::write, n * d * e);
    k.add_transfer(Tensor::dK, Dir::write, n * d * e);
    k.add_transfer(Tensor::dV, Dir::write, n * d * e);
    k.flops = flops_model::flash1_bwd_tile(g.br, g.bc, d).scaled(tiles);
  }
}

void standard_counts(const Config& c, const std::string& name, Counts& k) {
  const int64_t n = c.problem.seqlen, d = c.problem.headdim, e = element_bytes(c.problem.dtype);
  const int64_t t = ceil_div(n, 128), td = ceil_div(d, 128);  // modelled GEMM tiles
  const int64_t nn = n * n * e, nd = n * d * e;
  const Tensor p_used = c.problem.dropout > 0 ? Tensor::P_drop : Tensor::P;
  auto gemm_nt = [&](Tensor a, Tensor b, Tensor out) {  // N×N = A·Bᵀ: A, B read t times
    k.add_transfer(a, Dir::read, t * nd);
    k.add_transfer(b, Dir::read, t * nd);
    k.add_transfer(out, Dir::write, nn);
    k.flops = flops_model::gemm(n, n, d);
  };
  auto gemm_nn = [&](Tensor a, Tensor b, Tensor out) {  // N×d = A·B: A td times, B t times
    k.add_transfer(a, Dir::read, td * nn);
    k.add_transfer(b, Dir::read, t * nd);
    k.add_transfer(out, Dir::write, nd);
    k.flops = flops_model::gemm(n, d, n);
  };
  auto rowwise = [&](std::initializer_list<Tensor> reads, Tensor out, Flops row) {
    for (Tensor r : reads) k.add_transfer(r, Dir::read, nn);
    k.add_transfer(out, Dir::write, nn);
    k.flops = row.scaled(n);
  };
  if (name == "gemm_qk") gemm_nt(Tensor::Q, Tensor::K, Tensor::S);
  else if (name == "mask") rowwise({Tensor::S}, Tensor::S, flops_model::mask_row(n));
  else if (name == "softmax") rowwise({Tensor::S}, Tensor::P, flops_model::softmax_row(n));
  else if (name == "dropout") rowwise({Tensor::P}, Tensor::P_drop, flops_model::dropout_row(n));
  else if (name == "gemm_pv") gemm_nn(p_used, Tensor::V, Tensor::O);
  else if (name == "gemm_dv") gemm_nn(p_used, Tensor::dO, Tensor::dV);
  else if (name == "gemm_dp") gemm_nt(Tensor::dO, Tensor::V, Tensor::dP);
  else if (name == "dropout_bwd") rowwise({Tensor::dP}, Tensor::dP, flops_model::dropout_row(n));
  else if (name == "rowsum_do_o") {
    k.add_transfer(Tensor::dO, Dir::read, nd);
    k.add_transfer(Tensor::O, Dir::read, nd);
    k.add_transfer(Tensor::delta, Dir::write, n * 4);
    k.flops = flops_model::rowsum_rows(n, d);
  } else if (name == "softmax_bwd") {
    rowwise({Tensor::P, Tensor::dP}, Tensor::dS, flops_model::softmax_bwd_row(n));
    k.add_transfer(Tensor::delta, Dir::read, n * 4);
  } else if (name == "gemm_dq") gemm_nn(Tensor::dS, Tensor::K, Tensor::dQ);
  else if (name == "gemm_dk") gemm_nn(Tensor::dS, Tensor::Q, Tensor::dK);
}

}  // namespace

std::vector<KernelCounts> closed_form_counts(const Config& config) {
  std::vector<KernelCounts> out;
  // The kernel list, grids and resources come from the schedule; the counts do not.
  for (const KernelSchedule& s : build_schedule(config)) {
    Counts per_head;
    switch (config.algo) {
      case Algo::standard: standard_counts(config, s.name, per_head); break;
      case Algo::flash1: flash1_counts(config, s.name, per_head); break;
      case Algo::flash2:
      case Algo::blocksparse: flash2_counts(config, s.name, per_head); break;
    }
    out.push_back({s.name, per_head.scaled(s.heads), s.grid_blocks(), s.threads_per_block,
                   s.smem_bytes});
  }
  return out;
}

}  // namespace flashio::sim
