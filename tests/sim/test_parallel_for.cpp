// sim::parallel_for: every job once, a job's exception comes back to the caller, a cancel from the
// progress callback starts no more jobs.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "sim/parallel_for.h"

using namespace flashio::sim;

TEST_CASE("parallel_for runs each of its jobs exactly once, with and without a progress callback") {
  for (const int count : {0, 1, 7, 1000}) {
    for (const bool with_progress : {false, true}) {
      std::vector<std::atomic<int>> runs(static_cast<size_t>(count));
      int last_done = -1;
      const bool complete = parallel_for(
          count, [&](int k) { ++runs[static_cast<size_t>(k)]; },
          with_progress ? std::function<bool(int, int)>([&](int done, int total) {
            CHECK(total == count);
            CHECK(done >= last_done);
            last_done = done;
            return true;
          })
                        : std::function<bool(int, int)>{});
      CHECK(complete);
      for (const auto& r : runs) CHECK(r == 1);
      if (with_progress) CHECK(last_done == count);  // the final call reports all done
    }
  }
}

TEST_CASE("parallel_for rethrows a job's exception after every thread has stopped") {
  std::atomic<int> started{0};
  CHECK_THROWS_WITH(parallel_for(50,
                                 [&](int k) {
                                   ++started;
                                   if (k == 3) throw std::runtime_error("job 3 failed");
                                 }),
                    "job 3 failed");
  CHECK(started >= 4);
  CHECK(started <= 50);
}

TEST_CASE("parallel_for stops starting jobs when the progress callback says cancel, and reports it") {
  // Jobs of 1 ms: the first progress call (right after the threads start) cancels long before
  // the 1,000 would be done.
  std::atomic<int> started{0};
  const bool complete = parallel_for(
      1000,
      [&](int) {
        ++started;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      },
      [](int, int) { return false; });
  CHECK_FALSE(complete);
  CHECK(started < 1000);
}
