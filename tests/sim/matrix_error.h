// Test helpers: the largest absolute difference of two matrices of one shape, and the forward's
// O and lse of every head of an execute against the dense reference over the head's keys.
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "sim/execute.h"

namespace flashio::sim::test {

inline double max_error(const Matrix& a, const Matrix& b) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  double err = 0;
  for (Eigen::Index i = 0; i < a.size(); ++i) err = std::max(err, std::abs(a.data()[i] - b.data()[i]));
  return err;
}

// Every query head's O and lse as the dense reference gives them over its group's K and V, the
// sequence's first sequence_keys(c, b) of them (per-sequence key lengths, the mask's padding in
// flash1 and flash2 too), causal as the problem is.
inline void check_forward_matches_reference(const Config& c, const ExecuteResult& r) {
  for (int64_t bh = 0; bh < c.problem.batch_heads(); ++bh) {
    const int64_t len = sequence_keys(c, bh / c.problem.heads);
    const HeadTensors& got = r.heads[static_cast<size_t>(bh)];
    const HeadTensors& first = r.heads[static_cast<size_t>(bh - bh % c.problem.group())];
    const Matrix k = first.k.topRows(len), v = first.v.topRows(len);
    const HeadTensors ref = dense_reference(got.q, k, v, nullptr, c.problem.causal);
    CAPTURE(bh, len);
    CHECK(max_error(got.o, ref.o) < 1e-12);
    CHECK(max_error(got.lse, ref.lse) < 1e-12);
  }
}

}  // namespace flashio::sim::test
