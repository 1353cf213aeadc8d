// Hopper's warpgroup matrix multiply (wgmma, sm_90a; PTX ISA "Asynchronous Warpgroup Level
// Matrix Multiply-Accumulate Instructions"): one instruction per warpgroup (4 warps, 128
// threads) computes a 64 × N × 16 product, reading B (and, for wgmma_ss, A) straight from shared
// memory through 64-bit matrix descriptors, asynchronously: the warps issue it, go on with other
// work, and wait for it by commit group. The accumulator layout of warp w of the warpgroup is
// that of mma.sync m16n8 tiles for rows 16w..16w+15: d[4·t + e] is row 16w + lane/4 + 8·(e/2),
// column 8t + 2·(lane mod 4) + (e mod 2); an A operand in registers has the m16n8k16 A layout.
// The asm blocks below repeat one pattern for each shape (N = 64, 128, 256) and element type
// (N = 256 is used by the calibration benchmarks, kernels/calibrate/).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/mma_tile.cuh"

namespace flashio::kernels::wg {

// Shared-memory tiles for wgmma use 128-byte swizzle atoms: 8 rows of 64 16-bit elements
// (128 B each, 1024 B per atom, atoms 1024-byte aligned), the 16-byte unit u of row r stored at
// unit u ^ (r mod 8). A tile of kRows × kCols (kCols a multiple of 64) is kCols/64 column
// panels of kRows × 64, one after the other. The same arrangement serves a K-major operand
// (rows = M or N, 64 k per panel) and an MN-major one (rows = K, 64 of M or N per panel).
template <int kRows>
struct AtomSwizzled {
  static __device__ __forceinline__ int at(int row, int col) {
    return (col >> 6) * (kRows * 64) + row * 64 + ((((col >> 3) & 7) ^ (row & 7)) << 3) + (col & 7);
  }
};

// Matrix descriptor (PTX ISA "Matrix Descriptor Format"): start address, leading and stride
// byte offsets (all >> 4), swizzle mode 1 = 128 B in bits 62-63, base offset 0 (atoms are
// 1024-byte aligned). K-major with 128-byte swizzle: the stride offset steps over 8-row atoms
// (1024 B), the leading offset is unused (1). MN-major: the leading offset steps to the next
// 64-wide panel of M or N, the stride offset to the next 8 rows of K (1024 B).
__device__ __forceinline__ uint64_t sw128_desc(const void* smem, uint32_t leading_bytes, uint32_t stride_bytes) {
  const uint32_t addr = tile::smem_addr(smem);
  uint64_t desc = (addr & 0x3FFFF) >> 4;
  desc |= uint64_t((leading_bytes >> 4) & 0x3FFF) << 16;
  desc |= uint64_t((stride_bytes >> 4) & 0x3FFF) << 32;
  desc |= uint64_t(1) << 62;
  return desc;
}

// The descriptor of the tile `elements` elements of type T past the one `desc` describes: the
// start address field (bits 0-13, bytes >> 4) advanced, which cannot carry out since shared
// addresses stay below 2^18 bytes. Cheaper than sw128_desc of the new address (one 64-bit add).
template <typename T>
__device__ __forceinline__ uint64_t desc_at(uint64_t desc, int elements) {
  return desc + uint64_t((elements * int(sizeof(T))) >> 4);
}

// Before the first wgmma of a batch, and whenever registers it reads (A fragments,
// accumulators) were written by ordinary instructions since the last wgmma.
__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Shared memory written by ordinary stores or cp.async is seen by wgmma (the async proxy) only
// after this fence (and a barrier between the writing and the reading threads).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// D (64 × N, fp32) = A·B (+ D when scale_d ≠ 0); A (64 × 16) and B (N × 16) K-major in shared memory.
template <typename T, int N>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], uint64_t a_desc, uint64_t b_desc, int scale_d);
// D (64 × N, fp32) += A·B; A (64 × 16) in registers, B (16 × N) N-major in shared memory.
template <typename T, int N>
__device__ __forceinline__ void wgmma_rs_tn(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t b_desc);
// D (64 × N, fp32) = A·B (+ D when scale_d ≠ 0); A (64 × 16) M-major and B (16 × N) N-major in
// shared memory (both transposed: the backward's dQ = dS K reads dSᵀ and K as stored).
template <typename T, int N>
__device__ __forceinline__ void wgmma_ss_mn(float (&d)[N / 2], uint64_t a_desc, uint64_t b_desc, int scale_d);

// The accumulator operands of an m64nNk16 instruction, N/2 fp32 registers per thread: as PTX
// register lists and as asm output operands (N = 128 extends N = 64's, N = 256 N = 128's).
#define FLASHIO_WGMMA_D64_REGS "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define FLASHIO_WGMMA_D128_REGS FLASHIO_WGMMA_D64_REGS ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define FLASHIO_WGMMA_D64_OUTS \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define FLASHIO_WGMMA_D128_OUTS FLASHIO_WGMMA_D64_OUTS, \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define FLASHIO_WGMMA_D256_REGS FLASHIO_WGMMA_D128_REGS ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define FLASHIO_WGMMA_D256_OUTS FLASHIO_WGMMA_D128_OUTS, \
    "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
    "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
    "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
    "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
    "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
    "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
    "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
    "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

// One instruction with both operands from shared memory, NAME<T, N>: TRANS the operands'
// transpose flags (PTX imm-trans-a, imm-trans-b: "0, 0" K-major, "1, 1" M- and N-major).
#define FLASHIO_WGMMA_SS(T, TY, N, NAME, SS, SCALE, TRANS) \
template <> \
__device__ __forceinline__ void NAME<T, N>(float (&d)[N / 2], uint64_t a_desc, uint64_t b_desc, int scale_d) { \
  asm volatile( \
      "{\n.reg .pred p;\nsetp.ne.b32 p, " SCALE ", 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TY "." TY " {" \
      FLASHIO_WGMMA_D##N##_REGS \
      "}, " SS ", p, 1, 1, " TRANS ";\n}\n" \
      : FLASHIO_WGMMA_D##N##_OUTS \
      : "l"(a_desc), "l"(b_desc), "r"(scale_d)); \
}

// The three instructions of shape N for element type T (TY in PTX: "f16", "bf16"). The inputs
// follow the N/2 accumulators, so their operand numbers are given: SS ("%32, %33") and SCALE
// ("%34") for wgmma_ss and wgmma_ss_mn, RS ("{%32, %33, %34, %35}, %36") for wgmma_rs_tn at N = 64.
#define FLASHIO_WGMMA_FOR_SHAPE(T, TY, N, SS, SCALE, RS) \
FLASHIO_WGMMA_SS(T, TY, N, wgmma_ss, SS, SCALE, "0, 0") \
template <> \
__device__ __forceinline__ void wgmma_rs_tn<T, N>(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t b_desc) { \
  asm volatile( \
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TY "." TY " {" \
      FLASHIO_WGMMA_D##N##_REGS \
      "}, " RS ", p, 1, 1, 1;\n}\n" \
      : FLASHIO_WGMMA_D##N##_OUTS \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc)); \
} \
FLASHIO_WGMMA_SS(T, TY, N, wgmma_ss_mn, SS, SCALE, "1, 1")

#define FLASHIO_WGMMA_FOR_TYPE(T, TY) \
  FLASHIO_WGMMA_FOR_SHAPE(T, TY, 64, "%32, %33", "%34", "{%32, %33, %34, %35}, %36") \
  FLASHIO_WGMMA_FOR_SHAPE(T, TY, 128, "%64, %65", "%66", "{%64, %65, %66, %67}, %68") \
  FLASHIO_WGMMA_FOR_SHAPE(T, TY, 256, "%128, %129", "%130", "{%128, %129, %130, %131}, %132")

FLASHIO_WGMMA_FOR_TYPE(__half, "f16")
FLASHIO_WGMMA_FOR_TYPE(__nv_bfloat16, "bf16")
#undef FLASHIO_WGMMA_FOR_TYPE
#undef FLASHIO_WGMMA_FOR_SHAPE
#undef FLASHIO_WGMMA_SS
#undef FLASHIO_WGMMA_D256_OUTS
#undef FLASHIO_WGMMA_D128_OUTS
#undef FLASHIO_WGMMA_D64_OUTS
#undef FLASHIO_WGMMA_D256_REGS
#undef FLASHIO_WGMMA_D128_REGS
#undef FLASHIO_WGMMA_D64_REGS

}  // namespace flashio::kernels::wg
