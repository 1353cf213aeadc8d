// Counts: bytes per tensor and direction, FLOPs by kind (docs/architecture.md, "Vocabulary").
// Integers throughout, so closed form, walk and execute can be compared exactly; every sum and
// product is checked (sim/checked.h): a count beyond 64 bits throws CountOverflow, never wraps.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "sim/checked.h"
#include "sim/tensor.h"

namespace flashio::sim {

enum class Dir { read, write };

struct TensorBytes {
  int64_t read_bytes = 0;
  int64_t write_bytes = 0;
  bool operator==(const TensorBytes&) const = default;
};

struct Flops {
  int64_t tensor = 0;  // matmul FLOPs executed on tensor cores (2 per multiply-add)
  int64_t exp = 0;     // exponentials (one per exp evaluated)
  int64_t other = 0;   // other CUDA-core work: max, sum, scale, rescale, subtract
  Flops& operator+=(const Flops& o) {
    tensor = checked_add(tensor, o.tensor);
    exp = checked_add(exp, o.exp);
    other = checked_add(other, o.other);
    return *this;
  }
  Flops scaled(int64_t k) const { return {checked_mul(tensor, k), checked_mul(exp, k), checked_mul(other, k)}; }
  bool operator==(const Flops&) const = default;
};

struct Counts {
  std::array<TensorBytes, kTensorCount> bytes{};
  Flops flops;

  void add_transfer(Tensor t, Dir dir, int64_t nbytes) {
    auto& b = bytes[static_cast<int>(t)];
    int64_t& to = dir == Dir::read ? b.read_bytes : b.write_bytes;
    to = checked_add(to, nbytes);
  }
  const TensorBytes& of(Tensor t) const { return bytes[static_cast<int>(t)]; }
  int64_t io_read_bytes() const;
  int64_t io_write_bytes() const;
  Counts& operator+=(const Counts& o);
  Counts scaled(int64_t k) const;
  bool operator==(const Counts&) const = default;
};

// "Q r 1024 w 0, K r ..." for test failure messages.
std::string describe(const Counts& counts);

}  // namespace flashio::sim
