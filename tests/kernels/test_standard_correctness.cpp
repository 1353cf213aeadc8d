// The standard path (cuBLAS GEMMs + our row kernels) against the double-precision reference,
// with the key-padding mask and causal, and the dropout pass's basic properties.
#include <catch2/catch.hpp>
#include <cmath>

#include "kernel_check.h"
#include "kernels/attention.h"
#include "compare.h"

namespace fk = flashio::kernels;
using flashio::test::describe;

// N = 2999: rows padded to 3008 elements (kernels::standard_row_stride), the softmax in two
// chunks per thread; N = 9000 (one head): eight chunks. The GEMMs' key split
// (kernels::standard_gemm_main_keys): N = 1 and 6 run whole, 13 as 8 + 5 keys, 97 as 96 + 1,
// 1025 as 1024 + 1, 2999 as 2992 + 7; 9000 is a multiple of 8.
TEST_CASE("standard forward and backward are within fp16 rounding of the reference (relative error <= 1e-2, or max abs <= 1e-2 and mean abs <= 1e-3)",
          "[gpu]") {
  for (int64_t n : {1, 6, 13, 97, 1025, 2999, 9000})
    for (int64_t d : {64, 128})
      for (bool causal : {false, true})
        for (bool mask : {false, true}) {
          if (n == 9000 && (d != 64 || mask)) continue;
          fk::AttentionConfig c;
          c.algo = fk::Algo::standard, c.batch = n == 9000 ? 1 : 2, c.heads = n == 9000 ? 1 : 2, c.seqlen = n, c.headdim = d;
          c.causal = causal, c.mask = mask;
          const uint64_t seed = flashio::test::fresh_seed();
          fk::HostInputs in;
          const fk::HostOutputs out = flashio::test::run_config(c, fk::Pass::fwdbwd, seed, &in);
          const auto e = flashio::test::compare_with_reference(c, in, {out})[0];
          INFO("N" << n << " d" << d << " causal " << causal << " mask " << mask << " seed " << seed);
          INFO("O " << describe(e.o) << "\ndQ " << describe(e.dq) << "\ndK " << describe(e.dk) << "\ndV "
                    << describe(e.dv));
          for (const flashio::test::ErrorStats* s : {&e.o, &e.dq, &e.dk, &e.dv}) {
            CHECK(s->nan_count == 0);
            // Relative error is ill-conditioned where the exact gradient is zero (N = 1: one key,
            // P = 1, so dS = 0 and dQ, dK are rounding noise); the absolute rule covers it.
            const bool absolute = s->max_abs <= 1e-2 && s->mean_abs() <= 1e-3;
            CHECK((s->relative() <= 1e-2 || absolute));
          }
        }
}

TEST_CASE("standard with dropout writes every output, and dropout changes O", "[gpu]") {
  fk::AttentionConfig c;
  c.algo = fk::Algo::standard, c.batch = 1, c.heads = 2, c.seqlen = 97, c.headdim = 64;
  const uint64_t seed = flashio::test::fresh_seed();
  const fk::HostOutputs plain = flashio::test::run_config(c, fk::Pass::fwdbwd, seed);
  c.dropout = 0.2;
  const fk::HostOutputs dropped = flashio::test::run_config(c, fk::Pass::fwdbwd, seed);
  int nan = 0;
  double diff = 0;
  for (const std::vector<float>* t : {&dropped.o, &dropped.dq, &dropped.dk, &dropped.dv})
    for (float x : *t) nan += std::isnan(x);
  for (size_t i = 0; i < plain.o.size(); ++i) diff = std::max(diff, double(std::abs(plain.o[i] - dropped.o[i])));
  CHECK(nan == 0);
  CHECK(diff > 1e-2);
}
