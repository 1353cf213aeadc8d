// execute (sim/execute.h), the third way to count: the tiled algorithms run numerically must
// give the dense reference's O, LSE, dQ, dK, dV to rounding, and must count exactly what the
// walk over the schedules counts, kernel by kernel.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <cmath>
#include <iostream>
#include <limits>
#include <sstream>

#include "sim/block_mask.h"
#include "sim/errors.h"
#include "sim/execute.h"
#include "sim/hardware.h"
#include "sim/simulate.h"
#include "matrix_error.h"
#include "tiled_config.h"

using namespace flashio::sim;
using flashio::sim::test::scaled_error;

namespace {

Config make(Algo algo, int64_t n, int64_t d, int64_t br, int64_t bc, bool causal, Pass pass,
            int64_t batch = 1, int64_t heads = 1) {
  return test::tiled_config(algo, pass, batch, heads, n, d, br, bc, causal);
}

constexpr double kTolerance = 1e-12;

void check_against(const HeadTensors& got, const HeadTensors& ref, Pass pass, bool has_lse) {
  if (has_forward(pass)) {
    CHECK(scaled_error(got.o, ref.o) < kTolerance);
    if (has_lse) CHECK(scaled_error(got.lse, ref.lse) < kTolerance);
  }
  if (has_backward(pass)) {
    CHECK(scaled_error(got.dq, ref.dq) < kTolerance);
    CHECK(scaled_error(got.dk, ref.dk) < kTolerance);
    CHECK(scaled_error(got.dv, ref.dv) < kTolerance);
  }
}

// The kept scores of a blocksparse config, built here from the mask's blocks of 128 tokens
// alone (read without causal) and causal, not by the code under test: whatever the tiling.
ScoreMask zero_blocks_masked(const Config& c) {
  const int64_t n = c.problem.seqlen;
  Problem acausal = c.problem;
  acausal.causal = false;
  const BlockMask mask(c.block_mask, acausal);
  ScoreMask keep(n, n);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t col = 0; col < n; ++col)
      keep(r, col) = mask.nonzero(r / mask.block_tokens(), col / mask.block_tokens()) && (!c.problem.causal || col <= r);
  return keep;
}

void check_counts_equal_walk(const Config& c) {
  const std::vector<KernelCounts> executed = execute(c).kernels;
  const std::vector<KernelCounts> walked = walk_counts(c);
  REQUIRE(executed.size() == walked.size());
  for (size_t k = 0; k < walked.size(); ++k) {
    INFO("kernel " << to_string(walked[k].kind) << "\n  walk:    " << describe(walked[k].counts)
                   << "\n  execute: " << describe(executed[k].counts) << "\n  execute name "
                   << to_string(executed[k].kind) << " grid " << executed[k].grid_blocks << " vs "
                   << walked[k].grid_blocks);
    CHECK(executed[k] == walked[k]);
  }
}

const Pass kPasses[] = {Pass::fwd, Pass::bwd, Pass::fwdbwd};

}  // namespace

TEST_CASE("execute equals the dense reference for flash1 and flash2 over awkward shapes, "
          "causal and not, Br != Bc",
          "[execute]") {
  for (Algo algo : {Algo::flash1, Algo::flash2})
    for (int64_t n : {1, 7, 97, 130})
      for (int64_t d : {8, 40, 64})
        for (auto [br, bc] : {std::pair<int64_t, int64_t>{16, 32}, {32, 16}, {64, 64}, {7, 5}})
          for (bool causal : {false, true}) {
            const Config c = make(algo, n, d, br, bc, causal, Pass::fwdbwd);
            CAPTURE(to_string(algo), n, d, br, bc, causal);
            const ExecuteResult r = execute(c, 7);
            REQUIRE(r.heads.size() == 1);
            const HeadTensors& h = r.heads[0];
            check_against(h, dense_reference(h.q, h.k, h.v, &h.d_o, causal), Pass::fwdbwd, true);
          }
}

TEST_CASE("execute equals the dense reference on every head of a B = 2, H = 3 problem",
          "[execute]") {
  for (Algo algo : {Algo::standard, Algo::flash1, Algo::flash2}) {
    const Config c = make(algo, 33, 16, 8, 16, true, Pass::fwdbwd, 2, 3);
    CAPTURE(to_string(algo));
    const ExecuteResult r = execute(c, 11);
    REQUIRE(r.heads.size() == 6);
    for (const HeadTensors& h : r.heads)
      check_against(h, dense_reference(h.q, h.k, h.v, &h.d_o, true), Pass::fwdbwd,
                    algo != Algo::standard);
    // Different heads got different inputs (the check above is not one head six times).
    CHECK((r.heads[0].q - r.heads[5].q).norm() > 1);
  }
}

TEST_CASE("the backward alone (pass bwd) gives the reference gradients from an uncounted "
          "forward",
          "[execute]") {
  for (Algo algo : {Algo::standard, Algo::flash1, Algo::flash2})
    for (bool causal : {false, true}) {
      const Config c = make(algo, 97, 40, 32, 16, causal, Pass::bwd);
      CAPTURE(to_string(algo), causal);
      const ExecuteResult r = execute(c, 3);
      const HeadTensors& h = r.heads[0];
      check_against(h, dense_reference(h.q, h.k, h.v, &h.d_o, causal), Pass::bwd, false);
      for (const KernelCounts& k : r.kernels) {
        INFO(to_string(k.kind));
        CHECK(pass_of(k.kind) == Pass::bwd);
      }
    }
}

TEST_CASE("standard attention executed kernel by kernel equals the reference, with N not a "
          "multiple of its 128-wide GEMM tiles and d > 128",
          "[execute]") {
  for (int64_t n : {1, 7, 130, 257})
    for (int64_t d : {8, 136})
      for (bool causal : {false, true}) {
        const Config c = make(Algo::standard, n, d, 16, 16, causal, Pass::fwdbwd);
        CAPTURE(n, d, causal);
        const HeadTensors h = execute(c, 5).heads[0];
        CHECK(h.lse.size() == 0);  // standard stores no log-sum-exp
        check_against(h, dense_reference(h.q, h.k, h.v, &h.d_o, causal), Pass::fwdbwd, false);
      }
}

TEST_CASE("standard's key-padding mask and dropout passes equal a reference that applies the "
          "same mask and dropout, and do change the result",
          "[execute]") {
  for (bool causal : {false, true})
    for (int64_t n : {7, 97}) {
      Config c = make(Algo::standard, n, 24, 16, 16, causal, Pass::fwdbwd, 2, 2);
      c.problem.mask = true;
      c.problem.dropout = 0.25;
      CAPTURE(causal, n);
      const uint64_t seed = 9;
      const ExecuteResult r = execute(c, seed);
      for (int64_t bh = 0; bh < 4; ++bh) {
        CAPTURE(bh);
        const HeadTensors& h = r.heads[bh];
        const ScoreMask keep = kept_scores(c, bh);
        const Matrix z = dropout_multipliers(c.problem, bh, seed);
        check_against(h, dense_reference(h.q, h.k, h.v, &h.d_o, &keep, &z), Pass::fwdbwd, false);
        // Without the dropout the output differs: the dropout pass really ran.
        const HeadTensors no_dropout = dense_reference(h.q, h.k, h.v, &h.d_o, &keep, nullptr);
        CHECK((h.o - no_dropout.o).norm() > 1e-6);
      }
      // Batch 1 of 2 keeps N − ⌊N/4⌋ keys: its masked keys get no gradient.
      const int64_t len = key_padding_length(1, 2, n);
      CHECK(len == n - n / 4);
      const HeadTensors& b1 = r.heads[2];
      if (len < n) {
        CHECK(b1.dk.bottomRows(n - len).norm() == 0.0);
        CHECK(b1.dv.bottomRows(n - len).norm() == 0.0);
      }
    }
}

TEST_CASE("dropout keeps about 1 − p of the scores, scaled by 1/(1 − p) (p rounded to 2^-16), and is "
          "reproducible",
          "[execute]") {
  Problem p;
  p.seqlen = 200;
  p.dropout = 0.3;
  const Matrix z = dropout_multipliers(p, 1, 4);
  const double kept = (z.array() > 0).cast<double>().mean();
  CHECK(kept == Approx(0.7).margin(0.01));
  CHECK(z.maxCoeff() == 65536.0 / (65536 - 19661));  // round(0.3 · 2^16) = 19661 (kernels/dropout_keep.h)
  CHECK(dropout_multipliers(p, 1, 4) == z);
  CHECK(dropout_multipliers(p, 2, 4) != z);
  CHECK(dropout_multipliers(p, 1, 5) != z);
}

TEST_CASE("blocksparse equals a reference that masks the zero 128-token blocks of its block mask, "
          "at tilings that are not the blocks' (Br != Bc, tiles across block edges)",
          "[execute]") {
  for (const char* spec : {"banded:1", "banded:0", "random:0.4:3", "", "banded:1@16", "random:0.3:2@40"})
    for (int64_t n : {7, 130, 517})
      for (bool causal : {false, true})
        for (const auto& [br, bc] : {std::pair<int64_t, int64_t>{16, 32}, {48, 80}}) {
        Config c = make(Algo::blocksparse, n, 24, br, bc, causal, Pass::fwdbwd);
        c.block_mask.text = spec;
        CAPTURE(spec, n, causal, br, bc);
        const HeadTensors h = execute(c, 2).heads[0];
        const ScoreMask keep = zero_blocks_masked(c);
        check_against(h, dense_reference(h.q, h.k, h.v, &h.d_o, &keep, nullptr), Pass::fwdbwd,
                      true);
        if (std::string(spec) == "banded:1" && n == 517 && !causal) {
          // The mask removed something: the dense answer is different.
          const HeadTensors dense = dense_reference(h.q, h.k, h.v, &h.d_o, false);
          CHECK((h.o - dense.o).norm() > 1e-6);
        }
      }
}

TEST_CASE("a row whose blocks are all zero gets O = 0, LSE = −∞ and no gradient, in the "
          "reference and in execute",
          "[execute]") {
  // A file mask whose second row of blocks (queries 128-199) is empty.
  const std::string path = "test_execute_empty_row.mask";
  {
    std::ofstream f(path);
    f << "11\n00\n";
  }
  Config c = make(Algo::blocksparse, 200, 8, 48, 24, false, Pass::fwdbwd);
  c.block_mask.text = path;
  const HeadTensors h = execute(c, 1).heads[0];
  const ScoreMask keep = zero_blocks_masked(c);
  check_against(h, dense_reference(h.q, h.k, h.v, &h.d_o, &keep, nullptr), Pass::fwdbwd, true);
  CHECK(h.o.bottomRows(72).norm() == 0.0);
  CHECK(std::isinf(h.lse(199, 0)));
  CHECK(h.dq.bottomRows(72).norm() == 0.0);
  std::remove(path.c_str());
}

TEST_CASE("execute counts, kernel by kernel, exactly what the walk counts: every algorithm and "
          "pass, ragged tiles, causal",
          "[execute][counts]") {
  for (Algo algo : {Algo::standard, Algo::flash1, Algo::flash2, Algo::blocksparse})
    for (Pass pass : kPasses)
      for (int64_t n : {1, 7, 97, 130})
        for (bool causal : {false, true}) {
          const int64_t d = n == 97 ? 136 : 40;
          Config c = make(algo, n, d, 16, 24, causal, pass, 2, 1);
          if (algo == Algo::blocksparse) c.block_mask.text = "random:0.5:7";
          CAPTURE(to_string(algo), to_string(pass), n, d, causal);
          check_counts_equal_walk(c);
        }
}

TEST_CASE("execute counts what the walk counts for standard's mask and dropout passes and for "
          "banded block masks with Br != Bc",
          "[execute][counts]") {
  for (Pass pass : kPasses)
    for (bool causal : {false, true}) {
      Config s = make(Algo::standard, 130, 64, 64, 64, causal, pass, 3, 1);
      s.problem.mask = true;
      s.problem.dropout = 0.1;
      CAPTURE(to_string(pass), causal);
      check_counts_equal_walk(s);
      Config b = make(Algo::blocksparse, 517, 32, 32, 8, causal, pass);
      b.block_mask.text = "banded:0";
      check_counts_equal_walk(b);
    }
}

TEST_CASE("simulate with the execute method gives the walk's kernels and total", "[execute]") {
  for (Algo algo : {Algo::standard, Algo::flash1, Algo::flash2}) {
    const Config c = make(algo, 97, 40, 32, 16, true, Pass::fwdbwd, 2, 2);
    CAPTURE(to_string(algo));
    const SimResult executed = simulate(c, CountMethod::execute);
    const SimResult walked = simulate(c, CountMethod::walk);
    CHECK(executed.kernels == walked.kernels);
    INFO("walk " << describe(walked.total) << "\nexecute " << describe(executed.total));
    CHECK(executed.total == walked.total);
    CHECK(executed.time_ms == walked.time_ms);
  }
}

TEST_CASE("execute refuses problems beyond kExecuteMaxWork and inputs of the wrong shape",
          "[execute]") {
  const Config big = make(Algo::flash2, 8192, 64, 64, 64, false, Pass::fwd, 1, 1);
  REQUIRE(static_cast<double>(big.problem.seqlen) * big.problem.seqlen * 64 > kExecuteMaxWork);
  CHECK_THROWS_AS(execute(big), InvalidInput);
  const Config small = make(Algo::flash2, 16, 8, 8, 8, false, Pass::fwdbwd);
  std::vector<HeadTensors> inputs = random_inputs(small.problem, 1, 1);
  inputs[0].k = Matrix::Zero(15, 8);
  CHECK_THROWS_AS(execute(small, inputs), InvalidInput);
  CHECK_THROWS_AS(execute(small, std::vector<HeadTensors>{}), InvalidInput);
}

TEST_CASE("execute's seeded inputs are the random_inputs draw, and the first heads of a draw do "
          "not depend on how many are drawn",
          "[execute]") {
  const Config c = make(Algo::flash2, 20, 8, 8, 8, false, Pass::fwd, 1, 3);
  const ExecuteResult r = execute(c, 42);
  const std::vector<HeadTensors> one = random_inputs(c.problem, 42, 1);
  CHECK(r.heads[0].q == one[0].q);
  CHECK(r.heads[0].v == one[0].v);
  CHECK(r.heads[1].q != one[0].q);
}

// Not registered with CTest (hidden tag): `test_sim "[.speed]"` prints the execute line of
// docs/architecture.md, "Speed of the model".
TEST_CASE("execute speed: B=1 H=1 N=256 d=64 fwdbwd", "[.speed]") {
  for (Algo algo : {Algo::standard, Algo::flash1, Algo::flash2}) {
    const Config c = make(algo, 256, 64, 64, 64, false, Pass::fwdbwd);
    const auto start = std::chrono::steady_clock::now();
    const ExecuteResult r = execute(c);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::cout << "execute " << to_string(algo) << " N=256 d=64 fwdbwd 64x64: " << ms << " ms\n";
    CHECK(r.kernels.size() > 0);
  }
}
