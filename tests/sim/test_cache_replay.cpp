// replay_cache (sim/cache_replay.h): hand-made schedules with known DRAM traffic, and
// properties of the real schedules (io equal to the walk's; DRAM equal to the compulsory
// traffic when everything fits; DRAM near io when nothing does).
#include <catch2/catch.hpp>

#include "l2_stats_check.h"
#include "sim/cache_replay.h"
#include "sim/hardware.h"
#include "sim/row.h"
#include "sim/simulate.h"

using namespace flashio::sim;

namespace {

Problem small_problem(int64_t n, int64_t d, Pass pass, bool causal = false) {
  Problem p;
  p.batch = 1;
  p.heads = 2;
  p.seqlen = n;
  p.headdim = d;
  p.pass = pass;
  p.causal = causal;
  return p;
}

// A kernel of `heads` heads, one block per head, whose block runs `steps` in order (the kind
// only labels it).
KernelSchedule kernel_of(KernelKind kind, int64_t heads, std::vector<Transfer> steps) {
  KernelSchedule k;
  k.kind = kind;
  k.heads = heads;
  k.blocks_per_head = 1;
  k.emit_block = [steps](int64_t bh, int64_t, ScheduleSink& s) {
    for (Transfer t : steps) {
      t.bh = bh;
      s.transfer(t);
    }
  };
  return k;
}

int64_t sector_rounded(int64_t bytes) { return (bytes + 31) / 32 * 32; }

// Bytes of the whole tensor over all heads, rounded up to sectors (each tensor starts on its
// own 2 MiB boundary, so only its end can share a sector with nothing else).
int64_t tensor_bytes(Tensor t, const Problem& p) {
  const TensorShape s = tensor_shape(t, p);
  return sector_rounded(p.batch_heads() * s.rows * s.cols * s.element_bytes);
}

}  // namespace

TEST_CASE("a tile read twice by one block comes from DRAM once, io counts it twice",
          "[cache]") {
  const Problem p = small_problem(97, 64, Pass::fwd);
  const Hardware hw = hardware_preset("h200");
  const Transfer q{Tensor::Q, Dir::read, 0, 0, 97, 0, 64};
  const auto r = replay_kernels({kernel_of(KernelKind::flash2_fwd, 2, {q, q})}, p, hw);
  REQUIRE(r.kernels.size() == 1);
  CHECK(r.kernels[0].counts.of(Tensor::Q).read_bytes == 2 * 2 * 97 * 64 * 2);
  CHECK(r.kernels[0].l2.dram_read_bytes == tensor_bytes(Tensor::Q, p));
  CHECK(r.kernels[0].l2.dram_write_bytes == 0);
}

TEST_CASE("cold kernel boundary: a kernel's output is written back at its end and read from "
          "DRAM by the next, warm: the next kernel finds it in the L2", "[cache]") {
  const Problem p = small_problem(1025, 40, Pass::fwd);
  const Hardware hw = hardware_preset("h200");
  const Transfer write_o{Tensor::O, Dir::write, 0, 0, 1025, 0, 40};
  const Transfer read_o{Tensor::O, Dir::read, 0, 0, 1025, 0, 40};
  const std::vector<KernelSchedule> ks = {kernel_of(KernelKind::gemm_qk, 2, {write_o}),
                                          kernel_of(KernelKind::gemm_pv, 2, {read_o})};
  const int64_t o_bytes = tensor_bytes(Tensor::O, p);

  const auto cold = replay_kernels(ks, p, hw);
  CHECK(cold.kernels[0].l2.dram_read_bytes == 0);
  CHECK(cold.kernels[0].l2.dram_write_bytes == o_bytes);
  CHECK(cold.kernels[1].l2.dram_read_bytes == o_bytes);
  CHECK(cold.kernels[1].l2.dram_write_bytes == 0);

  CacheOptions warm_options;
  warm_options.boundary = KernelBoundary::warm;
  const auto warm = replay_kernels(ks, p, hw, warm_options);
  CHECK(warm.kernels[0].l2.dram_write_bytes == 0);   // still dirty in the L2
  CHECK(warm.kernels[1].l2.dram_read_bytes == 0);    // served from the L2
  CHECK(warm.kernels[1].l2.dram_write_bytes == o_bytes);  // written back after the last kernel
}

TEST_CASE("atomic adds into a cold accumulator read it from DRAM once and write it once",
          "[cache]") {
  const Problem p = small_problem(97, 64, Pass::bwd);
  const Hardware hw = hardware_preset("h200");
  Transfer add{Tensor::dq_accum, Dir::write, 0, 0, 97, 0, 64};
  add.atomic = true;
  const auto r = replay_kernels({kernel_of(KernelKind::flash2_bwd, 2, {add, add, add})}, p, hw);
  CHECK(r.kernels[0].l2.dram_read_bytes == tensor_bytes(Tensor::dq_accum, p));
  CHECK(r.kernels[0].l2.dram_write_bytes == tensor_bytes(Tensor::dq_accum, p));
  CHECK(r.kernels[0].counts.of(Tensor::dq_accum).write_bytes == 3 * 2 * 97 * 64 * 4);
}

TEST_CASE("occupancy: blocks per SM from shared memory (with the 1 KiB reserve), threads and "
          "the block limit", "[cache]") {
  const Hardware hw = hardware_preset("h200");  // 233,472 B of shared memory per SM
  KernelSchedule k;
  k.threads_per_block = 128;
  k.smem_bytes = 100 * 1024;
  CHECK(blocks_per_sm(k, hw) == 2);
  k.smem_bytes = 115 * 1024;  // 2 × (115 + 1) KiB = 237,568 B > 233,472 B
  CHECK(blocks_per_sm(k, hw) == 1);
  k.smem_bytes = 0;
  CHECK(blocks_per_sm(k, hw) == 16);  // 2048 threads / 128
  k.threads_per_block = 32;
  CHECK(blocks_per_sm(k, hw) == 32);  // the hardware's limit of 32 blocks
  k.smem_bytes = 300 * 1024;          // cannot fit; still counted as one resident block
  CHECK(blocks_per_sm(k, hw) == 1);
}

TEST_CASE("the replay's io and FLOPs equal the walk's for every algorithm on awkward shapes",
          "[cache]") {
  const Hardware hw = hardware_preset("h200");
  for (Algo algo : {Algo::flash1, Algo::flash2, Algo::standard}) {
    for (int64_t n : {97, 1025}) {
      for (bool causal : {false, true}) {
        const Config c = make_config(algo, small_problem(n, 40, Pass::fwdbwd, causal), hw);
        const auto walk = walk_counts(c);
        const auto r = replay_cache(c);
        REQUIRE(r.kernels.size() == walk.size());
        for (size_t k = 0; k < walk.size(); ++k) {
          INFO(to_string(algo) << " N=" << n << " causal=" << causal << " " << to_string(walk[k].kind));
          CHECK(r.kernels[k].kind == walk[k].kind);
          CHECK(r.kernels[k].counts == walk[k].counts);
        }
      }
    }
  }
}

TEST_CASE("when the whole problem fits in the L2, each kernel moves its compulsory traffic: "
          "every input sector read once, every output sector written once", "[cache]") {
  const Hardware hw = hardware_preset("h200");
  for (int64_t n : {97, 1025}) {
    const Problem p = small_problem(n, 64, Pass::fwdbwd);
    const Config c = make_config(Algo::flash2, p, hw);
    const auto r = replay_cache(c);
    REQUIRE(r.kernels.size() == 4);
    auto bytes = [&](std::initializer_list<Tensor> ts) {
      int64_t s = 0;
      for (Tensor t : ts) s += tensor_bytes(t, p);
      return s;
    };
    INFO("N=" << n);
    // flash2_fwd: reads Q, K, V; writes O, lse.
    CHECK(r.kernels[0].l2.dram_read_bytes == bytes({Tensor::Q, Tensor::K, Tensor::V}));
    CHECK(r.kernels[0].l2.dram_write_bytes == bytes({Tensor::O, Tensor::lse}));
    // preprocess: reads O, dO; writes delta and the zeroed dq_accum.
    CHECK(r.kernels[1].l2.dram_read_bytes == bytes({Tensor::O, Tensor::dO}));
    CHECK(r.kernels[1].l2.dram_write_bytes == bytes({Tensor::delta, Tensor::dq_accum}));
    // bwd (cold L2): reads K, V, Q, dO, lse, delta and, for its atomics, dq_accum; writes dK,
    // dV and dq_accum.
    CHECK(r.kernels[2].l2.dram_read_bytes ==
          bytes({Tensor::K, Tensor::V, Tensor::Q, Tensor::dO, Tensor::lse, Tensor::delta,
                 Tensor::dq_accum}));
    CHECK(r.kernels[2].l2.dram_write_bytes == bytes({Tensor::dK, Tensor::dV, Tensor::dq_accum}));
    CHECK(r.kernels[3].l2.dram_read_bytes == bytes({Tensor::dq_accum}));
    CHECK(r.kernels[3].l2.dram_write_bytes == bytes({Tensor::dQ}));
  }
}

TEST_CASE("flash2 forward: blocks of one head run together, so the L2 catches the K/V "
          "re-reads even when the tensors are far larger than the L2", "[cache]") {
  Problem p = small_problem(1024, 64, Pass::fwd);
  p.batch = 4;
  p.heads = 16;  // Q, K, V, O: 4 × 64 heads × 128 KiB = 32 MiB
  const Hardware hw = hardware_preset("h200");
  Config c = make_config(Algo::flash2, p, hw);
  c.tiling = {128, 64};
  CacheOptions small_l2;
  small_l2.l2_bytes = 4 << 20;  // 4 MiB: an eighth of the data
  const auto r = replay_cache(c, small_l2);
  const int64_t compulsory_read = 3 * tensor_bytes(Tensor::Q, p);
  const int64_t io_read = r.kernels[0].counts.io_read_bytes();
  CHECK(io_read > 5 * compulsory_read);  // K, V read Tr = 8 times each
  CHECK(r.kernels[0].l2.dram_read_bytes >= compulsory_read);
  CHECK(r.kernels[0].l2.dram_read_bytes <= compulsory_read * 102 / 100);
}

TEST_CASE("with an L2 far smaller than one step's tiles, DRAM traffic approaches io", "[cache]") {
  Problem p = small_problem(1025, 64, Pass::fwd);
  p.heads = 64;
  const Hardware hw = hardware_preset("h200");
  const Config c = make_config(Algo::flash1, p, hw);
  CacheOptions tiny;
  tiny.l2_bytes = 64 << 10;  // 64 KiB
  const auto r = replay_cache(c, tiny);
  const double io_read = static_cast<double>(r.kernels[0].counts.io_read_bytes());
  const double dram_read = static_cast<double>(r.kernels[0].l2.dram_read_bytes);
  CHECK(dram_read <= io_read * 1.01);  // sector rounding of the fp32 row vectors at most
  CHECK(dram_read >= io_read * 0.9);
}

TEST_CASE("cache rows carry source=cache, the walk's io and the L2's dram, the total row adds "
          "up the kernels", "[cache]") {
  const Hardware hw = hardware_preset("h200");
  const Config c = make_config(Algo::flash2, small_problem(1025, 64, Pass::fwdbwd, true), hw);
  const auto cache = replay_cache(c);
  const auto rows = cache_rows(cache);
  const auto model = rows_from_result(simulate(c, CountMethod::walk));
  REQUIRE(rows.size() == model.size());
  double dram_read_sum = 0, dram_write_sum = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    INFO(kernel_text(rows[i].kernel));
    CHECK(rows[i].source == RowSource::cache);
    CHECK(rows[i].kernel == model[i].kernel);
    CHECK(rows[i].io_read_bytes == model[i].io_read_bytes);
    CHECK(rows[i].io_write_bytes == model[i].io_write_bytes);
    CHECK(rows[i].flops_tensor == model[i].flops_tensor);
    REQUIRE(rows[i].dram_read_bytes.has_value());
    REQUIRE(rows[i].dram_write_bytes.has_value());
    if (!rows[i].is_total()) {
      dram_read_sum += *rows[i].dram_read_bytes;
      dram_write_sum += *rows[i].dram_write_bytes;
    } else {
      CHECK(*rows[i].dram_read_bytes == dram_read_sum);
      CHECK(*rows[i].dram_write_bytes == dram_write_sum);
      CHECK(rows[i].flops == model[i].flops);
    }
  }
  CHECK(rows.back().is_total());
}

TEST_CASE("on the H200 the replay uses the occupancy measured for our kernels, elsewhere, or "
          "when asked not to, the schedule's shared memory and threads decide", "[cache]") {
  Problem p = small_problem(1025, 64, Pass::fwd);
  Config c = make_config(Algo::flash1, p, hardware_preset("h200"));
  c.tiling = {128, 64};
  CHECK(replay_cache(c).kernels[0].blocks_per_sm == 1);  // measured: registers limit flash1_fwd (8 warps of 166)
  CacheOptions formula;
  formula.measured_occupancy = false;
  const KernelSchedule fwd = build_schedule(c)[0];
  CHECK(replay_cache(c, formula).kernels[0].blocks_per_sm == blocks_per_sm(fwd, c.hw));
  CHECK(blocks_per_sm(fwd, c.hw) != 1);
  Config a100 = c;
  a100.hw = hardware_preset("a100-40gb");
  a100.sram_bytes = a100.hw.sram_bytes;
  CHECK(measured_blocks_per_sm(a100, KernelKind::flash1_fwd) == 0);
  c.tiling = {32, 32};  // not a built kernel
  CHECK(measured_blocks_per_sm(c, KernelKind::flash1_fwd) == 0);
  // flash2's wgmma forwards (256 threads, two stages of K and V): one block per SM at d=128,
  // two at d=64, where the schedule's 128 threads and one stage would allow more.
  Config w = make_config(Algo::flash2, small_problem(1025, 128, Pass::fwd), hardware_preset("h200"));
  w.tiling = {128, 128};
  CHECK(replay_cache(w).kernels[0].blocks_per_sm == 1);
  CHECK(blocks_per_sm(build_schedule(w)[0], w.hw) > 1);
  w.problem.headdim = 64;
  w.tiling = {128, 64};
  CHECK(measured_blocks_per_sm(w, KernelKind::flash2_fwd) == 2);
}

TEST_CASE("with the cold boundary the kernels of a pass, replayed on threads of their own, give each exactly "
          "what it gives replayed alone (every L2 statistic)") {
  Problem p;
  p.batch = 2, p.heads = 3, p.seqlen = 97, p.headdim = 40, p.pass = Pass::fwdbwd, p.causal = true;
  for (const Algo algo : {Algo::standard, Algo::flash1, Algo::flash2}) {
    INFO(to_string(algo));
    Hardware hw = hardware_preset("h200");
    hw.l2_bytes = 1 << 20;  // a small L2, so that lines are evicted inside each kernel
    const Config c = make_config(algo, p, hw);
    const std::vector<KernelSchedule> kernels = build_schedule(c);
    REQUIRE(kernels.size() > 1);
    const CacheResult together = replay_kernels(kernels, c.problem, c.hw, {});
    REQUIRE(together.kernels.size() == kernels.size());
    for (size_t k = 0; k < kernels.size(); ++k) {
      const CacheResult alone = replay_kernels({kernels[k]}, c.problem, c.hw, {});
      INFO(to_string(kernels[k].kind));
      test::check_equal(together.kernels[k].l2, alone.kernels.front().l2);
      CHECK(together.kernels[k].kind == kernels[k].kind);  // in launch order
    }
  }
}
