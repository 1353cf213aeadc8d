// Tensor-core building blocks shared by the flash1 and flash2 kernels (sm_80+ instructions,
// run on sm_90): cp.async copies into swizzled shared memory, ldmatrix fragment loads and the
// m16n8k16 mma.sync with fp32 accumulators. Fragment layouts are those of the PTX ISA,
// "Matrix Fragments for mma.m16n8k16": in a warp, lane = 4·g + t holds rows g and g + 8 and
// columns 2t, 2t + 1 of each 16 × 8 accumulator tile.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace flashio::kernels::tile {

constexpr float kLog2e = 1.4426950408889634f;

// Element-type traits: the mma instruction's type name and packing of two floats.
template <typename T>
struct Elem;
template <>
struct Elem<__half> {
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  }
  static __device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
  static __device__ __forceinline__ __half from_float(float x) { return __float2half_rn(x); }
};
template <>
struct Elem<__nv_bfloat16> {
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  }
  static __device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
  static __device__ __forceinline__ __nv_bfloat16 from_float(float x) { return __float2bfloat16_rn(x); }
};

// D += A·B, m16n8k16, A row-major 16×16, B column-major 16×8, fp32 accumulators.
template <typename T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1);
template <>
__device__ __forceinline__ void mma_16816<__half>(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma_16816<__nv_bfloat16>(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                                         uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// The thread index as the tiled kernels take it at the top of each loop iteration. Where a tile
// step keeps more than 128 fp32 accumulators per thread (FwdTile: S and O; BwdTile: Sᵀ, dPᵀ, dK
// and dV) — over half of the 255 registers — it goes through an empty asm that hides it from
// the optimiser, so the per-thread tile addresses derived from it are recomputed in each
// iteration (a few integer instructions per tile) instead of being computed once before the
// loops and held across them, which ptxas did by spilling them to local memory (flash1's
// forward at d = 128, 128 × 64: 436 bytes; docs/kernels.md, "Register spills"). Nothing
// computed changes. Kernels with fewer accumulators keep the hoisting: it spills nothing there,
// and the registers it would free would raise their occupancy, which the model's measured
// table (sim/cache_replay.cpp, measured_blocks_per_sm) records as it is.
template <int kAccumulatorRegisters>
__device__ __forceinline__ int loop_thread_index(int tid) {
  if constexpr (kAccumulatorRegisters > 128) asm volatile("" : "+r"(tid));
  return tid;
}
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// 16-byte asynchronous global → shared copy (bypasses L1: .cg), and its group fences.
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(smem)), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Swizzled shared-memory tiles: 16-byte unit u of row r is stored at unit u ^ (r mod 8) of the
// same row. Rows hold ≥ 8 units (≥ 64 16-bit elements; narrower tiles are padded to 64), so
// the 8 row addresses of one ldmatrix phase (same column, 8 consecutive rows) land in 8
// different bank groups, and a warp's 16-byte accesses along a row stay a permutation of it.
template <int kCols>
__device__ __forceinline__ int swz(int row, int col) {
  static_assert(kCols >= 64 && kCols % 8 == 0, "swizzled rows hold at least 8 units of 16 bytes");
  return row * kCols + (((col >> 3) ^ (row & 7)) << 3) + (col & 7);
}

// swz as a layout type, for the loaders below (wgmma tiles use wg::AtomSwizzled instead).
template <int kCols>
struct RowSwizzled {
  static __device__ __forceinline__ int at(int row, int col) { return swz<kCols>(row, col); }
};

// Shared address of a lane's ldmatrix row. Fragment rows start at multiples of 8, so
// row mod 8 = lane mod 8, and with an even column unit c the lane's swizzled unit is
// c ^ (lane_unit ^ (lane mod 8)): after unrolling, one XOR with a constant per load.
template <int kCols, typename T>
__device__ __forceinline__ uint32_t frag_addr(const T* smem, int row, int unit_even, int lane_unit, int lane) {
  return smem_addr(smem) + (row * kCols + ((unit_even ^ (lane_unit ^ (lane & 7))) << 3)) * 2;
}

// Copies rows [0, rows) of a (rows_total × kCols) row-major global tile into a swizzled shared
// tile (Layout::at gives an element's place) with cp.async, and zero-fills rows [rows, kRows)
// so that edge tiles compute on zeros. Only valid rows are read (docs/schedules.md: edge tiles
// move only their valid rows).
template <int kRows, int kCols, int kThreads, typename T, typename Layout = RowSwizzled<kCols>>
__device__ __forceinline__ void load_tile_async(T* smem, const T* gmem, int rows, int tid) {
  constexpr int kUnitsPerRow = kCols / 8;
  constexpr int kUnits = kRows * kUnitsPerRow;
  if (rows >= kRows) {
    // Whole tile (every tile but the last of a sequence): copies only. Keeping the row test
    // and the zero store out of this path also drops the padding the compiler puts between a
    // conditional shared store and a cp.async to the same address (3 dead LDS per unit).
#pragma unroll
    for (int it = 0; it < (kUnits + kThreads - 1) / kThreads; ++it) {
      const int u = it * kThreads + tid;
      if (kUnits % kThreads != 0 && u >= kUnits) break;
      const int row = u / kUnitsPerRow;
      const int c = (u % kUnitsPerRow) * 8;
      cp_async_16(smem + Layout::at(row, c), gmem + static_cast<int64_t>(row) * kCols + c);
    }
    return;
  }
#pragma unroll
  for (int it = 0; it < (kUnits + kThreads - 1) / kThreads; ++it) {
    const int u = it * kThreads + tid;
    if (kUnits % kThreads != 0 && u >= kUnits) break;
    const int row = u / kUnitsPerRow;
    const int c = (u % kUnitsPerRow) * 8;
    T* dst = smem + Layout::at(row, c);
    if (row < rows) {
      cp_async_16(dst, gmem + static_cast<int64_t>(row) * kCols + c);
    } else {
      *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
    }
  }
}

// Writes rows [0, rows) of a swizzled shared tile to global memory in 16-byte stores: a warp
// writes whole rows (≥ 128 bytes), so every 32-byte sector is written whole by one request.
template <int kRows, int kCols, int kThreads, typename T>
__device__ __forceinline__ void store_tile(T* gmem, const T* smem, int rows, int tid) {
  constexpr int kUnitsPerRow = kCols / 8;
  constexpr int kUnits = kRows * kUnitsPerRow;
#pragma unroll
  for (int it = 0; it < (kUnits + kThreads - 1) / kThreads; ++it) {
    const int u = it * kThreads + tid;
    if (kUnits % kThreads != 0 && u >= kUnits) break;
    const int row = u / kUnitsPerRow;
    const int c = (u % kUnitsPerRow) * 8;
    if (row < rows) {
      *reinterpret_cast<uint4*>(gmem + static_cast<int64_t>(row) * kCols + c) =
          *reinterpret_cast<const uint4*>(smem + swz<kCols>(row, c));
    }
  }
}

// A fragment (16 rows × 16 k) at (row0, k0) of a swizzled row-major tile [rows][kCols]:
// matrices (rows 0-7, k 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15), i.e. a[0..3] of the mma.
// row0 is a multiple of 8 and k0 of 16 (as for every loader below).
template <int kCols, typename T>
__device__ __forceinline__ void load_a(uint32_t (&a)[4], const T* smem, int row0, int k0, int lane) {
  ldmatrix_x4(a, frag_addr<kCols>(smem, row0 + (lane & 15), k0 >> 3, lane >> 4, lane));
}
// A fragment (16 m × 16 k) from a tile stored transposed, [k][m] row-major with kCols ≥ M.
template <int kCols, typename T>
__device__ __forceinline__ void load_a_trans(uint32_t (&a)[4], const T* smem, int m0, int k0, int lane) {
  ldmatrix_x4_trans(a, frag_addr<kCols>(smem, k0 + (lane & 7) + (lane >> 4) * 8, m0 >> 3, (lane >> 3) & 1, lane));
}
// B fragments of two adjacent n-tiles (n0..n0+15) × k16 from a tile stored [n][k] (k
// contiguous, e.g. K for S = QKᵀ): b[0], b[1] for n-tile 0, b[2], b[3] for n-tile 1.
template <int kCols, typename T>
__device__ __forceinline__ void load_b_nk(uint32_t (&b)[4], const T* smem, int n0, int k0, int lane) {
  ldmatrix_x4(b, frag_addr<kCols>(smem, n0 + (lane & 7) + (lane >> 4) * 8, k0 >> 3, (lane >> 3) & 1, lane));
}
// The same two n-tiles from a tile stored [k][n] (n contiguous, e.g. V for O = PV).
template <int kCols, typename T>
__device__ __forceinline__ void load_b_kn(uint32_t (&b)[4], const T* smem, int k0, int n0, int lane) {
  ldmatrix_x4_trans(b, frag_addr<kCols>(smem, k0 + (lane & 7) + ((lane >> 3) & 1) * 8, n0 >> 3, lane >> 4, lane));
}

// Accumulator tiles c[2kk], c[2kk+1] (16 × 16 of a 16 × N accumulator) as an A fragment:
// the C layout of two 16 × 8 tiles is the A layout of one 16 × 16 k-slice.
template <typename T>
__device__ __forceinline__ void acc_to_a(uint32_t (&a)[4], const float (&c0)[4], const float (&c1)[4]) {
  a[0] = Elem<T>::pack(c0[0], c0[1]);
  a[1] = Elem<T>::pack(c0[2], c0[3]);
  a[2] = Elem<T>::pack(c1[0], c1[1]);
  a[3] = Elem<T>::pack(c1[2], c1[3]);
}

// One warp's C (16 × 8·kNT, fp32) = A·Bᵀ over k < kK: A is rows a_row0..a_row0+15 of a
// swizzled [·][kK] tile, B rows 0..8·kNT−1 of another, both k contiguous (e.g. Sᵀ = K Qᵀ).
template <int kK, int kNT, typename T>
__device__ __forceinline__ void warp_mma_abt(float (&c)[kNT][4], const T* sA, int a_row0, const T* sB, int lane) {
#pragma unroll
  for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) c[nt][e] = 0.f;
#pragma unroll
  for (int kk = 0; kk < kK / 16; ++kk) {
    uint32_t a[4];
    load_a<kK>(a, sA, a_row0, kk * 16, lane);
#pragma unroll
    for (int np = 0; np < kNT / 2; ++np) {
      uint32_t b[4];
      load_b_nk<kK>(b, sB, np * 16, kk * 16, lane);
      mma_16816<T>(c[2 * np], a, b[0], b[1]);
      mma_16816<T>(c[2 * np + 1], a, b[2], b[3]);
    }
  }
}

// One warp's C (16 × kN, fp32) += P·B: P (16 × 8·kPT) is fp32 accumulator tiles, taken as A
// fragments 16 columns at a time; B is a swizzled [k][kN] tile, n contiguous (e.g. dV += Pᵀ dO).
// kKept: the elements as max(p, 0) (fused dropout's dV += (P ∘ Z)ᵀ dO, a dropped P held as −P;
// flash_bwd_tile.cuh).
template <int kN, int kPT, typename T, bool kKept = false>
__device__ __forceinline__ void warp_mma_acc_b(float (&c)[kN / 8][4], const float (&p)[kPT][4], const T* sB,
                                               int lane) {
#pragma unroll
  for (int kk = 0; kk < kPT / 2; ++kk) {
    uint32_t a[4];
    if constexpr (kKept) {
      float x[2][4];
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int e = 0; e < 4; ++e) x[h][e] = fmaxf(p[2 * kk + h][e], 0.f);
      acc_to_a<T>(a, x[0], x[1]);
    } else {
      acc_to_a<T>(a, p[2 * kk], p[2 * kk + 1]);
    }
#pragma unroll
    for (int dp = 0; dp < kN / 16; ++dp) {
      uint32_t b[4];
      load_b_kn<kN>(b, sB, kk * 16, dp * 16, lane);
      mma_16816<T>(c[2 * dp], a, b[0], b[1]);
      mma_16816<T>(c[2 * dp + 1], a, b[2], b[3]);
    }
  }
}

// 2^x by the SFU (ex2.approx; 2^-inf = 0). The softmax runs in base 2 with the scale folded
// into log2 e, one FFMA and one MUFU per score (FlashAttention-2's habit).
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

}  // namespace flashio::kernels::tile
