// Theorem 2's scaling in the model: io falls as 1/M through the loop that M controls, and
// standard attention's io is Θ(Nd + N²) whatever M is.
#include <catch2/catch.hpp>

#include "sim/config.h"
#include "sim/hardware.h"
#include "sim/simulate.h"

using namespace flashio::sim;

namespace {

Counts total(const Config& c) {
  Counts t;
  for (const auto& k : closed_form_counts(c)) t += k.counts;
  return t;
}

Config rule_config(Algo algo, int64_t n, int64_t d, int64_t sram_bytes) {
  Problem p;
  p.batch = 1;
  p.heads = 1;
  p.seqlen = n;
  p.headdim = d;
  Config c = make_config(algo, p, hardware_preset("h200"));
  c.sram_bytes = sram_bytes;
  c.tiling = rule_tiling(algo, p, sram_bytes);
  return c;
}

}  // namespace

TEST_CASE("doubling M halves the Tc-dependent term of flash1's io (Q, O, l, m re-reads)") {
  // d = 64, fp16: M = 64 KiB = 32768 elements gives Bc = 128, Br = 64; 128 KiB gives Bc = 256.
  const auto small = total(rule_config(Algo::flash1, 4096, 64, 64 * 1024));
  const auto large = total(rule_config(Algo::flash1, 4096, 64, 128 * 1024));
  // The Tc-dependent terms: Q read Tc times, o_accum/l/m read and written Tc - 1 times.
  auto tc_term = [](const Counts& c) {
    return c.of(Tensor::Q).read_bytes + c.of(Tensor::o_accum).read_bytes +
           c.of(Tensor::o_accum).write_bytes;
  };
  CHECK(tc_term(small) > 0);
  // Tc halves from 32 to 16: Q reads halve exactly; o_accum moves (Tc − 1) times: 31 vs 15.
  CHECK(small.of(Tensor::Q).read_bytes == 2 * large.of(Tensor::Q).read_bytes);
  CHECK(small.of(Tensor::o_accum).read_bytes * 15 == large.of(Tensor::o_accum).read_bytes * 31);
  // K and V do not depend on M: read once.
  CHECK(small.of(Tensor::K).read_bytes == large.of(Tensor::K).read_bytes);
}

TEST_CASE("doubling M halves the Tr-dependent term of flash2's io (K, V re-reads)") {
  const auto small = total(rule_config(Algo::flash2, 4096, 64, 64 * 1024));
  const auto large = total(rule_config(Algo::flash2, 4096, 64, 128 * 1024));
  CHECK(small.of(Tensor::K).read_bytes == 2 * large.of(Tensor::K).read_bytes);
  CHECK(small.of(Tensor::V).read_bytes == 2 * large.of(Tensor::V).read_bytes);
  CHECK(small.of(Tensor::Q).read_bytes == large.of(Tensor::Q).read_bytes);
  CHECK(small.of(Tensor::O).write_bytes == large.of(Tensor::O).write_bytes);
}

TEST_CASE("standard attention's io does not depend on M and grows as N² at fixed d") {
  const auto a = total(rule_config(Algo::standard, 2048, 64, 64 * 1024));
  const auto b = total(rule_config(Algo::standard, 2048, 64, 200 * 1024));
  CHECK(a == b);
  const auto big = total(rule_config(Algo::standard, 4096, 64, 64 * 1024));
  // S and P dominate: doubling N multiplies io by close to 4.
  const double ratio = static_cast<double>(big.io_read_bytes() + big.io_write_bytes()) /
                       static_cast<double>(a.io_read_bytes() + a.io_write_bytes());
  CHECK(ratio > 3.5);
  CHECK(ratio < 4.01);
}

TEST_CASE("FlashAttention moves fewer bytes than standard at the paper's GPT-2 medium shape") {
  Problem p;  // B=64, H=16, N=1024, d=64 fp16 by default
  const Hardware hw = hardware_preset("a100-40gb");
  const auto std_io = total(make_config(Algo::standard, p, hw));
  const auto fa_io = total(make_config(Algo::flash1, p, hw));
  CHECK(fa_io.io_read_bytes() + fa_io.io_write_bytes() <
        (std_io.io_read_bytes() + std_io.io_write_bytes()) / 4);
  // ... while executing more tensor FLOPs in backward (recomputation), not fewer.
  p.pass = Pass::fwdbwd;
  CHECK(total(make_config(Algo::flash1, p, hw)).flops.tensor >
        total(make_config(Algo::standard, p, hw)).flops.tensor);
}
