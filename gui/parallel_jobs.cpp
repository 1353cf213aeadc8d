#include "gui/parallel_jobs.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace flashio::gui {

bool run_parallel(int count, const std::function<void(int)>& job, const ProgressFn& progress) {
  std::atomic<int> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::condition_variable changed;
  int done = 0;  // guarded by mutex
  auto work = [&] {
    for (int k = next++; k < count && !stop; k = next++) {
      job(k);
      {
        const std::lock_guard<std::mutex> lock(mutex);
        ++done;
      }
      changed.notify_one();
    }
  };
  const int threads = std::max(1, std::min<int>(count, static_cast<int>(std::thread::hardware_concurrency())));
  std::vector<std::thread> workers;
  if (!progress) {
    // Nothing to report: the calling thread is one of the workers.
    for (int t = 1; t < threads; ++t) workers.emplace_back(work);
    work();
  } else {
    for (int t = 0; t < threads; ++t) workers.emplace_back(work);
    std::unique_lock<std::mutex> lock(mutex);
    while (done < count && !stop) {
      const int now = done;
      lock.unlock();
      if (!progress(now, count)) stop = true;
      lock.lock();
      changed.wait_for(lock, std::chrono::milliseconds(20), [&] { return done >= count; });
    }
  }
  for (std::thread& w : workers) w.join();
  if (stop) return false;
  if (progress) progress(count, count);
  return true;
}

}  // namespace flashio::gui
