// CPU-side: counters become row columns, kernel rows add up to the total row, and captured
// launches are attributed to the pass's kernels (profiler/metric_set.h, launch_attribution.h).
#include <catch2/catch.hpp>

#include <cmath>

#include "profiler/launch_attribution.h"
#include "profiler/metric_set.h"
#include "profiler/profiler_error.h"

using namespace flashio;
using namespace flashio::profiler;

TEST_CASE("counters fill the row: io from the per-SM bytes, dram, tensor FLOPs from HMMA "
          "instructions x 4096, CUDA-core work from warp instructions x 32", "[metrics]") {
  MetricValues v = {{metric::io_read, 2.29e9},   {metric::io_write, 1.4e8},
                    {metric::dram_read, 4.0e8},  {metric::dram_write, 1.4e8},
                    {metric::hmma_inst, 67108864}, {metric::gmma_inst, 0},
                    {metric::xu_inst, 1000},     {metric::fma_inst, 3000}};
  sim::Row r;
  fill_measured_values(r, v, 1.25);
  CHECK(r.io_read_bytes == 2.29e9);
  CHECK(r.io_write_bytes == 1.4e8);
  CHECK(r.dram_read_bytes == 4.0e8);
  CHECK(r.dram_write_bytes == 1.4e8);
  // B=64, H=16, N=1024, d=64 forward: 4·B·H·N²·d = 274,877,906,944 = 67,108,864 × 4096.
  CHECK(r.flops_tensor == 274877906944.0);
  CHECK(r.flops_exp == 32000.0);
  CHECK(r.flops_other == 96000.0);
  CHECK(r.time_ms == 1.25);
}

TEST_CASE("register spills (local-memory stores) are taken out of io_write: they are the "
          "kernel's, not the schedule's", "[metrics]") {
  MetricValues v = {{metric::io_read, 4.36e9}, {metric::io_write, 614.47e6},
                    {metric::local_store_bytes, 545.26e6}};
  sim::Row r;
  fill_measured_values(r, v, 0.0);
  CHECK(*r.io_write_bytes == Approx(69.21e6));
  CHECK(r.io_read_bytes == 4.36e9);
}

TEST_CASE("a counter not measured, or NaN, leaves its column empty (never 0)", "[metrics]") {
  MetricValues v = {{metric::io_read, 100.0}, {metric::dram_read, std::nan("")}};
  sim::Row r;
  r.dram_write_bytes = 5;  // stale values are cleared, not kept
  fill_measured_values(r, v, 0.0);
  CHECK(r.io_read_bytes == 100.0);
  CHECK_FALSE(r.io_write_bytes.has_value());
  CHECK_FALSE(r.dram_read_bytes.has_value());
  CHECK_FALSE(r.dram_write_bytes.has_value());
  CHECK_FALSE(r.flops_tensor.has_value());
  CHECK_FALSE(r.time_ms.has_value());
}

TEST_CASE("the tensor ops counters, where they answer, are the tensor FLOPs: fp16, bf16 and tf32 "
          "add up, and the instruction counts are not used", "[metrics]") {
  // A bf16 wgmma forward at B=4 H=16 N=1024 d=128 read 34,359,738,368 = 4·B·H·N²·d on the H200.
  MetricValues v = {{metric::tensor_ops_bf16, 34359738368.0}, {metric::tensor_ops_fp16, 0.0},
                    {metric::hmma_inst, 524288}, {metric::gmma_inst, 524288}};
  sim::Row r;
  fill_measured_values(r, v, 0.0);  // no FLOPs per GMMA instruction needed
  CHECK(r.flops_tensor == 34359738368.0);
  v[metric::tensor_ops_fp16] = 4096.0;
  v[metric::tensor_ops_tf32] = 1024.0;
  fill_measured_values(r, v, 0.0);
  CHECK(r.flops_tensor == 34359738368.0 + 4096 + 1024);
}

TEST_CASE("without ops counters, wgmma of unknown shape (cuBLAS's) leaves flops_tensor empty: its "
          "FLOPs per instruction vary with the instruction's N", "[metrics]") {
  MetricValues v = {{metric::hmma_inst, 10.0}, {metric::gmma_inst, 5.0}};
  sim::Row r;
  fill_measured_values(r, v, 0.0);
  CHECK_FALSE(r.flops_tensor.has_value());
}

TEST_CASE("a wgmma kernel's tensor FLOPs are its ops counter alone: the HMMA counter, which "
          "includes the GMMA instructions, adds nothing", "[metrics]") {
  // flash2_fwd wgmma 128 x 128 at d = 128, B=16 H=16 N=4096: per tile and warpgroup 8 wgmma
  // for S and 8 for P V, counted by each of 4 warps.
  const double tiles = 16.0 * 16 * 32 * 32 * 2;  // (B·H·Tr·Tc) × 2 warpgroups
  const double gmma = tiles * 16 * 4;
  const double flops = 4.0 * 16 * 16 * 4096.0 * 4096 * 128;  // 4·B·H·N²·d
  // The H200's HMMA-pipe counter includes the GMMA instructions (ncu: equal in a wgmma-only
  // kernel); 7 more are mma.sync-pipe instructions the ops counter does not see.
  MetricValues v = {{metric::hmma_inst, gmma + 7}, {metric::gmma_inst, gmma}, {metric::tensor_ops_fp16, flops}};
  sim::Row r;
  fill_measured_values(r, v, 0.0);
  CHECK(*r.flops_tensor == flops);
  v.erase(metric::tensor_ops_fp16);  // without the ops counter a wgmma kernel's FLOPs are unknown
  fill_measured_values(r, v, 0.0);
  CHECK_FALSE(r.flops_tensor.has_value());
}

TEST_CASE("the total row adds up the kernel rows, a column unknown for one kernel is unknown "
          "in total", "[metrics]") {
  sim::Row key;
  key.source = sim::RowSource::measured;
  key.algo = sim::RowAlgo::flash2;
  key.seqlen = 1025;
  key.flops = 1e12;
  sim::Row a = key, b = key;
  a.kernel = sim::KernelKind::flash2_bwd_preprocess;
  b.kernel = sim::KernelKind::flash2_bwd;
  a.io_read_bytes = 97;
  b.io_read_bytes = 1025;
  a.dram_read_bytes = 10;  // b's dram unknown
  a.flops_tensor = 0;
  b.flops_tensor = 4096;
  const sim::Row t = total_row(key, {a, b}, 2.0);
  CHECK(t.is_total());
  CHECK(t.seqlen == 1025);
  CHECK(t.io_read_bytes == 1122.0);
  CHECK_FALSE(t.dram_read_bytes.has_value());
  CHECK(t.flops_tensor == 4096.0);
  CHECK(t.time_ms == 2.0);
  CHECK(t.tflops == Approx(1e12 / 2e-3 / 1e12));
  const sim::Row untimed = total_row(key, {a, b}, 0.0);
  CHECK_FALSE(untimed.time_ms.has_value());
  CHECK_FALSE(untimed.tflops.has_value());
}

TEST_CASE("launches map one to one when they match the kernels, a GEMM that cuBLAS split keeps "
          "its extra launches", "[attribution]") {
  CHECK(attribute_launches({"flash2_fwd"}, {1}, {"_ZN7flashio7kernels17flash2_fwd_kernel"}) ==
        std::vector<size_t>{0});
  const std::vector<std::string> names = {"gemm_qk", "softmax", "gemm_pv"};
  const std::vector<std::string> functions = {"sm90_xmma_gemm_f16f16_f16f32", "splitKreduce_kernel",
                                              "_ZN7flashio7kernels14softmax_rows", "sm90_xmma_gemm_x"};
  CHECK(attribute_launches(names, {1, 1, 1}, functions) == std::vector<size_t>{0, 0, 1, 2});
  // More launches than can be explained: an error, not a guess.
  CHECK_THROWS_AS(attribute_launches({"flash2_fwd"}, {1}, {"a", "b"}), ProfilerError);
  CHECK_THROWS_AS(attribute_launches({"gemm_qk", "softmax"}, {1, 1}, {"sm90_gemm"}), ProfilerError);
}

TEST_CASE("launches of GEMMs that make two cuBLAS calls each go to their own GEMM, also when "
          "GEMMs follow each other", "[attribution]") {
  // standard's backward at N = 2999 (kernels::library_calls): every GEMM two calls.
  const std::vector<std::string> names = {"gemm_dv", "gemm_dp", "rowsum_do_o", "softmax_bwd", "gemm_dq", "gemm_dk"};
  const std::vector<size_t> calls = {2, 2, 1, 1, 2, 2};
  const std::vector<std::string> functions = {"nvjet_sm90_tst", "cutlass::Kernel2<cutlass_75_align1>",
                                              "nvjet_sm90_tst", "cutlass::Kernel2<cutlass_75_align1>",
                                              "rowsum_do_o_kernel", "softmax_bwd_kernel",
                                              "nvjet_sm90_tst", "cutlass::Kernel2<cutlass_75_align1>",
                                              "nvjet_sm90_tst", "cutlass::Kernel2<cutlass_75_align1>"};
  CHECK(attribute_launches(names, calls, functions) == std::vector<size_t>{0, 0, 1, 1, 2, 3, 4, 4, 5, 5});
  // One more launch, cuBLAS's split of the first GEMM: it stays with the first GEMM.
  std::vector<std::string> split = functions;
  split.insert(split.begin() + 1, "splitKreduce_kernel");
  CHECK(attribute_launches(names, calls, split) == std::vector<size_t>{0, 0, 0, 1, 1, 2, 3, 4, 4, 5, 5});
  // Fewer launches than the calls: an error.
  CHECK_THROWS_AS(attribute_launches(names, calls, std::vector<std::string>(functions.begin(), functions.end() - 1)),
                  ProfilerError);
}
