// roofline_time (sim/roofline.h) on hand-made counts: each of its three terms is the work over
// its rate, and the time is the largest of them.
#include <catch2/catch.hpp>

#include "sim/roofline.h"

using namespace flashio::sim;

namespace {

// Round rates, so each term is a hand division: 2 TB/s, 400 TFLOP/s tensor, 50 TFLOP/s FP32,
// 4 T exp/s.
Hardware round_hardware() {
  Hardware h;
  h.name = "round";
  h.hbm_bytes_per_s = 2e12;
  h.tensor_flops_per_s = 4e14;
  h.cuda_core_flops_per_s = 5e13;
  h.exp_per_s = 4e12;
  return h;
}

}  // namespace

TEST_CASE("pure memory: the time is bytes / bandwidth, read and written bytes together",
          "[roofline]") {
  Counts c;
  c.add_transfer(Tensor::Q, Dir::read, 3'000'000);
  c.add_transfer(Tensor::K, Dir::read, 1'000'001);  // an odd byte count
  c.add_transfer(Tensor::O, Dir::write, 2'000'000);
  const RooflineTime t = roofline_time(c, round_hardware());
  // 6,000,001 B / 2e12 B/s = 3.0000005e-6 s.
  CHECK(t.memory_ms == Approx(3.0000005e-3).epsilon(1e-12));
  CHECK(t.tensor_ms == 0);
  CHECK(t.cuda_core_ms == 0);
  CHECK(t.time_ms == t.memory_ms);
}

TEST_CASE("given dram bytes replace the io bytes in the memory term", "[roofline]") {
  Counts c;
  c.add_transfer(Tensor::V, Dir::read, 8'000'000);
  // The L2 model says only 1.5 MB reach HBM: 1.5e6 / 2e12 s.
  const RooflineTime t = roofline_time(c, round_hardware(), 1.5e6);
  CHECK(t.memory_ms == Approx(7.5e-4).epsilon(1e-12));
}

TEST_CASE("pure tensor work: the time is tensor FLOPs / the tensor-core rate", "[roofline]") {
  Counts c;
  c.flops.tensor = 274'877'906'944;  // 4·B·H·N²·d at B = 64, H = 16, N = 1024, d = 64
  const RooflineTime t = roofline_time(c, round_hardware());
  // 274,877,906,944 / 4e14 s = 0.68719476736 ms.
  CHECK(t.tensor_ms == Approx(0.68719476736).epsilon(1e-12));
  CHECK(t.memory_ms == 0);
  CHECK(t.cuda_core_ms == 0);
  CHECK(t.time_ms == t.tensor_ms);
}

TEST_CASE("exp on the SFU and other FLOPs on the FP32 pipe run side by side: the slower one "
          "counts", "[roofline]") {
  Counts c;
  c.flops.exp = 8'000'000;     // 8e6 / 4e12 = 2e-6 s
  c.flops.other = 50'000'000;  // 5e7 / 5e13 = 1e-6 s
  CHECK(roofline_time(c, round_hardware()).cuda_core_ms == Approx(2e-3).epsilon(1e-12));
  c.flops.other = 250'000'000;  // 5e-6 s: now the FP32 pipe is the slower
  CHECK(roofline_time(c, round_hardware()).cuda_core_ms == Approx(5e-3).epsilon(1e-12));
}

TEST_CASE("the time is the largest of the memory, tensor and CUDA-core terms", "[roofline]") {
  // Memory 3 µs (6e6 B), tensor 2 µs (8e8 FLOPs), CUDA cores 1 µs (4e6 exp); then each term in
  // turn made the largest.
  Counts c;
  c.add_transfer(Tensor::Q, Dir::read, 6'000'000);
  c.flops.tensor = 800'000'000;
  c.flops.exp = 4'000'000;
  RooflineTime t = roofline_time(c, round_hardware());
  CHECK(t.memory_ms == Approx(3e-3).epsilon(1e-12));
  CHECK(t.tensor_ms == Approx(2e-3).epsilon(1e-12));
  CHECK(t.cuda_core_ms == Approx(1e-3).epsilon(1e-12));
  CHECK(t.time_ms == t.memory_ms);
  c.flops.tensor = 1'600'000'000;  // 4 µs
  t = roofline_time(c, round_hardware());
  CHECK(t.time_ms == t.tensor_ms);
  CHECK(t.time_ms == Approx(4e-3).epsilon(1e-12));
  c.flops.exp = 20'000'000;  // 5 µs
  t = roofline_time(c, round_hardware());
  CHECK(t.time_ms == t.cuda_core_ms);
  CHECK(t.time_ms == Approx(5e-3).epsilon(1e-12));
}
