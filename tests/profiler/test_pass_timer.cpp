// The one timer's arithmetic and input checks (no GPU needed): the median is the middle run, or
// the mean of the two middle runs for an even count; min and max are the extremes.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "profiler/pass_timer.h"

using namespace flashio::profiler;

TEST_CASE("summarize_times: an odd count gives the middle run, an even count the mean of the two "
          "middle runs (not the upper one), whatever the order", "[timer]") {
  const Timing odd = summarize_times({5.0, 1.0, 4.0, 2.0, 3.0});
  CHECK(odd.time_ms == 3.0);
  CHECK(odd.min_ms == 1.0);
  CHECK(odd.max_ms == 5.0);
  CHECK(odd.repeats == 5);
  const Timing even = summarize_times({0.7, 0.1, 0.4, 0.2, 0.9, 0.3, 0.8, 0.5, 0.6, 1.0});
  CHECK(even.time_ms == Approx(0.55));
  CHECK(even.min_ms == 0.1);
  CHECK(even.max_ms == 1.0);
  CHECK(even.repeats == 10);
  CHECK(summarize_times({2.5}).time_ms == 2.5);
  CHECK_THROWS_AS(summarize_times({}), std::invalid_argument);
}

TEST_CASE("time_runs refuses fewer than 10 timed runs and a negative warm-up before it touches "
          "the GPU", "[timer]") {
  int runs = 0;
  auto run = [&](cudaStream_t) { ++runs; };
  CHECK_THROWS_WITH(time_runs(run, {}, 3, kMinTimedRuns - 1, nullptr),
                    Catch::Matchers::Contains("at least 10 timed runs (got 9)"));
  CHECK_THROWS_WITH(time_runs(run, {}, -1, kMinTimedRuns, nullptr), Catch::Matchers::Contains("warmup"));
  CHECK(runs == 0);
}
