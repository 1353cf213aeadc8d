// The time model (sim/time_model.h) on hand-made kernels whose times are hand divisions: pure
// memory is bytes over the DRAM bandwidth, pure tensor work is FLOPs over the tensor rate, a
// grid one block larger than the SMs runs two waves; the pipes overlap as the kernel's facts
// say; a missing calibration figure is named; simulate uses the model where the hardware is
// calibrated and the roofline where it is not.
#include <catch2/catch.hpp>

#include "sim/errors.h"
#include "sim/hardware.h"
#include "sim/kernel_choice.h"
#include "sim/schedule.h"
#include "sim/simulate.h"
#include "sim/time_model.h"

using namespace flashio::sim;

namespace {

// Flat curves and round rates, so that each term is a hand division; the fixed costs so small
// they vanish beside the work unless a test gives them a value.
Hardware flat_hardware() {
  Hardware h;
  h.name = "flat";
  h.sram_bytes = 200 * 1024;
  h.smem_per_sm_bytes = 200 * 1024;
  h.sm_count = 132;
  h.max_threads_per_sm = 1024;  // a block of 1024 threads: one per SM
  h.l2_bytes = 64 << 20;
  h.hbm_bytes_per_s = 4e12;
  h.tensor_flops_per_s = 1e15;
  h.cuda_core_flops_per_s = 6e13;
  h.exp_per_s = 4e12;
  Calibration& c = h.calibration;
  c.dram_read_bytes_per_s = RateCurve({{1, 3e12}});
  c.dram_write_bytes_per_s = RateCurve({{1, 2e12}});
  c.dram_copy_bytes_per_s = RateCurve({{1, 2.5e12}});
  c.l2_hit_bytes_per_s = RateCurve({{1, 1e16}});
  c.mma_sync_fp16_flops_per_s = RateCurve({{1, 5e14}});
  c.mma_sync_bf16_flops_per_s = RateCurve({{1, 5e14}});
  c.smem_bytes_per_s = 1e30;  // ldmatrix traffic vanishes unless a test gives it a rate
  c.exp2_per_s = 4e12;
  c.fma_flops_per_s = 6e13;
  c.atomic_f32_per_s = 1e12;
  c.cp_async_latency_ns = 1e-12;
  c.barrier_ns = RateCurve({{1, 1e-12}});
  c.kernel_overhead_us = 1e-12;
  c.wave_overhead_us = 1e-12;
  return h;
}

Config config_on(const Hardware& hw) {
  Problem p;
  p.batch = 1, p.heads = 1, p.seqlen = 128, p.headdim = 64;
  return make_config(Algo::flash2, p, hw);
}

// `blocks` identical blocks (one per SM: 1024 threads), each reading `read_bytes` of Q and
// doing `flops` (a kind without a catalog entry: the schedule's facts, one stage).
KernelSchedule kernel_of(int64_t blocks, int64_t read_bytes, Flops flops) {
  KernelSchedule k;
  k.kind = KernelKind::flash2_bwd_convert_dq;
  k.heads = 1;
  k.blocks_per_head = blocks;
  k.threads_per_block = 1024;
  k.transfers_per_block = 1;
  k.emit_block = [read_bytes, flops](int64_t, int64_t, ScheduleSink& s) {
    if (read_bytes > 0) s.transfer({Tensor::Q, Dir::read, 0, 0, 1, 0, read_bytes / 2});
    s.compute(flops);
  };
  return k;
}

double time_of(const Config& c, const KernelSchedule& k, int64_t dram_read) {
  const std::vector<int64_t> r{dram_read}, w{0};
  return model_time(c, {k}, r, w).time_ms;
}

}  // namespace

TEST_CASE("pure memory: a full wave's time is its DRAM bytes over the calibrated bandwidth") {
  const Config c = config_on(flat_hardware());
  const int64_t per_block = 1'000'002;  // an awkward byte count
  const KernelSchedule k = kernel_of(132, per_block, {});
  const double bytes = 132.0 * per_block;
  const PassTime t = model_time(c, {k}, std::vector<int64_t>{static_cast<int64_t>(bytes)}, std::vector<int64_t>{0});
  CHECK(t.time_ms == Approx(bytes / 3e12 * 1e3).epsilon(1e-6));
  CHECK(t.kernels[0].bound_by == Pipe::dram);
  CHECK(t.kernels[0].waves == 1);
  // Half the bytes reach DRAM (the L2 caught the rest): half the time.
  CHECK(time_of(c, k, static_cast<int64_t>(bytes / 2)) == Approx(bytes / 2 / 3e12 * 1e3).epsilon(1e-6));
}

TEST_CASE("pure tensor work: its FLOPs over the calibrated tensor rate") {
  const Config c = config_on(flat_hardware());
  Flops f;
  f.tensor = 3'000'000'007;
  const KernelSchedule k = kernel_of(132, 0, f);
  const PassTime t = model_time(c, {k}, std::vector<int64_t>{0}, std::vector<int64_t>{0});
  CHECK(t.time_ms == Approx(132.0 * 3'000'000'007 / 5e14 * 1e3).epsilon(1e-6));
  CHECK(t.kernels[0].bound_by == Pipe::tensor);
  // mma.sync's operands through shared memory: 32 warps over the config's Bc = 64 rows read
  // 32 · 2 B / (2 · 64) = 0.5 B per FLOP, in series with the mma.
  Hardware hw = flat_hardware();
  hw.calibration.smem_bytes_per_s = 3e13;
  const Config with_smem = config_on(hw);
  REQUIRE(with_smem.tiling.block_c == 64);
  const PassTime s = model_time(with_smem, {k}, std::vector<int64_t>{0}, std::vector<int64_t>{0});
  CHECK(s.time_ms == Approx(132.0 * 3'000'000'007 * (1 / 5e14 + 0.5 / 3e13) * 1e3).epsilon(1e-6));
  CHECK(s.kernels[0].bound_by == Pipe::smem);
}

TEST_CASE("133 equal blocks on 132 SMs at one block per SM run two waves: twice one block's time") {
  const Config c = config_on(flat_hardware());
  Flops f;
  f.tensor = 1'000'000'000;
  const double one_wave = model_time(c, {kernel_of(132, 0, f)}, std::vector<int64_t>{0}, std::vector<int64_t>{0}).time_ms;
  const PassTime t = model_time(c, {kernel_of(133, 0, f)}, std::vector<int64_t>{0}, std::vector<int64_t>{0});
  CHECK(t.kernels[0].waves == 2);
  CHECK(t.kernels[0].blocks_per_sm == 1);
  CHECK(t.time_ms == Approx(2 * one_wave).epsilon(1e-9));
}

TEST_CASE("the tensor and exp phases follow each other, in a block and across resident blocks (which stay in "
          "phase): two blocks per SM take as long as two waves of one, loads in two stages hide behind compute but "
          "for a lone block's first step") {
  Hardware hw = flat_hardware();
  Flops f;
  f.tensor = 5'000'000'000;  // 1.32 ms on the tensor pipe for 132 blocks...
  f.exp = 40'000'000;        // ...and 1.32 ms on the SFU
  KernelSchedule k = kernel_of(264, 0, f);
  k.threads_per_block = 128;
  hw.max_threads_per_sm = 128;  // one block per SM: two waves of (tensor + exp)
  const PassTime one = model_time(config_on(hw), {k}, std::vector<int64_t>{0}, std::vector<int64_t>{0});
  CHECK(one.kernels[0].blocks_per_sm == 1);
  CHECK(one.time_ms == Approx(2 * (1.32 + 1.32)).epsilon(1e-6));
  hw.max_threads_per_sm = 256;  // two per SM: they share each pipe in turn
  const PassTime two = model_time(config_on(hw), {k}, std::vector<int64_t>{0}, std::vector<int64_t>{0});
  CHECK(two.kernels[0].blocks_per_sm == 2);
  CHECK(two.kernels[0].waves == 1);
  CHECK(two.time_ms == Approx(one.time_ms).epsilon(1e-6));
  // A forward kernel of a kind not built streams in two stages: its DRAM reads (0.66 ms a wave,
  // half its compute) hide behind compute, all but its first tile step's (a tenth: 0.066 ms a
  // wave), which a block alone on its SM waits for before it computes anything.
  KernelSchedule fwd = k;
  fwd.kind = KernelKind::blocksparse_fwd;
  Flops step = f;
  step.tensor /= 10, step.exp /= 10;
  fwd.emit_block = [step](int64_t, int64_t, ScheduleSink& s) {
    for (int j = 0; j < 10; ++j) {
      s.transfer({Tensor::Q, Dir::read, 0, 0, 1, 0, 750'000});  // 1.5 MB a step, 15 MB a block: 0.66 ms a wave
      s.compute(step);
    }
  };
  hw.max_threads_per_sm = 128;
  const double bytes = 264.0 * 15'000'000;
  const double first_step_ms = 1.5e6 / (3e12 / 132) * 1e3;
  const PassTime streamed = model_time(config_on(hw), {fwd}, std::vector<int64_t>{static_cast<int64_t>(bytes)},
                                       std::vector<int64_t>{0});
  CHECK(streamed.time_ms == Approx(one.time_ms + 2 * first_step_ms).epsilon(1e-6));
  CHECK(streamed.kernels[0].bound_by != Pipe::dram);
  // Ten times the bytes (6.6 ms a wave, past compute): the first step's loads are part of the
  // stream the block waits for, not added to it.
  KernelSchedule heavy = fwd;
  heavy.emit_block = [step](int64_t, int64_t, ScheduleSink& s) {
    for (int j = 0; j < 10; ++j) {
      s.transfer({Tensor::Q, Dir::read, 0, 0, 1, 0, 7'500'000});
      s.compute(step);
    }
  };
  const PassTime bound = model_time(config_on(hw), {heavy}, std::vector<int64_t>{static_cast<int64_t>(10 * bytes)},
                                    std::vector<int64_t>{0});
  CHECK(bound.time_ms == Approx(10 * bytes / 3e12 * 1e3).epsilon(1e-6));
  CHECK(bound.kernels[0].bound_by == Pipe::dram);
  // Two blocks an SM: each one's first loads run beside the other's compute, nothing waits.
  hw.max_threads_per_sm = 256;
  const PassTime shared = model_time(config_on(hw), {fwd}, std::vector<int64_t>{static_cast<int64_t>(bytes)},
                                     std::vector<int64_t>{0});
  CHECK(shared.kernels[0].blocks_per_sm == 2);
  CHECK(shared.time_ms == Approx(two.time_ms).epsilon(1e-6));
  hw.max_threads_per_sm = 128;
  // The same bytes in a kernel of one stage (a backward kind) at one step: loads, then compute, in series.
  KernelSchedule one_stage = fwd;
  one_stage.emit_block = [f](int64_t, int64_t, ScheduleSink& s) {
    s.transfer({Tensor::Q, Dir::read, 0, 0, 1, 0, 7'500'000});
    s.compute(f);
  };
  one_stage.kind = KernelKind::flash2_bwd_convert_dq;
  const PassTime serial = model_time(config_on(hw), {one_stage}, std::vector<int64_t>{static_cast<int64_t>(bytes)},
                                     std::vector<int64_t>{0});
  CHECK(serial.time_ms == Approx(one.time_ms + 2 * 132 * 15e6 / 3e12 * 1e3).epsilon(1e-6));
}

TEST_CASE("a kernel that reads and writes DRAM is held to the copy bandwidth") {
  const Config c = config_on(flat_hardware());
  KernelSchedule k = kernel_of(132, 0, {});
  k.emit_block = [](int64_t, int64_t, ScheduleSink& s) {
    s.transfer({Tensor::Q, Dir::read, 0, 0, 1, 0, 500'000});
    s.transfer({Tensor::O, Dir::write, 0, 0, 1, 0, 500'000});
  };
  const double bytes = 132.0 * 2'000'000;  // read + written
  const PassTime t = model_time(c, {k}, std::vector<int64_t>{static_cast<int64_t>(bytes / 2)},
                                std::vector<int64_t>{static_cast<int64_t>(bytes / 2)});
  CHECK(t.time_ms == Approx(bytes / 2.5e12 * 1e3).epsilon(1e-6));
}

TEST_CASE("fixed costs: an empty kernel takes the launch overhead and one wave's overhead") {
  Hardware hw = flat_hardware();
  hw.calibration.kernel_overhead_us = 2.5;
  hw.calibration.wave_overhead_us = 0.75;
  const PassTime t = model_time(config_on(hw), {kernel_of(264, 0, {})}, std::vector<int64_t>{0}, std::vector<int64_t>{0});
  CHECK(t.time_ms == Approx((2.5 + 2 * 0.75) * 1e-3).epsilon(1e-6));  // two waves of 132
  CHECK(t.kernels[0].bound_by == Pipe::launch);
}

TEST_CASE("a hardware without a figure the model needs is refused naming it, roofline still runs") {
  Hardware hw = flat_hardware();
  hw.calibration.barrier_ns.reset();
  const Config c = config_on(hw);
  CHECK(missing_calibration(c) == std::vector<std::string>{"barrier_ns"});
  CHECK_THROWS_WITH(simulate(c, CountMethod::formula, TimeMethod::model), Catch::Contains("has no barrier_ns"));
  CHECK(default_time_method(c) == TimeMethod::roofline);
  const SimResult r = simulate(c, CountMethod::formula);
  CHECK(r.time_method == TimeMethod::roofline);
  CHECK(r.time_ms > 0);
}

TEST_CASE("simulate: the model where the hardware is calibrated, causal runs faster than dense over many "
          "waves, not within one (its last row tile visits every column tile)") {
  Problem p;
  p.batch = 3, p.heads = 5, p.seqlen = 1000, p.headdim = 64, p.pass = Pass::fwd;
  const double one_wave_dense = simulate(make_config(Algo::flash2, p, flat_hardware()), CountMethod::formula).time_ms;
  p.causal = true;
  const double one_wave_causal = simulate(make_config(Algo::flash2, p, flat_hardware()), CountMethod::formula).time_ms;
  CHECK(one_wave_causal == Approx(one_wave_dense).epsilon(0.01));
  p.causal = false;
  p.batch = 16, p.heads = 16, p.pass = Pass::fwdbwd;
  const TilingRequest square{TilingSource::rule, 64, 64};  // 16 × 16 tiles: causal skips 7/16 of them
  const Config dense = make_config(Algo::flash2, p, flat_hardware(), std::nullopt, square);
  const SimResult r = simulate(dense, CountMethod::formula);
  CHECK(r.time_method == TimeMethod::model);
  REQUIRE(r.kernel_time_ms.size() == r.kernels.size());
  double sum = 0;
  for (double t : r.kernel_time_ms) sum += t;
  CHECK(r.time_ms == Approx(sum));
  p.causal = true;
  const SimResult causal = simulate(make_config(Algo::flash2, p, flat_hardware(), std::nullopt, square), CountMethod::formula);
  CHECK(causal.time_ms < 0.75 * r.time_ms);
}

TEST_CASE("a grid smaller than the SMs times the occupancy puts ⌈grid / SMs⌉ blocks on an SM: 66 blocks run as "
          "fast as one alone, 200 as two per SM") {
  Hardware hw = flat_hardware();
  hw.max_threads_per_sm = 4096;  // four blocks of 1024 threads fit an SM
  Flops f;
  f.tensor = 1'000'000'000;
  const Config c = config_on(hw);
  const PassTime few = model_time(c, {kernel_of(66, 0, f)}, std::vector<int64_t>{0}, std::vector<int64_t>{0});
  CHECK(few.kernels[0].blocks_per_sm == 1);
  CHECK(few.time_ms == Approx(1e9 / (5e14 / 132) * 1e3).epsilon(1e-6));  // one block on its SM's pipe
  const PassTime more = model_time(c, {kernel_of(200, 0, f)}, std::vector<int64_t>{0}, std::vector<int64_t>{0});
  CHECK(more.kernels[0].blocks_per_sm == 2);
  CHECK(more.time_ms == Approx(2 * few.time_ms).epsilon(1e-6));  // two sharing each SM's tensor pipe
}

TEST_CASE("loads a step waits for in turn: each round trip at the light-load latency of the DRAM curve, its "
          "bytes at the stream's full rate (flash1's running output: one round a step, its slices' loads issued together)") {
  Hardware hw = flat_hardware();
  hw.calibration.dram_read_bytes_per_s = RateCurve({{2048, 0.6e12}, {65536, 3e12}});
  Config c = config_on(hw);
  c.algo = Algo::flash1;
  c.tiling = {128, 64};  // flash1 fwd d64 fp16 128x64: built, 128 threads
  KernelSchedule k = kernel_of(132, 0, {});
  k.kind = KernelKind::flash1_fwd;
  k.threads_per_block = 128;
  k.emit_block = [](int64_t, int64_t, ScheduleSink& s) {
    s.transfer({Tensor::o_accum, Dir::read, 0, 0, 128, 0, 64});  // 32 KiB of fp32
  };
  const double bytes = 132.0 * 128 * 64 * 4;
  const PassTime t = model_time(c, {k}, std::vector<int64_t>{static_cast<int64_t>(bytes)}, std::vector<int64_t>{0});
  const double round_s = 2048.0 * 132 / 0.6e12;
  CHECK(t.time_ms == Approx((round_s + 128 * 64 * 4 / (3e12 / 132)) * 1e3).epsilon(1e-6));
  CHECK(t.kernels[0].bound_by == Pipe::latency);
}

TEST_CASE("a single-stage kernel waits for its reads, not its stores: writes that take less than its compute "
          "add nothing, more than compute and reads together, they bound it") {
  const Config c = config_on(flat_hardware());
  Flops f;
  f.tensor = 2'000'000'000;  // 0.528 ms on the tensor pipe for 132 blocks
  const auto with_writes = [&](int64_t write_bytes) {
    KernelSchedule k = kernel_of(132, 0, f);
    k.emit_block = [f, write_bytes](int64_t, int64_t, ScheduleSink& s) {
      s.transfer({Tensor::Q, Dir::read, 0, 0, 1, 0, 100'000});  // 200 kB read
      s.compute(f);
      s.transfer({Tensor::O, Dir::write, 0, 0, 1, 0, write_bytes / 2});
    };
    const double r = 132.0 * 200'000, w = 132.0 * static_cast<double>(write_bytes);
    return model_time(c, {k}, std::vector<int64_t>{static_cast<int64_t>(r)}, std::vector<int64_t>{static_cast<int64_t>(w)})
        .time_ms;
  };
  const double compute_ms = 132.0 * 2e9 / 5e14 * 1e3;
  const double reads_ms = 132.0 * 200'000 / 3e12 * 1e3;
  CHECK(with_writes(200'000) == Approx(compute_ms + reads_ms).epsilon(1e-6));
  // 20 MB a block: the traffic's floor, here its writes at the write bandwidth, 20 MB · 132 / 2 TB/s
  // (more than both streams at the copy bandwidth, 20.2 MB · 132 / 2.5 TB/s), exceeds compute + reads.
  CHECK(with_writes(20'000'000) == Approx(132.0 * 20'000'000 / 2e12 * 1e3).epsilon(1e-6));
  CHECK(with_writes(20'000'000) > compute_ms + reads_ms);
}

TEST_CASE("the forward tile's ldmatrix loads overlap its mma (the longer of the two), the backward tile's follow "
          "them (the sum)") {
  Hardware hw = flat_hardware();
  hw.calibration.smem_bytes_per_s = 3e13;
  Config c = config_on(hw);
  c.tiling = {64, 64};  // flash2 fwd and bwd d64 fp16 64x64: built, mma.sync, 128 threads
  Flops f;
  f.tensor = 3'000'000'007;
  KernelSchedule k = kernel_of(132, 0, f);
  k.threads_per_block = 128;
  k.kind = KernelKind::flash2_fwd;
  // 4 warps over Br = 64 rows: 4 · 2 B / (2 · 64) = 1/16 B per FLOP from shared memory.
  const double tensor_ms = 132.0 * 3'000'000'007 / 5e14 * 1e3;
  const double smem_ms = 132.0 * 3'000'000'007 / 16 / 3e13 * 1e3;
  const PassTime fwd = model_time(c, {k}, std::vector<int64_t>{0}, std::vector<int64_t>{0});
  CHECK(fwd.time_ms == Approx(std::max(tensor_ms, smem_ms)).epsilon(1e-6));
  k.kind = KernelKind::flash2_bwd;  // Bc = 64 rows
  const PassTime bwd = model_time(c, {k}, std::vector<int64_t>{0}, std::vector<int64_t>{0});
  CHECK(bwd.time_ms == Approx(tensor_ms + smem_ms).epsilon(1e-6));
}

TEST_CASE("a grid past the list schedule's cap (2^16 blocks) schedules whole heads and scales: causal's "
          "unequal blocks at 4 and 8 times the cap take time in proportion to their heads") {
  Problem p;
  p.batch = 64, p.heads = 64, p.seqlen = 1000, p.headdim = 64, p.causal = true, p.pass = Pass::fwd;
  const TilingRequest tiles{TilingSource::rule, 64, 64};  // 16 row tiles a head, unequal under causal
  const auto flash2_ms = [&](int64_t heads) {
    p.heads = heads;
    const SimResult r = simulate(make_config(Algo::flash2, p, flat_hardware(), std::nullopt, tiles), CountMethod::formula);
    return r.kernel_time_ms.at(0);
  };
  // 64 × 64 heads × 16 blocks = 2^16 (exact); × 4 and × 8 past the cap.
  const double at_cap = flash2_ms(64), four = flash2_ms(256), eight = flash2_ms(512);
  CHECK(four == Approx(4 * at_cap).epsilon(0.02));
  CHECK(eight == Approx(2 * four).epsilon(0.02));
}

TEST_CASE("standard's GEMMs at N not a multiple of 8 pay two launches (two cuBLAS calls), at a multiple of 8 one") {
  Hardware hw = flat_hardware();
  hw.calibration.wgmma_n128_fp16_flops_per_s = RateCurve({{1, 1e30}});  // the GEMMs' work vanishes
  hw.calibration.kernel_overhead_us = 3.0;
  for (int64_t n : {29, 32}) {
    Problem p;
    p.batch = 1, p.heads = 1, p.seqlen = n, p.headdim = 16, p.pass = Pass::fwd;
    const Config c = make_config(Algo::standard, p, hw);
    const std::vector<KernelSchedule> ks = build_schedule(c);
    const std::vector<int64_t> none(ks.size(), 0);
    const PassTime t = model_time(c, ks, none, none);
    INFO("N = " << n);
    for (const KernelTime& k : t.kernels)
      if (k.kind == KernelKind::gemm_qk || k.kind == KernelKind::gemm_pv)
        CHECK(k.launch_ms == Approx((n == 29 ? 2 : 1) * 3.0e-3));
  }
}

TEST_CASE("a single-stage kernel's load waits are filled by the SM's other resident blocks: two blocks an SM "
          "hide each other's waits behind their compute, and when the waits are longer each block's own path "
          "(its compute, its share of the reads, its waits) bounds the SM") {
  Hardware hw = flat_hardware();
  hw.calibration.cp_async_latency_ns = 20'000;  // 0.02 ms a step
  const Config c = config_on(hw);
  const auto time_ms = [&](int64_t blocks, int64_t threads, int steps, int64_t flops_per_step) {
    Flops f;
    f.tensor = flops_per_step;
    KernelSchedule k = kernel_of(blocks, 0, f);
    k.threads_per_block = threads;  // 1024 threads an SM: 1024-thread blocks one, 512-thread two
    k.transfers_per_block = steps;
    k.emit_block = [f, steps](int64_t, int64_t, ScheduleSink& s) {
      for (int i = 0; i < steps; ++i) {
        s.transfer({Tensor::Q, Dir::read, 0, 0, 1, 0, 10'000});  // 20 kB a step
        s.compute(f);
      }
    };
    const int64_t read = blocks * steps * 20'000;
    return model_time(c, {k}, std::vector<int64_t>{read}, std::vector<int64_t>{0}).time_ms;
  };
  const int steps = 10;
  const double reads_ms = steps * 132.0 * 20'000 / 3e12 * 1e3;  // one block's reads at its SM's share
  const double waits_ms = steps * 0.02;
  // Compute-bound: 2 · 10^8 FLOPs a step, 0.0528 ms a step for one block at its SM's tensor rate.
  const double compute_ms = steps * 132.0 * 2e8 / 5e14 * 1e3;
  // One block an SM waits for its reads and its loads' latency at every step, in series.
  CHECK(time_ms(132, 1024, steps, 200'000'000) == Approx(compute_ms + reads_ms + waits_ms).epsilon(1e-6));
  // Two an SM: the SM's tensor pipe holds both blocks' work, the waits hide behind the other's.
  CHECK(time_ms(264, 512, steps, 200'000'000) == Approx(2 * compute_ms).epsilon(1e-6));
  // Wait-bound: 2 · 10^7 FLOPs a step; each block's own path is the SM's time, so two blocks an SM
  // take the time one takes alone.
  const double light_ms = compute_ms / 10;
  CHECK(time_ms(132, 1024, steps, 20'000'000) == Approx(light_ms + reads_ms + waits_ms).epsilon(1e-6));
  CHECK(time_ms(264, 512, steps, 20'000'000) == Approx(light_ms + reads_ms + waits_ms).epsilon(1e-6));
}

TEST_CASE("a last partial wave's blocks share their SMs with fewer: 274 blocks at two an SM are one full wave "
          "(two blocks sharing each SM's pipes) and 10 blocks alone on 10 SMs, three single blocks' time") {
  const Config c = config_on(flat_hardware());
  Flops f;
  f.tensor = 1'000'000'000;
  KernelSchedule k = kernel_of(274, 0, f);
  k.threads_per_block = 512;  // two an SM
  const double alone_ms = 132.0 * 1e9 / 5e14 * 1e3;
  const PassTime t = model_time(c, {k}, std::vector<int64_t>{0}, std::vector<int64_t>{0});
  CHECK(t.kernels.front().waves == 2);
  CHECK(t.time_ms == Approx(2 * alone_ms + alone_ms).epsilon(1e-6));
  // A last wave of 200 blocks puts two on 68 SMs: the full wave's time again.
  k.blocks_per_head = 464;
  CHECK(model_time(c, {k}, std::vector<int64_t>{0}, std::vector<int64_t>{0}).time_ms == Approx(4 * alone_ms).epsilon(1e-6));
}

namespace {

RateCurve halved(const RateCurve& curve) {
  std::vector<std::pair<double, double>> points = curve.points();
  for (auto& point : points) point.second /= 2;
  return RateCurve(points);
}

// The h200 preset with waited wgmma curves at half the streaming ones (fp16).
Hardware with_waited_at_half() {
  Hardware hw = hardware_preset("h200");
  Calibration& c = hw.calibration;
  REQUIRE_FALSE(c.wgmma_waited_n64_fp16_flops_per_s);  // measured before the figure existed
  c.wgmma_waited_n64_fp16_flops_per_s = halved(*c.wgmma_n64_fp16_flops_per_s);
  c.wgmma_waited_n128_fp16_flops_per_s = halved(*c.wgmma_n128_fp16_flops_per_s);
  c.wgmma_waited_n256_fp16_flops_per_s = halved(*c.wgmma_n256_fp16_flops_per_s);
  return hw;
}

// The tensor time of each kernel of a configuration's pass.
std::vector<double> tensor_ms(const Config& config) {
  std::vector<double> out;
  for (const KernelTime& k : model_time(config, build_schedule(config), {}, {}).kernels) out.push_back(k.tensor_ms);
  return out;
}

}  // namespace

TEST_CASE("the wgmma family's kernels, which wait for each GEMM, take their tensor term at the waited curve where "
          "the calibration has it, and the warp-specialised forward keeps the streaming one") {
  Problem p;
  p.batch = 3, p.heads = 5, p.seqlen = 1000, p.headdim = 128;
  const Hardware plain = hardware_preset("h200"), waited = with_waited_at_half();
  const auto both = [&](Pass pass, TilingRequest choice) {
    p.pass = pass;
    return std::pair{make_config(Algo::flash2, p, plain, std::nullopt, choice),
                     make_config(Algo::flash2, p, waited, std::nullopt, choice)};
  };
  // The default backward of a dense problem: the wgmma backward, at half the rate twice the time.
  {
    const auto [a, b] = both(Pass::bwd, {TilingSource::kernel});
    REQUIRE(row_kernel_impl(a) == MmaKind::wgmma);
    const std::vector<double> x = tensor_ms(a), y = tensor_ms(b);
    const std::vector<KernelSchedule> kernels = build_schedule(a);
    for (size_t k = 0; k < x.size(); ++k) {
      INFO(to_string(kernels[k].kind));
      if (kernels[k].kind == KernelKind::flash2_bwd) CHECK(y[k] == Approx(2 * x[k]).epsilon(1e-12));
      else CHECK(y[k] == x[k]);
    }
  }
  // The forward at 128 × 128: on wgmma twice the time, warp-specialised the same.
  for (MmaKind family : {MmaKind::wgmma, MmaKind::wgmma_ws}) {
    const auto [a, b] = both(Pass::fwd, {TilingSource::rule, 128, 128, family});
    REQUIRE(row_kernel_impl(a) == family);
    const std::vector<double> x = tensor_ms(a), y = tensor_ms(b);
    REQUIRE(x.size() == 1);
    CHECK(x[0] > 0);
    CHECK(y[0] == Approx(family == MmaKind::wgmma ? 2 * x[0] : x[0]).epsilon(1e-12));
  }
}

TEST_CASE("the warp-specialised forward's tensor cores and SFU share a step as the calibrated co-run says: 0.5 "
          "(or no figure) wholly overlapped, 1 one after the other, and kernels without turns unchanged") {
  Problem p;
  p.batch = 1, p.heads = 4, p.seqlen = 4096, p.headdim = 128, p.pass = Pass::fwd;
  const auto time_at = [&](MmaKind family, std::optional<double> ratio) {
    Hardware hw = hardware_preset("h200");
    REQUIRE_FALSE(hw.calibration.tensor_exp_corun_ratio);  // measured before the figure existed
    hw.calibration.tensor_exp_corun_ratio = ratio;
    const Config c = make_config(Algo::flash2, p, hw, std::nullopt, {TilingSource::rule, 128, 128, family});
    REQUIRE(row_kernel_impl(c) == family);
    // No DRAM bytes (every read an L2 hit): the step's compute, not its memory, bounds it.
    const std::vector<int64_t> none_from_dram{0};
    const PassTime t = model_time(c, build_schedule(c), none_from_dram, none_from_dram);
    REQUIRE(t.kernels.size() == 1);
    return t.kernels.front();
  };
  const KernelTime none = time_at(MmaKind::wgmma_ws, std::nullopt), half = time_at(MmaKind::wgmma_ws, 0.5),
                   serial = time_at(MmaKind::wgmma_ws, 1.0);
  CHECK(half.time_ms == none.time_ms);
  // One after the other, a step takes at least its tensor and exp terms together (per SM: the
  // kernel's pipe times are over the slots working at once, so the sum bounds the block's).
  CHECK(serial.time_ms > none.time_ms);
  CHECK(serial.time_ms >= serial.tensor_ms + serial.exp_ms);
  CHECK(serial.tensor_ms == none.tensor_ms);
  CHECK(serial.exp_ms == none.exp_ms);
  // The wgmma forward's phases already follow each other: the figure does not touch it.
  CHECK(time_at(MmaKind::wgmma, 1.0).time_ms == time_at(MmaKind::wgmma, std::nullopt).time_ms);
}

TEST_CASE("the softmax's co-run figure, where a calibration has it, replaces the exponentials' alone in the "
          "warp-specialised forward's step, with the softmax's slower pipe as its side, and leaves other kernels unchanged") {
  Problem p;
  p.batch = 3, p.heads = 5, p.seqlen = 3000, p.headdim = 64, p.pass = Pass::fwd;
  const auto time_at = [&](MmaKind family, std::optional<double> exp_ratio, std::optional<double> softmax_ratio) {
    Hardware hw = hardware_preset("h200");
    REQUIRE_FALSE(hw.calibration.tensor_softmax_corun_ratio);  // measured before the figure existed
    hw.calibration.tensor_exp_corun_ratio = exp_ratio;
    hw.calibration.tensor_softmax_corun_ratio = softmax_ratio;
    // Each family at a tiling built for it at d = 64 (sim/kernel_catalog.cpp).
    const int64_t block_r = family == MmaKind::wgmma_ws ? 192 : 128, block_c = family == MmaKind::wgmma ? 64 : 128;
    const Config c = make_config(Algo::flash2, p, hw, std::nullopt, {TilingSource::rule, block_r, block_c, family});
    REQUIRE(row_kernel_impl(c) == family);
    const std::vector<int64_t> none_from_dram{0};  // every read an L2 hit: compute bounds the step
    const PassTime t = model_time(c, build_schedule(c), none_from_dram, none_from_dram);
    REQUIRE(t.kernels.size() == 1);
    return t.kernels.front();
  };
  const KernelTime exp_only = time_at(MmaKind::wgmma_ws, 0.7, std::nullopt);
  // The softmax's figure wins over the exponentials' (the same value: the same time here, where
  // the SFU is the softmax's slower pipe).
  const KernelTime both = time_at(MmaKind::wgmma_ws, 0.5, 0.7);
  CHECK(exp_only.exp_ms > exp_only.fp32_ms);
  CHECK(both.time_ms == Approx(exp_only.time_ms).epsilon(1e-12));
  // It moves the step as the exponentials' figure does: more sharing, a longer step; one after
  // the other, at least the tensor term and the softmax's slower pipe together.
  const KernelTime serial = time_at(MmaKind::wgmma_ws, std::nullopt, 1.0);
  CHECK(serial.time_ms > time_at(MmaKind::wgmma_ws, std::nullopt, 0.6).time_ms);
  CHECK(serial.time_ms >= serial.tensor_ms + std::max(serial.exp_ms, serial.fp32_ms));
  CHECK(serial.tensor_ms == exp_only.tensor_ms);
  // Kernels whose phases follow each other do not take it.
  CHECK(time_at(MmaKind::wgmma, std::nullopt, 1.0).time_ms == time_at(MmaKind::wgmma, std::nullopt, std::nullopt).time_ms);
  CHECK(time_at(MmaKind::mma_sync, std::nullopt, 1.0).time_ms ==
        time_at(MmaKind::mma_sync, std::nullopt, std::nullopt).time_ms);
}

TEST_CASE("issue slots: the wgmma backward's step is its GEMMs and then its other step-loop instructions, one a cycle "
          "a scheduler at the calibrated clock, and a kernel whose pipes take longer than its issue is unchanged") {
  Problem p;
  p.batch = 2, p.heads = 7, p.seqlen = 1500, p.pass = Pass::bwd;
  const auto time_at = [&](int64_t headdim, TilingRequest tiling, MmaKind family, std::optional<double> clock_hz) {
    Problem q = p;
    q.headdim = headdim;
    Hardware hw = hardware_preset("h200");
    hw.calibration.sm_clock_hz = clock_hz;
    const Config c = make_config(Algo::flash2, q, hw, std::nullopt, tiling);
    const BuiltKernel* built = built_kernel(c, KernelKind::flash2_bwd);
    REQUIRE(built != nullptr);
    CHECK(built->mma == family);
    const PassTime t = model_time(c, build_schedule(c), {}, {});
    for (const KernelTime& k : t.kernels)
      if (k.kind == KernelKind::flash2_bwd) return k;
    FAIL("no flash2_bwd kernel");
    return KernelTime{};
  };
  const double clock = *hardware_preset("h200").calibration.sm_clock_hz;
  // The default backward at d = 128: the wgmma kernel at 64 × 128.
  const TilingRequest wgmma{TilingSource::kernel};
  const KernelTime none = time_at(128, wgmma, MmaKind::wgmma, std::nullopt),
                   at = time_at(128, wgmma, MmaKind::wgmma, clock), slower = time_at(128, wgmma, MmaKind::wgmma, clock / 2);
  CHECK(none.issue_ms == 0);
  CHECK(at.issue_ms > 0);
  CHECK(at.bound_by == Pipe::issue);
  CHECK(at.time_ms > none.time_ms);
  CHECK(slower.time_ms > at.time_ms);
  // Issue after the GEMMs: the kernel takes at least its tensor term and its issue term together.
  CHECK(at.time_ms >= at.tensor_ms + at.issue_ms);
  // flash2's mma.sync backward at 128 × 128, d = 64: its pipes, in series, outlast its issue.
  const TilingRequest mma{TilingSource::rule, 128, 128};
  const KernelTime mma_none = time_at(64, mma, MmaKind::mma_sync, std::nullopt),
                   mma_at = time_at(64, mma, MmaKind::mma_sync, clock);
  CHECK(mma_at.issue_ms > 0);
  CHECK(mma_at.time_ms == mma_none.time_ms);
  CHECK(mma_at.bound_by == mma_none.bound_by);  // a floor that does not bind names no bound
  CHECK(mma_at.bound_by != Pipe::issue);
}

TEST_CASE("a head of ten million blocks keeps only its sampled blocks: standard attention at N = 10,020,480 is "
          "timed at once, with every row kernel's time finite and positive") {
  Problem p;
  p.batch = 3, p.heads = 3, p.seqlen = 10020480, p.headdim = 96, p.pass = Pass::fwd;
  const Config c = make_config(Algo::standard, p, hardware_preset("h200"));
  const PassTime t = model_time(c, build_schedule(c), {}, {});
  REQUIRE_FALSE(t.kernels.empty());
  for (const KernelTime& k : t.kernels) {
    CHECK(std::isfinite(k.time_ms));
    CHECK(k.time_ms > 0);
  }
}
