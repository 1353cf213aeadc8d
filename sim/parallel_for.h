// parallel_for: independent jobs on every core, the one way flashio spreads work over threads
// (the L2 model's kernels of a pass, the GUI's sweeps and replays).
#pragma once
#include <functional>

namespace flashio::sim {

// Runs job(0) … job(count − 1), each once, on up to hardware_concurrency threads, starting them
// in index order. With `progress`, the calling thread only watches: it calls progress(done,
// count) about every 20 ms and, when that returns false, lets the running jobs finish and starts
// no more; without it, the calling thread works too. The first exception a job throws is
// rethrown once every thread has stopped (no job starts after it). Returns false when cancelled.
// Jobs must share no mutable state except through their own index.
bool parallel_for(int count, const std::function<void(int)>& job,
                  const std::function<bool(int done, int count)>& progress = {});

}  // namespace flashio::sim
