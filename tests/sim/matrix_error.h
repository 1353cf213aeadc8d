// Test helpers: the largest absolute (and relative) difference of two matrices of one shape, and
// the outputs of every head of an execute against the dense reference over the head's keys.
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/execute.h"

namespace flashio::sim::test {

// Largest |a − b| relative to 1 + max |b|; equal infinities (rows with no kept score) agree.
inline double scaled_error(const Matrix& a, const Matrix& b) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  double err = 0, scale = 1;
  for (Eigen::Index i = 0; i < a.size(); ++i) {
    const double x = a.data()[i], y = b.data()[i];
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y) return std::numeric_limits<double>::infinity();
      continue;
    }
    err = std::max(err, std::abs(x - y));
    scale = std::max(scale, 1 + std::abs(y));
  }
  return err / scale;
}

// Every query head of a forward and backward against the dense reference with its group's K and V
// (all the rows execute returned for them: Nk, or a varlen sequence's n_b), causal as the problem
// is; dK and dV against the sum over the group's heads.
inline void check_group_reference(const Config& c, const ExecuteResult& r) {
  const Problem& p = c.problem;
  const int64_t g = p.group();
  REQUIRE(static_cast<int64_t>(r.heads.size()) == p.batch_heads());
  for (int64_t first = 0; first < p.batch_heads(); first += g) {
    const HeadTensors& kv = r.heads[static_cast<size_t>(first)];
    Matrix dk = Matrix::Zero(kv.k.rows(), p.headdim), dv = dk;
    for (int64_t h = first; h < first + g; ++h) {
      const HeadTensors& got = r.heads[static_cast<size_t>(h)];
      const HeadTensors ref = dense_reference(got.q, kv.k, kv.v, &got.d_o, p.causal);
      CAPTURE(h);
      CHECK(scaled_error(got.o, ref.o) < 1e-12);
      if (c.algo != Algo::standard) CHECK(scaled_error(got.lse, ref.lse) < 1e-12);
      CHECK(scaled_error(got.dq, ref.dq) < 1e-12);
      dk += ref.dk, dv += ref.dv;
    }
    CHECK(scaled_error(kv.dk, dk) < 1e-12);
    CHECK(scaled_error(kv.dv, dv) < 1e-12);
  }
}

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
