// Independent jobs on every core, with the caller's progress callback and cancel: the one way
// the workbench spreads its sweeps (the closed form's configurations, the L2 model's replays)
// over the machine's threads.
#pragma once
#include <functional>

#include "gui/workbench_data.h"

namespace flashio::gui {

// Runs job(0) … job(count − 1), each once, on up to hardware_concurrency threads; the calling
// thread calls progress(done, count) about every 20 ms and, when it returns false, lets the
// running jobs finish and starts no more. Returns false when cancelled (some jobs not run).
// Jobs must not share mutable state except through their own index.
bool run_parallel(int count, const std::function<void(int)>& job, const ProgressFn& progress);

}  // namespace flashio::gui
