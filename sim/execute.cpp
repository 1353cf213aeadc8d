// execute (sim/execute.h): the loop nests of docs/schedules.md run on plain matrices, counting
// every tile moved. Written from the contract, not from sim/schedule_*.cpp, so that the tests'
// "execute counts what the walk counts" compares two implementations.
#include "sim/execute.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "kernels/dropout_keep.h"
#include "sim/checked.h"
#include "sim/errors.h"
#include "sim/limits.h"
#include "sim/flops_model.h"
#include "sim/kernel_catalog.h"
#include "sim/kernel_choice.h"
#include "sim/online_softmax.h"
#include "sim/paged_kv.h"

namespace flashio::sim {
namespace {

constexpr double kMinusInf = -std::numeric_limits<double>::infinity();
// docs/schedules.md, "standard": cuBLAS's GEMMs are modelled as 128 × 128 output tiles.
constexpr int64_t kGemmTile = kStandardGemmTile;

// ---------------------------------------------------------------------------------------------
// The off-chip memory of every head, and the one door to it: load, store and atomic_add count
// the bytes of the tile they move (rows · cols · bytes of the tensor's storage type) into the
// running kernel's Counts. A tensor is one matrix of its heads' rows one after another ((batch,
// head) outermost, sim/tensor.h; a varlen batch's packed sequences, RowLayout), so a tile of a K/V
// head's group's query rows is one block of it; a tile names the head of its first row. `at` is
// the uncounted access for inputs and results.
class Memory {
 public:
  // layout: split-KV's count, which sizes the partial results, and the paged cache's page size
  // (sim/tensor.h). Paged, the block table holds the table flashio runs with (sim/paged_kv.h).
  Memory(const Problem& p, const TensorLayout& layout)
      : problem_(p), layout_(layout), pages_(page_table(p.batch, p.keys(), layout.page_size)), rows_(p) {
    for (int t = 0; t < kTensorCount; ++t) shapes_[t] = tensor_shape(static_cast<Tensor>(t), p, layout);
    const std::vector<int64_t> entries = block_table_entries(pages_);
    for (size_t l = 0; l < entries.size(); ++l)
      at(Tensor::block_table)(static_cast<Eigen::Index>(l), 0) = static_cast<double>(entries[l]);
  }

  Matrix& at(Tensor t) {
    Matrix& m = tensors_[static_cast<int>(t)];
    if (m.size() == 0) {
      const TensorShape& s = shape(t);
      m = Matrix::Zero(s.total_rows(problem_.batch), s.cols);
    }
    return m;
  }
  // Head h of tensor t: its rows × cols (uncounted, for inputs and results).
  auto head(Tensor t, int64_t h) {
    const TensorShape& s = shape(t);
    return at(t).middleRows(rows_.first_row(s, h), rows_.head_rows(s, h));
  }
  Matrix load(Tensor t, int64_t h, int64_t row0, int64_t rows, int64_t col0, int64_t cols) {
    count(t, Dir::read, rows, cols);
    return at(t).block(first_row(t, h, row0), col0, rows, cols);
  }
  // A whole TMA box's rows past the matrix (loads_whole_boxes, sim/kernel_catalog.h): zeros,
  // counted as moved, nothing read.
  void load_zero_rows(Tensor t, int64_t rows, int64_t cols) { count(t, Dir::read, rows, cols); }
  void store(Tensor t, int64_t h, int64_t row0, int64_t col0, const Matrix& tile) {
    count(t, Dir::write, tile.rows(), tile.cols());
    at(t).block(first_row(t, h, row0), col0, tile.rows(), tile.cols()) = tile;
  }
  // flash2's dQ: fp32 atomic adds, counted as the write of the tile (docs/schedules.md).
  void atomic_add(Tensor t, int64_t h, int64_t row0, int64_t col0, const Matrix& tile) {
    count(t, Dir::write, tile.rows(), tile.cols());
    at(t).block(first_row(t, h, row0), col0, tile.rows(), tile.cols()) += tile;
  }
  // A tile of K or V from the paged cache (sim/paged_kv.h): `entries` are the block-table entries
  // of the pages it touches, as the kernel read them; each row is gathered from its page of the
  // physical (pages, Hkv, P, d) copy, which the logical heads are scattered into at first use.
  Matrix load_paged(Tensor t, int64_t kvh, int64_t row0, int64_t rows, const Matrix& entries) {
    count(t, Dir::read, rows, problem_.headdim);
    const int64_t p = pages_.page_size, hkv = problem_.kv_heads_count();
    const Matrix& phys = physical(t);
    Matrix tile(rows, problem_.headdim);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t key = row0 + r;
      const auto page = static_cast<int64_t>(entries(key / p - row0 / p, 0));
      tile.row(r) = phys.row((page * hkv + kvh % hkv) * p + key % p);
    }
    return tile;
  }
  void compute(const Flops& f) {
    if (counts) counts->flops += f;
  }

  Counts* counts = nullptr;  // the running kernel's; null while running uncounted

 private:
  const TensorShape& shape(Tensor t) const { return shapes_[static_cast<int>(t)]; }
  Matrix& physical(Tensor t) {
    Matrix& m = physical_[t == Tensor::K ? 0 : 1];
    if (m.size() != 0) return m;
    const int64_t p = pages_.page_size, hkv = problem_.kv_heads_count(), nk = problem_.keys();
    m = Matrix::Zero(pages_.pages * hkv * p, problem_.headdim);
    for (int64_t bkv = 0; bkv < problem_.batch * hkv; ++bkv)
      for (int64_t key = 0; key < nk; ++key)
        m.row((pages_.physical(bkv / hkv, key / p) * hkv + bkv % hkv) * p + key % p) = at(t).row(bkv * nk + key);
    return m;
  }
  int64_t first_row(Tensor t, int64_t h, int64_t row0) { return rows_.first_row(shape(t), h) + row0; }
  void count(Tensor t, Dir dir, int64_t rows, int64_t cols) {
    if (counts) counts->add_transfer(t, dir, rows * cols * shape(t).element_bytes);
  }
  Problem problem_;
  TensorLayout layout_;
  PageTable pages_;
  RowLayout rows_;
  std::array<TensorShape, kTensorCount> shapes_;
  std::array<Matrix, kTensorCount> tensors_;
  std::array<Matrix, 2> physical_;  // paged K, V
};

// A kernel launch: its name and geometry as docs/schedules.md (and the kernels) give them.
struct Launch {
  KernelKind kind;
  int64_t heads = 0;  // grid heads: B·H, or B·Hkv for a kernel over the groups' rows
  int64_t blocks_per_head = 0;
  int64_t threads_per_block = 0;
  int64_t smem_bytes = 0;
};
using BlockBody = std::function<void(Memory& mem, int64_t grid_head, int64_t block)>;

// Runs the kernels in launch order: every block of every grid head (linear launch index
// block + blocks_per_head · grid_head) before the next kernel starts.
class Launcher {
 public:
  Launcher(Memory& memory, bool counting) : memory_(memory), counting_(counting) {}
  void launch(const Launch& l, const BlockBody& body) {
    KernelCounts k{l.kind, {}, l.heads * l.blocks_per_head, l.threads_per_block, l.smem_bytes};
    memory_.counts = counting_ ? &k.counts : nullptr;
    for (int64_t gh = 0; gh < l.heads; ++gh)
      for (int64_t b = 0; b < l.blocks_per_head; ++b) body(memory_, gh, b);
    memory_.counts = nullptr;
    if (counting_) kernels.push_back(std::move(k));
  }
  std::vector<KernelCounts> kernels;

 private:
  Memory& memory_;
  bool counting_;
};

// Which heads a grid head's tiles name (docs/shapes.md): over one query head's rows, query head
// gh and its group's K/V head gh / g; over a K/V head's group's rows, the group's first query
// head gh · g (its rows followed by the others') and K/V head gh.
struct HeadMap {
  int64_t group = 1;     // query heads per K/V head
  bool group_rows = false;
  int64_t query_head(int64_t gh) const { return group_rows ? gh * group : gh; }
  int64_t kv_head(int64_t gh) const { return group_rows ? gh : gh / group; }
  int64_t head_of(Tensor t, int64_t gh) const { return is_kv_tensor(t) ? kv_head(gh) : query_head(gh); }
};

// ---------------------------------------------------------------------------------------------
// The tiled algorithms' shared facts: tile sizes, which tiles are visited, and scores of a tile.
struct Tiles : HeadMap {
  int64_t n, nq, nk, d, br, bc, tr, tc, e;
  int64_t heads;  // grid heads
  int64_t page_size = 0, grid_heads_per_batch = 1;  // a paged cache's P (0: contiguous); its sequences
  double scale;  // 1/√d
  KeyBand band;  // the keys a query sees by position (causal, a window)
  std::vector<unsigned char> visited;  // tr × tc
  std::vector<int64_t> first_j, last_j;  // per row tile; −1 when it visits nothing
  std::shared_ptr<const BlockMask> mask;  // blocksparse's (null when dense): zero blocks masked in tiles
  // Fused dropout (flash1, flash2): its probability (0: none) and seed, execute's
  // (kernels/dropout_keep.h; dropout_tile below).
  double dropout = 0;
  uint64_t seed = 0;

  bool dropping() const { return dropout > 0; }
  int64_t rows_in(int64_t i) const { return std::min(br, n - i * br); }
  int64_t cols_in(int64_t j) const { return std::min(bc, nk - j * bc); }
  bool visits(int64_t i, int64_t j) const { return visited[i * tc + j] != 0; }
};

// The tiles of the configuration over one query head's rows, or over a K/V head's group's
// (docs/shapes.md): written from the contract, not from TileGrid.
Tiles make_tiles(const Config& c, bool group_rows, uint64_t seed) {
  const Problem& p = c.problem;
  Tiles t;
  t.dropout = p.dropout;
  t.seed = seed;
  t.group = p.group();
  t.group_rows = group_rows;
  t.heads = group_rows ? p.batch * p.kv_heads_count() : p.batch * p.heads;
  t.grid_heads_per_batch = grid_heads_per_batch(p, group_rows);
  t.page_size = c.page_size;
  t.nq = p.seqlen;
  t.nk = p.keys();
  t.n = group_rows ? t.group * t.nq : t.nq;
  t.d = p.headdim;
  t.br = c.tiling.block_r;
  t.bc = c.tiling.block_c;
  t.tr = (t.n + t.br - 1) / t.br;
  t.tc = (t.nk + t.bc - 1) / t.bc;
  t.e = element_bytes(p.dtype);
  t.scale = 1.0 / std::sqrt(static_cast<double>(t.d));
  t.band = p.band_of();
  t.mask = TileFilter(c).mask();
  // A row tile visits the key tiles from the first holding a key one of its rows' queries sees
  // to the last holding one (the band: causal key ≤ query + Nk − Nq, a window's two sides): the
  // kernels loop over that range. With stacked rows a tile crossing heads and a window can leave
  // tiles inside the range that no row sees; they are visited (and masked) all the same. For
  // blocksparse a visited tile also overlaps a nonzero block (Proposition 4).
  t.visited.assign(static_cast<size_t>(t.tr * t.tc), 0);
  t.first_j.assign(static_cast<size_t>(t.tr), -1);
  t.last_j.assign(static_cast<size_t>(t.tr), -1);
  for (int64_t i = 0; i < t.tr; ++i) {
    int64_t first_key = t.nk, last_key = -1;
    for (int64_t r = i * t.br; r < i * t.br + t.rows_in(i); ++r) {
      first_key = std::min(first_key, t.band.first_key(r % t.nq));
      last_key = std::max(last_key, t.band.last_key(r % t.nq, t.nk));
    }
    for (int64_t j = 0; j < t.tc; ++j) {
      bool kept = first_key <= j * t.bc + t.cols_in(j) - 1 && last_key >= j * t.bc;
      if (kept && t.mask)
        kept = t.mask->overlaps_nonzero(i * t.br, i * t.br + t.rows_in(i), j * t.bc, j * t.bc + t.cols_in(j));
      if (!kept) continue;
      t.visited[i * t.tc + j] = 1;
      if (t.first_j[i] < 0) t.first_j[i] = j;
      t.last_j[i] = j;
    }
  }
  return t;
}

// S_ij = scale · Q_i K_jᵀ, with the causal mask applied inside the tile (−∞ where the key comes
// after what the row's query sees) and blocksparse's: −∞ in the tile's part of the mask's zero
// blocks (T × T tokens).
Matrix tile_scores(const Tiles& t, const Matrix& qi, const Matrix& kj, int64_t i, int64_t j) {
  Matrix s = t.scale * (qi * kj.transpose());
  if (t.band.bounded())
    for (Eigen::Index r = 0; r < s.rows(); ++r)
      for (Eigen::Index c = 0; c < s.cols(); ++c)
        if (!t.band.sees((i * t.br + r) % t.nq, j * t.bc + c, t.nk)) s(r, c) = kMinusInf;
  if (t.mask)
    for (Eigen::Index r = 0; r < s.rows(); ++r)
      for (Eigen::Index c = 0; c < s.cols(); ++c)
        if (!t.mask->keeps(i * t.br + r, j * t.bc + c)) s(r, c) = kMinusInf;
  return s;
}

// P = e^(S − L) per row (backward recomputation); rows with L = −∞ (no kept score) give 0.
Matrix probabilities_from_lse(const Matrix& s, const Matrix& lse) {
  Matrix p(s.rows(), s.cols());
  for (Eigen::Index r = 0; r < s.rows(); ++r)
    for (Eigen::Index c = 0; c < s.cols(); ++c)
      p(r, c) = lse(r, 0) == kMinusInf ? 0.0 : exp_difference(s(r, c), lse(r, 0), 0.0);
  return p;
}

Matrix column(const Eigen::VectorXd& v) { return Matrix(v); }

// One row of dropout multipliers (sim/execute.h, dropout_multipliers): `keys` keys from key0 of
// query `query` of query head bh, by the one keep rule (kernels/dropout_keep.h), so the forward
// and the backward regenerate the same decisions, at any tiling.
Matrix dropout_row(double p, uint64_t seed, int64_t bh, int64_t query, int64_t key0, int64_t keys) {
  const uint32_t threshold = dropout::threshold_of(p);
  const double kept = dropout::keep_scale(p);
  const uint32_t row_key = dropout::row_key(seed, bh, query);
  Matrix z(1, keys);
  for (int64_t c = 0; c < keys; ++c) {
    const int64_t key = key0 + c;
    z(0, c) = dropout::keeps(dropout::pair_draw(row_key, key), key, threshold) ? kept : 0.0;
  }
  return z;
}

// Z of visited tile (i, j) of grid head gh: row r of the grid head's rows is query r mod Nq of
// query head query_head(gh) + ⌊r / Nq⌋ (a group's stacked rows are its heads' one after another).
Matrix dropout_tile(const Tiles& t, int64_t gh, int64_t i, int64_t j) {
  Matrix z(t.rows_in(i), t.cols_in(j));
  for (int64_t r = 0; r < z.rows(); ++r) {
    const int64_t row = i * t.br + r;
    z.row(r) = dropout_row(t.dropout, t.seed, t.query_head(gh) + row / t.nq, row % t.nq, j * t.bc, t.cols_in(j));
  }
  return z;
}

// x ∘ Z, or x where there is no dropout (Z empty).
Matrix dropped(const Matrix& x, const Matrix& z) { return z.size() == 0 ? x : Matrix(x.cwiseProduct(z)); }

// ---------------------------------------------------------------------------------------------
// flash2's forward block over key tiles [j0, j1) of row tile i: Q_i read once and kept on chip,
// K_j, V_j for every visited j ascending, u, ℓ, m on chip; the state to normalise and write.
// From a paged cache, each K_j, V_j is gathered through the block-table entries of its pages.
// `boxes`: the kernel loads whole TMA boxes, Br rows of Q and Bc of K and V, zeros past the matrix.
OnlineSoftmax flash2_row_tile(Memory& mem, const Tiles& t, int64_t gh, int64_t i, int64_t j0, int64_t j1,
                              bool boxes = false) {
  const int64_t qh = t.query_head(gh), kvh = t.kv_head(gh);
  const Matrix qi = mem.load(Tensor::Q, qh, i * t.br, t.rows_in(i), 0, t.d);
  if (boxes) mem.load_zero_rows(Tensor::Q, t.br - t.rows_in(i), t.d);
  OnlineSoftmax state = online_softmax_start(t.rows_in(i), t.d);
  for (int64_t j = j0; j < j1; ++j) {
    if (!t.visits(i, j)) continue;
    const int64_t cj = t.cols_in(j), key0 = j * t.bc;
    Matrix kj, vj;
    if (t.page_size > 0) {
      const int64_t first = key0 / t.page_size, pages = (key0 + cj - 1) / t.page_size - first + 1;
      const Matrix entries = mem.load(Tensor::block_table, gh / t.grid_heads_per_batch, first, pages, 0, 1);
      kj = mem.load_paged(Tensor::K, kvh, key0, cj, entries);
      vj = mem.load_paged(Tensor::V, kvh, key0, cj, entries);
    } else {
      kj = mem.load(Tensor::K, kvh, key0, cj, 0, t.d);
      if (boxes) mem.load_zero_rows(Tensor::K, t.bc - cj, t.d);
      vj = mem.load(Tensor::V, kvh, key0, cj, 0, t.d);
      if (boxes) mem.load_zero_rows(Tensor::V, t.bc - cj, t.d);
    }
    // Fused dropout: P̃ ∘ Z multiplies V, ℓ and m are the undropped P̃'s (paper Algorithm 2).
    const Matrix z = t.dropping() ? dropout_tile(t, gh, i, j) : Matrix();
    online_softmax_merge(state, tile_scores(t, qi, kj, i, j), vj, Rescale::both, t.dropping() ? &z : nullptr);
    mem.compute(flops_model::flash2_fwd_tile(t.br, t.bc, t.d, t.dropping()));
  }
  mem.compute(flops_model::flash2_fwd_finish(t.br, t.d));
  return state;
}

// The tiles of each sequence (docs/shapes.md, "Per-sequence key lengths"): with padding
// (sequence_keys: key lengths, or flash's --mask) those of a problem whose Nk is the sequence's
// length (its tiles, causal offset and split partition; the rows stay keys of the Nk-row cache),
// else every sequence's the configuration's. `full` is the configuration's own (Nk keys): the
// launch's grid and the backward's dK and dV tiles. A varlen batch's sequences (docs/shapes.md,
// "Variable-length batches") are problems of n_b queries and keys alone, and `full` the grid its
// kernels launch, over the longest, n_max; a block past its sequence's tiles does nothing.
struct SequenceTiles {
  Tiles full;
  std::vector<Tiles> distinct;
  std::vector<size_t> of_batch;  // empty: `full` for all
  const Tiles& of(int64_t grid_head) const {
    return of_batch.empty() ? full : distinct[of_batch[static_cast<size_t>(grid_head / full.grid_heads_per_batch)]];
  }
};
SequenceTiles sequence_tiles(const Config& c, bool group_rows, uint64_t seed) {
  SequenceTiles st{make_tiles(c.problem.varlen ? with_keys(c, c.problem.longest_sequence()) : c, group_rows, seed), {}, {}};
  if (!pads_keys(c)) return st;
  std::map<int64_t, size_t> index_of;  // key length → its Tiles in distinct
  for (int64_t b = 0; b < c.problem.batch; ++b) {
    const int64_t len = sequence_keys(c, b);
    const auto [at, added] = index_of.try_emplace(len, st.distinct.size());
    if (added) st.distinct.push_back(make_tiles(with_keys(c, len), group_rows, seed));
    st.of_batch.push_back(at->second);
  }
  return st;
}

// flash2 and blocksparse: FlashAttention-2's order (Q outside). docs/schedules.md, "flash2".
// `boxes`: the built kernel loads whole TMA boxes (loads_whole_boxes).
void flash2_forward(Launcher& run, const SequenceTiles& st, Algo algo, bool boxes) {
  const Tiles& t0 = st.full;
  run.launch({flash2_kind(algo, Flash2Role::fwd), t0.heads, t0.tr, 128, (t0.br + 2 * t0.bc) * t0.d * t0.e},
             [&st, boxes](Memory& mem, int64_t gh, int64_t i) {
               const Tiles& t = st.of(gh);
               if (i >= t.tr) return;  // past a packed sequence's rows
               const int64_t qh = t.query_head(gh);
               const OnlineSoftmax state = flash2_row_tile(mem, t, gh, i, 0, t.tc, boxes);
               // Normalised once, written once, with L = m + log ℓ for the backward.
               mem.store(Tensor::O, qh, i * t.br, 0, online_softmax_output(state));
               mem.store(Tensor::lse, qh, i * t.br, 0, column(online_softmax_lse(state)));
             });
}

// Split-KV (docs/shapes.md, "Split-KV"), from the contract: block (s, i) of a grid head runs row
// tile i over split s's key tiles [s·chunk, min((s + 1)·chunk, Tc)), chunk = ⌈Tc / S⌉, and
// writes its rows' O (normalised by its own ℓ) and L into split s's copy of o_accum, lse_accum
// (head s·B·H + the rows' query head); a split that visits no tile reads nothing and writes zeros
// and −∞. The combine, a block per kSplitCombineRows query rows of a query head, reads the S
// partial L, then the S partial O, and writes L = log Σ e^(L_s) and O = Σ e^(L_s − L)·O_s.
void flash2_split_forward(Launcher& run, const SequenceTiles& st, int64_t splits, const Problem& p) {
  const Tiles& t0 = st.full;
  const int64_t bh_total = p.batch_heads();
  run.launch({KernelKind::flash2_fwd, t0.heads, splits * t0.tr, 128, (t0.br + 2 * t0.bc) * t0.d * t0.e},
             [&st, splits, bh_total](Memory& mem, int64_t gh, int64_t block) {
               const Tiles& t = st.of(gh);
               const int64_t chunk = (t.tc + splits - 1) / splits;  // the sequence's own key tiles
               const int64_t s = block / t.tr, i = block % t.tr;
               const int64_t r = t.rows_in(i), qh = t.query_head(gh);
               const int64_t partial = s * bh_total + qh, j0 = s * chunk, j1 = std::min(t.tc, j0 + chunk);
               bool any = false;
               for (int64_t j = j0; j < j1; ++j) any = any || t.visits(i, j);
               if (!any) {
                 mem.store(Tensor::o_accum, partial, i * t.br, 0, Matrix::Zero(r, t.d));
                 mem.store(Tensor::lse_accum, partial, i * t.br, 0, Matrix::Constant(r, 1, kMinusInf));
                 return;
               }
               const OnlineSoftmax state = flash2_row_tile(mem, t, gh, i, j0, j1);
               mem.store(Tensor::o_accum, partial, i * t.br, 0, online_softmax_output(state));
               mem.store(Tensor::lse_accum, partial, i * t.br, 0, column(online_softmax_lse(state)));
             });
  const int64_t nq = p.seqlen, rows_per_block = kSplitCombineRows;
  run.launch({KernelKind::flash2_fwd_combine, bh_total, (nq + rows_per_block - 1) / rows_per_block,
              kSplitCombineThreads, 0},
             [splits, bh_total, nq, rows_per_block, d = t0.d](Memory& mem, int64_t bh, int64_t b) {
               const int64_t row0 = b * rows_per_block, r = std::min(rows_per_block, nq - row0);
               std::vector<Matrix> lse(static_cast<size_t>(splits)), o(static_cast<size_t>(splits));
               for (int64_t s = 0; s < splits; ++s) lse[s] = mem.load(Tensor::lse_accum, s * bh_total + bh, row0, r, 0, 1);
               for (int64_t s = 0; s < splits; ++s) o[s] = mem.load(Tensor::o_accum, s * bh_total + bh, row0, r, 0, d);
               Matrix out = Matrix::Zero(r, d), out_lse(r, 1);
               for (int64_t a = 0; a < r; ++a) {
                 double m = kMinusInf;
                 for (int64_t s = 0; s < splits; ++s) m = std::max(m, lse[s](a, 0));
                 if (m == kMinusInf) {  // no split saw a key: O = 0, L = −∞ (as a tile with no score)
                   out_lse(a, 0) = kMinusInf;
                   continue;
                 }
                 double sum = 0;
                 for (int64_t s = 0; s < splits; ++s) sum += std::exp(lse[s](a, 0) - m);
                 out_lse(a, 0) = m + std::log(sum);
                 for (int64_t s = 0; s < splits; ++s)
                   out.row(a) += std::exp(lse[s](a, 0) - out_lse(a, 0)) * o[s].row(a);
               }
               mem.compute(flops_model::flash2_fwd_combine_rows(r, splits, d));
               mem.store(Tensor::O, bh, row0, 0, out);
               mem.store(Tensor::lse, bh, row0, 0, out_lse);
             });
}

// sq: one query head's rows (the row kernels, every query row whatever the key lengths; a packed
// sequence's n_b); sg: a K/V head's group's rows (the backward, which sums dK and dV over the
// group on chip), per sequence. Block j of a sequence of Nk_b keys reads its K, V rows below Nk_b
// and visits the row tiles its own problem visits (none when j·Bc ≥ Nk_b), then writes all the
// tile's rows of dK and dV of the Nk-key layout, zero past Nk_b (docs/schedules.md); a packed
// sequence has no rows past n_b, and its blocks past them do nothing.
void flash2_backward(Launcher& run, const SequenceTiles& sq, const SequenceTiles& sg, Algo algo, bool packed) {
  const Tiles& tq = sq.full;
  run.launch({flash2_kind(algo, Flash2Role::bwd_preprocess), tq.heads, tq.tr, 128, 0},
             [&sq](Memory& mem, int64_t bh, int64_t i) {
               const Tiles& t = sq.of(bh);
               if (i >= t.tr) return;
               const int64_t r = t.rows_in(i);
               const Matrix oi = mem.load(Tensor::O, bh, i * t.br, r, 0, t.d);
               const Matrix doi = mem.load(Tensor::dO, bh, i * t.br, r, 0, t.d);
               mem.compute(flops_model::rowsum_rows(r, t.d));
               mem.store(Tensor::delta, bh, i * t.br, 0, oi.cwiseProduct(doi).rowwise().sum());
               mem.store(Tensor::dq_accum, bh, i * t.br, 0, Matrix::Zero(r, t.d));  // for atomics
             });
  const Tiles& tg = sg.full;
  run.launch({flash2_kind(algo, Flash2Role::bwd), tg.heads, tg.tc, 256, (2 * tg.br + 2 * tg.bc) * tg.d * tg.e},
             [&sg, &tg, packed](Memory& mem, int64_t gh, int64_t j) {
               const Tiles& t = sg.of(gh);  // the sequence's
               if (packed && j >= t.tc) return;
               const int64_t qh = t.query_head(gh), kvh = t.kv_head(gh);
               // On chip, all the tile's rows of the layout (a packed sequence's own).
               Matrix dkj = Matrix::Zero((packed ? t : tg).cols_in(j), t.d), dvj = dkj;
               if (j < t.tc) {
                 const int64_t cj = t.cols_in(j);
                 const Matrix kj = mem.load(Tensor::K, kvh, j * t.bc, cj, 0, t.d);
                 const Matrix vj = mem.load(Tensor::V, kvh, j * t.bc, cj, 0, t.d);
                 for (int64_t i = 0; i < t.tr; ++i) {
                   if (!t.visits(i, j)) continue;
                   const int64_t r = t.rows_in(i);
                   const Matrix qi = mem.load(Tensor::Q, qh, i * t.br, r, 0, t.d);
                   const Matrix doi = mem.load(Tensor::dO, qh, i * t.br, r, 0, t.d);
                   const Matrix lse = mem.load(Tensor::lse, qh, i * t.br, r, 0, 1);
                   const Matrix delta = mem.load(Tensor::delta, qh, i * t.br, r, 0, 1);
                   // P recomputed from S and L instead of stored (Theorem 5); with dropout the
                   // multipliers Z regenerated, not read (Algorithm 4, lines 14-18).
                   const Matrix p = probabilities_from_lse(tile_scores(t, qi, kj, i, j), lse);
                   const Matrix z = t.dropping() ? dropout_tile(t, gh, i, j) : Matrix();
                   dvj.topRows(cj).noalias() += dropped(p, z).transpose() * doi;
                   const Matrix dp = dropped(doi * vj.transpose(), z);
                   // D = rowsum(dO ∘ O) = rowsum(P ∘ dP) still, since O = (P ∘ Z)V.
                   const Matrix ds = p.cwiseProduct(dp.colwise() - delta.col(0));
                   mem.compute(flops_model::flash2_bwd_tile(t.br, t.bc, t.d, t.dropping()));
                   mem.atomic_add(Tensor::dq_accum, qh, i * t.br, 0, t.scale * (ds * kj));
                   dkj.topRows(cj).noalias() += t.scale * (ds.transpose() * qi);
                 }
               }
               mem.store(Tensor::dK, kvh, j * tg.bc, 0, dkj);
               mem.store(Tensor::dV, kvh, j * tg.bc, 0, dvj);
             });
  run.launch({flash2_kind(algo, Flash2Role::bwd_convert_dq), tq.heads, tq.tr, 128, 0},
             [&sq](Memory& mem, int64_t bh, int64_t i) {
               const Tiles& t = sq.of(bh);
               if (i >= t.tr) return;
               const int64_t r = t.rows_in(i);
               mem.store(Tensor::dQ, bh, i * t.br, 0, mem.load(Tensor::dq_accum, bh, i * t.br, r, 0, t.d));
             });
}

// ---------------------------------------------------------------------------------------------
// flash1: the paper's Algorithms 1 and 4 (K/V outside), one thread block per grid head.
// A sequence of Nk_b keys (SequenceTiles) runs the forward of its own problem: its ⌈Nk_b / Bc⌉ key
// tiles, O written at each row tile's last of them.
void flash1_forward(Launcher& run, const SequenceTiles& st) {
  const Tiles& t0 = st.full;
  run.launch({KernelKind::flash1_fwd, t0.heads, 1, flash1_fwd_threads(t0.br), (2 * t0.br + 2 * t0.bc) * t0.d * t0.e},
             [&st](Memory& mem, int64_t gh, int64_t) {
               const Tiles& t = st.of(gh);
               const int64_t bh = t.query_head(gh), kvh = t.kv_head(gh);
               for (int64_t j = 0; j < t.tc; ++j) {  // Algorithm 1 line 5
                 const int64_t cj = t.cols_in(j);
                 const Matrix kj = mem.load(Tensor::K, kvh, j * t.bc, cj, 0, t.d);  // line 6
                 const Matrix vj = mem.load(Tensor::V, kvh, j * t.bc, cj, 0, t.d);
                 for (int64_t i = 0; i < t.tr; ++i) {  // line 7
                   if (!t.visits(i, j)) continue;
                   const int64_t r = t.rows_in(i), row0 = i * t.br;
                   const Matrix qi = mem.load(Tensor::Q, bh, row0, r, 0, t.d);  // line 8
                   // The first visit starts from O = 0, ℓ = 0, m = −∞ (line 2) without reading.
                   Matrix oi = Matrix::Zero(r, t.d);
                   Eigen::VectorXd li = Eigen::VectorXd::Zero(r);
                   Eigen::VectorXd mi = Eigen::VectorXd::Constant(r, kMinusInf);
                   if (j != t.first_j[i]) {
                     oi = mem.load(Tensor::o_accum, bh, row0, r, 0, t.d);
                     li = mem.load(Tensor::stat_l, bh, row0, r, 0, 1).col(0);
                     mi = mem.load(Tensor::stat_m, bh, row0, r, 0, 1).col(0);
                   }
                   // Fused dropout as Algorithm 2 has it: ℓ̃, m̃ of P̃, P̃ ∘ Z times V.
                   const Matrix z = t.dropping() ? dropout_tile(t, gh, i, j) : Matrix();
                   online_softmax_merge_normalised(oi, li, mi, tile_scores(t, qi, kj, i, j), vj,
                                                   t.dropping() ? &z : nullptr);
                   mem.compute(flops_model::flash1_fwd_tile(t.br, t.bc, t.d, t.dropping()));  // lines 9-11
                   // Line 12: the running output in fp32, the last step the final O.
                   mem.store(j == t.last_j[i] ? Tensor::O : Tensor::o_accum, bh, row0, 0, oi);
                   mem.store(Tensor::stat_l, bh, row0, 0, column(li));  // line 13
                   mem.store(Tensor::stat_m, bh, row0, 0, column(mi));
                 }
               }
             });
}

// A sequence of Nk_b keys loops over all ⌈Nk / Bc⌉ key tiles: those holding its keys as its own
// problem's backward (K, V rows below Nk_b, its row tiles, dQ at each row tile's last of them),
// those past them with no reads and no row tiles; every tile writes all its rows of dK and dV,
// zero past Nk_b (kernels/flash1.cuh).
void flash1_backward(Launcher& run, const SequenceTiles& st) {
  const Tiles& full = st.full;
  run.launch({KernelKind::flash1_bwd, full.heads, 1, 256, (2 * full.br + 2 * full.bc) * full.d * full.e},
             [&st, &full](Memory& mem, int64_t gh, int64_t) {
               const Tiles& t = st.of(gh);  // the sequence's
               const int64_t bh = t.query_head(gh), kvh = t.kv_head(gh);
               for (int64_t j = 0; j < full.tc; ++j) {  // Algorithm 4 line 6
                 Matrix dkj = Matrix::Zero(full.cols_in(j), t.d), dvj = dkj;  // line 8
                 if (j < t.tc) {
                   const int64_t cj = t.cols_in(j);
                   const Matrix kj = mem.load(Tensor::K, kvh, j * t.bc, cj, 0, t.d);  // line 7
                   const Matrix vj = mem.load(Tensor::V, kvh, j * t.bc, cj, 0, t.d);
                   for (int64_t i = 0; i < t.tr; ++i) {  // line 9
                     if (!t.visits(i, j)) continue;
                     const int64_t r = t.rows_in(i), row0 = i * t.br;
                     const Matrix qi = mem.load(Tensor::Q, bh, row0, r, 0, t.d);  // line 10
                     const Matrix oi = mem.load(Tensor::O, bh, row0, r, 0, t.d);
                     const Matrix doi = mem.load(Tensor::dO, bh, row0, r, 0, t.d);
                     const Matrix li = mem.load(Tensor::stat_l, bh, row0, r, 0, 1);
                     const Matrix mi = mem.load(Tensor::stat_m, bh, row0, r, 0, 1);
                     Matrix dqi = Matrix::Zero(r, t.d);
                     if (j != t.first_j[i]) dqi = mem.load(Tensor::dq_accum, bh, row0, r, 0, t.d);
                     // Lines 11-13: P = diag(ℓ)⁻¹ e^(S − m), recomputed.
                     const Matrix s = tile_scores(t, qi, kj, i, j);
                     Matrix p(r, cj);
                     for (int64_t a = 0; a < r; ++a)
                       for (int64_t b = 0; b < cj; ++b)
                         p(a, b) = li(a, 0) > 0 ? exp_difference(s(a, b), mi(a, 0), 0.0) / li(a, 0) : 0.0;
                     const Matrix z = t.dropping() ? dropout_tile(t, gh, i, j) : Matrix();  // lines 14-15
                     dvj.topRows(cj).noalias() += dropped(p, z).transpose() * doi;       // line 16
                     const Matrix dp = dropped(doi * vj.transpose(), z);                 // lines 17-18
                     const Eigen::VectorXd d_i = doi.cwiseProduct(oi).rowwise().sum();   // line 19
                     const Matrix ds = p.cwiseProduct(dp.colwise() - d_i);               // line 20
                     dqi.noalias() += t.scale * (ds * kj);                               // line 21
                     dkj.topRows(cj).noalias() += t.scale * (ds.transpose() * qi);       // line 22
                     mem.compute(flops_model::flash1_bwd_tile(t.br, t.bc, t.d, t.dropping()));
                     mem.store(j == t.last_j[i] ? Tensor::dQ : Tensor::dq_accum, bh, row0, 0, dqi);
                   }
                 }
                 mem.store(Tensor::dK, kvh, j * full.bc, 0, dkj);  // line 24, summed over the group's rows
                 mem.store(Tensor::dV, kvh, j * full.bc, 0, dvj);
               }
             });
}

// The rows a standard GEMM's grid head takes: one query head's Nq, or a K/V head's group's
// g·Nq, head after head (sim/config.h, gqa_pack; gemm_dv and gemm_dk always the group's).
struct GemmRows : HeadMap {
  int64_t n = 0, heads = 0;
};

// standard: each step its own kernel, every Nq × Nk result in HBM. docs/schedules.md, "standard".
struct Standard {
  int64_t nq, nk, d, e;
  KeyBand band;  // the keys a query sees by position (causal, a window)
  double scale;
  bool mask, dropout;
  int64_t batch, heads;
  uint64_t seed;
  const Problem* problem;
  GemmRows query, packed, group;  // one query head's rows; as gqa_pack says; the group's

  int64_t tiles(int64_t extent) const { return (extent + kGemmTile - 1) / kGemmTile; }
  int64_t extent_of(int64_t a, int64_t extent) const {
    return std::min(kGemmTile, extent - a * kGemmTile);
  }
  int64_t gemm_smem() const { return 2 * kGemmTile * 64 * e * 2; }  // two stages of A, B panels
  Tensor p_used() const { return dropout ? Tensor::P_drop : Tensor::P; }
};

// C (n × Nk) = scale · A Bᵀ, A n × d and B Nk × d (B the keys), one 128 × 128 output tile per
// block, the key tiles of the two cuBLAS calls as the schedule's (GemmKeyTiles::key_fastest).
void gemm_nt(Launcher& run, const Standard& s, const GemmRows& g, KernelKind kind, Tensor a_t, Tensor b_t,
             Tensor c_t, double scale) {
  const int64_t tn = s.tiles(g.n);
  const GemmKeyTiles keys = gemm_key_tiles(s.nk);
  run.launch({kind, g.heads, tn * keys.count(), 256, s.gemm_smem()},
             [&s, g, tn, keys, a_t, b_t, c_t, scale](Memory& mem, int64_t gh, int64_t blk) {
               const GemmKeyTiles::Block t = keys.key_fastest(tn, blk);
               const int64_t ra = s.extent_of(t.other, g.n), k0 = keys.start(t.key), rb = keys.extent(t.key);
               const Matrix at = mem.load(a_t, g.head_of(a_t, gh), t.other * kGemmTile, ra, 0, s.d);
               const Matrix bt = mem.load(b_t, g.head_of(b_t, gh), k0, rb, 0, s.d);
               mem.compute(flops_model::gemm(ra, rb, s.d));
               mem.store(c_t, g.head_of(c_t, gh), t.other * kGemmTile, k0, scale * (at * bt.transpose()));
             });
}

// C (n × d) = scale · A B over the keys (A n × Nk, B Nk × d): the main call's output tile (a, b)
// reads A's rows [a] and B's columns [b] over its keys, the second call's over the keys left,
// adding to C.
void gemm_nn(Launcher& run, const Standard& s, const GemmRows& g, KernelKind kind, Tensor a_t, Tensor b_t,
             Tensor c_t, double scale) {
  const int64_t tn = s.tiles(g.n), td = s.tiles(s.d);
  const int64_t main_keys = gemm_key_tiles(s.nk).main, calls = standard_gemm_calls(s.nk);
  run.launch({kind, g.heads, tn * td * calls, 256, s.gemm_smem()},
             [&s, g, tn, td, main_keys, a_t, b_t, c_t, scale](Memory& mem, int64_t gh, int64_t blk) {
               const bool second = blk >= tn * td;
               const int64_t a = (blk % (tn * td)) / td, b = blk % td;
               const int64_t ra = s.extent_of(a, g.n), cb = s.extent_of(b, s.d);
               const int64_t k0 = second ? main_keys : 0, kn = second ? s.nk - main_keys : main_keys;
               const int64_t ch = g.head_of(c_t, gh);
               const Matrix at = mem.load(a_t, g.head_of(a_t, gh), a * kGemmTile, ra, k0, kn);
               const Matrix bt = mem.load(b_t, g.head_of(b_t, gh), k0, kn, b * kGemmTile, cb);
               Matrix c = scale * (at * bt);
               if (second) c += mem.load(c_t, ch, a * kGemmTile, ra, b * kGemmTile, cb);
               mem.compute(flops_model::gemm(ra, cb, kn));
               mem.store(c_t, ch, a * kGemmTile, b * kGemmTile, c);
             });
}

// C (Nk × d, a row per key) = scale · Aᵀ B (A n × Nk, B n × d): output tile (key tile, b) reads
// A's columns of the key tile and B's columns [b], all n rows (GemmKeyTiles::key_slowest).
void gemm_tn(Launcher& run, const Standard& s, const GemmRows& g, KernelKind kind, Tensor a_t, Tensor b_t,
             Tensor c_t, double scale) {
  const int64_t td = s.tiles(s.d);
  const GemmKeyTiles keys = gemm_key_tiles(s.nk);
  run.launch({kind, g.heads, keys.count() * td, 256, s.gemm_smem()},
             [&s, g, td, keys, a_t, b_t, c_t, scale](Memory& mem, int64_t gh, int64_t blk) {
               const GemmKeyTiles::Block t = keys.key_slowest(td, blk);
               const int64_t k0 = keys.start(t.key), kn = keys.extent(t.key), cb = s.extent_of(t.other, s.d);
               const Matrix at = mem.load(a_t, g.head_of(a_t, gh), 0, g.n, k0, kn).transpose();
               const Matrix bt = mem.load(b_t, g.head_of(b_t, gh), 0, g.n, t.other * kGemmTile, cb);
               mem.compute(flops_model::gemm(kn, cb, g.n));
               mem.store(c_t, g.head_of(c_t, gh), k0, t.other * kGemmTile, scale * (at * bt));
             });
}

using RowBody = std::function<void(Memory& mem, int64_t bh, int64_t row)>;
void rowwise(Launcher& run, const Standard& s, KernelKind kind, const RowBody& body) {
  const RowKernelLaunch launch = standard_row_kernel_launch(kind, s.nk);  // as the schedule's
  run.launch({kind, s.query.heads, s.nq, launch.threads, launch.smem_bytes}, body);
}

void standard_forward(Launcher& run, const Standard& s) {
  gemm_nt(run, s, s.packed, KernelKind::gemm_qk, Tensor::Q, Tensor::K, Tensor::S, s.scale);  // scale folded in
  if (s.mask)
    rowwise(run, s, KernelKind::mask, [&s](Memory& mem, int64_t bh, int64_t row) {
      Matrix sr = mem.load(Tensor::S, bh, row, 1, 0, s.nk);
      const int64_t len = key_padding_length(bh / s.heads, s.batch, s.nk);
      for (int64_t c = len; c < s.nk; ++c) sr(0, c) = kMinusInf;
      mem.compute(flops_model::mask_row(s.nk));
      mem.store(Tensor::S, bh, row, 0, sr);
    });
  rowwise(run, s, KernelKind::softmax, [&s](Memory& mem, int64_t bh, int64_t row) {
    Matrix sr = mem.load(Tensor::S, bh, row, 1, 0, s.nk);
    if (s.band.bounded())  // applied here, no extra pass
      for (int64_t c = 0; c < s.nk; ++c)
        if (!s.band.sees(row, c, s.nk)) sr(0, c) = kMinusInf;
    const double m = sr.maxCoeff();
    Matrix p(1, s.nk);
    for (int64_t c = 0; c < s.nk; ++c) p(0, c) = exp_difference(sr(0, c), m, 0.0);
    const double l = p.sum();
    if (l > 0) p /= l;
    mem.compute(flops_model::softmax_row(s.nk));
    mem.store(Tensor::P, bh, row, 0, p);
  });
  if (s.dropout)
    rowwise(run, s, KernelKind::dropout, [&s](Memory& mem, int64_t bh, int64_t row) {
      const Matrix p = mem.load(Tensor::P, bh, row, 1, 0, s.nk);
      const Matrix z = dropout_row(s.problem->dropout, s.seed, bh, row, 0, s.nk);
      mem.compute(flops_model::dropout_row(s.nk));
      mem.store(Tensor::P_drop, bh, row, 0, p.cwiseProduct(z));
    });
  gemm_nn(run, s, s.packed, KernelKind::gemm_pv, s.p_used(), Tensor::V, Tensor::O, 1.0);
}

void standard_backward(Launcher& run, const Standard& s) {
  gemm_tn(run, s, s.group, KernelKind::gemm_dv, s.p_used(), Tensor::dO, Tensor::dV, 1.0);
  gemm_nt(run, s, s.packed, KernelKind::gemm_dp, Tensor::dO, Tensor::V, Tensor::dP, 1.0);
  if (s.dropout)  // dP of P_drop → dP of P: the same multipliers, regenerated
    rowwise(run, s, KernelKind::dropout_bwd, [&s](Memory& mem, int64_t bh, int64_t row) {
      const Matrix dp = mem.load(Tensor::dP, bh, row, 1, 0, s.nk);
      const Matrix z = dropout_row(s.problem->dropout, s.seed, bh, row, 0, s.nk);
      mem.compute(flops_model::dropout_row(s.nk));
      mem.store(Tensor::dP, bh, row, 0, dp.cwiseProduct(z));
    });
  run.launch({KernelKind::rowsum_do_o, s.query.heads, s.tiles(s.nq), 128, 0}, [&s](Memory& mem, int64_t bh, int64_t a) {
    const int64_t r = s.extent_of(a, s.nq);
    const Matrix doa = mem.load(Tensor::dO, bh, a * kGemmTile, r, 0, s.d);
    const Matrix oa = mem.load(Tensor::O, bh, a * kGemmTile, r, 0, s.d);
    mem.compute(flops_model::rowsum_rows(r, s.d));
    // D = rowsum(dO ∘ O) equals rowsum(P ∘ dP) even with dropout, since O = (P ∘ Z)V.
    mem.store(Tensor::delta, bh, a * kGemmTile, 0, doa.cwiseProduct(oa).rowwise().sum());
  });
  rowwise(run, s, KernelKind::softmax_bwd, [&s](Memory& mem, int64_t bh, int64_t row) {
    const Matrix p = mem.load(Tensor::P, bh, row, 1, 0, s.nk);
    const Matrix dp = mem.load(Tensor::dP, bh, row, 1, 0, s.nk);
    const double delta = mem.load(Tensor::delta, bh, row, 1, 0, 1)(0, 0);
    mem.compute(flops_model::softmax_bwd_row(s.nk));
    mem.store(Tensor::dS, bh, row, 0, p.cwiseProduct((dp.array() - delta).matrix()));
  });
  gemm_nn(run, s, s.packed, KernelKind::gemm_dq, Tensor::dS, Tensor::K, Tensor::dQ, s.scale);
  gemm_tn(run, s, s.group, KernelKind::gemm_dk, Tensor::dS, Tensor::Q, Tensor::dK, s.scale);
}

// ---------------------------------------------------------------------------------------------
// Runs the forward (counted when the pass has one; uncounted for `bwd`, whose inputs it makes)
// and then the backward.
std::vector<KernelCounts> run_algorithm(const Config& c, Memory& memory, uint64_t seed) {
  const Pass pass = c.problem.pass;
  Launcher counted(memory, true), uncounted(memory, false);
  Launcher& fwd = has_forward(pass) ? counted : uncounted;
  if (c.algo == Algo::standard) {
    const Problem& p = c.problem;
    const int64_t g = p.group();
    const GemmRows query{{g, false}, p.seqlen, p.batch * p.heads}, group{{g, true}, g * p.seqlen, p.batch * p.kv_heads_count()};
    const Standard s{p.seqlen, p.keys(), p.headdim, element_bytes(p.dtype), p.band_of(),
                     1.0 / std::sqrt(static_cast<double>(p.headdim)), p.mask,
                     p.dropout > 0.0, p.batch, p.heads, seed, &c.problem,
                     query, c.gqa_pack ? group : query, group};
    standard_forward(fwd, s);
    if (has_backward(pass)) standard_backward(counted, s);
    return counted.kernels;
  }
  // Per sequence: the forward's rows (gqa_pack) and the backward's (a group's).
  const SequenceTiles forward = sequence_tiles(c, c.gqa_pack, seed), group = sequence_tiles(c, true, seed);
  if (c.algo == Algo::flash1) {
    flash1_forward(fwd, forward);
    if (has_backward(pass)) flash1_backward(counted, group);
  } else {
    if (c.splits > 1) flash2_split_forward(fwd, forward, c.splits, c.problem);
    else flash2_forward(fwd, forward, c.algo, forward_loads_whole_boxes(c));
    if (has_backward(pass))
      flash2_backward(counted, sequence_tiles(c, false, seed), group, c.algo, c.problem.varlen);
  }
  return counted.kernels;
}

void check_size(const Config& c) {
  check_limits(c, CountMethod::execute);
  const Problem& p = c.problem;
  const double work = static_cast<double>(p.batch_heads()) * static_cast<double>(p.seqlen) *
                      static_cast<double>(p.keys()) * static_cast<double>(p.headdim);
  if (work > kExecuteMaxWork)
    throw InvalidInput(Field::count_method,
                       "execute runs the algorithm on the CPU and allows B·H·Nq·Nk·d <= " +
                           std::to_string(static_cast<int64_t>(kExecuteMaxWork)) + " (got " +
                           std::to_string(static_cast<int64_t>(work)) +
                           "); count with walk or formula for larger problems");
  if (const int64_t bytes = execute_memory_bytes(c); bytes > kExecuteMaxMemoryBytes)
    throw InvalidInput(Field::count_method,
                       "execute holds every head's tensors as doubles and allows " +
                           std::to_string(kExecuteMaxMemoryBytes) + " bytes (got " +
                           (bytes == kMaxCount ? std::string("over 2^63") : std::to_string(bytes)) +
                           " for B·H = " + std::to_string(p.batch_heads()) +
                           "); count with walk or formula for larger problems");
  if (c.bwd_tiling && c.algo != Algo::standard)
    throw InvalidInput(Field::count_method,
                       "execute runs one tiling for both passes, and the kernels' default tilings "
                       "differ between forward and backward here; model each pass alone");
}


}  // namespace

// ---------------------------------------------------------------------------------------------
int64_t execute_memory_bytes(const Config& c) {
  const Problem& p = c.problem;
  Counts touched;
  for (const KernelCounts& k : closed_form_counts(c)) touched += k.counts;
  int64_t elements = 0;  // all heads
  for (int t = 0; t < kTensorCount; ++t) {
    const Tensor tensor = static_cast<Tensor>(t);
    const TensorBytes& b = touched.of(tensor);
    const bool input = tensor == Tensor::Q || tensor == Tensor::K || tensor == Tensor::V || tensor == Tensor::dO;
    if (b.read_bytes == 0 && b.write_bytes == 0 && !input) continue;
    const TensorShape s = tensor_shape(tensor, p, tensor_layout(c));
    elements = saturating_add(elements, s.total_elements(p.batch));
  }
  // The drawn inputs (Q, K, V, dO) and the returned HeadTensors (Q, K, V, dO, O, dQ, dK, dV, L)
  // of every query head, and 1 KiB of bookkeeping each.
  const int64_t per_head = saturating_add(saturating_add(saturating_mul(6, p.seqlen, p.headdim), saturating_mul(6, p.keys(), p.headdim)),
                                          saturating_add(p.seqlen, 128));
  elements = saturating_add(elements, saturating_mul(per_head, p.batch, p.heads));
  return saturating_mul(8, elements);
}

Matrix dropout_multipliers(const Problem& p, int64_t bh, uint64_t seed) {
  Matrix z(p.seqlen, p.keys());
  for (int64_t r = 0; r < p.seqlen; ++r) z.row(r) = dropout_row(p.dropout, seed, bh, r, 0, p.keys());
  return z;
}

ScoreMask kept_scores(const Config& c, int64_t bh) {
  const int64_t b = bh / c.problem.heads;
  const int64_t len = sequence_keys(c, b);
  // A packed sequence's head (Problem::varlen): n_b queries and keys, all of them.
  const int64_t n = c.problem.queries_of(b), nk = c.problem.varlen ? len : c.problem.keys();
  ScoreMask keep = ScoreMask::Constant(n, nk, true);
  if (len < nk) keep.rightCols(nk - len).setConstant(false);
  if (const KeyBand band = c.problem.band_with_keys(len); band.bounded())
    for (int64_t r = 0; r < n; ++r)
      for (int64_t col = 0; col < nk; ++col)
        if (!band.sees(r, col, nk)) keep(r, col) = false;
  if (c.algo == Algo::standard && c.problem.mask) {
    const int64_t len = key_padding_length(bh / c.problem.heads, c.problem.batch, nk);
    keep.rightCols(nk - len).setConstant(false);
  }
  if (c.algo == Algo::blocksparse && !c.block_mask.text.empty()) {
    const BlockMask mask(c.block_mask, c.problem);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t col = 0; col < n; ++col)
        if (!mask.keeps(r, col)) keep(r, col) = false;
  }
  return keep;
}

HeadTensors dense_reference(const Matrix& q, const Matrix& k, const Matrix& v, const Matrix* d_o,
                            const ScoreMask* keep, const Matrix* z) {
  const Eigen::Index n = q.rows(), nk = k.rows();
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.cols()));
  Matrix s = scale * (q * k.transpose());
  if (keep)
    for (Eigen::Index r = 0; r < n; ++r)
      for (Eigen::Index c = 0; c < nk; ++c)
        if (!(*keep)(r, c)) s(r, c) = kMinusInf;
  Matrix p = Matrix::Zero(n, nk);
  HeadTensors h;
  h.lse.resize(n, 1);
  for (Eigen::Index r = 0; r < n; ++r) {
    const double m = s.row(r).maxCoeff();
    if (m == kMinusInf) {  // no kept score: O = 0, LSE = −∞
      h.lse(r, 0) = kMinusInf;
      continue;
    }
    p.row(r) = (s.row(r).array() - m).exp().matrix();
    const double l = p.row(r).sum();
    p.row(r) /= l;
    h.lse(r, 0) = m + std::log(l);
  }
  const Matrix p_used = z ? Matrix(p.cwiseProduct(*z)) : p;
  h.o = p_used * v;
  if (d_o) {
    h.dv = p_used.transpose() * *d_o;
    Matrix dp = *d_o * v.transpose();
    if (z) dp = dp.cwiseProduct(*z);
    const Eigen::VectorXd delta = d_o->cwiseProduct(h.o).rowwise().sum();
    const Matrix ds = p.cwiseProduct(dp.colwise() - delta);
    h.dq = scale * (ds * k);
    h.dk = scale * (ds.transpose() * q);
  }
  return h;
}

HeadTensors dense_reference(const Matrix& q, const Matrix& k, const Matrix& v, const Matrix* d_o,
                            bool causal) {
  if (!causal) return dense_reference(q, k, v, d_o, nullptr, nullptr);
  const Eigen::Index n = q.rows(), nk = k.rows();
  ScoreMask keep(n, nk);
  for (Eigen::Index r = 0; r < n; ++r)
    for (Eigen::Index c = 0; c < nk; ++c) keep(r, c) = c <= r + (nk - n);  // bottom-right aligned
  return dense_reference(q, k, v, d_o, &keep, nullptr);
}

ExecuteResult execute(const Config& config, const std::vector<HeadTensors>& inputs,
                      uint64_t seed) {
  validate(config);
  check_size(config);
  const Problem& p = config.problem;
  const int64_t n = p.seqlen, nk = p.keys(), d = p.headdim, g = p.group();
  if (static_cast<int64_t>(inputs.size()) != p.batch_heads())
    throw InvalidInput("execute: expected " + std::to_string(p.batch_heads()) +
                       " heads of inputs (B·H), got " + std::to_string(inputs.size()));
  Memory mem(p, tensor_layout(config));
  for (size_t bh = 0; bh < inputs.size(); ++bh) {
    const HeadTensors& in = inputs[bh];
    const auto h = static_cast<int64_t>(bh);
    // A packed sequence's head: n_b queries and keys (Problem::varlen).
    const int64_t rows = p.queries_of(h / p.heads), keys = p.varlen ? rows : nk;
    auto shaped = [d](const Matrix& m, int64_t rows) { return m.rows() == rows && m.cols() == d; };
    if (!shaped(in.q, rows) || !shaped(in.k, keys) || !shaped(in.v, keys) || (has_backward(p.pass) && !shaped(in.d_o, rows)))
      throw InvalidInput("execute: inputs must be Q, dO of Nq × d (" + std::to_string(rows) + " × " + std::to_string(d) +
                         ") and K, V of Nk × d (" + std::to_string(keys) + " × " + std::to_string(d) + ")");
    mem.head(Tensor::Q, h) = in.q;
    if (has_backward(p.pass)) mem.head(Tensor::dO, h) = in.d_o;
    if (h % g == 0) {  // a group's K and V: its first query head's
      mem.head(Tensor::K, h / g) = in.k;
      mem.head(Tensor::V, h / g) = in.v;
    }
  }

  ExecuteResult result;
  result.kernels = run_algorithm(config, mem, seed);
  for (size_t bh = 0; bh < inputs.size(); ++bh) {
    const auto h = static_cast<int64_t>(bh);
    HeadTensors out;
    out.q = inputs[bh].q;
    out.k = mem.head(Tensor::K, h / g);
    out.v = mem.head(Tensor::V, h / g);
    out.d_o = inputs[bh].d_o;
    out.o = mem.head(Tensor::O, h);
    if (config.algo == Algo::flash1) {  // flash1 keeps ℓ and m; L = m + log ℓ
      const Matrix l = mem.head(Tensor::stat_l, h);
      const Matrix m = mem.head(Tensor::stat_m, h);
      out.lse.resize(n, 1);
      for (int64_t r = 0; r < n; ++r)
        out.lse(r, 0) = l(r, 0) > 0 ? m(r, 0) + std::log(l(r, 0)) : kMinusInf;
    } else if (config.algo != Algo::standard) {
      out.lse = mem.head(Tensor::lse, h);
    }
    if (has_backward(p.pass)) {
      out.dq = mem.head(Tensor::dQ, h);
      out.dk = mem.head(Tensor::dK, h / g);
      out.dv = mem.head(Tensor::dV, h / g);
    }
    result.heads.push_back(std::move(out));
  }
  return result;
}

std::vector<HeadTensors> random_inputs(const Problem& p, uint64_t seed, int64_t heads) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto draw = [&](int64_t rows, int64_t cols) {
    Matrix m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = normal(rng);
    return m;
  };
  const int64_t g = std::max<int64_t>(p.group(), 1);
  std::vector<HeadTensors> inputs(static_cast<size_t>(std::max<int64_t>(heads, 0)));
  for (size_t h = 0; h < inputs.size(); ++h) {  // dO drawn for every pass, so Q, K, V do not depend on it
    HeadTensors& in = inputs[h];
    // A packed sequence's head: n_b queries and keys (Problem::varlen).
    const int64_t rows = p.queries_of(static_cast<int64_t>(h) / p.heads), keys = p.varlen ? rows : p.keys();
    in.q = draw(rows, p.headdim);
    in.k = draw(keys, p.headdim);
    in.v = draw(keys, p.headdim);
    in.d_o = draw(rows, p.headdim);
    if (h % g != 0) {  // a group shares its first query head's K and V
      in.k = inputs[h - h % g].k;
      in.v = inputs[h - h % g].v;
    }
  }
  return inputs;
}

ExecuteResult execute(const Config& config, uint64_t seed) {
  validate(config);
  check_size(config);  // before drawing B·H inputs
  return execute(config, random_inputs(config.problem, seed, config.problem.batch_heads()), seed);
}

}  // namespace flashio::sim
