#include "sim/row.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/errors.h"
#include "sim/simulate.h"

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

}  // namespace

const std::vector<std::string>& key_columns() {
  static const std::vector<std::string> k = {
      "source", "algo",   "pass",       "kernel",    "batch",   "heads",
      "seqlen", "headdim", "dtype",     "causal",    "sram_bytes", "block_r",
      "block_c", "hw",    "mask",       "dropout",   "block_mask"};
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
  if (col == "source") return r.source;
  if (col == "algo") return r.algo;
  if (col == "pass") return r.pass;
  if (col == "kernel") return r.kernel;
  if (col == "batch") return std::to_string(r.batch);
  if (col == "heads") return std::to_string(r.heads);
  if (col == "seqlen") return std::to_string(r.seqlen);
  if (col == "headdim") return std::to_string(r.headdim);
  if (col == "dtype") return r.dtype;
  if (col == "causal") return std::to_string(r.causal);
  if (col == "sram_bytes") return opt(r.sram_bytes);
  if (col == "block_r") return opt(r.block_r);
  if (col == "block_c") return opt(r.block_c);
  if (col == "hw") return r.hw;
  if (col == "mask") return std::to_string(r.mask);
  if (col == "dropout") return number(r.dropout);
  if (col == "block_mask") return r.block_mask;
  for (const auto& [name, field] : value_fields())
    if (name == col) return opt(r.*field);
  return "";
}

Row config_row(const Config& c, const std::string& source) {
  Row base;
  base.source = source;
  base.algo = to_string(c.algo);
  base.pass = to_string(c.problem.pass);
  base.kernel = "total";
  base.batch = c.problem.batch;
  base.heads = c.problem.heads;
  base.seqlen = c.problem.seqlen;
  base.headdim = c.problem.headdim;
  base.dtype = to_string(c.problem.dtype);
  base.causal = c.problem.causal ? 1 : 0;
  base.sram_bytes = c.sram_bytes;
  base.block_r = c.tiling.block_r;
  base.block_c = c.tiling.block_c;
  base.hw = c.hw.name;
  base.mask = c.problem.mask ? 1 : 0;
  base.dropout = c.problem.dropout;
  base.block_mask = c.block_mask.text;
  return base;
}

std::vector<Row> rows_from_result(const SimResult& res, const std::string& source) {
  const Row base = config_row(
      res.config,
      source.empty() ? (res.method == CountMethod::cache ? "cache" : "model") : source);

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
    r.kernel = to_string(res.kernels[i].kind);
    fill(r, res.kernels[i].counts, i < res.kernel_time_ms.size() ? res.kernel_time_ms[i] : 0.0);
    if (i < res.kernel_dram.size()) {
      r.dram_read_bytes = static_cast<double>(res.kernel_dram[i].read_bytes);
      r.dram_write_bytes = static_cast<double>(res.kernel_dram[i].write_bytes);
    }
    rows.push_back(std::move(r));
  }
  Row total = base;
  total.kernel = "total";
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
    line += cell(r, c);
  }
  return line;
}

nlohmann::json to_json(const Row& r) {
  nlohmann::json j;
  j["source"] = r.source;
  j["algo"] = r.algo;
  j["pass"] = r.pass;
  j["kernel"] = r.kernel;
  j["batch"] = r.batch;
  j["heads"] = r.heads;
  j["seqlen"] = r.seqlen;
  j["headdim"] = r.headdim;
  j["dtype"] = r.dtype;
  j["causal"] = r.causal;
  j["sram_bytes"] = r.sram_bytes ? nlohmann::json(*r.sram_bytes) : nlohmann::json(nullptr);
  j["block_r"] = r.block_r ? nlohmann::json(*r.block_r) : nlohmann::json(nullptr);
  j["block_c"] = r.block_c ? nlohmann::json(*r.block_c) : nlohmann::json(nullptr);
  j["hw"] = r.hw;
  j["mask"] = r.mask;
  j["dropout"] = r.dropout;
  j["block_mask"] = r.block_mask;
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
  auto split = [](const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    for (char ch : s) {
      if (ch == ',') {
        out.push_back(cur);
        cur.clear();
      } else if (ch != '\r') {
        cur += ch;
      }
    }
    out.push_back(cur);
    return out;
  };
  std::vector<std::string> header;
  while (header.empty() && std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    header = split(line);
  }
  if (header.empty()) fail("no header line; expected the columns of the row schema (source,algo,...)");
  bool has_source = false;
  for (const auto& h : header) has_source |= (h == "source");
  if (!has_source) fail("header has no 'source' column; not a flashio rows file");

  std::vector<Row> rows;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line == "\r" || line[0] == '#') continue;
    const auto fields = split(line);
    if (fields.size() != header.size())
      fail("has " + std::to_string(fields.size()) + " fields, the header has " +
           std::to_string(header.size()));
    Row r;
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
          return x;
        } catch (const std::logic_error&) {
          fail("column '" + col + "': '" + v + "' is not a number");
        }
        return std::nullopt;
      };
      if (col == "source") r.source = v;
      else if (col == "algo") r.algo = v;
      else if (col == "pass") r.pass = v;
      else if (col == "kernel") r.kernel = v;
      else if (col == "batch") r.batch = as_int();
      else if (col == "heads") r.heads = as_int();
      else if (col == "seqlen") r.seqlen = as_int();
      else if (col == "headdim") r.headdim = as_int();
      else if (col == "dtype") r.dtype = v;
      else if (col == "causal") r.causal = static_cast<int>(as_int());
      else if (col == "sram_bytes") { if (!v.empty()) r.sram_bytes = as_int(); }
      else if (col == "block_r") { if (!v.empty()) r.block_r = as_int(); }
      else if (col == "block_c") { if (!v.empty()) r.block_c = as_int(); }
      else if (col == "hw") r.hw = v;
      else if (col == "mask") r.mask = v.empty() ? 0 : static_cast<int>(as_int());
      else if (col == "dropout") r.dropout = v.empty() ? 0.0 : as_real().value_or(0.0);
      else if (col == "block_mask") r.block_mask = v;
      else {
        for (const auto& [name, field] : value_fields())
          if (name == col) r.*field = as_real();
        // Columns outside the schema (a script's own extra columns) are ignored here.
      }
    }
    if (r.source.empty()) fail("empty 'source'");
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<Row> read_rows_csv_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidInput("cannot read rows file '" + path + "'");
  return read_rows_csv(in, path);
}

}  // namespace flashio::sim
