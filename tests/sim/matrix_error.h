// Test helper: the largest absolute difference of two matrices of one shape (execute against the
// dense reference).
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

}  // namespace flashio::sim::test
