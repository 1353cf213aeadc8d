// What `flashio profile` and `flashio validate` share (defined in cmd_profile.cpp): their
// options and input checks, the profiler's set-up, the notes, and the occupancy file.
#pragma once
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "experiments/output.h"
#include "experiments/subcommand.h"
#include "profiler/profile_run.h"

namespace flashio::cli {

// --repeats, --warmup, --seed.
void add_profile_options(po::options_description& options);
// Reads and checks them; throws UsageError naming the option.
profiler::ProfileOptions read_profile_options(const Invocation& inv);
// The CUPTI session, set up before any output exists: no GPU, missing privileges or another
// CUPTI client end the run with one line (UsageError) and no file.
std::unique_ptr<profiler::Profiler> make_profiler();
// One configuration's measured rows; the profiler's usage errors become UsageError.
std::vector<sim::Row> profile_rows(profiler::Profiler& profiler, const sim::Config& config,
                                   const profiler::ProfileOptions& options);

// The notes under a table: how each measured quantity was read, then the profiler's own.
TableNotes profile_notes(const std::vector<profiler::Profiler::Note>& profiler_notes);
// The profiler's notes a user should see (all but its set-up line), one per line on `err`.
void report_profiler_notes(const profiler::Profiler& profiler, std::ostream& err, const std::string& who);
// --occupancy-out: the blocks per SM of every kernel profiled, in sim/data/h200_occupancy.csv's
// format, through a temporary file renamed on success. Throws UsageError naming the file.
void write_occupancy(const profiler::Profiler& profiler, const std::string& path, std::ostream& standard_output);

}  // namespace flashio::cli
