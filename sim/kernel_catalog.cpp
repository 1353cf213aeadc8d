#include "sim/kernel_catalog.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <vector>

#include "sim/errors.h"
#include "sim/trim.h"
#include "sim/kernel_kind.h"

namespace flashio::sim {

extern const char* const kH200OccupancyCsv;  // sim/data/h200_occupancy.csv, compiled in

std::string to_string(MmaKind mma) {
  switch (mma) {
    case MmaKind::mma_sync: return "mma_sync";
    case MmaKind::wgmma: return "wgmma";
    case MmaKind::wgmma_ws: return "wgmma_ws";
  }
  throw std::logic_error("MmaKind out of range");
}

std::optional<MmaKind> parse_mma_kind(std::string_view text) {
  for (MmaKind m : {MmaKind::mma_sync, MmaKind::wgmma, MmaKind::wgmma_ws})
    if (to_string(m) == text) return m;
  return std::nullopt;
}

std::string allowed_mma_kinds() { return "mma_sync, wgmma, wgmma_ws"; }

bool issues_wgmma(MmaKind mma) { return mma == MmaKind::wgmma || mma == MmaKind::wgmma_ws; }

std::string to_string(GridOrder order) {
  switch (order) {
    case GridOrder::blocks_within_head: return "blocks_within_head";
    case GridOrder::causal_last_first: return "causal_last_first";
  }
  throw std::logic_error("GridOrder out of range");
}

namespace {

// Threads and shared memory are the kernels' own constants (kernels/*.cuh: kThreads,
// kSmemBytes; flash2's backward takes a second stage of Q, dO, lse, D whenever that costs no
// resident block). Registers and stack are what ptxas made of them (CUDA 13.0, sm_90a; read
// with `cuobjdump --dump-resource-usage` on libflashio_kernels.a). Defaults: docs/kernels.md,
// "Speed". tests/kernels compares every field with the compiled registry and the machine code.
// Fields: algo, pass, d, dtype, {Br, Bc}, threads, registers, stack_bytes, smem_bytes, stages,
// mma, grid order, is_default, and for flash2 the registers of its instance for stacked rows
// (and, forward, of its split-KV instances for one head's rows and for stacked rows, of its paged
// instances without and with splits), then of its window instance (forward and backward), of
// its block-sparse instance (forward and backward), and last, for flash1 and flash2, of its
// instance for fused dropout and key padding (flash2: stacked rows; the forward's is a KV-cache
// instance), with zeros before it where an algorithm has no such instance; then dense_only (false:
// the kernel runs every variant its algorithm has); then the instructions of a warp's pass through
// the tile-step loop and of those the matrix ones (read off the SASS, `cuobjdump -sass` with
// nvdisasm, by the rule of BuiltKernel::step_instructions).
constexpr BuiltKernel kBuilt[] = {
    {Algo::flash1, Pass::fwd, 64, DType::fp16, {64, 32}, 128, 126, 0, 32768, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 0, 0, 0, 0, 0, 0, 0, 124, false, 880, 52},
    {Algo::flash1, Pass::fwd, 64, DType::fp16, {64, 64}, 128, 158, 0, 40960, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 0, 0, 0, 0, 0, 0, 0, 159, false, 1034, 100},
    {Algo::flash1, Pass::fwd, 64, DType::fp16, {64, 128}, 128, 223, 0, 57344, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 0, 0, 0, 0, 0, 0, 0, 229, false, 1365, 196},
    {Algo::flash1, Pass::fwd, 64, DType::fp16, {128, 32}, 256, 122, 0, 57344, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 0, 0, 0, 0, 0, 0, 0, 124, false, 889, 52},
    {Algo::flash1, Pass::fwd, 64, DType::fp16, {128, 64}, 256, 166, 0, 65536, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 0, 0, 0, 0, 0, 0, 0, 175, false, 1034, 100},
    {Algo::flash1, Pass::fwd, 64, DType::fp16, {128, 128}, 256, 217, 0, 81920, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, true, 0, 0, 0, 0, 0, 0, 0, 223, false, 1365, 196},
    {Algo::flash1, Pass::fwd, 64, DType::bf16, {128, 128}, 256, 217, 0, 81920, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, true, 0, 0, 0, 0, 0, 0, 0, 223, false, 1365, 196},
    {Algo::flash1, Pass::fwd, 128, DType::fp16, {64, 32}, 128, 216, 0, 65536, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 0, 0, 0, 0, 0, 0, 0, 214, false, 1300, 104},
    {Algo::flash1, Pass::fwd, 128, DType::fp16, {64, 64}, 128, 239, 0, 81920, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 0, 0, 0, 0, 0, 0, 0, 245, false, 1485, 200},
    {Algo::flash1, Pass::fwd, 128, DType::fp16, {64, 128}, 128, 255, 0, 114688, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 0, 0, 0, 0, 0, 0, 0, 255, false, 1956, 392},
    {Algo::flash1, Pass::fwd, 128, DType::fp16, {128, 32}, 256, 216, 0, 114688, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 0, 0, 0, 0, 0, 0, 0, 212, false, 1318, 104},
    {Algo::flash1, Pass::fwd, 128, DType::fp16, {128, 64}, 256, 242, 0, 131072, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, true, 0, 0, 0, 0, 0, 0, 0, 241, false, 1524, 200},
    {Algo::flash1, Pass::fwd, 128, DType::fp16, {128, 128}, 256, 255, 0, 163840, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 0, 0, 0, 0, 0, 0, 0, 255, false, 1961, 392},
    {Algo::flash1, Pass::fwd, 128, DType::bf16, {128, 64}, 256, 242, 0, 131072, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, true, 0, 0, 0, 0, 0, 0, 0, 241, false, 1524, 200},
    {Algo::flash1, Pass::bwd, 64, DType::fp16, {32, 64}, 128, 168, 0, 46336, 1, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 0, 0, 0, 0, 0, 0, 0, 165, false, 1162, 132},
    {Algo::flash1, Pass::bwd, 64, DType::fp16, {32, 128}, 256, 254, 0, 70912, 1, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 0, 0, 0, 0, 0, 0, 0, 235, false, 1035, 136},
    {Algo::flash1, Pass::bwd, 64, DType::fp16, {64, 64}, 128, 242, 0, 68096, 1, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 0, 0, 0, 0, 0, 0, 0, 243, false, 1532, 248},
    {Algo::flash1, Pass::bwd, 64, DType::fp16, {64, 128}, 256, 250, 0, 92672, 1, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 0, 0, 0, 0, 0, 0, 0, 235, false, 1407, 256},
    {Algo::flash1, Pass::bwd, 64, DType::fp16, {128, 64}, 128, 255, 0, 119808, 1, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 0, 0, 0, 0, 0, 0, 0, 255, false, 2864, 480},
    {Algo::flash1, Pass::bwd, 64, DType::fp16, {128, 128}, 256, 255, 0, 152576, 1, MmaKind::mma_sync, GridOrder::blocks_within_head, true, 0, 0, 0, 0, 0, 0, 0, 255, false, 2513, 488},
    {Algo::flash1, Pass::bwd, 64, DType::bf16, {128, 128}, 256, 255, 0, 152576, 1, MmaKind::mma_sync, GridOrder::blocks_within_head, true, 0, 0, 0, 0, 0, 0, 0, 255, false, 2513, 488},
    {Algo::flash1, Pass::bwd, 128, DType::fp16, {32, 32}, 64, 239, 0, 62720, 1, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 0, 0, 0, 0, 0, 0, 0, 255, false, 2070, 252},
    {Algo::flash1, Pass::bwd, 128, DType::fp16, {32, 64}, 128, 255, 0, 83200, 1, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 0, 0, 0, 0, 0, 0, 0, 255, false, 1681, 256},
    {Algo::flash1, Pass::bwd, 128, DType::fp16, {32, 128}, 256, 245, 0, 124160, 1, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 0, 0, 0, 0, 0, 0, 0, 255, false, 1487, 264},
    {Algo::flash1, Pass::bwd, 128, DType::fp16, {64, 32}, 64, 255, 16, 104960, 1, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 0, 0, 0, 0, 0, 0, 0, 255, false, 3327, 488},
    {Algo::flash1, Pass::bwd, 128, DType::fp16, {64, 64}, 128, 255, 16, 125440, 1, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 0, 0, 0, 0, 0, 0, 0, 255, false, 2565, 488},
    {Algo::flash1, Pass::bwd, 128, DType::fp16, {64, 128}, 256, 255, 0, 166400, 1, MmaKind::mma_sync, GridOrder::blocks_within_head, true, 0, 0, 0, 0, 0, 0, 0, 255, false, 2187, 496},
    {Algo::flash1, Pass::bwd, 128, DType::bf16, {64, 128}, 256, 255, 0, 166400, 1, MmaKind::mma_sync, GridOrder::blocks_within_head, true, 0, 0, 0, 0, 0, 0, 0, 255, false, 2187, 496},
    {Algo::flash2, Pass::fwd, 64, DType::fp16, {64, 32}, 128, 121, 0, 24576, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 128, 119, 126, 140, 132, 134, 119, 148, false, 416, 52},
    {Algo::flash2, Pass::fwd, 64, DType::fp16, {64, 64}, 128, 171, 0, 40960, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 168, 167, 165, 178, 175, 180, 147, 177, false, 658, 100},
    {Algo::flash2, Pass::fwd, 64, DType::fp16, {64, 128}, 128, 192, 0, 73728, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 215, 190, 214, 231, 228, 223, 195, 229, false, 1349, 196},
    {Algo::flash2, Pass::fwd, 64, DType::fp16, {128, 32}, 128, 177, 0, 32768, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 179, 182, 181, 195, 187, 193, 173, 197, false, 637, 88},
    {Algo::flash2, Pass::fwd, 64, DType::fp16, {128, 64}, 256, 118, 0, 50176, 2, MmaKind::wgmma, GridOrder::blocks_within_head, true, 119, 110, 119, 128, 126, 128, 121, 125, false, 603, 15},
    {Algo::flash2, Pass::fwd, 64, DType::fp16, {128, 128}, 128, 255, 0, 81920, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 255, 255, 255, 255, 255, 255, 255, 255, false, 2111, 328},
    {Algo::flash2, Pass::fwd, 64, DType::bf16, {128, 64}, 256, 118, 0, 50176, 2, MmaKind::wgmma, GridOrder::blocks_within_head, true, 119, 110, 119, 128, 126, 128, 121, 125, false, 603, 15},
    {Algo::flash2, Pass::fwd, 128, DType::fp16, {64, 32}, 128, 195, 0, 49152, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 201, 188, 194, 203, 203, 210, 188, 187, false, 606, 104},
    {Algo::flash2, Pass::fwd, 128, DType::fp16, {64, 64}, 128, 197, 0, 81920, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 205, 196, 202, 220, 216, 206, 201, 214, false, 1140, 200},
    {Algo::flash2, Pass::fwd, 128, DType::fp16, {64, 128}, 128, 244, 0, 147456, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 250, 242, 249, 255, 255, 255, 246, 255, false, 2151, 392},
    {Algo::flash2, Pass::fwd, 128, DType::fp16, {128, 32}, 128, 242, 0, 65536, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 243, 248, 252, 255, 254, 250, 246, 254, false, 1025, 176},
    {Algo::flash2, Pass::fwd, 128, DType::fp16, {128, 64}, 128, 255, 24, 98304, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 255, 255, 255, 255, 255, 255, 255, 255, false, 1724, 336},
    {Algo::flash2, Pass::fwd, 128, DType::fp16, {128, 128}, 256, 223, 0, 164864, 2, MmaKind::wgmma, GridOrder::blocks_within_head, true, 227, 214, 225, 236, 231, 254, 228, 238, false, 1223, 27},
    {Algo::flash2, Pass::fwd, 128, DType::bf16, {128, 128}, 256, 223, 0, 164864, 2, MmaKind::wgmma, GridOrder::blocks_within_head, true, 227, 214, 225, 236, 231, 254, 228, 238, false, 1223, 27},
    // The warp-specialised forwards (kernels/flash2_fwd_ws.cuh): one instance each, for one head's
    // rows and a group's stacked rows alike, dense problems only; the registers are the launch's
    // (384 threads: 168, 512: 128), which setmaxnreg then moves from the producer to the consumers.
    {Algo::flash2, Pass::fwd, 64, DType::fp16, {128, 128}, 384, 168, 0, 83072, 2, MmaKind::wgmma_ws, GridOrder::causal_last_first, false, 0, 0, 0, 0, 0, 0, 0, 0, true, 596, 10},
    {Algo::flash2, Pass::fwd, 64, DType::bf16, {128, 128}, 384, 168, 0, 83072, 2, MmaKind::wgmma_ws, GridOrder::causal_last_first, false, 0, 0, 0, 0, 0, 0, 0, 0, true, 596, 10},
    {Algo::flash2, Pass::fwd, 64, DType::fp16, {192, 128}, 512, 128, 16, 91264, 2, MmaKind::wgmma_ws, GridOrder::causal_last_first, true, 0, 0, 0, 0, 0, 0, 0, 0, true, 607, 10},
    {Algo::flash2, Pass::fwd, 64, DType::bf16, {192, 128}, 512, 128, 16, 91264, 2, MmaKind::wgmma_ws, GridOrder::causal_last_first, true, 0, 0, 0, 0, 0, 0, 0, 0, true, 607, 10},
    {Algo::flash2, Pass::fwd, 128, DType::fp16, {128, 128}, 384, 168, 0, 164992, 2, MmaKind::wgmma_ws, GridOrder::causal_last_first, true, 0, 0, 0, 0, 0, 0, 0, 0, true, 798, 10},
    {Algo::flash2, Pass::fwd, 128, DType::bf16, {128, 128}, 384, 168, 0, 164992, 2, MmaKind::wgmma_ws, GridOrder::causal_last_first, true, 0, 0, 0, 0, 0, 0, 0, 0, true, 798, 10},
    {Algo::flash2, Pass::bwd, 64, DType::fp16, {32, 64}, 128, 170, 0, 50688, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 168, 0, 0, 0, 0, 168, 240, 239, false, 935, 132},
    {Algo::flash2, Pass::bwd, 64, DType::fp16, {32, 128}, 256, 238, 0, 75264, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 181, 0, 0, 0, 0, 180, 244, 241, false, 890, 136},
    {Algo::flash2, Pass::bwd, 64, DType::fp16, {64, 64}, 128, 238, 0, 76800, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 246, 0, 0, 0, 0, 247, 242, 253, false, 1340, 248},
    {Algo::flash2, Pass::bwd, 64, DType::fp16, {64, 128}, 256, 255, 0, 101376, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 242, 0, 0, 0, 0, 242, 255, 251, false, 1261, 256},
    {Algo::flash2, Pass::bwd, 64, DType::fp16, {128, 64}, 128, 255, 0, 103424, 1, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 255, 0, 0, 0, 0, 255, 255, 255, false, 2368, 480},
    {Algo::flash2, Pass::bwd, 64, DType::fp16, {128, 128}, 256, 255, 16, 169984, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, true, 255, 0, 0, 0, 0, 255, 254, 255, false, 2217, 488},
    {Algo::flash2, Pass::bwd, 64, DType::bf16, {128, 128}, 256, 255, 16, 169984, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, true, 255, 0, 0, 0, 0, 255, 254, 255, false, 2217, 488},
    {Algo::flash2, Pass::bwd, 128, DType::fp16, {32, 32}, 64, 238, 0, 54528, 1, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 254, 0, 0, 0, 0, 255, 238, 255, false, 1556, 252},
    {Algo::flash2, Pass::bwd, 128, DType::fp16, {32, 64}, 128, 255, 0, 91648, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 255, 0, 0, 0, 0, 255, 255, 255, false, 1336, 256},
    {Algo::flash2, Pass::bwd, 128, DType::fp16, {32, 128}, 256, 255, 8, 132608, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 254, 0, 0, 0, 0, 255, 245, 255, false, 1230, 264},
    {Algo::flash2, Pass::bwd, 128, DType::fp16, {64, 32}, 64, 255, 16, 88576, 1, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 255, 0, 0, 0, 0, 255, 255, 255, false, 2529, 488},
    {Algo::flash2, Pass::bwd, 128, DType::fp16, {64, 64}, 128, 255, 16, 109056, 1, MmaKind::mma_sync, GridOrder::blocks_within_head, false, 255, 0, 0, 0, 0, 255, 255, 255, false, 2040, 488},
    {Algo::flash2, Pass::bwd, 128, DType::fp16, {64, 128}, 256, 255, 16, 183296, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, true, 255, 0, 0, 0, 0, 255, 255, 255, false, 1862, 496},
    {Algo::flash2, Pass::bwd, 128, DType::bf16, {64, 128}, 256, 255, 16, 183296, 2, MmaKind::mma_sync, GridOrder::blocks_within_head, true, 255, 0, 0, 0, 0, 255, 255, 255, false, 1862, 496},
    {Algo::flash2, Pass::bwd, 64, DType::fp16, {128, 128}, 256, 255, 16, 134144, 2, MmaKind::wgmma, GridOrder::blocks_within_head, true, 255, 0, 0, 0, 0, 0, 0, 0, true, 1860, 44},
    {Algo::flash2, Pass::bwd, 64, DType::bf16, {128, 128}, 256, 255, 16, 134144, 2, MmaKind::wgmma, GridOrder::blocks_within_head, true, 255, 0, 0, 0, 0, 0, 0, 0, true, 1860, 44},
    {Algo::flash2, Pass::bwd, 128, DType::fp16, {64, 128}, 256, 252, 0, 182272, 2, MmaKind::wgmma, GridOrder::blocks_within_head, true, 237, 0, 0, 0, 0, 0, 0, 0, true, 1455, 40},
    {Algo::flash2, Pass::bwd, 128, DType::bf16, {64, 128}, 256, 252, 0, 182272, 2, MmaKind::wgmma, GridOrder::blocks_within_head, true, 237, 0, 0, 0, 0, 0, 0, 0, true, 1455, 40},
};

// flash2 backward's row kernels (kernels/flash2_bwd.cuh), kRowKernelThreads = 128 threads;
// preprocess stages delta in a 128-float __shared__ array. Registers: cuobjdump, as above.
constexpr BuiltRowKernel kRowKernels[] = {
    {KernelKind::flash2_bwd_preprocess, 64, DType::fp16, 128, 32, 512},
    {KernelKind::flash2_bwd_convert_dq, 64, DType::fp16, 128, 28, 0},
    {KernelKind::flash2_bwd_preprocess, 64, DType::bf16, 128, 32, 512},
    {KernelKind::flash2_bwd_convert_dq, 64, DType::bf16, 128, 28, 0},
    {KernelKind::flash2_bwd_preprocess, 128, DType::fp16, 128, 32, 512},
    {KernelKind::flash2_bwd_convert_dq, 128, DType::fp16, 128, 28, 0},
    {KernelKind::flash2_bwd_preprocess, 128, DType::bf16, 128, 32, 512},
    {KernelKind::flash2_bwd_convert_dq, 128, DType::bf16, 128, 28, 0},
    // Split-KV's combine (kernels/flash2_fwd_combine.cuh), 128 threads: the weights of 32 splits
    // at a time for its 64 rows and the rows' rescales in shared memory (32 × 64 + 64 floats).
    {KernelKind::flash2_fwd_combine, 64, DType::fp16, 128, 122, 8448},
    {KernelKind::flash2_fwd_combine, 64, DType::bf16, 128, 122, 8448},
    {KernelKind::flash2_fwd_combine, 128, DType::fp16, 128, 197, 8448},
    {KernelKind::flash2_fwd_combine, 128, DType::bf16, 128, 197, 8448},
};

}  // namespace

int64_t standard_softmax_threads(int64_t seqlen) {
  constexpr int64_t kElementsPerThread = 32;  // four 16-byte chunks of 16-bit elements
  const int64_t threads = (std::max<int64_t>(seqlen, 1) + kElementsPerThread - 1) / kElementsPerThread;
  return std::min<int64_t>(1024, (threads + 31) / 32 * 32);
}

int64_t standard_gemm_main_keys(int64_t seqlen) { return seqlen < 8 ? seqlen : seqlen / 8 * 8; }

int64_t standard_gemm_calls(int64_t seqlen) { return standard_gemm_main_keys(seqlen) < seqlen ? 2 : 1; }

RowKernelLaunch standard_row_kernel_launch(KernelKind kind, int64_t seqlen) {
  if (kind == KernelKind::softmax)
    return {standard_softmax_threads(seqlen), kStandardSoftmaxRegisters, kStandardSoftmaxStaticSmemBytes};
  return {};
}

std::span<const BuiltKernel> built_kernels() { return kBuilt; }

int64_t dependent_load_rounds(const BuiltKernel& entry, Tensor tensor, int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0) return 0;
  if (tensor == Tensor::block_table) return 1;  // flash2's paged forward: a tile's page entries before its copies
  if (entry.algo != Algo::flash1) return 0;
  const int64_t threads = std::max<int64_t>(entry.threads, 32);
  if (entry.pass == Pass::fwd && tensor == Tensor::o_accum) return 1;  // every slice's loads before any use
  if (entry.pass == Pass::bwd && tensor == Tensor::dq_accum) return (rows * cols / 4 + threads - 1) / threads;
  return 0;
}

int64_t row_kernel_bytes_in_flight(KernelKind kind, int64_t threads, int64_t row_elements, int64_t element_bytes) {
  const int64_t per_thread = (row_elements + threads - 1) / std::max<int64_t>(threads, 1);  // loop trips
  const auto group = [&](int64_t unroll) { return threads * std::min(unroll, std::max<int64_t>(per_thread, 1)) * element_bytes; };
  switch (kind) {
    case KernelKind::softmax: return 0;  // its whole row in flight (all chunks loaded before any is used)
    case KernelKind::mask: return group(4);
    case KernelKind::dropout:
    case KernelKind::dropout_bwd: return group(1);
    case KernelKind::softmax_bwd: {  // 16-byte chunks of P and dP, kStandardSoftmaxBwdChunksInFlight a thread
      const int64_t chunks = (row_elements * element_bytes + 15) / 16;
      const int64_t trips = (chunks + threads - 1) / std::max<int64_t>(threads, 1);
      return 2 * threads * std::min(kStandardSoftmaxBwdChunksInFlight, std::max<int64_t>(trips, 1)) * 16;
    }
    case KernelKind::rowsum_do_o: return threads * 2 * 16;
    default: return 0;
  }
}

bool fragments_overlap_mma(const BuiltKernel& entry) {
  return (entry.algo == Algo::flash1 || entry.algo == Algo::flash2) && entry.pass == Pass::fwd &&
         entry.mma == MmaKind::mma_sync;
}

int64_t turn_taking_warpgroups(const BuiltKernel& entry) {
  return entry.mma == MmaKind::wgmma_ws ? std::max<int64_t>(1, entry.threads / 128 - 1) : 1;
}

int64_t computing_warps(const BuiltKernel& entry) {
  return std::max<int64_t>(1, (entry.mma == MmaKind::wgmma_ws ? entry.threads - 128 : entry.threads) / 32);
}

bool loads_whole_boxes(const BuiltKernel& entry) { return entry.mma == MmaKind::wgmma_ws && entry.pass == Pass::fwd; }

KernelKind main_kernel_kind(const BuiltKernel& k) {
  const bool fwd = k.pass == Pass::fwd;
  switch (k.algo) {
    case Algo::flash1: return fwd ? KernelKind::flash1_fwd : KernelKind::flash1_bwd;
    case Algo::flash2: return fwd ? KernelKind::flash2_fwd : KernelKind::flash2_bwd;
    case Algo::standard:
    case Algo::blocksparse: break;
  }
  throw std::logic_error("BuiltKernel of an algorithm without tiled kernels");
}

std::span<const BuiltRowKernel> built_row_kernels() { return kRowKernels; }

const BuiltRowKernel* find_row_kernel(KernelKind kind, int64_t headdim, DType dtype) {
  for (const BuiltRowKernel& r : kRowKernels)
    if (r.kind == kind && r.headdim == headdim && r.dtype == dtype) return &r;
  return nullptr;
}

const BuiltKernel* find_built(Algo algo, Pass pass, int64_t headdim, DType dtype, const Tiling& tiling,
                              std::optional<MmaKind> family, bool dense, std::span<const BuiltKernel> entries) {
  for (const BuiltKernel& k : entries)
    if (k.algo == algo && k.pass == pass && k.headdim == headdim && k.dtype == dtype && k.tiling == tiling &&
        (!family || k.mma == *family) && (dense || !k.dense_only))
      return &k;
  return nullptr;
}

const BuiltKernel* default_built(Algo algo, Pass pass, int64_t headdim, DType dtype, std::optional<MmaKind> family,
                                 bool dense, std::span<const BuiltKernel> entries) {
  const auto is = [&](const BuiltKernel& k) {
    return k.is_default && k.algo == algo && k.pass == pass && k.headdim == headdim && k.dtype == dtype &&
           (!family || k.mma == *family);
  };
  // The kernels prefer the specialised default where it runs the problem (kernels/registry.cpp,
  // default_choices: wgmma_ws before wgmma), though the registry lists it later.
  if (dense)
    for (const BuiltKernel& k : entries)
      if (is(k) && k.dense_only) return &k;
  for (const BuiltKernel& k : entries)
    if (is(k) && !k.dense_only) return &k;
  return nullptr;
}

std::string built_tilings_text(Algo algo, Pass pass) {
  std::map<std::pair<int64_t, std::string>, std::string> groups;
  for (const BuiltKernel& k : kBuilt) {
    if (k.algo != algo || k.pass != pass) continue;
    std::string& list = groups[{k.headdim, to_string(k.dtype)}];
    list += (list.empty() ? "" : " ") + std::to_string(k.tiling.block_r) + "x" + std::to_string(k.tiling.block_c);
    if (k.mma != MmaKind::mma_sync) list += "(" + to_string(k.mma) + ")";
  }
  std::string text;
  for (const auto& [key, list] : groups)
    text += (text.empty() ? "" : "; ") + std::string("d=") + std::to_string(key.first) + " " + key.second + ": " + list;
  return text.empty() ? "none" : text;
}

std::string occupancy_csv_header() { return "hw,kernel,headdim,dtype,block_r,block_c,blocks_per_sm"; }

std::vector<MeasuredOccupancy> parse_occupancy_csv(std::string_view text, const std::string& name) {
  std::vector<MeasuredOccupancy> out;
  int64_t line_no = 0;
  bool header_seen = false;
  text = without_utf8_bom(text);
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    auto fail = [&](const std::string& what) {
      throw InvalidInput(name + ":" + std::to_string(line_no) + ": " + what);
    };
    if (!header_seen) {
      if (line != occupancy_csv_header()) fail("the header must be '" + occupancy_csv_header() + "'");
      header_seen = true;
      continue;
    }
    std::vector<std::string_view> cells;
    for (size_t start = 0;;) {
      const size_t comma = line.find(',', start);
      cells.push_back(line.substr(start, comma == std::string_view::npos ? comma : comma - start));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    if (cells.size() != 7) fail("expected 7 fields, got " + std::to_string(cells.size()));
    auto integer = [&](std::string_view cell, const char* what) {
      int64_t v = 0;
      const auto [p, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
      if (ec != std::errc() || p != cell.data() + cell.size() || v <= 0)
        fail(std::string(what) + " must be a positive integer, got '" + std::string(cell) + "'");
      return v;
    };
    MeasuredOccupancy m;
    m.hw = std::string(cells[0]);
    if (!parse_kernel_kind(cells[1])) fail("unknown kernel '" + std::string(cells[1]) + "'");
    m.kernel = std::string(cells[1]);
    m.headdim = integer(cells[2], "headdim");
    const auto dtype = parse_dtype(cells[3]);
    if (!dtype) fail("dtype must be one of " + allowed_dtypes() + ", got '" + std::string(cells[3]) + "'");
    m.dtype = *dtype;
    m.tiling = {integer(cells[4], "block_r"), integer(cells[5], "block_c")};
    m.blocks_per_sm = integer(cells[6], "blocks_per_sm");
    out.push_back(std::move(m));
  }
  if (!header_seen) throw InvalidInput(name + ": empty (expected the header '" + occupancy_csv_header() + "')");
  return out;
}

std::span<const MeasuredOccupancy> measured_occupancy() {
  static const std::vector<MeasuredOccupancy> data =
      parse_occupancy_csv(kH200OccupancyCsv, "sim/data/h200_occupancy.csv");
  return data;
}

}  // namespace flashio::sim
