// The worked examples of docs/paper.md ("Worked examples"): one row, scores (0, log 3),
// values (2, 10). The online merge rule gives 8; averaging per-block softmaxes gives 6;
// rescaling only ℓ gives 9; and the tiled backward with g = 1 gives dL/ds = −1.5 and +1.5.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "sim/execute.h"
#include "sim/hardware.h"
#include "sim/online_softmax.h"

using namespace flashio::sim;

namespace {

const double kLog3 = std::log(3.0);

SoftmaxMatrix one(double x) { return SoftmaxMatrix::Constant(1, 1, x); }

// The row merged block by block, one score per block.
OnlineSoftmax merge_two_blocks(Rescale rescale) {
  OnlineSoftmax s = online_softmax_start(1, 1);
  online_softmax_merge(s, one(0.0), one(2.0), rescale);
  online_softmax_merge(s, one(kLog3), one(10.0), rescale);
  return s;
}

// N = 2, d = 1, Br = Bc = 1: row 0 is the paper's row (q = 1, keys 0 and log 3, so with
// scale 1/√1 its scores are 0 and log 3; values 2 and 10; dO = 1). Row 1 has q = 0 and dO = 0,
// so it adds nothing to dK, dV: they are row 0's alone.
HeadTensors worked_inputs() {
  HeadTensors h;
  h.q = Matrix(2, 1);
  h.q << 1, 0;
  h.k = Matrix(2, 1);
  h.k << 0, kLog3;
  h.v = Matrix(2, 1);
  h.v << 2, 10;
  h.d_o = Matrix(2, 1);
  h.d_o << 1, 0;
  return h;
}

Config worked_config(Algo algo) {
  Problem p;
  p.batch = 1;
  p.heads = 1;
  p.seqlen = 2;
  p.headdim = 1;
  p.pass = Pass::fwdbwd;
  Config c = make_config(algo, p, hardware_preset("h200"));
  c.tiling = {1, 1};  // one score per tile: the merge happens across tiles
  return c;
}

}  // namespace

TEST_CASE("worked example: the online rule merges scores (0, log 3) with values (2, 10) into 8",
          "[worked]") {
  const OnlineSoftmax s = merge_two_blocks(Rescale::both);
  CHECK(online_softmax_output(s)(0, 0) == Approx(8.0).epsilon(1e-14));
  // (1·2 + 3·10) / (1 + 3) in the units of the new max log 3: ℓ = 4/3, u = 32/3.
  CHECK(s.l(0) == Approx(4.0 / 3.0).epsilon(1e-14));
  CHECK(s.u(0, 0) == Approx(32.0 / 3.0).epsilon(1e-14));
  CHECK(s.m(0) == Approx(kLog3).epsilon(1e-14));
  CHECK(online_softmax_lse(s)(0) == Approx(std::log(4.0)).epsilon(1e-14));
}

TEST_CASE("worked example: when the max moves from 0 to log 3, the old sum and the old weighted "
          "sum are both multiplied by 1/3",
          "[worked]") {
  OnlineSoftmax s = online_softmax_start(1, 1);
  online_softmax_merge(s, one(0.0), one(2.0));
  CHECK(s.l(0) == 1.0);
  CHECK(s.u(0, 0) == 2.0);
  // The new block adds e^(log 3 − log 3) = 1 to ℓ and 1·10 to u; what remains of the old
  // sum (1) and the old weighted sum (2) is each times e^(0 − log 3) = 1/3.
  online_softmax_merge(s, one(kLog3), one(10.0));
  CHECK(s.l(0) - 1.0 == Approx(1.0 / 3.0).epsilon(1e-14));
  CHECK(s.u(0, 0) - 10.0 == Approx(2.0 / 3.0).epsilon(1e-14));
}

TEST_CASE("worked example: averaging the two per-block softmax outputs gives 6, not 8",
          "[worked]") {
  // Each block softmaxed on its own: a single score has weight 1, so each block's output is
  // its value; averaging the blocks gives (2 + 10)/2.
  OnlineSoftmax first = online_softmax_start(1, 1), second = online_softmax_start(1, 1);
  online_softmax_merge(first, one(0.0), one(2.0));
  online_softmax_merge(second, one(kLog3), one(10.0));
  const double averaged =
      (online_softmax_output(first)(0, 0) + online_softmax_output(second)(0, 0)) / 2;
  CHECK(averaged == Approx(6.0).epsilon(1e-14));
  CHECK(std::abs(averaged - online_softmax_output(merge_two_blocks(Rescale::both))(0, 0)) > 1.9);
}

TEST_CASE("worked example: rescaling only ℓ (not the output) gives 9, not 8", "[worked]") {
  // u keeps the first block's 2 unscaled: (2 + 10) / (1/3 + 1) = 9.
  const OnlineSoftmax wrong = merge_two_blocks(Rescale::sum_only);
  CHECK(online_softmax_output(wrong)(0, 0) == Approx(9.0).epsilon(1e-14));
  // When the max does not move (the larger score first), the mistake is invisible: both 8.
  OnlineSoftmax unmoved = online_softmax_start(1, 1);
  online_softmax_merge(unmoved, one(kLog3), one(10.0), Rescale::sum_only);
  online_softmax_merge(unmoved, one(0.0), one(2.0), Rescale::sum_only);
  CHECK(online_softmax_output(unmoved)(0, 0) == Approx(8.0).epsilon(1e-14));
}

TEST_CASE("worked example: FlashAttention's normalised update (Algorithm 1 line 12) also gives 8",
          "[worked]") {
  SoftmaxMatrix o = SoftmaxMatrix::Zero(1, 1);
  Eigen::VectorXd l = Eigen::VectorXd::Zero(1);
  Eigen::VectorXd m = Eigen::VectorXd::Constant(1, -std::numeric_limits<double>::infinity());
  online_softmax_merge_normalised(o, l, m, one(0.0), one(2.0));
  CHECK(o(0, 0) == Approx(2.0).epsilon(1e-14));  // after one block, the output is that block's
  online_softmax_merge_normalised(o, l, m, one(kLog3), one(10.0));
  CHECK(o(0, 0) == Approx(8.0).epsilon(1e-14));
  CHECK(l(0) == Approx(4.0 / 3.0).epsilon(1e-14));
}

TEST_CASE("worked example: the tiled forward and backward of flash1 and flash2 give output 8 and "
          "dL/ds = −1.5, +1.5 with g = 1",
          "[worked]") {
  for (Algo algo : {Algo::flash1, Algo::flash2}) {
    CAPTURE(to_string(algo));
    const ExecuteResult r = execute(worked_config(algo), {worked_inputs()});
    const HeadTensors& h = r.heads[0];
    CHECK(h.o(0, 0) == Approx(8.0).epsilon(1e-14));
    CHECK(h.lse(0, 0) == Approx(std::log(4.0)).epsilon(1e-14));
    // q = 1 and scale = 1, so dK_j = dL/ds_j · q = dL/ds_j.
    CHECK(h.dk(0, 0) == Approx(-1.5).epsilon(1e-14));
    CHECK(h.dk(1, 0) == Approx(1.5).epsilon(1e-14));
    CHECK(h.dk(0, 0) + h.dk(1, 0) == Approx(0.0).margin(1e-14));
    // dV = Pᵀ g: the weights 1/4, 3/4; dQ = Σ_j dL/ds_j · k_j = 1.5 · log 3.
    CHECK(h.dv(0, 0) == Approx(0.25).epsilon(1e-14));
    CHECK(h.dv(1, 0) == Approx(0.75).epsilon(1e-14));
    CHECK(h.dq(0, 0) == Approx(1.5 * kLog3).epsilon(1e-14));
  }
}
