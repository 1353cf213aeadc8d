#include "sim/row.h"
#include <filesystem>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/errors.h"
#include "sim/kernel_choice.h"
#include "sim/text_file.h"
#include "sim/simulate.h"
#include "sim/trim.h"

namespace flashio::sim {
namespace {

std::string number(double v) {
  char buf[64];
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.0e15)
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  else
    std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// A cell as RFC 4180 writes it: quoted when it holds a comma, a quote or a line break (a
// hardware name or a mask file's path may), its quotes doubled; other cells as they are.
std::string quoted_csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char ch : text) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

// The fields of one record, read back as csv_field writes them. `complete` is false when the
// text ends inside a quoted field (the field holds a line break; the caller appends the next
// line and splits again).
std::vector<std::string> split_csv_record(const std::string& text, bool& complete) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch != '"') cur += ch;
      else if (i + 1 < text.size() && text[i + 1] == '"') cur += text[++i];
      else quoted = false;
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (ch != '\r') {
      cur += ch;
    }
  }
  out.push_back(cur);
  complete = !quoted;
  return out;
}

std::string opt(const std::optional<double>& v) { return v ? number(*v) : ""; }
std::string opt(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : ""; }

using Real = std::optional<double> Row::*;
const std::vector<std::pair<std::string, Real>>& value_fields() {
  static const std::vector<std::pair<std::string, Real>> f = {
      {"flops", &Row::flops},
      {"flops_tensor", &Row::flops_tensor},
      {"flops_exp", &Row::flops_exp},
      {"flops_other", &Row::flops_other},
      {"io_read_bytes", &Row::io_read_bytes},
      {"io_write_bytes", &Row::io_write_bytes},
      {"dram_read_bytes", &Row::dram_read_bytes},
      {"dram_write_bytes", &Row::dram_write_bytes},
      {"extra_memory_bytes", &Row::extra_memory_bytes},
      {"time_ms", &Row::time_ms},
      {"tflops", &Row::tflops}};
  return f;
}

// The kernel column's spelling of the configuration's whole pass.
constexpr const char* kTotalKernel = "total";

std::string allowed_kernels() {
  std::string text = kTotalKernel;
  for (KernelKind k : all_kernel_kinds()) text += ", " + to_string(k);
  return text;
}

}  // namespace

std::string kernel_text(const std::optional<KernelKind>& kernel) {
  return kernel ? to_string(*kernel) : kTotalKernel;
}

std::string window_text(int64_t side) { return side == kNoWindow ? "none" : std::to_string(side); }

const std::vector<std::string>& key_columns() {
  static const std::vector<std::string> k = {
      "source", "algo",   "pass",       "kernel",    "batch",   "heads",
      "seqlen", "headdim", "dtype",     "causal",    "sram_bytes", "block_r",
      "block_c", "hw",    "mask",       "dropout",   "block_mask", "kv_heads",
      "seqlen_k", "gqa_pack", "splits", "page_size", "lengths", "varlen", "window_left", "window_right",
      "kernel_impl"};
  return k;
}

const std::vector<std::string>& row_columns() {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> c = key_columns();
    for (const auto& [name, field] : value_fields()) c.push_back(name);
    return c;
  }();
  return all;
}

std::string cell(const Row& r, const std::string& col) {
  if (col == "source") return to_string(r.source);
  if (col == "algo") return to_string(r.algo);
  if (col == "pass") return to_string(r.pass);
  if (col == "kernel") return kernel_text(r.kernel);
  if (col == "batch") return std::to_string(r.batch);
  if (col == "heads") return std::to_string(r.heads);
  if (col == "seqlen") return std::to_string(r.seqlen);
  if (col == "headdim") return std::to_string(r.headdim);
  if (col == "dtype") return to_string(r.dtype);
  if (col == "causal") return std::to_string(r.causal);
  if (col == "sram_bytes") return opt(r.sram_bytes);
  if (col == "block_r") return opt(r.block_r);
  if (col == "block_c") return opt(r.block_c);
  if (col == "hw") return r.hw;
  if (col == "mask") return std::to_string(r.mask);
  if (col == "dropout") return number(r.dropout);
  if (col == "block_mask") return r.block_mask;
  if (col == "kv_heads") return std::to_string(r.kv_heads);
  if (col == "seqlen_k") return std::to_string(r.seqlen_k);
  if (col == "gqa_pack") return std::to_string(r.gqa_pack);
  if (col == "splits") return std::to_string(r.splits);
  if (col == "page_size") return std::to_string(r.page_size);
  if (col == "lengths") return r.lengths;
  if (col == "varlen") return std::to_string(r.varlen);
  if (col == "window_left") return window_text(r.window_left);
  if (col == "window_right") return window_text(r.window_right);
  if (col == "kernel_impl") return r.kernel_impl ? to_string(*r.kernel_impl) : "";
  for (const auto& [name, field] : value_fields())
    if (name == col) return opt(r.*field);
  return "";
}

Row config_row(const Config& c, RowSource source) {
  Row base;
  base.source = source;
  base.algo = row_algo(c.algo);
  base.pass = c.problem.pass;
  base.kernel.reset();  // kernel=total
  base.batch = c.problem.batch;
  base.heads = c.problem.heads;
  base.seqlen = c.problem.seqlen;
  base.headdim = c.problem.headdim;
  base.dtype = c.problem.dtype;
  base.causal = c.problem.causal ? 1 : 0;
  base.sram_bytes = c.sram_bytes;
  base.block_r = c.tiling.block_r;
  base.block_c = c.tiling.block_c;
  base.hw = c.hw.name;
  base.mask = c.problem.mask ? 1 : 0;
  base.dropout = c.problem.dropout;
  base.block_mask = c.block_mask.text;
  base.kv_heads = c.problem.kv_heads_count();
  base.seqlen_k = c.problem.keys();
  base.gqa_pack = c.gqa_pack ? 1 : 0;
  base.splits = c.splits;
  base.page_size = c.page_size;
  base.lengths = c.problem.key_lengths.source;
  base.varlen = c.problem.varlen ? 1 : 0;
  base.window_left = c.problem.window_left;
  base.window_right = c.problem.window_right;
  base.kernel_impl = row_kernel_impl(c);
  return base;
}

std::vector<Row> rows_from_result(const SimResult& res, std::optional<RowSource> source) {
  const Row base = config_row(
      res.config,
      source.value_or(res.method == CountMethod::cache ? RowSource::cache : RowSource::model));

  auto fill = [](Row& row, const Counts& counts, double time_ms) {
    row.dram_read_bytes.reset();
    row.dram_write_bytes.reset();
    row.flops_tensor = static_cast<double>(counts.flops.tensor);
    row.flops_exp = static_cast<double>(counts.flops.exp);
    row.flops_other = static_cast<double>(counts.flops.other);
    row.io_read_bytes = static_cast<double>(counts.io_read_bytes());
    row.io_write_bytes = static_cast<double>(counts.io_write_bytes());
    row.time_ms = time_ms;
  };
  std::vector<Row> rows;
  for (size_t i = 0; i < res.kernels.size(); ++i) {
    Row r = base;
    r.kernel = res.kernels[i].kind;
    fill(r, res.kernels[i].counts, i < res.kernel_time_ms.size() ? res.kernel_time_ms[i] : 0.0);
    if (i < res.kernel_dram.size()) {
      r.dram_read_bytes = static_cast<double>(res.kernel_dram[i].read_bytes);
      r.dram_write_bytes = static_cast<double>(res.kernel_dram[i].write_bytes);
    }
    rows.push_back(std::move(r));
  }
  Row total = base;
  total.kernel.reset();
  fill(total, res.total, res.time_ms);
  if (!res.kernel_dram.empty()) {
    total.dram_read_bytes = static_cast<double>(res.total_dram.read_bytes);
    total.dram_write_bytes = static_cast<double>(res.total_dram.write_bytes);
  }
  total.flops = res.convention_flops;
  total.extra_memory_bytes = static_cast<double>(res.extra_memory_bytes);
  if (res.time_ms > 0) total.tflops = res.convention_flops / (res.time_ms * 1e-3) / 1e12;
  rows.push_back(std::move(total));
  return rows;
}

std::string csv_header() {
  std::string h;
  for (const auto& c : row_columns()) {
    if (!h.empty()) h += ',';
    h += c;
  }
  return h;
}

std::string to_csv_line(const Row& r) {
  std::string line;
  bool first = true;
  for (const auto& c : row_columns()) {
    if (!first) line += ',';
    first = false;
    line += quoted_csv_field(cell(r, c));
  }
  return line;
}

std::string csv_field(const std::string& text) { return quoted_csv_field(text); }

nlohmann::json to_json(const Row& r) {
  nlohmann::json j;
  j["source"] = to_string(r.source);
  j["algo"] = to_string(r.algo);
  j["pass"] = to_string(r.pass);
  j["kernel"] = kernel_text(r.kernel);
  j["batch"] = r.batch;
  j["heads"] = r.heads;
  j["seqlen"] = r.seqlen;
  j["headdim"] = r.headdim;
  j["dtype"] = to_string(r.dtype);
  j["causal"] = r.causal;
  j["sram_bytes"] = r.sram_bytes ? nlohmann::json(*r.sram_bytes) : nlohmann::json(nullptr);
  j["block_r"] = r.block_r ? nlohmann::json(*r.block_r) : nlohmann::json(nullptr);
  j["block_c"] = r.block_c ? nlohmann::json(*r.block_c) : nlohmann::json(nullptr);
  j["hw"] = r.hw;
  j["mask"] = r.mask;
  j["dropout"] = r.dropout;
  j["block_mask"] = r.block_mask;
  j["kv_heads"] = r.kv_heads;
  j["seqlen_k"] = r.seqlen_k;
  j["gqa_pack"] = r.gqa_pack;
  j["splits"] = r.splits;
  j["page_size"] = r.page_size;
  j["lengths"] = r.lengths;
  j["varlen"] = r.varlen;
  j["window_left"] = window_text(r.window_left);
  j["window_right"] = window_text(r.window_right);
  j["kernel_impl"] = r.kernel_impl ? to_string(*r.kernel_impl) : "";
  for (const auto& [name, field] : value_fields())
    j[name] = (r.*field) ? nlohmann::json(*(r.*field)) : nlohmann::json(nullptr);
  return j;
}

std::vector<Row> read_rows_csv(std::istream& in, const std::string& name) {
  std::string line;
  int64_t line_no = 0;
  auto fail = [&](const std::string& why) {
    throw InvalidInput(name + ":" + std::to_string(line_no) + ": " + why);
  };
  // A record may span lines where a quoted field holds a line break.
  auto split = [&](std::string record) {
    bool complete = false;
    std::vector<std::string> fields = split_csv_record(record, complete);
    std::string more;
    while (!complete && std::getline(in, more)) {
      ++line_no;
      record += "\n" + more;
      fields = split_csv_record(record, complete);
    }
    if (!complete) fail("a quoted field is not closed before the end of the file");
    return fields;
  };
  std::vector<std::string> header;
  while (header.empty() && std::getline(in, line)) {
    ++line_no;
    if (line_no == 1) line = std::string(without_utf8_bom(line));
    if (line.empty() || line[0] == '#') continue;
    header = split(line);
  }
  if (header.empty()) fail("no header line; expected the columns of the row schema (source,algo,...)");
  // `flashio compare` output (docs/rows.md): the key columns and, per quantity, predicted,
  // measured and relative error, no source column. Its measured side is read as measured rows:
  // time_measured as time_ms, flops_measured as flops_tensor (compare's FLOPs are the tensor
  // FLOPs), io_measured and dram_measured as the totals they are (io_total_bytes,
  // dram_total_bytes: compare keeps no read/write split).
  const bool compare_output = std::find(header.begin(), header.end(), "source") == header.end() &&
                              std::find(header.begin(), header.end(), "predicted_source") != header.end();
  if (compare_output)
    for (std::string& col : header) {
      if (col == "time_measured") col = "time_ms";
      else if (col == "flops_measured") col = "flops_tensor";
      else if (col == "io_measured") col = "io_total_bytes";
      else if (col == "dram_measured") col = "dram_total_bytes";
      else if (col.find("_predicted") != std::string::npos || col.rfind("rel_err_", 0) == 0) col = "(compare) " + col;
    }
  // The identity columns say what a row is; without one a row cannot be joined or drawn.
  static const std::vector<std::string> identity = {"source", "algo", "pass", "kernel", "dtype"};
  for (const auto& required : identity)
    if (!(compare_output && required == "source"))
    if (std::find(header.begin(), header.end(), required) == header.end()) {
      std::string all;
      for (const auto& c : identity) all += (all.empty() ? "" : ", ") + c;
      fail("header has no '" + required + "' column; not a flashio rows file (required: " + all + ")");
    }

  std::vector<Row> rows;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line == "\r" || line[0] == '#') continue;
    const auto fields = split(line);
    if (fields.size() != header.size())
      fail("has " + std::to_string(fields.size()) + " fields, the header has " +
           std::to_string(header.size()));
    Row r;
    if (compare_output) r.source = RowSource::measured;
    for (size_t i = 0; i < header.size(); ++i) {
      const std::string& col = header[i];
      const std::string& v = fields[i];
      auto as_int = [&]() -> int64_t {
        try {
          size_t used = 0;
          const double x = std::stod(v, &used);
          // Within int64_t: casting a double beyond ±2^63 is undefined.
          if (used != v.size() || x != std::floor(x) || !(std::abs(x) < 9.2e18)) throw std::invalid_argument("");
          return static_cast<int64_t>(x);
        } catch (const std::logic_error&) {
          fail("column '" + col + "': '" + v + "' is not an integer");
        }
        return 0;
      };
      auto as_real = [&]() -> std::optional<double> {
        if (v.empty()) return std::nullopt;
        try {
          size_t used = 0;
          const double x = std::stod(v, &used);
          if (used != v.size()) throw std::invalid_argument("");
          // A count or a time is finite; nan and inf would turn every comparison into nan.
          if (!std::isfinite(x))
            fail("column '" + col + "': '" + v + "' is not a finite number");
          return x;
        } catch (const std::logic_error&) {
          fail("column '" + col + "': '" + v + "' is not a number");
        }
        return std::nullopt;
      };
      // An identity cell must be one of its spellings; the message lists them.
      auto spelled = [&](const auto& parsed, const char* what, const std::string& allowed) {
        if (!parsed) fail("column '" + col + "': '" + v + "' is not " + what + "; allowed: " + allowed);
        return *parsed;
      };
      if (col == "source") r.source = spelled(parse_row_source(v), "a source", allowed_row_sources());
      else if (col == "algo") r.algo = spelled(parse_row_algo(v), "an algo", allowed_row_algos());
      else if (col == "pass") r.pass = spelled(parse_pass(v), "a pass", allowed_passes());
      else if (col == "kernel") {
        if (v == kTotalKernel) r.kernel.reset();
        else r.kernel = spelled(parse_kernel_kind(v), "a kernel", allowed_kernels());
      }
      else if (col == "batch") r.batch = as_int();
      else if (col == "heads") r.heads = as_int();
      else if (col == "seqlen") r.seqlen = as_int();
      else if (col == "headdim") r.headdim = as_int();
      else if (col == "dtype") r.dtype = spelled(parse_dtype(v), "a dtype", allowed_dtypes());
      else if (col == "causal") r.causal = static_cast<int>(as_int());
      else if (col == "sram_bytes") { if (!v.empty()) r.sram_bytes = as_int(); }
      else if (col == "block_r") { if (!v.empty()) r.block_r = as_int(); }
      else if (col == "block_c") { if (!v.empty()) r.block_c = as_int(); }
      else if (col == "hw") r.hw = v;
      else if (col == "mask") r.mask = v.empty() ? 0 : static_cast<int>(as_int());
      else if (col == "dropout") r.dropout = v.empty() ? 0.0 : as_real().value_or(0.0);
      else if (col == "block_mask") r.block_mask = v;
      else if (col == "kv_heads") r.kv_heads = v.empty() ? 0 : as_int();
      else if (col == "seqlen_k") r.seqlen_k = v.empty() ? 0 : as_int();
      else if (col == "gqa_pack") r.gqa_pack = v.empty() ? 1 : static_cast<int>(as_int());
      else if (col == "splits") r.splits = v.empty() ? 1 : as_int();
      else if (col == "page_size") r.page_size = v.empty() ? 0 : as_int();
      else if (col == "lengths") r.lengths = v;
      else if (col == "varlen") r.varlen = v.empty() ? 0 : static_cast<int>(as_int());
      else if (col == "window_left" || col == "window_right") {
        int64_t side = kNoWindow;
        if (!v.empty() && v != "none") {
          side = as_int();
          if (side < 0) fail("column '" + col + "': '" + v + "' is not a window side; allowed: a number of keys >= 0 or none");
        }
        (col == "window_left" ? r.window_left : r.window_right) = side;
      }
      else if (col == "kernel_impl") {
        if (!v.empty()) r.kernel_impl = spelled(parse_mma_kind(v), "a kernel family", allowed_mma_kinds());
      }
      else if (col == "io_total_bytes") r.io_total_bytes = as_real();
      else if (col == "dram_total_bytes") r.dram_total_bytes = as_real();
      else {
        for (const auto& [name, field] : value_fields())
          if (name == col) r.*field = as_real();
        // Columns outside the schema (a script's own extra columns) are ignored here.
      }
    }
    // Files written before the shapes' columns (or without them) hold square attention with a
    // K/V head per query head.
    if (r.kv_heads == 0) r.kv_heads = r.heads;
    if (r.seqlen_k == 0) r.seqlen_k = r.seqlen;
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<Row> read_rows_json(const std::string& text, const std::string& name) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput(name + ": not JSON (" + e.what() + ")");
  }
  if (!doc.is_object() || !doc.contains("rows") || !doc["rows"].is_array())
    throw InvalidInput(name + ": no \"rows\" array; expected the --format json output of a flashio subcommand");
  // Each row becomes a csv line of the same cells, so one reader checks both formats.
  std::vector<std::string> columns;
  for (const auto& row : doc["rows"]) {
    if (!row.is_object()) throw InvalidInput(name + ": a row is not an object");
    for (const auto& [key, value] : row.items())
      if (std::find(columns.begin(), columns.end(), key) == columns.end()) columns.push_back(key);
  }
  std::string csv;
  for (size_t c = 0; c < columns.size(); ++c) csv += (c ? "," : "") + csv_field(columns[c]);
  csv += "\n";
  for (const auto& row : doc["rows"]) {
    for (size_t c = 0; c < columns.size(); ++c) {
      if (c) csv += ",";
      if (!row.contains(columns[c])) continue;
      const auto& v = row[columns[c]];
      if (v.is_null()) continue;
      if (v.is_string()) csv += csv_field(v.get<std::string>());
      else if (v.is_number_integer()) csv += std::to_string(v.get<int64_t>());
      else if (v.is_number()) {
        std::ostringstream x;
        x.precision(17);
        x << v.get<double>();
        csv += x.str();
      } else if (v.is_boolean()) csv += v.get<bool>() ? "1" : "0";
      else throw InvalidInput(name + ": column '" + columns[c] + "' holds " + v.type_name() + ", not a value");
    }
    csv += "\n";
  }
  std::istringstream in(csv);
  return read_rows_csv(in, name);
}

std::vector<Row> read_rows_file(const std::string& path) {
  const TextFile file = read_text_file(path, kMaxRowsFileBytes);
  if (!file.problem.empty()) throw InvalidInput("rows file '" + path + "' " + file.problem);
  const size_t first = file.text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && file.text[first] == '{') return read_rows_json(file.text, path);
  std::istringstream in(file.text);
  return read_rows_csv(in, path);
}

}  // namespace flashio::sim
