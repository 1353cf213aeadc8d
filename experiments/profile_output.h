// What `flashio profile` and `flashio validate` print besides the rows (cmd_profile.cpp): the
// counters' notes, the profiler's notes on stderr, and the occupancy file.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "experiments/output.h"
#include "profiler/profile_run.h"

namespace flashio::cli {

// The notes under a table: how each measured quantity was read, then the profiler's own.
TableNotes profile_notes(const std::vector<profiler::Profiler::Note>& profiler_notes);
// The profiler's notes a user should see (all but its set-up line), one per line on `err`.
void report_profiler_notes(const profiler::Profiler& profiler, std::ostream& err, const std::string& who);
// --occupancy-out: the blocks per SM of every kernel profiled, in sim/data/h200_occupancy.csv's
// format, through a temporary file renamed on success. Throws UsageError naming the file.
void write_occupancy(const profiler::Profiler& profiler, const std::string& path, std::ostream& standard_output);

}  // namespace flashio::cli
