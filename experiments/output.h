// Where results go and in which format (docs/rows.md): csv and json carry
// every row with the columns of sim::row_columns(); json adds a context block; the table is for
// people and shows the total rows unless --kernels is given.
#pragma once
#include <cstdint>
#include <fstream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "sim/hardware.h"
#include "sim/row.h"

namespace flashio::cli {

namespace po = boost::program_options;

enum class Format { table, csv, json };

struct OutputOptions {
  Format format = Format::table;
  std::string out_path;      // empty: standard output
  bool all_kernels = false;  // table: one row per kernel, not only the totals
};

void add_output_options(po::options_description& options);
OutputOptions read_output_options(const po::variables_map& options);  // throws UsageError

// Standard output, or a file written through a temporary file in the same directory that is
// renamed over the named file on commit(); destroyed without commit (an error), it removes the
// temporary, so a failed run leaves an existing file as it was and creates none.
class OutputTarget {
 public:
  // Throws UsageError naming --out when the file's directory cannot be written.
  OutputTarget(const std::string& path, std::ostream& standard_output);
  ~OutputTarget();
  OutputTarget(const OutputTarget&) = delete;
  OutputTarget& operator=(const OutputTarget&) = delete;

  std::ostream& stream() { return path_.empty() ? standard_output_ : file_; }
  void commit();  // throws UsageError when the write or the rename fails

 private:
  std::string path_, temp_path_;
  std::ostream& standard_output_;
  std::ofstream file_;
  bool committed_ = false;
};

// The json context block.
struct RunContext {
  std::string subcommand;
  std::vector<std::string> command_line;
  std::vector<sim::Hardware> hardware;
  std::string count_method;  // formula, walk, execute, cache; empty when not counted
};
nlohmann::json context_json(const RunContext& context);
nlohmann::json hardware_json(const sim::Hardware& hw);

// Notes a table prints under itself: how each number was computed (docs/architecture.md,
// "Conventions").
struct TableNotes {
  std::vector<std::string> lines;
};

// Streams rows out: csv and json write each row as it comes (so sweeps of millions of rows
// need no memory); the table collects them and prints on finish(). Nothing is written before
// the first row, so a run that fails before producing any row prints nothing.
class RowWriter {
 public:
  virtual ~RowWriter() = default;
  virtual void write(const sim::Row& row) = 0;
  virtual void finish() = 0;
};
std::unique_ptr<RowWriter> make_row_writer(const OutputOptions& options, std::ostream& out,
                                           const RunContext& context, TableNotes notes = {});

// The table keeps every row it shows until the end (its column widths depend on all of them):
// at most this many cells, rows × columns (a few hundred MB at the limit; experiments/README.md,
// "Limits"). csv and json stream and have no such limit.
constexpr int64_t kMaxTableCells = int64_t{1} << 22;
// Throws UsageError naming --format when a table of up to `rows` rows would pass
// kMaxTableCells; nothing for csv and json. Called before the sweep starts.
void check_table_size(const OutputOptions& options, int64_t rows);

// The people's table alone (used by the table writer and by subcommands that print several).
void print_table(std::ostream& out, const std::vector<sim::Row>& rows, bool all_kernels,
                 const TableNotes& notes);

}  // namespace flashio::cli
