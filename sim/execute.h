// execute: run the tiled algorithm numerically on the CPU (Eigen, double precision) for small
// shapes, tile by tile with the online softmax, counting every tile it loads and stores. Its
// outputs must equal the dense reference softmax(QKᵀ/√d)V (and its gradients) to rounding, and
// its counts must equal the walk's (shared/DESIGN.md, "Ways to count", 3).
#pragma once
#include <cstdint>
#include <vector>

#include <Eigen/Dense>

#include "sim/config.h"
#include "sim/simulate.h"

namespace flashio::sim {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// One head's inputs and outputs (N × d; lse N × 1).
struct HeadTensors {
  Matrix q, k, v, d_o;      // inputs (d_o only for backward)
  Matrix o, lse;            // forward outputs
  Matrix dq, dk, dv;        // backward outputs
};

// Largest problem execute accepts: B·H·N²·d ≤ this (the walk covers larger ones).
constexpr double kExecuteMaxWork = 4.0e9;

struct ExecuteResult {
  std::vector<KernelCounts> kernels;  // counts as recorded while computing (all heads)
  std::vector<HeadTensors> heads;     // per (b, h): inputs drawn from the seed, outputs computed
};

// Inputs drawn from N(0, 1) with the given seed. Throws InvalidInput beyond kExecuteMaxWork.
ExecuteResult execute(const Config& config, uint64_t seed = 1);

// Dense double-precision reference for one head: O, LSE and (given dO) dQ, dK, dV;
// applies causal when asked. (Standard attention without the tiles.)
HeadTensors dense_reference(const Matrix& q, const Matrix& k, const Matrix& v, const Matrix* d_o,
                            bool causal);

}  // namespace flashio::sim
