// The model's speed figures (docs/architecture.md, "Speed of the model"), measured (not a test: CPU
// timings depend on the machine):
//   1. a closed-form sweep of 10,000 configurations (simulate(formula), all three algorithms);
//   2. a walk of B=64, H=16, N=16384, d=64, 64 × 64 tiles, fwdbwd, for flash1, flash2, standard;
//   3. execute at B=1, H=1, N=256, d=64, fwdbwd (64 × 64 tiles).
// Prints wall-clock seconds, the best of three runs of each. Run: build/tests/sim/bench_model_speed
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>

#include "sim/hardware.h"
#include "sim/simulate.h"

using namespace flashio::sim;

namespace {

double best_of_three(const std::function<void()>& work) {
  double best = 1e30;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    work();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

}  // namespace

int main() {
  const Hardware h200 = hardware_preset("h200");
  int64_t sink = 0;  // keeps the results alive

  const double sweep_s = best_of_three([&] {
    // 10,000 configurations: N = 64..16384 in steps, d in {64, 128}, three algorithms, fwdbwd.
    int n = 0;
    for (int64_t seqlen = 64; n < 10000; seqlen += 64) {
      for (int64_t d : {64, 128})
        for (Algo a : {Algo::standard, Algo::flash1, Algo::flash2}) {
          Problem p;
          p.seqlen = (seqlen - 1) % 16384 + 1;
          p.headdim = d;
          p.pass = Pass::fwdbwd;
          sink += simulate(make_config(a, p, h200), CountMethod::formula).total.io_read_bytes();
          if (++n == 10000) break;
        }
    }
  });
  std::printf("closed-form sweep, 10,000 configurations: %.3f s (target < 1 s)\n", sweep_s);

  for (Algo a : {Algo::flash1, Algo::flash2, Algo::standard}) {
    Problem p;
    p.batch = 64;
    p.heads = 16;
    p.seqlen = 16384;
    p.headdim = 64;
    p.pass = Pass::fwdbwd;
    Config c = make_config(a, p, h200);
    c.tiling = {64, 64};
    const double walk_s = best_of_three([&] { sink += walk_counts(c).size(); });
    std::printf("walk %-8s B=64 H=16 N=16384 d=64 64x64 fwdbwd: %.3f s (target < 1 s)\n",
                to_string(a).c_str(), walk_s);
  }

  for (Algo a : {Algo::flash1, Algo::flash2, Algo::standard}) {
    Problem p;
    p.batch = 1;
    p.heads = 1;
    p.seqlen = 256;
    p.headdim = 64;
    p.pass = Pass::fwdbwd;
    Config c = make_config(a, p, h200);
    c.tiling = {64, 64};
    const double exec_s = best_of_three([&] { sink += simulate(c, CountMethod::execute).kernels.size(); });
    std::printf("execute %-8s N=256 d=64 fwdbwd: %.3f s (target < 1 s)\n", to_string(a).c_str(),
                exec_s);
  }
  return sink == 42 ? 1 : 0;
}
