#include "sim/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace flashio::sim {

bool parallel_for(int count, const std::function<void(int)>& job,
                  const std::function<bool(int, int)>& progress) {
  std::atomic<int> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;  // guards done and failure
  std::condition_variable changed;
  int done = 0;
  std::exception_ptr failure;
  auto work = [&] {
    for (int k = next++; k < count && !stop; k = next++) {
      try {
        job(k);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (!failure) failure = std::current_exception();
        stop = true;
      }
      {
        const std::lock_guard<std::mutex> lock(mutex);
        ++done;
      }
      changed.notify_one();
    }
  };
  const int threads = std::max(1, std::min(count, static_cast<int>(std::thread::hardware_concurrency())));
  std::vector<std::thread> workers;
  bool cancelled = false;
  if (!progress) {
    for (int t = 1; t < threads; ++t) workers.emplace_back(work);
    work();
  } else {
    for (int t = 0; t < threads; ++t) workers.emplace_back(work);
    std::unique_lock<std::mutex> lock(mutex);
    while (done < count && !stop) {
      const int now = done;
      lock.unlock();
      if (!progress(now, count)) cancelled = stop = true;
      lock.lock();
      changed.wait_for(lock, std::chrono::milliseconds(20), [&] { return done >= count || stop; });
    }
  }
  for (std::thread& w : workers) w.join();
  if (failure) std::rethrow_exception(failure);
  if (cancelled) return false;
  if (progress) progress(count, count);
  return true;
}

}  // namespace flashio::sim
