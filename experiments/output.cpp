#include "experiments/output.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "experiments/usage_error.h"
#include "experiments/value_list.h"

#ifndef FLASHIO_VERSION
#define FLASHIO_VERSION "unknown"
#endif

namespace flashio::cli {
namespace fs = std::filesystem;

void add_output_options(po::options_description& options) {
  options.add_options()
      ("format", po::value<std::string>(), "table, csv or json [table]")
      ("out", po::value<std::string>(), "write the results to FILE (replaced only on success) "
                                        "[standard output]")
      ("kernels", po::bool_switch(), "table: one row per kernel, not only each configuration's "
                                      "total (csv and json always have every row)");
}

OutputOptions read_output_options(const po::variables_map& vm) {
  OutputOptions o;
  if (vm.count("format")) {
    const std::string f = vm["format"].as<std::string>();
    if (f == "table") o.format = Format::table;
    else if (f == "csv") o.format = Format::csv;
    else if (f == "json") o.format = Format::json;
    else throw UsageError("--format '" + f + "' is unknown; allowed: table, csv, json");
  }
  if (vm.count("out")) {
    o.out_path = vm["out"].as<std::string>();
    if (o.out_path.empty()) throw UsageError("--out needs a file name");
  }
  if (vm.count("kernels")) o.all_kernels = vm["kernels"].as<bool>();
  return o;
}

// ---- OutputTarget ----------------------------------------------------------------------------

OutputTarget::OutputTarget(const std::string& path, std::ostream& standard_output)
    : path_(path), standard_output_(standard_output) {
  if (path_.empty()) return;
  const fs::path target(path_);
  std::error_code ec;
  if (fs::is_directory(target, ec))
    throw UsageError("--out '" + path_ + "' is a directory; give a file name");
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw UsageError("--out '" + path_ + "': directory '" + dir.string() +
                     "' does not exist; give a file in an existing, writable directory");
  // Same directory, so that the final rename is atomic and never crosses file systems.
  std::string temp_name = ".";
  temp_name += target.filename().string();
  temp_name += ".tmp-" + std::to_string(::getpid());
  temp_path_ = (dir / temp_name).string();
  file_.open(temp_path_, std::ios::out | std::ios::trunc);
  if (!file_)
    throw UsageError("--out '" + path_ + "': cannot write in '" + dir.string() + "' (" +
                     std::strerror(errno) + "); give a file in a writable directory");
}

OutputTarget::~OutputTarget() {
  if (!path_.empty() && !committed_) {
    file_.close();
    std::error_code ec;
    fs::remove(temp_path_, ec);
  }
}

void OutputTarget::commit() {
  if (path_.empty()) {
    standard_output_.flush();
    return;
  }
  file_.flush();
  const bool written = static_cast<bool>(file_);
  file_.close();
  std::error_code ec;
  if (written && !file_.fail()) fs::rename(temp_path_, path_, ec);
  if (!written || file_.fail() || ec) {
    fs::remove(temp_path_, ec);
    throw UsageError("--out '" + path_ + "': writing failed (" +
                     (ec ? ec.message() : std::string("disk full?")) + ")");
  }
  committed_ = true;
}

// ---- context ---------------------------------------------------------------------------------

nlohmann::json hardware_json(const sim::Hardware& hw) {
  return {{"name", hw.name},
          {"sram_bytes", hw.sram_bytes},
          {"smem_per_sm_bytes", hw.smem_per_sm_bytes},
          {"sm_count", hw.sm_count},
          {"l2_bytes", hw.l2_bytes},
          {"l2_line_bytes", hw.l2_line_bytes},
          {"l2_sector_bytes", hw.l2_sector_bytes},
          {"l2_ways", hw.l2_ways},
          {"l2_partitions", hw.l2_partitions},
          {"hbm_bytes_per_s", hw.hbm_bytes_per_s},
          {"tensor_flops_per_s", hw.tensor_flops_per_s},
          {"cuda_core_flops_per_s", hw.cuda_core_flops_per_s},
          {"exp_per_s", hw.exp_per_s}};
}

nlohmann::json context_json(const RunContext& c) {
  char date[32];
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
  std::string command;
  for (const auto& a : c.command_line) command += (command.empty() ? "" : " ") + a;
  nlohmann::json hw = nlohmann::json::array();
  for (const auto& h : c.hardware) hw.push_back(hardware_json(h));
  nlohmann::json j = {{"version", FLASHIO_VERSION},
                      {"subcommand", c.subcommand},
                      {"command_line", command},
                      {"hardware", hw},
                      {"date", date},
                      {"columns", sim::row_columns()}};
  if (!c.count_method.empty()) j["count"] = c.count_method;
  return j;
}

// ---- writers ---------------------------------------------------------------------------------

namespace {

class CsvWriter : public RowWriter {
 public:
  explicit CsvWriter(std::ostream& out) : out_(out) {}
  void write(const sim::Row& row) override {
    if (!started_) begin();
    out_ << sim::to_csv_line(row) << '\n';
  }
  void finish() override {
    if (!started_) begin();
    out_.flush();
  }

 private:
  void begin() {
    out_ << sim::csv_header() << '\n';
    started_ = true;
  }
  std::ostream& out_;
  bool started_ = false;
};

class JsonWriter : public RowWriter {
 public:
  JsonWriter(std::ostream& out, RunContext context) : out_(out), context_(std::move(context)) {}
  void write(const sim::Row& row) override {
    if (!started_) begin();
    out_ << (first_ ? "\n  " : ",\n  ") << sim::to_json(row).dump();
    first_ = false;
  }
  void finish() override {
    if (!started_) begin();
    out_ << "\n]}\n";
    out_.flush();
  }

 private:
  void begin() {
    out_ << "{\"context\": " << context_json(context_).dump() << ",\n\"rows\": [";
    started_ = true;
  }
  std::ostream& out_;
  RunContext context_;
  bool started_ = false, first_ = true;
};

class TableWriter : public RowWriter {
 public:
  TableWriter(std::ostream& out, bool all_kernels, TableNotes notes)
      : out_(out), all_kernels_(all_kernels), notes_(std::move(notes)) {}
  void write(const sim::Row& row) override {
    if (all_kernels_ || row.kernel == "total") rows_.push_back(row);
  }
  void finish() override { print_table(out_, rows_, all_kernels_, notes_); }

 private:
  std::ostream& out_;
  bool all_kernels_;
  TableNotes notes_;
  std::vector<sim::Row> rows_;
};

std::string fixed3(double v) {
  char buf[48];
  const double a = std::abs(v);
  std::snprintf(buf, sizeof buf,
                a >= 100  ? "%.0f"
                : a >= 10 ? "%.1f"
                : a >= 1  ? "%.2f"
                : a >= 0.1 ? "%.3f"
                           : "%.3g",
                v);
  return buf;
}

// A column of the table: its heading and how a row's cell is printed.
struct Column {
  std::string heading;
  bool numeric = false;
  std::function<std::string(const sim::Row&)> cell;
};

std::string optional_text(const std::optional<double>& v, std::string (*format)(double)) {
  return v ? format(*v) : "";
}

// Key columns except those a comparison with standard must ignore (standard ignores M and the
// tiling; the algorithm and kernel are what is compared).
std::string comparison_key(const sim::Row& r) {
  static const std::set<std::string> ignored = {"algo",    "kernel",  "sram_bytes",
                                                "block_r", "block_c", "block_mask"};
  std::string k;
  for (const auto& c : sim::key_columns())
    if (!ignored.count(c)) k += sim::cell(r, c) + "|";
  return k;
}

}  // namespace

void print_table(std::ostream& out, const std::vector<sim::Row>& all_rows, bool all_kernels,
                 const TableNotes& notes) {
  std::vector<const sim::Row*> rows;
  for (const auto& r : all_rows)
    if (all_kernels || r.kernel == "total") rows.push_back(&r);
  if (rows.empty()) {
    out << "(no rows)\n";
    return;
  }
  // Key columns that are the same in every row go into one heading line; the others become
  // columns. The algorithm always is a column.
  std::vector<Column> columns;
  std::string heading;
  auto varies = [&](const std::string& key) {
    for (const auto* r : rows)
      if (sim::cell(*r, key) != sim::cell(*rows.front(), key)) return true;
    return false;
  };
  for (const std::string& key : sim::key_columns()) {
    if (key == "block_c") continue;  // printed with block_r as Br×Bc
    const bool is_tiling = key == "block_r";
    const bool shown = key == "algo" || (key == "kernel" && all_kernels) || varies(key) ||
                       (is_tiling && varies("block_c"));
    if (shown) {
      if (is_tiling)
        columns.push_back({"Br×Bc", false, [](const sim::Row& r) {
                             if (r.algo == "standard") return std::string("-");  // ignores it
                             return r.block_r && r.block_c ? std::to_string(*r.block_r) + "×" +
                                                                 std::to_string(*r.block_c)
                                                           : std::string();
                           }});
      else if (key == "sram_bytes")
        columns.push_back({"M", false, [](const sim::Row& r) {
                             return r.sram_bytes ? format_size(*r.sram_bytes) : std::string();
                           }});
      else
        columns.push_back({key, key == "batch" || key == "heads" || key == "seqlen" ||
                                    key == "headdim" || key == "dropout",
                           [key](const sim::Row& r) { return sim::cell(r, key); }});
      continue;
    }
    const std::string value = sim::cell(*rows.front(), key);
    // Variant columns at their defaults say nothing; leave them out of the heading.
    if ((key == "mask" && value == "0") || (key == "dropout" && value == "0") ||
        (key == "block_mask" && value.empty()) || (key == "kernel" && value == "total"))
      continue;
    std::string shown_value = value;
    if (key == "sram_bytes" && rows.front()->sram_bytes) shown_value = format_size(*rows.front()->sram_bytes);
    if (is_tiling) shown_value = value + "×" + sim::cell(*rows.front(), "block_c");
    heading += (heading.empty() ? "" : "  ") + (is_tiling ? std::string("Br×Bc") : key) + "=" +
               shown_value;
  }

  auto any = [&](std::optional<double> sim::Row::*field) {
    for (const auto* r : rows)
      if ((*r).*field) return true;
    return false;
  };
  auto value_column = [&](const char* heading_text, std::optional<double> sim::Row::*field,
                          std::string (*format)(double)) {
    if (any(field))
      columns.push_back({heading_text, true, [field, format](const sim::Row& r) {
                           return optional_text(r.*field, format);
                         }});
  };
  value_column("FLOPs", &sim::Row::flops, format_flops);
  value_column("tensor FLOPs", &sim::Row::flops_tensor, format_flops);
  value_column("io read", &sim::Row::io_read_bytes, format_bytes);
  value_column("io write", &sim::Row::io_write_bytes, format_bytes);
  value_column("dram read", &sim::Row::dram_read_bytes, format_bytes);
  value_column("dram write", &sim::Row::dram_write_bytes, format_bytes);
  value_column("extra memory", &sim::Row::extra_memory_bytes, format_bytes);
  value_column("time ms", &sim::Row::time_ms, fixed3);
  value_column("TFLOP/s", &sim::Row::tflops, fixed3);

  // Against standard attention of the same problem, when the rows have it: how many times
  // fewer io bytes, and how many times faster by the predicted time.
  std::map<std::string, const sim::Row*> standard;
  for (const auto* r : rows)
    if (r->algo == "standard" && r->kernel == "total") standard.emplace(comparison_key(*r), r);
  bool compared = false;
  for (const auto* r : rows)
    compared |= r->algo != "standard" && r->kernel == "total" && standard.count(comparison_key(*r));
  if (compared) {
    auto ratio = [&standard](const sim::Row& r, auto get) -> std::string {
      if (r.kernel != "total") return "";
      const auto it = standard.find(comparison_key(r));
      if (it == standard.end()) return "";
      const auto base = get(*it->second), mine = get(r);
      if (!base || !mine || *mine <= 0) return "";
      return fixed3(*base / *mine) + "×";
    };
    columns.push_back({"io ÷ std", true, [ratio](const sim::Row& r) {
                         return ratio(r, [](const sim::Row& x) -> std::optional<double> {
                           if (!x.io_read_bytes || !x.io_write_bytes) return std::nullopt;
                           return *x.io_read_bytes + *x.io_write_bytes;
                         });
                       }});
    columns.push_back({"speedup", true, [ratio](const sim::Row& r) {
                         return ratio(r, [](const sim::Row& x) { return x.time_ms; });
                       }});
  }

  // Widths in characters (UTF-8 "×" and "÷" count as one).
  auto width = [](const std::string& s) {
    size_t w = 0;
    for (unsigned char ch : s) w += (ch & 0xC0) != 0x80;
    return w;
  };
  std::vector<std::vector<std::string>> cells(rows.size());
  std::vector<size_t> widths;
  for (const auto& c : columns) widths.push_back(width(c.heading));
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t k = 0; k < columns.size(); ++k) {
      cells[i].push_back(columns[k].cell(*rows[i]));
      widths[k] = std::max(widths[k], width(cells[i][k]));
    }
  auto print_line = [&](const std::vector<std::string>& line) {
    std::string text;
    for (size_t k = 0; k < columns.size(); ++k) {
      const std::string pad(widths[k] - width(line[k]), ' ');
      if (k) text += "  ";
      text += columns[k].numeric ? pad + line[k] : line[k] + (k + 1 < columns.size() ? pad : "");
    }
    out << text << '\n';
  };
  if (!heading.empty()) out << heading << "\n\n";
  std::vector<std::string> headings;
  for (const auto& c : columns) headings.push_back(c.heading);
  print_line(headings);
  size_t total_width = 0;
  for (size_t w : widths) total_width += w + 2;
  std::string rule;
  for (size_t k = 0; k + 2 < total_width; ++k) rule += "-";
  out << rule << '\n';
  for (const auto& line : cells) print_line(line);
  if (!notes.lines.empty()) out << '\n';
  for (const auto& line : notes.lines) out << line << '\n';
}

void check_table_size(const OutputOptions& options, int64_t rows) {
  if (options.format != Format::table) return;
  // At most every key column (Br×Bc as one), nine value columns and the two ratios to standard.
  const auto columns = static_cast<int64_t>(sim::key_columns().size()) + 11;
  if (rows > kMaxTableCells / columns)
    throw UsageError("--format table keeps every row until the end: up to " + std::to_string(rows) + " rows × " +
                     std::to_string(columns) + " columns here, more than its limit of " +
                     std::to_string(kMaxTableCells) + " cells; allowed: a smaller sweep, or --format csv or json "
                     "(written as they come)");
}

std::unique_ptr<RowWriter> make_row_writer(const OutputOptions& options, std::ostream& out,
                                           const RunContext& context, TableNotes notes) {
  switch (options.format) {
    case Format::csv: return std::make_unique<CsvWriter>(out);
    case Format::json: return std::make_unique<JsonWriter>(out, context);
    case Format::table: break;
  }
  return std::make_unique<TableWriter>(out, options.all_kernels, std::move(notes));
}

}  // namespace flashio::cli
