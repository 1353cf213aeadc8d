// Standard attention (the paper's Algorithm 0): each step its own kernel, every N × N result
// materialised in HBM. docs/schedules.md, "standard", states the approximation used for
// cuBLAS's GEMMs (128 × 128 output tiles streaming the whole inner dimension).
#include "sim/flops_model.h"
#include "sim/kernel_catalog.h"
#include "sim/schedule.h"

namespace flashio::sim {
namespace {

constexpr int64_t kGemmTile = kStandardGemmTile;

// One GEMM's (or row kernel's) extent per grid head: n query rows (Nq, or the g·Nq rows of a
// K/V head's group, head after head, when the GEMM takes the group's rows: sim/config.h,
// gqa_pack) against nk keys.
struct Shape {
  int64_t n, nk, d, heads, e;
  GemmKeyTiles keys;
  TileGrid rows_of;  // which heads a grid head's query-side and K/V-side tensors name
  int64_t tiles_n() const { return ceil_div(n, kGemmTile); }
  int64_t tiles_d() const { return ceil_div(d, kGemmTile); }
  int64_t rows(int64_t a, int64_t extent) const { return std::min(kGemmTile, extent - a * kGemmTile); }
  int64_t calls() const { return standard_gemm_calls(nk); }
  int64_t head_of(Tensor t, int64_t grid_head) const {
    return is_kv_tensor(t) ? rows_of.kv_head(grid_head) : rows_of.query_head(grid_head);
  }
};

Shape shape_of(const Config& c, bool group_rows) {
  const Problem& p = c.problem;
  const TileGrid g = tile_grid(c, group_rows);
  return {g.n, g.nk, p.headdim, grid_heads(p, group_rows), element_bytes(p.dtype), gemm_key_tiles(g.nk), g};
}

// What every modelled cuBLAS GEMM launch shares: 256 threads, two stages of 128 × 64 A and B
// panels in shared memory (an approximation, docs/schedules.md).
KernelSchedule gemm_kernel(KernelKind kind, const Shape& sh, int64_t blocks_per_head, int64_t transfers_per_block) {
  KernelSchedule k;
  k.kind = kind;
  k.heads = sh.heads;
  k.blocks_per_head = blocks_per_head;
  k.threads_per_block = 256;
  k.smem_bytes = 2 * kGemmTile * 64 * sh.e * 2;
  k.transfers_per_block = transfers_per_block;
  return k;
}

// C (n × Nk) = A (n × d) · Bᵀ (B: Nk × d, the keys): gemm_qk, gemm_dp. A's row tiles × the key tiles.
KernelSchedule gemm_nt(KernelKind kind, const Shape& sh, Tensor a_t, Tensor b_t, Tensor c_t) {
  // Blocks saturate before the limits are checked; A, B in, C out.
  KernelSchedule k = gemm_kernel(kind, sh, saturating_mul(sh.tiles_n(), sh.keys.count()), 3);
  k.emit_block = [sh, a_t, b_t, c_t](int64_t bh, int64_t blk, ScheduleSink& s) {
    const GemmKeyTiles::Block t = sh.keys.key_fastest(sh.tiles_n(), blk);
    const int64_t ra = sh.rows(t.other, sh.n), k0 = sh.keys.start(t.key), rb = sh.keys.extent(t.key);
    s.transfer({a_t, Dir::read, sh.head_of(a_t, bh), t.other * kGemmTile, ra, 0, sh.d});
    s.transfer({b_t, Dir::read, sh.head_of(b_t, bh), k0, rb, 0, sh.d});
    s.compute(flops_model::gemm(ra, rb, sh.d));
    s.transfer({c_t, Dir::write, sh.head_of(c_t, bh), t.other * kGemmTile, ra, k0, rb});
  };
  k.head_counts = [sh, a_t, b_t, c_t](int64_t) {  // A read once per key tile, B once per row tile of A
    Counts h;
    h.add_transfer(a_t, Dir::read, checked_mul(sh.keys.count(), sh.n, sh.d, sh.e));
    h.add_transfer(b_t, Dir::read, checked_mul(sh.tiles_n(), sh.nk, sh.d, sh.e));
    h.add_transfer(c_t, Dir::write, checked_mul(sh.n, sh.nk, sh.e));
    h.flops = flops_model::gemm(sh.n, sh.nk, sh.d);
    return h;
  };
  return k;
}

// C (n × d) = A (n × Nk) · B (Nk × d) over the keys (A's columns, B's rows): gemm_pv, gemm_dq.
// Output tile (a, b) of the main call reads A's rows [a] and B's columns [b] over the main
// call's keys; the second call's reads them over the keys left and adds to C (reads it back).
KernelSchedule gemm_nn(KernelKind kind, const Shape& sh, Tensor a_t, Tensor b_t, Tensor c_t) {
  // A, B (and C in the second call) in; C out.
  KernelSchedule k = gemm_kernel(kind, sh, saturating_mul(saturating_mul(sh.tiles_n(), sh.tiles_d()), sh.calls()), 4);
  k.emit_block = [sh, a_t, b_t, c_t](int64_t bh, int64_t blk, ScheduleSink& s) {
    const int64_t per_call = sh.tiles_n() * sh.tiles_d();
    const bool second = blk >= per_call;
    const int64_t a = (blk % per_call) / sh.tiles_d(), b = blk % sh.tiles_d();
    const int64_t ra = sh.rows(a, sh.n), cb = sh.rows(b, sh.d);
    const int64_t k0 = second ? sh.keys.main : 0, kn = second ? sh.nk - sh.keys.main : sh.keys.main;
    s.transfer({a_t, Dir::read, sh.head_of(a_t, bh), a * kGemmTile, ra, k0, kn});
    s.transfer({b_t, Dir::read, sh.head_of(b_t, bh), k0, kn, b * kGemmTile, cb});
    if (second) s.transfer({c_t, Dir::read, sh.head_of(c_t, bh), a * kGemmTile, ra, b * kGemmTile, cb});
    s.compute(flops_model::gemm(ra, cb, kn));
    s.transfer({c_t, Dir::write, sh.head_of(c_t, bh), a * kGemmTile, ra, b * kGemmTile, cb});
  };
  k.head_counts = [sh, a_t, b_t, c_t](int64_t) {  // A once per column tile of d, B once per row tile
    Counts h;
    h.add_transfer(a_t, Dir::read, checked_mul(sh.tiles_d(), sh.n, sh.nk, sh.e));
    h.add_transfer(b_t, Dir::read, checked_mul(sh.tiles_n(), sh.nk, sh.d, sh.e));
    if (sh.calls() > 1) h.add_transfer(c_t, Dir::read, checked_mul(sh.n, sh.d, sh.e));
    h.add_transfer(c_t, Dir::write, checked_mul(sh.calls(), sh.n, sh.d, sh.e));
    h.flops = flops_model::gemm(sh.n, sh.d, sh.nk);
    return h;
  };
  return k;
}

// C (Nk × d, a row per key) = Aᵀ (A: n × Nk) · B (n × d): gemm_dv, gemm_dk. Output tile (a, b)
// reads A's columns of key tile a, all n rows, and B's columns [b], all n rows (a K/V head's
// group's rows: the sum over its query heads is the GEMM's reduction).
KernelSchedule gemm_tn(KernelKind kind, const Shape& sh, Tensor a_t, Tensor b_t, Tensor c_t) {
  KernelSchedule k = gemm_kernel(kind, sh, saturating_mul(sh.keys.count(), sh.tiles_d()), 3);
  k.emit_block = [sh, a_t, b_t, c_t](int64_t bh, int64_t blk, ScheduleSink& s) {
    const GemmKeyTiles::Block t = sh.keys.key_slowest(sh.tiles_d(), blk);
    const int64_t k0 = sh.keys.start(t.key), kn = sh.keys.extent(t.key), cb = sh.rows(t.other, sh.d);
    s.transfer({a_t, Dir::read, sh.head_of(a_t, bh), 0, sh.n, k0, kn});
    s.transfer({b_t, Dir::read, sh.head_of(b_t, bh), 0, sh.n, t.other * kGemmTile, cb});
    s.compute(flops_model::gemm(kn, cb, sh.n));
    s.transfer({c_t, Dir::write, sh.head_of(c_t, bh), k0, kn, t.other * kGemmTile, cb});
  };
  k.head_counts = [sh, a_t, b_t, c_t](int64_t) {  // A once per column tile of d, B once per key tile
    Counts h;
    h.add_transfer(a_t, Dir::read, checked_mul(sh.tiles_d(), sh.n, sh.nk, sh.e));
    h.add_transfer(b_t, Dir::read, checked_mul(sh.keys.count(), sh.n, sh.d, sh.e));
    h.add_transfer(c_t, Dir::write, checked_mul(sh.nk, sh.d, sh.e));
    h.flops = flops_model::gemm(sh.nk, sh.d, sh.n);
    return h;
  };
  return k;
}

// An element-wise pass over the Nq × Nk matrix, one row of Nk per block: reads the row of each tensor
// in `reads` (and the row's delta value when `reads_delta`), writes the row of `out`.
KernelSchedule rowwise(KernelKind kind, const Shape& sh, std::vector<Tensor> reads,
                       bool reads_delta, Tensor out, Flops (*row_flops)(int64_t)) {
  KernelSchedule k;
  k.kind = kind;
  k.heads = sh.heads;
  k.blocks_per_head = sh.n;
  const RowKernelLaunch launch = standard_row_kernel_launch(kind, sh.nk);  // sim/kernel_catalog.h
  k.threads_per_block = launch.threads;
  k.registers_per_thread = launch.registers;
  k.smem_bytes = launch.smem_bytes;
  k.transfers_per_block = static_cast<int64_t>(reads.size()) + (reads_delta ? 1 : 0) + 1;
  k.emit_block = [sh, reads, reads_delta, out, row_flops](int64_t bh, int64_t row, ScheduleSink& s) {
    for (Tensor t : reads) s.transfer({t, Dir::read, bh, row, 1, 0, sh.nk});
    if (reads_delta) s.transfer({Tensor::delta, Dir::read, bh, row, 1, 0, 1});
    s.compute(row_flops(sh.nk));
    s.transfer({out, Dir::write, bh, row, 1, 0, sh.nk});
  };
  k.head_counts = [sh, reads, reads_delta, out, row_flops](int64_t) {
    Counts h;
    for (Tensor t : reads) h.add_transfer(t, Dir::read, checked_mul(sh.n, sh.nk, sh.e));
    if (reads_delta) h.add_transfer(Tensor::delta, Dir::read, checked_mul(sh.n, 4));
    h.add_transfer(out, Dir::write, checked_mul(sh.n, sh.nk, sh.e));
    h.flops = row_flops(sh.nk).scaled(sh.n);
    return h;
  };
  return k;
}

}  // namespace

std::vector<KernelSchedule> standard_schedule(const Config& c) {
  const Problem& p = c.problem;
  // Row kernels and rowsum take one query head's rows; the GEMMs per query head take the
  // group's rows when packed (gqa_pack); gemm_dv and gemm_dk always do (dK, dV are per K/V head).
  const Shape sh = shape_of(c, false), packed = shape_of(c, c.gqa_pack), group = shape_of(c, true);
  const bool dropout = p.dropout > 0.0;
  const Tensor p_used = dropout ? Tensor::P_drop : Tensor::P;  // what multiplies V
  std::vector<KernelSchedule> kernels;

  if (has_forward(p.pass)) {
    kernels.push_back(gemm_nt(KernelKind::gemm_qk, packed, Tensor::Q, Tensor::K, Tensor::S));
    if (p.mask) kernels.push_back(rowwise(KernelKind::mask, sh, {Tensor::S}, false, Tensor::S, &flops_model::mask_row));
    kernels.push_back(rowwise(KernelKind::softmax, sh, {Tensor::S}, false, Tensor::P, &flops_model::softmax_row));
    if (dropout)
      kernels.push_back(rowwise(KernelKind::dropout, sh, {Tensor::P}, false, Tensor::P_drop, &flops_model::dropout_row));
    kernels.push_back(gemm_nn(KernelKind::gemm_pv, packed, p_used, Tensor::V, Tensor::O));
  }
  if (has_backward(p.pass)) {
    kernels.push_back(gemm_tn(KernelKind::gemm_dv, group, p_used, Tensor::dO, Tensor::dV));
    kernels.push_back(gemm_nt(KernelKind::gemm_dp, packed, Tensor::dO, Tensor::V, Tensor::dP));
    if (dropout)
      kernels.push_back(rowwise(KernelKind::dropout_bwd, sh, {Tensor::dP}, false, Tensor::dP, &flops_model::dropout_row));
    {
      KernelSchedule k;  // D = rowsum(dO ∘ O), 128 rows per block
      k.kind = KernelKind::rowsum_do_o;
      k.heads = sh.heads;
      k.blocks_per_head = sh.tiles_n();
      k.threads_per_block = 128;  // kernels/standard_attention.cu launches 128 per block
      k.transfers_per_block = 3;
      k.emit_block = [sh](int64_t bh, int64_t a, ScheduleSink& s) {
        const int64_t r = sh.rows(a, sh.n);
        s.transfer({Tensor::dO, Dir::read, bh, a * kGemmTile, r, 0, sh.d});
        s.transfer({Tensor::O, Dir::read, bh, a * kGemmTile, r, 0, sh.d});
        s.compute(flops_model::rowsum_rows(r, sh.d));
        s.transfer({Tensor::delta, Dir::write, bh, a * kGemmTile, r, 0, 1});
      };
      k.head_counts = [sh](int64_t) {
        Counts h;
        h.add_transfer(Tensor::dO, Dir::read, checked_mul(sh.n, sh.d, sh.e));
        h.add_transfer(Tensor::O, Dir::read, checked_mul(sh.n, sh.d, sh.e));
        h.add_transfer(Tensor::delta, Dir::write, checked_mul(sh.n, 4));
        h.flops = flops_model::rowsum_rows(sh.n, sh.d);
        return h;
      };
      kernels.push_back(std::move(k));
    }
    kernels.push_back(rowwise(KernelKind::softmax_bwd, sh, {Tensor::P, Tensor::dP}, true, Tensor::dS,
                              &flops_model::softmax_bwd_row));
    kernels.push_back(gemm_nn(KernelKind::gemm_dq, packed, Tensor::dS, Tensor::K, Tensor::dQ));
    kernels.push_back(gemm_tn(KernelKind::gemm_dk, group, Tensor::dS, Tensor::Q, Tensor::dK));
  }
  return kernels;
}

}  // namespace flashio::sim
