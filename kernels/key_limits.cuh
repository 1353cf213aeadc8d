// Which keys a row tile's rows see (docs/shapes.md): the keys below Nk, and with causal, aligned
// bottom-right as FlashAttention does for Nq ≠ Nk, query q sees the keys ≤ q + (Nk − Nq). A
// block's rows are one query head's, or the query heads of a K/V head's group stacked head after
// head (grouped-query attention, packed: sim/config.h, gqa_pack), so row r of the stacked rows
// is query r mod Nq. The arithmetic is the model's (sim/schedule.h, TileGrid: last_query,
// above_diagonal), so kernel and model visit the same tiles.
// Sliding windows (sim/key_band.h): a right side R is causal's test with the offset + R (the
// host sets causal and offset so: every instance runs it); a left side L, query q sees keys
// ≥ q + lo with lo = Nk − Nq − L, is tested only by the window instances (kWindow), so that the
// others keep their code.
#pragma once

namespace flashio::kernels {

// kStacked: the rows may be a group's stacked query heads; false: one head's rows (row0 + r is
// the query), compiled without the wrap so that kernels of one head's rows keep their code.
template <bool kStacked, bool kWindow = false>
struct KeyLimits {
  int row0 = 0;    // the query of the tile's first row: its row, or (stacked) its row mod Nq
  int nq = 0;      // queries per head
  int nk = 0;      // keys per head
  int offset = 0;  // causal: query q sees keys ≤ q + offset (Nk − Nq ≥ 0)
  bool causal = false;
  int lo = 0;  // kWindow: query q sees keys ≥ q + lo (Nk − Nq − L)

  // The limits of the tile whose first row is `row` of the block's rows: one division per tile,
  // so that a row's query is then an addition and (past a head's end) a subtraction.
  static __device__ __forceinline__ KeyLimits of_row(int row, int nq, int nk, int offset, bool causal, int lo = 0) {
    return KeyLimits{kStacked ? row % nq : row, nq, nk, offset, causal, lo};
  }
  // The query (its position in its head) of tile row r.
  __device__ __forceinline__ int query(int r) const { return query_of(row0, nq, r); }
  static __device__ __forceinline__ int query_of(int row0, int nq, int r) {
    int q = row0 + r;
    if constexpr (kStacked) {
      if (q >= nq) {  // a later head's row: once past one head's end when Nq ≥ the tile's rows
        q -= nq;
        if (q >= nq) q %= nq;
      }
    }
    return q;
  }
  // The smallest and largest query among tile rows [0, rows): when the rows cross from one
  // head's into the next, some row holds query 0 and some query Nq − 1.
  __device__ __forceinline__ bool crosses_heads(int rows) const { return kStacked && row0 + rows - 1 >= nq; }
  __device__ __forceinline__ int min_query(int rows) const { return crosses_heads(rows) ? 0 : query(0); }
  __device__ __forceinline__ int max_query(int rows) const { return crosses_heads(rows) ? nq - 1 : query(rows - 1); }
  // Causal: the last key tile (of width bc) that some row sees; without causal the last tile.
  __device__ __forceinline__ int last_key_tile(int rows, int bc) const {
    const int tc = (nk + bc - 1) / bc;
    return causal ? min(tc - 1, (max_query(rows) + offset) / bc) : tc - 1;
  }
  // kWindow: the first key tile (of width bc) that some row sees, the one holding the first
  // key the tile's first query sees; 0 without a left side.
  __device__ __forceinline__ int first_key_tile(int rows, int bc) const {
    if constexpr (kWindow) return max(0, min_query(rows) + lo) / bc;
    return 0;
  }
  // Causal: no row of the tile sees any key of the key tile starting at k_row0 (it is skipped).
  __device__ __forceinline__ bool above_diagonal(int rows, int k_row0) const {
    return causal && k_row0 > max_query(rows) + offset;
  }
  // No row sees a key of the (rows × bc) tile at k_row0: beyond the right side, or (kWindow) its
  // last key before what the first query sees (TileGrid::outside_band).
  __device__ __forceinline__ bool outside(int rows, int k_row0, int bc) const {
    if constexpr (kWindow)
      if (k_row0 + bc - 1 < min_query(rows) + lo) return true;
    return above_diagonal(rows, k_row0);
  }
  // Some score of the (rows × bc) tile at k_row0 is hidden: checked element by element.
  __device__ __forceinline__ bool partial(int rows, int k_row0, int bc) const {
    if constexpr (kWindow)
      if (k_row0 < max_query(rows) + lo) return true;
    return k_row0 + bc > nk || (causal && k_row0 + bc - 1 > min_query(rows) + offset);
  }
  // Tile row r does not see `key`: beyond Nk, or (causal) beyond its query's last key.
  __device__ __forceinline__ bool hidden(int r, int key) const { return hidden(row0, nq, nk, offset, causal, r, key, lo); }
  // The same on the fields as values: the tile steps copy them once before their loops (read
  // from the struct inside the loops, ptxas allocated flash1's and flash2's kernels worse: up to
  // 56 bytes of stack where there were 16).
  // lo: the left side's (kWindow; ignored elsewhere).
  static __device__ __forceinline__ bool hidden(int row0, int nq, int nk, int offset, bool causal, int r, int key,
                                                int lo = 0) {
    int q = row0 + r;  // spelled out for one head's rows: through query_of, ptxas gave flash1 15 more registers
    if constexpr (kStacked) q = query_of(row0, nq, r);
    if constexpr (kWindow)
      if (key < q + lo) return true;
    return key >= nk || (causal && key > q + offset);
  }
};

}  // namespace flashio::kernels
