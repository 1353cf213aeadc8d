// The walk: visit every step of one head's schedule and add up its transfers and FLOPs
// (docs/architecture.md, "Ways to count", 2). Every head runs the same schedule, so one head is
// walked and multiplied by B·H (one head of each run of alike heads, with per-sequence key lengths).
#include "sim/schedule.h"
#include "sim/simulate.h"

namespace flashio::sim {
namespace {

class CountingSink : public ScheduleSink {
 public:
  explicit CountingSink(const Problem& p) {
    for (int t = 0; t < kTensorCount; ++t)
      element_bytes_[t] = tensor_element_bytes(static_cast<Tensor>(t), p);
  }
  void transfer(const Transfer& t) override {
    counts.add_transfer(t.tensor, t.dir,
                        checked_mul(t.moved_rows(), t.cols, element_bytes_[static_cast<int>(t.tensor)]));
  }
  void compute(const Flops& f) override { counts.flops += f; }
  Counts counts;

 private:
  int64_t element_bytes_[kTensorCount] = {};
};

}  // namespace

std::vector<KernelCounts> walk_counts(const Config& config) {
  std::vector<KernelCounts> out;
  for (const KernelSchedule& k : build_schedule(config)) {
    Counts counts;
    for (const HeadRun& run : k.runs()) {  // one head of each run of heads that run alike
      CountingSink sink(config.problem);
      for (int64_t b = 0; b < k.blocks_per_head; ++b) k.emit_block(run.first, b, sink);
      counts += sink.counts.scaled(run.count);
    }
    out.push_back({k.kind, counts, k.grid_blocks(), k.threads_per_block, k.smem_bytes});
  }
  return out;
}

}  // namespace flashio::sim
