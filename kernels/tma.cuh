// Hopper's asynchronous copy machinery (sm_90; PTX ISA "Tensor Copy", "mbarrier", "setmaxnreg"),
// the pieces the warp-specialised forward (kernels/flash2_fwd_ws.cuh) is built from:
// - TMA (`cp.async.bulk.tensor`): one thread copies a whole box of a tensor between global and
//   shared memory, described by a tensor map (kernels/tensor_map.h) that also swizzles it into
//   the 128-byte atoms wgmma reads (kernels/wgmma.cuh) and fills rows outside the tensor with
//   zeros; a load signals completion on an mbarrier by the bytes it delivered;
// - mbarriers: shared-memory barriers with an arrival count and a transaction (byte) count, and
//   a phase bit that flips each time both reach zero: a consumer waits for a phase's parity;
// - named barriers (`bar.sync`/`bar.arrive` with an id and a thread count): ordering between
//   warpgroups without stopping the whole block;
// - `setmaxnreg`: a warpgroup gives registers back to the SM's pool (the producer) or takes
//   more (the consumers), so that the computing warps hold their accumulators.
#pragma once
#include <cstdint>

#include "kernels/mma_tile.cuh"
#include "kernels/tensor_map.h"

namespace flashio::kernels::tma {

__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(tile::smem_addr(bar)), "r"(arrivals) : "memory");
}
// Makes the initialised barriers visible to the async proxy (TMA) and to the other threads
// (after a __syncthreads).
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// One arrival that also announces `bytes` to come from copies signalling this barrier.
__device__ __forceinline__ void arrive_expect_bytes(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(tile::smem_addr(bar)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(tile::smem_addr(bar)) : "memory");
}
// Waits until the phase of parity `parity` has completed. A fresh barrier is in phase 0, so a
// wait for parity 1 passes at once (the producer's first wait on a free buffer).
__device__ __forceinline__ void wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n}\n" ::"r"(tile::smem_addr(bar)),
      "r"(parity)
      : "memory");
}

__device__ __forceinline__ void prefetch_map(const Map& map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map)) : "memory");
}
// Box (x, y, z) of `map` into shared memory at dst (1024-byte aligned for the 128-byte swizzle),
// completing on `bar`.
__device__ __forceinline__ void load_box(void* dst, const Map& map, int x, int y, int z, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], "
      "[%2];\n" ::"r"(tile::smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(&map)), "r"(tile::smem_addr(bar)), "r"(x), "r"(y), "r"(z)
      : "memory");
}
// Shared memory at src into box (x, y, z) of `map`; rows outside the tensor are not written.
// Shared-memory writes by ordinary stores must be fenced first (wg::fence_proxy_async).
__device__ __forceinline__ void store_box(const Map& map, const void* src, int x, int y, int z) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
                   reinterpret_cast<uint64_t>(&map)),
               "r"(tile::smem_addr(src)), "r"(x), "r"(y), "r"(z)
               : "memory");
}
// Adds shared memory at src (fp32) into box (x, y, z) of `map`, element by element, in L2
// (`cp.reduce.async.bulk.tensor` .add); rows outside the tensor are not touched. Fenced as store_box.
__device__ __forceinline__ void reduce_add_box(const Map& map, const void* src, int x, int y, int z) {
  asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
                   reinterpret_cast<uint64_t>(&map)),
               "r"(tile::smem_addr(src)), "r"(x), "r"(y), "r"(z)
               : "memory");
}
__device__ __forceinline__ void store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Waits until the committed stores have read their shared memory (it may then be reused or freed).
__device__ __forceinline__ void store_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }

// Named barrier `id` (1..15; 0 is __syncthreads') over `threads` threads (a multiple of 32):
// sync waits for all of them, arrive counts this warp's and goes on.
__device__ __forceinline__ void named_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Registers per thread of the executing warpgroup (all its warps execute it).
template <int kRegisters>
__device__ __forceinline__ void take_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}
template <int kRegisters>
__device__ __forceinline__ void give_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

}  // namespace flashio::kernels::tma
