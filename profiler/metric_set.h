// The counters flashio reads for each kernel, and how they become the columns of a measured row
// (docs/profiler.md says why each counter was chosen). Pure C++: no CUDA, testable anywhere.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "sim/row.h"

namespace flashio::profiler {

namespace metric {
// io_*: bytes between the SMs and the memory system, counted per SM before Hopper's L2 request
// coalescer merges identical requests from different SMs (docs/gpu.md, "Which counter sees the
// paper's HBM accesses"). cp.async (LDGSTS) loads arrive through L1TEX and count as reads; stores
// and reductions (RED, dQ's atomics) leave through L1TEX and count as writes.
inline const std::string io_read = "l1tex__m_xbar2l1tex_read_bytes.sum";
inline const std::string io_write = "l1tex__m_l1tex2xbar_write_bytes.sum";
// Register spills: local-memory stores at the L1 tag stage. L1 writes stores through to the L2,
// so they also count in io_write; they are the kernel's spills, not the schedule's tiles, and
// are taken out of io_write (seen on the H200: flash2_fwd 128x64 d64 stored 545 MB of spills
// beside 69 MB of O and LSE; its spill loads hit in L1 and did not reach io_read).
inline const std::string local_store_bytes = "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum";
// dram_*: bytes that reach HBM.
inline const std::string dram_read = "dram__bytes_read.sum";
inline const std::string dram_write = "dram__bytes_write.sum";
// L2 requests from the SMs by kind, in 32 B sectors: a cross-check of io, and where atomics and
// reductions show up.
inline const std::string l2_read_sectors = "lts__t_sectors_srcunit_tex_op_read.sum";
inline const std::string l2_write_sectors = "lts__t_sectors_srcunit_tex_op_write.sum";
inline const std::string l2_atom_sectors = "lts__t_sectors_srcunit_tex_op_atom.sum";
inline const std::string l2_red_sectors = "lts__t_sectors_srcunit_tex_op_red.sum";
// Tensor-core math operations by source type (2 per multiply-add, so FLOPs: on the H200 a bf16
// wgmma forward read exactly 4·B·H·N²·d). mma.sync and wgmma both count, so cuBLAS's GEMMs are
// measured too. (`..._src_fp16_dst_fp32` does not exist; fp16 has one counter for both
// accumulator types.)
inline const std::string tensor_ops_fp16 = "sm__ops_path_tensor_src_fp16.sum";
inline const std::string tensor_ops_bf16 = "sm__ops_path_tensor_src_bf16_dst_fp32.sum";
inline const std::string tensor_ops_tf32 = "sm__ops_path_tensor_src_tf32_dst_fp32.sum";
// Tensor-pipe warp instructions: the fallback where the ops counters do not answer. On the H200
// the HMMA counter counts wgmma (GMMA) instructions as well: ncu read 524,288 for both in a
// wgmma-only kernel.
inline const std::string hmma_inst = "sm__inst_executed_pipe_tensor_op_hmma.sum";
inline const std::string gmma_inst = "sm__inst_executed_pipe_tensor_op_gmma.sum";
// CUDA-core warp instructions on the FMA pipe and the special-function (XU: exp2, rcp) pipe.
inline const std::string fma_inst = "sm__inst_executed_pipe_fma.sum";
inline const std::string xu_inst = "sm__inst_executed_pipe_xu.sum";
inline const std::string duration_ns = "gpu__time_duration.sum";
}  // namespace metric

// FLOPs of one mma.sync.m16n8k16 (the instruction our kernels use): 2·16·8·16.
constexpr double kFlopsPerHmma16816 = 4096.0;
constexpr double kThreadsPerWarp = 32.0;

// Every counter profile reads, in a fixed order.
const std::vector<std::string>& profile_metrics();

// The counters of one kernel (summed over its launches), by name; a counter the chip could not
// measure is absent.
using MetricValues = std::map<std::string, double>;

// Fills the value columns of a measured row from the counters: io (io_write without the
// local-memory stores, when that counter was read), dram, flops_tensor (the tensor ops
// counters' sum; where none answered, HMMA instructions × 4096, or empty when the kernel ran
// wgmma: every wgmma kernel runs on sm_90, whose ops counters answer),
// flops_exp and flops_other (XU and FMA pipe warp instructions × 32: an upper bound, since
// predicated-off lanes and integer IMADs count too), and time_ms when given (> 0). Counters that
// were not measured leave their columns empty.
void fill_measured_values(sim::Row& row, const MetricValues& values, double time_ms);

// The kernel=total row: the key of `key`, each value column the sum over `kernel_rows` (empty
// when any kernel's is empty), time_ms as given (the whole pass timed on its own).
sim::Row total_row(const sim::Row& key, const std::vector<sim::Row>& kernel_rows, double time_ms);

}  // namespace flashio::profiler
