// The catalog of built kernels: every tiled CUDA kernel in kernels/, with the static facts the
// model needs about it (threads, registers, shared memory, stages, matrix instruction, tile
// shape, grid order) — plain C++, so builds without CUDA (the GUI, the model) know what is built.
// Each entry is the one place a kernel's facts live: later models (a time model, new kernels)
// add fields here rather than new tables. tests/kernels checks every entry against the compiled
// kernels' registry (kernels/registry.cpp) and against the machine code's resource usage
// (cuobjdump) in CUDA builds; docs/kernels.md ("Catalog") describes both checks.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sim/kernel_kind.h"
#include "sim/tensor.h"
#include "sim/tiling.h"
#include "sim/types.h"

namespace flashio::sim {

// The kernel family, named by the matrix instruction its GEMMs run on and how its warps are
// organised (kernels::MmaKind; a row's `kernel_impl`, `--kernel NAME`): mma.sync m16n8k16 (one
// warp); wgmma m64nNk16 (one warpgroup, asynchronous; sm_90a), every warp loading and computing;
// wgmma_ws, warp-specialised (FlashAttention-3's structure): a producer warp feeds the tiles and
// consumer warpgroups compute.
enum class MmaKind { mma_sync, wgmma, wgmma_ws };
std::string to_string(MmaKind mma);
std::optional<MmaKind> parse_mma_kind(std::string_view text);
// The allowed spellings, for error messages ("mma_sync, wgmma, wgmma_ws").
std::string allowed_mma_kinds();
// Whether the family's GEMMs issue wgmma (wgmma and wgmma_ws), so that the time model takes them
// at the wgmma rates and their operands from shared memory through descriptors.
bool issues_wgmma(MmaKind mma);

// The order of the thread blocks in the launch: blocks_within_head is the schedules' order
// (linear index = block_in_head + blocks_per_head · bh; sim/schedule.h); causal_last_first the
// same, but with causal a head's blocks take its row tiles last-first (block x runs row tile
// Tr − 1 − x: the longest rows start first; the warp-specialised forward, kernels/flash2_fwd_ws.cuh).
enum class GridOrder { blocks_within_head, causal_last_first };
std::string to_string(GridOrder order);

struct BuiltKernel {
  Algo algo = Algo::flash2;  // flash1 or flash2
  Pass pass = Pass::fwd;     // fwd or bwd (flash2 bwd also launches its preprocess and convert
                             // kernels, which take this entry's Br as their row tile)
  int64_t headdim = 0;
  DType dtype = DType::fp16;
  Tiling tiling;
  int64_t threads = 0;      // threads per block
  // Registers per thread of the entry's main kernel (flash2 bwd: flash2_bwd_kernel; its row
  // kernels are built_row_kernels()), as ptxas allocated them: cuobjdump's REG.
  int64_t registers = 0;
  int64_t stack_bytes = 0;  // stack frame per thread (cuobjdump's STACK): where spills go
  int64_t smem_bytes = 0;   // dynamic shared memory per block (the kernels declare no static)
  int64_t stages = 1;       // buffers of the streamed tiles (2: next tile's loads overlap)
  MmaKind mma = MmaKind::mma_sync;
  GridOrder grid_order = GridOrder::blocks_within_head;
  // The tiling `--tiling kernel` and the profiler run for (algo, pass, d, dtype): the fastest
  // measured on the H200 (docs/kernels.md, "Speed"). One per (algo, pass, headdim, dtype).
  bool is_default = false;
  // flash2: registers per thread of the main kernel's instance for a group's stacked query rows
  // (grouped-query attention: the forward with gqa_pack, the backward; kernels/key_limits.cuh),
  // cuobjdump's REG like `registers`; 0 for flash1, which has no such instance.
  int64_t stacked_registers = 0;
  // flash2's forward: the same for its split-KV instances (Config::splits > 1; one split's key
  // tiles, partial results out), for one head's rows and for stacked rows; 0 elsewhere.
  int64_t split_registers = 0, stacked_split_registers = 0;
  // flash2's forward: the same for its instances over a paged KV cache (Config::page_size;
  // kernels/flash2_fwd.cuh, kPaged), without and with splits; stacked-row instances, which every
  // paged problem runs (one head's rows are a group of one). 0 elsewhere.
  int64_t paged_registers = 0, paged_split_registers = 0;
  // flash2, forward and backward: the same for its window instance (a sliding window's left side;
  // kernels/key_limits.cuh, kWindow; stacked rows, no splits). 0 elsewhere.
  int64_t window_registers = 0;
  // flash2, forward and backward: the same for its block-sparse instance (blocksparse: the
  // listed tiles of a block mask; kernels/block_sparse_tiles.h, kSparse; one head's rows). 0 elsewhere.
  int64_t sparse_registers = 0;
  // flash1 and flash2, forward and backward: the same for its fused-dropout instance
  // (Problem::dropout > 0; kernels/flash_fwd_tile.cuh, kDropout; stacked rows for flash2); 0
  // elsewhere, and 0 where not yet read off the built kernels (the occupancy then takes
  // `registers`: instance_registers, sim/cache_replay.h).
  int64_t dropout_registers = 0;
  // The kernel runs dense attention only (kernels::KernelEntry::dense_only; causal or not,
  // grouped-query heads, Nq != Nk, a window's right side): a configuration with any of the padding
  // mask, dropout, a window's left side, splits, a paged cache, key lengths, varlen or a block mask
  // (runs_only_dense, sim/kernel_choice.h) runs another entry of the tiling, or none.
  bool dense_only = false;
  // The instructions a warp issues in one pass of the main kernel's tile-step loop, read off its
  // SASS (one head's rows instance; the innermost loop, closed by a backward branch, that holds a
  // matrix instruction, HMMA or HGMMA: each instruction once, so a loop with special-case paths,
  // the first, last or diagonal tile's, counts them all), and of those the matrix instructions
  // (HMMA, HGMMA, LDSM, wgmma's fences). The time model's issue slots (docs/time_model.md, "Issue
  // slots"); tests/kernels/test_step_loops.cpp reads them again from the built library. 0: not
  // read (no issue term). Last, so that the entries written before them stay valid aggregates.
  int64_t step_instructions = 0, step_matrix_instructions = 0;
};

// Round trips to memory that a tile step of a built kernel waits for in turn: loads the kernel
// issues as plain loads (not cp.async into a buffer it streams ahead), whose results the step
// uses before it issues the next group (docs/time_model.md, "Dependent loads"). Counted per
// transfer of `tensor` (rows × cols elements of it) by a step of the built kernel `entry`; 0 for
// tensors the kernel streams or never reads synchronously. The counts follow the kernels' code:
// - flash1 forward reads the running o_accum, ℓ, m with plain loads, every 8-row slice a warp
//   owns issued before any is used (kernels/flash1.cuh; its SASS has all the LDGs of a step
//   before the first FMUL that uses one): one round a step. (Issued slice by slice, as before,
//   it was 2·Br / (16·warps) rounds, and ncu found the warps waiting there 41 % of the time.)
// - flash1 backward adds its partial dQ into dq_accum one float4 per thread and iteration, the
//   load before the add before the store: ⌈rows·d / (4·threads)⌉ rounds.
// - flash2's forward over a paged KV cache (Config::page_size) loads the block-table entries of
//   a K/V tile's pages, each thread those of its rows, before it can issue the tile's cp.async
//   copies (kernels/flash2_fwd.cuh, PagedKv): one round per tile.
int64_t dependent_load_rounds(const BuiltKernel& entry, Tensor tensor, int64_t rows, int64_t cols);

// Whether a tile step's ldmatrix loads run beside its mma.sync instructions (the matrix phase
// takes the longer of the two) rather than before them (the sum): the forward tile
// (kernels/flash_fwd_tile.cuh, flash1's and flash2's forward) is one unrolled straight-line
// block per step, so the fragments of the next k-slice load while the tensor cores run this
// one; the backward tile stages dS through shared memory between its GEMMs, behind barriers,
// and waits for each GEMM's fragments (docs/time_model.md, "Overlap").
bool fragments_overlap_mma(const BuiltKernel& entry);

// Consumer warpgroups that take turns at the tensor cores: the warp-specialised forward's
// (kernels/flash2_fwd_ws.cuh; its threads less the producer warpgroup's 128, in warpgroups),
// whose named barriers let one issue its GEMMs while the others compute their softmax; 1 for
// every other kernel, whose warps pass each step's phases together. The time model's overlap
// (docs/time_model.md, "Overlap") and its tensor curve's warps follow from it.
int64_t turn_taking_warpgroups(const BuiltKernel& entry);
// The warps that compute: all of a block's, but the warp-specialised producer warpgroup's.
int64_t computing_warps(const BuiltKernel& entry);
// Whether the kernel loads its tiles as whole TMA boxes (the warp-specialised forward's Q_i, K_j,
// V_j: kernels/flash2_fwd_ws.cuh), so that a tile's rows past the matrix (N or Nk not a multiple
// of the tile, a group's stacked rows past g·Nq) arrive as zeros and the io counters count them
// as moved (H200: experiments/results/h200_ws/README.md, "Validation"); no memory is read for
// them (Transfer::zero_rows).
bool loads_whole_boxes(const BuiltKernel& entry);

// Bytes one block of standard attention's row kernels (kernels/standard_attention.cu) has in
// flight before it waits for them, for rows of `row_elements` elements of `element_bytes`
// (0 for the other kernels: a tile step's loads are in flight together). Each thread strides
// over the row; the compiled loops (cuobjdump -sass of the CUDA 13.0 sm_90a build, docs/
// time_model.md "Row kernels") issue a group of loads and use them before the next group:
// softmax its whole row (every chunk loaded before any is used; 0 here, no limit), mask 4
// (unrolled by 4, loads before stores), dropout 1 (each load's store before the next load),
// softmax_bwd kStandardSoftmaxBwdChunksInFlight 16-byte chunks of each of its two inputs per
// thread (fewer when the row has fewer), rowsum_do_o one 16-byte chunk of O and of dO per
// thread (its shared-memory atomic before the next).
inline constexpr int64_t kStandardSoftmaxBwdChunksInFlight = 4;
int64_t row_kernel_bytes_in_flight(KernelKind kind, int64_t threads, int64_t row_elements, int64_t element_bytes);

// Every built kernel, in the registry's order.
std::span<const BuiltKernel> built_kernels();

// The kind of the entry's main kernel (flash1_fwd, flash1_bwd, flash2_fwd, flash2_bwd).
KernelKind main_kernel_kind(const BuiltKernel& k);

// flash2's backward launches two row kernels beside its main one (kernels/flash2_bwd.cuh), and
// its split-KV forward one (flash2_fwd_combine), one instance per (d, dtype) whatever the tiling
// (the row tile Br is an argument): 128 threads and no dynamic shared memory. tests/kernels
// checks these against the machine code too.
struct BuiltRowKernel {
  KernelKind kind = KernelKind::flash2_bwd_preprocess;  // or flash2_bwd_convert_dq, flash2_fwd_combine
  int64_t headdim = 0;
  DType dtype = DType::fp16;
  int64_t threads = 0;
  int64_t registers = 0;          // per thread (cuobjdump's REG)
  int64_t static_smem_bytes = 0;  // the __shared__ arrays it declares
};
std::span<const BuiltRowKernel> built_row_kernels();

// standard's softmax (kernels/standard_attention.cu): one row per block, 32 elements a thread
// held in registers, whole warps (32 to 1,024 threads); its registers per thread (cuobjdump's
// REG, fp16 and bf16 alike) and static shared memory (the warps' partial maxima and sums).
int64_t standard_softmax_threads(int64_t seqlen);
inline constexpr int64_t kStandardSoftmaxRegisters = 59;
inline constexpr int64_t kStandardSoftmaxStaticSmemBytes = 256;

// standard's cuBLAS GEMMs (kernels/standard_attention.cu) run in one call over the first
// standard_gemm_main_keys(N) keys, N rounded down to a multiple of 8 (cuBLAS's Hopper kernels
// need the keys, the N × N operand's contiguous dimension, in multiples of 8 elements), and in a
// second call over the N mod 8 keys left: standard_gemm_calls(N) cuBLAS calls a GEMM.
int64_t standard_gemm_main_keys(int64_t seqlen);
int64_t standard_gemm_calls(int64_t seqlen);

// What a standard row kernel (mask, softmax, dropout, dropout_bwd, softmax_bwd) is launched with
// for rows of N elements: 256 threads and no shared memory (registers not catalogued), but the
// softmax's above. The schedule and the numeric execution both take it from here.
struct RowKernelLaunch {
  int64_t threads = 256;
  int64_t registers = 0;  // 0: not a limit the model knows
  int64_t smem_bytes = 0;
};
RowKernelLaunch standard_row_kernel_launch(KernelKind kind, int64_t seqlen);
// The row kernel `kind` of flash2's backward at (d, dtype), or nullptr when not built.
const BuiltRowKernel* find_row_kernel(KernelKind kind, int64_t headdim, DType dtype);

// The algorithm whose entries run `algo`'s kernels: blocksparse runs flash2's (their block-sparse
// instances, BuiltKernel::sparse_registers); every other algorithm its own.
inline Algo built_algo(Algo algo) { return algo == Algo::blocksparse ? Algo::flash2 : algo; }

// The entry of (algo, pass, d, dtype, tiling) that runs a problem, as kernels::find_impl picks
// its kernel: of `family` when given, else the first of the tiling in the registry's order; a
// dense_only entry only for a dense problem (`dense`: runs_only_dense, sim/kernel_choice.h).
// nullptr when none is built. `entries` is the catalog unless a test gives its own. A
// configuration's kernels are found through sim/kernel_choice.h, which passes its family and
// density; this asks of a tiling alone (a dense problem, any family: the first entry).
const BuiltKernel* find_built(Algo algo, Pass pass, int64_t headdim, DType dtype, const Tiling& tiling,
                              std::optional<MmaKind> family = std::nullopt, bool dense = true,
                              std::span<const BuiltKernel> entries = built_kernels());
// The default entry for (algo, pass, d, dtype): the first marked is_default, of `family` when
// given, that runs a problem of that density — for a dense problem a dense_only default before
// the others, as the kernels prefer their specialised kernel (wgmma_ws) where it runs; for another
// problem none that is dense_only. nullptr when none is. A configuration's default is
// sim/kernel_choice.h's default_kernel, which passes its family and density.
const BuiltKernel* default_built(Algo algo, Pass pass, int64_t headdim, DType dtype,
                                 std::optional<MmaKind> family = std::nullopt, bool dense = true,
                                 std::span<const BuiltKernel> entries = built_kernels());

// What is built for (algo, pass), for messages: "d=64 fp16: 64x32 64x64 …; d=64 bf16: 128x128; …"
// ("none" when nothing is), a kernel of a family other than mma_sync with its family, as the
// kernels' supported_tilings writes it ("128x64(wgmma)").
std::string built_tilings_text(Algo algo, Pass pass);

// Blocks of the kernel `kind` (one of the entry's launches) that one SM holds at once, as the
// driver's occupancy calculator gave them on the GPU (registers and the kernel's real shared
// memory; `flashio profile --occupancy-out FILE` measures them). Read from the committed data
// file of the hardware preset (sim/data/h200_occupancy.csv); 0 where not measured.
struct MeasuredOccupancy {
  std::string hw;        // hardware preset name
  std::string kernel;    // kernel kind spelling ("flash2_fwd")
  int64_t headdim = 0;
  DType dtype = DType::fp16;
  Tiling tiling;
  int64_t blocks_per_sm = 0;
};
std::span<const MeasuredOccupancy> measured_occupancy();
// Parses the occupancy csv format (header hw,kernel,headdim,dtype,block_r,block_c,blocks_per_sm);
// throws InvalidInput naming `name` and the line for a malformed one.
std::vector<MeasuredOccupancy> parse_occupancy_csv(std::string_view text, const std::string& name);
std::string occupancy_csv_header();

}  // namespace flashio::sim
