// The occupancy rule with registers (sim::blocks_per_sm of BlockResources, sim/cache_replay.h;
// docs/kernels.md, "Occupancy"): hand-checked cases of the register limit, and the built
// kernels' blocks per SM from their catalog entries against the ones the driver's occupancy
// calculator gave on the H200 (sim/data/h200_occupancy.csv).
#include <catch2/catch.hpp>

#include "sim/cache_replay.h"
#include "sim/hardware.h"
#include "sim/kernel_catalog.h"

using namespace flashio::sim;

TEST_CASE("occupancy: registers limit blocks per SM, a warp's taken in units of 256 from one of "
          "the SM's 4 sub-partitions of 16,384") {
  const Hardware hw = hardware_preset("h200");
  // 4 warps of 255 registers: 8,160 → 8,192 per warp, 2 warps per sub-partition, 8 per SM.
  CHECK(blocks_per_sm(BlockResources{128, 255, 0}, hw) == 2);
  // 168 registers: 5,376 per warp, 3 per sub-partition (docs/kernels.md: three blocks per SM).
  CHECK(blocks_per_sm(BlockResources{128, 168, 0}, hw) == 3);
  // 2 warps of 192 registers: 6,144 per warp, 2 per sub-partition → 8 warps, 4 blocks; the
  // whole file divided by a block's registers (65,536 / 12,288) would allow 5.
  CHECK(blocks_per_sm(BlockResources{64, 192, 0}, hw) == 4);
  // The allocation unit: 73 registers (2,336 per warp) take 2,560, 6 warps per sub-partition →
  // 24 one-warp blocks; unrounded, 7 would fit (28 blocks).
  CHECK(blocks_per_sm(BlockResources{32, 73, 0}, hw) == 24);
  CHECK(blocks_per_sm(BlockResources{32, 72, 0}, hw) == 28);  // 2,304: a whole number of units
  // Few registers: threads or the 32-block limit decide.
  CHECK(blocks_per_sm(BlockResources{128, 32, 0}, hw) == 16);
  CHECK(blocks_per_sm(BlockResources{32, 16, 0}, hw) == 32);
  // The least of all limits: registers allow 3 blocks of 168, shared memory 2 (2 × (100 + 1) KiB).
  CHECK(blocks_per_sm(BlockResources{128, 168, 100 * 1024}, hw) == 2);
  // Registers not known (0): only threads and shared memory, as for a schedule.
  KernelSchedule k;
  k.threads_per_block = 96;
  k.smem_bytes = 40 * 97 * 2 * 3;  // an odd footprint: d = 40, 97 rows, three tiles
  CHECK(blocks_per_sm(k, hw) == blocks_per_sm(BlockResources{96, 0, k.smem_bytes}, hw));
  CHECK(blocks_per_sm(BlockResources{96, 0, k.smem_bytes}, hw) == 9);  // 233,472 / 24,304
  CHECK(blocks_per_sm(BlockResources{96, 255, k.smem_bytes}, hw) == 2);  // 3 warps, 8 per SM
}

TEST_CASE("occupancy: every built kernel launch with a measured occupancy on the H200 gets the "
          "measured blocks per SM from its catalog entry (threads, registers, shared memory)") {
  int64_t checked = 0, register_limited = 0;
  for (const MeasuredOccupancy& m : measured_occupancy()) {
    const auto kind = parse_kernel_kind(m.kernel);
    REQUIRE(kind.has_value());
    const BuiltKernel* k = find_built(algo_of(*kind), pass_of(*kind), m.headdim, m.dtype, m.tiling);
    INFO(m.hw << " " << m.kernel << " d=" << m.headdim << " " << to_string(m.dtype) << " " << m.tiling.block_r
              << "x" << m.tiling.block_c);
    REQUIRE(k != nullptr);
    const Hardware hw = hardware_preset(m.hw);
    CHECK(built_blocks_per_sm(*k, *kind, hw) == m.blocks_per_sm);
    ++checked;
    // Where the rule without registers allows more, the registers are what the measurement saw.
    if (*kind == main_kernel_kind(*k) &&
        blocks_per_sm(BlockResources{k->threads, 0, k->smem_bytes}, hw) > m.blocks_per_sm)
      ++register_limited;
  }
  CHECK(checked == static_cast<int64_t>(measured_occupancy().size()));
  CHECK(checked >= 50);
  CHECK(register_limited >= 10);  // 21 today (docs/kernels.md, "Occupancy"): registers matter
}

TEST_CASE("occupancy: built_blocks_per_sm is 0 for a kind the entry does not launch, and flash2's "
          "backward row kernels are threads-limited (16 blocks of 128)") {
  const Hardware hw = hardware_preset("h200");
  const BuiltKernel* f1 = default_built(Algo::flash1, Pass::fwd, 64, DType::fp16);
  const BuiltKernel* f2 = default_built(Algo::flash2, Pass::bwd, 128, DType::bf16);
  REQUIRE(f1 != nullptr);
  REQUIRE(f2 != nullptr);
  CHECK(built_blocks_per_sm(*f1, KernelKind::flash2_bwd_preprocess, hw) == 0);
  CHECK(built_blocks_per_sm(*f1, KernelKind::flash1_bwd, hw) == 0);
  CHECK(built_blocks_per_sm(*f1, KernelKind::flash1_fwd, hw) == 1);  // 8 warps of 217 registers
  CHECK(built_blocks_per_sm(*f2, KernelKind::flash2_bwd_preprocess, hw) == 16);
  CHECK(built_blocks_per_sm(*f2, KernelKind::flash2_bwd_convert_dq, hw) == 16);
  CHECK(built_blocks_per_sm(*f2, KernelKind::flash2_bwd, hw) == 1);
  CHECK(built_blocks_per_sm(*f2, KernelKind::flash2_fwd, hw) == 0);
}

TEST_CASE("catalog: registers within the 255 a thread may have, shared memory in whole 128-byte "
          "allocation units, row kernels for every flash2 backward (d, dtype)") {
  for (const BuiltKernel& k : built_kernels()) {
    INFO(to_string(k.algo) << " " << to_string(k.pass) << " d=" << k.headdim << " " << to_string(k.dtype) << " "
                           << k.tiling.block_r << "x" << k.tiling.block_c);
    CHECK(k.registers >= 1);
    CHECK(k.registers <= 255);
    CHECK(k.stack_bytes >= 0);
    // The driver allocates shared memory in units of 128 B; the rule does not round (a
    // schedule's odd footprint is left as it is), which loses nothing for these.
    CHECK(k.smem_bytes % 128 == 0);
    if (k.algo == Algo::flash2 && k.pass == Pass::bwd)
      for (KernelKind kind : {KernelKind::flash2_bwd_preprocess, KernelKind::flash2_bwd_convert_dq})
        CHECK(find_row_kernel(kind, k.headdim, k.dtype) != nullptr);
  }
  for (const BuiltRowKernel& r : built_row_kernels()) {
    CHECK(default_built(Algo::flash2, Pass::bwd, r.headdim, r.dtype) != nullptr);  // no row kernel of nothing
    CHECK(find_row_kernel(r.kind, r.headdim, r.dtype) == &r);
  }
}

TEST_CASE("occupancy: blocksparse replays as the flash2 kernels it runs, their block-sparse instances' occupancy "
          "from the catalog: with a dense mask its L2 model's DRAM bytes are flash2's, causal and not") {
  for (int64_t d : {64, 128})
    for (bool causal : {false, true})
      for (Pass pass : {Pass::fwd, Pass::bwd}) {
        Problem p;
        p.batch = 2, p.heads = 16, p.seqlen = 4096, p.headdim = d, p.causal = causal, p.pass = pass;
        const Config flash2 = make_config(Algo::flash2, p, hardware_preset("h200"), std::nullopt, {TilingSource::kernel});
        const Config sparse =
            make_config(Algo::blocksparse, p, hardware_preset("h200"), std::nullopt, {TilingSource::kernel});
        INFO("d " << d << " causal " << causal << " " << to_string(pass));
        const CacheResult a = replay_cache(flash2), b = replay_cache(sparse);
        CHECK(b.total_l2.dram_read_bytes == a.total_l2.dram_read_bytes);
        CHECK(b.total_l2.dram_write_bytes == a.total_l2.dram_write_bytes);
        // The main kernel's instance: the catalog's rule on its sparse_registers.
        const BuiltKernel* k = find_built(Algo::flash2, pass, d, DType::fp16, sparse.tiling);
        REQUIRE(k != nullptr);
        KernelInstance instance;
        instance.sparse = true;
        CHECK(built_blocks_per_sm(*k, main_kernel_kind(*k), hardware_preset("h200"), instance) >= 1);
      }
}
