// Tile steps (sim/tile_steps.h): the schedule's events of one head, grouped by a ScheduleSink.
#include "sim/tile_steps.h"

#include "sim/tensor.h"

namespace flashio::sim {
namespace {

enum class TileAxis { none, rows, columns };

// Which tile index a tensor's transfers carry (docs/schedules.md): Q-side tensors are cut into
// row tiles of Br rows, K-side ones into column tiles of Bc rows; S-sized ones only exist in
// standard attention.
TileAxis tile_axis(Tensor t) {
  switch (t) {
    case Tensor::Q: case Tensor::O: case Tensor::dO: case Tensor::dQ: case Tensor::stat_l:
    case Tensor::stat_m: case Tensor::lse: case Tensor::delta: case Tensor::o_accum:
    case Tensor::dq_accum:
      return TileAxis::rows;
    case Tensor::K: case Tensor::V: case Tensor::dK: case Tensor::dV:
      return TileAxis::columns;
    default:
      return TileAxis::none;
  }
}

class StepSink : public ScheduleSink {
 public:
  StepSink(const Config& c, KernelSteps& out)
      : problem_(c.problem), tiled_(c.algo != Algo::standard),
        grid_(tiled_ ? tile_grid(c) : TileGrid{}), out_(out) {}

  // Each thread block starts with nothing on chip.
  void start_block(int64_t block) {
    close();
    block_ = block;
    held_i_ = held_j_ = -1;
  }

  void transfer(const Transfer& t) override {
    if (computed_ && t.dir == Dir::read) close();
    if (computed_ && t.dir == Dir::write) wrote_after_compute_ = true;
    TileMove m{t, -1, t.moved_rows() * t.cols * tensor_element_bytes(t.tensor, problem_)};
    const TileAxis axis = tiled_ ? tile_axis(t.tensor) : TileAxis::none;
    if (axis == TileAxis::rows) held_i_ = m.tile = t.row0 / grid_.br;
    if (axis == TileAxis::columns) held_j_ = m.tile = t.row0 / grid_.bc;
    (t.dir == Dir::read ? read_bytes_ : write_bytes_) += m.bytes;
    open().moves.push_back(m);
  }

  void compute(const Flops& f) override {
    if (wrote_after_compute_) close();
    TileStep& s = open();
    if (s.computes.empty()) {
      s.moves_before_compute = s.moves.size();
      s.i = held_i_;
      s.j = held_j_;
    }
    s.computes.push_back(f);
    computed_ = true;
  }

  // Ends the open step (if any) with the tallies so far.
  void close() {
    if (!open_) return;
    TileStep& s = out_.steps.back();
    if (s.computes.empty()) {
      s.moves_before_compute = s.moves.size();
      s.i = held_i_;
      s.j = held_j_;
    }
    s.read_bytes = out_.read_bytes = read_bytes_;
    s.write_bytes = out_.write_bytes = write_bytes_;
    open_ = computed_ = wrote_after_compute_ = false;
  }

 private:
  TileStep& open() {
    if (!open_) {
      out_.steps.emplace_back();
      out_.steps.back().thread_block = block_;
      open_ = true;
    }
    return out_.steps.back();
  }

  const Problem& problem_;
  const bool tiled_;
  const TileGrid grid_;  // (standard's tiling may be unset)
  KernelSteps& out_;
  int64_t block_ = 0, held_i_ = -1, held_j_ = -1;
  int64_t read_bytes_ = 0, write_bytes_ = 0;
  bool open_ = false, computed_ = false, wrote_after_compute_ = false;
};

}  // namespace

Flops TileStep::flops() const {
  Flops total;
  for (const Flops& f : computes) total += f;
  return total;
}

std::vector<KernelSteps> tile_steps(const Config& config) {
  validate(config);
  std::vector<KernelSteps> kernels;
  for (KernelSchedule& schedule : build_schedule(config)) {
    KernelSteps k;
    k.schedule = std::move(schedule);
    StepSink sink(config, k);
    for (int64_t block = 0; block < k.schedule.blocks_per_head; ++block) {
      sink.start_block(block);
      k.schedule.emit_block(0, block, sink);
    }
    sink.close();
    kernels.push_back(std::move(k));
  }
  return kernels;
}

}  // namespace flashio::sim
