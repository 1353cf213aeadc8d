// Where results go and in which format (docs/rows.md): csv and json carry
// every row with the columns of sim::row_columns(); json adds a context block; the table is for
// people and shows the total rows unless --kernels is given.
#pragma once
#include <cstdint>
#include <fstream>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "sim/hardware.h"
#include "sim/row.h"

struct stat;  // <sys/stat.h>

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

// A stream buffer writing to a file descriptor (which it does not own) that keeps the errno of
// the first failed write, so that a full disk or a device that refuses the bytes is reported by
// name and reason (experiments/README.md, "Errors and exit status"). main() wraps standard
// output in one. A failed write makes the stream bad; nothing more is written after it.
class FdStreambuf : public std::streambuf {
 public:
  // `name` is what messages call the destination: "standard output", "--out 'rows.csv'".
  FdStreambuf(int fd, std::string name);
  FdStreambuf(const FdStreambuf&) = delete;
  FdStreambuf& operator=(const FdStreambuf&) = delete;
  const std::string& name() const { return name_; }
  int error() const { return error_; }  // errno of the first failed write; 0 when none

 protected:
  int_type overflow(int_type ch) override;
  int sync() override;

 private:
  bool drain();  // writes the buffered bytes; false (and error_ set) when a write fails
  int fd_;
  std::string name_;
  int error_ = 0;
  std::vector<char> buffer_;
};

// "<destination>: writing failed (<reason>)" for a stream that has failed (a write or a flush);
// check_written throws it as a UsageError. The results writers check as they go, so a sweep
// into a full disk stops early; run_cli checks standard output once more at the end.
std::string write_failure(const std::ostream& out);
void check_written(const std::ostream& out);

// Where a subcommand's results (or another file it writes) go; experiments/README.md, "Output":
//   - empty path: standard output;
//   - a new file, or an existing regular file: written to a temporary file `.flashio-XXXXXX` in
//     the same directory, which commit() renames over the file (atomic; an existing file keeps
//     its mode and owner; one without write permission is refused). A symlink is followed: what
//     it resolves to is replaced, the link stays;
//   - a character or block device, a FIFO (opened without blocking: no reader is an error): written
//     straight through, never replaced.
// Destroyed without commit (an error), or on SIGINT, SIGTERM and SIGHUP, the temporary is removed,
// so a failed or interrupted run leaves an existing file as it was and creates none.
class OutputTarget {
 public:
  // Throws UsageError naming `option` when the destination cannot be written.
  OutputTarget(const std::string& path, std::ostream& standard_output,
               const std::string& option = "--out");
  ~OutputTarget();
  OutputTarget(const OutputTarget&) = delete;
  OutputTarget& operator=(const OutputTarget&) = delete;

  std::ostream& stream() { return path_.empty() ? standard_output_ : file_; }
  void commit();  // throws UsageError when a write, the close or the rename fails

 private:
  [[noreturn]] void fail(const std::string& what) const;  // throws "<option> '<path>'<what>"
  // `existing`: the file replaced (its mode and owner are kept); null for a new file.
  void open_replacement(const std::string& final_path, const struct ::stat* existing);
  void open_straight(const struct ::stat& existing);
  void discard() noexcept;  // closes the file, removes the temporary

  std::string path_, option_;
  std::string final_path_;  // the file the temporary replaces (a symlink resolved)
  std::string temp_path_;   // empty when writing straight through
  int temp_slot_ = -1;      // where the signal handler finds temp_path_
  int fd_ = -1;
  std::ostream& standard_output_;
  std::unique_ptr<FdStreambuf> buffer_;
  std::ostream file_{nullptr};
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
