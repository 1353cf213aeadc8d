// flashio compare: join predicted rows (simulate: source=model or cache) with measured rows
// (profile: source=measured) on the key columns other than `source`, and report per row and in a
// summary the relative error (predicted − measured) / measured of io (read + write), dram (read
// + write), the executed tensor FLOPs and the time. The validation targets (docs/profiler.md,
// "flashio compare"), on kernel=total rows of flash1/flash2: io ±2 %, dram ±5 %, flops_tensor ±1 %;
// standard: dram ±5 %.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "experiments/subcommand.h"
#include "experiments/usage_error.h"
#include "sim/errors.h"
#include "sim/row.h"

namespace flashio::cli {
namespace {

// The key columns that identify a configuration and kernel, whatever produced the row.
std::string join_key(const sim::Row& r) {
  std::string k;
  for (const auto& c : sim::key_columns()) {
    if (c == "source") continue;
    k += sim::cell(r, c);
    k += '|';
  }
  return k;
}

std::optional<double> sum(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a || !b) return std::nullopt;
  return *a + *b;
}

std::optional<double> rel_err(const std::optional<double>& predicted, const std::optional<double>& measured) {
  if (!predicted || !measured || *measured == 0) return std::nullopt;
  return (*predicted - *measured) / *measured;
}

struct Quantity {
  const char* name;    // io, dram, flops, time
  double target;       // the validation target on total rows (0: none)
  std::optional<double> (*of)(const sim::Row&);
};

const std::vector<Quantity>& quantities() {
  static const std::vector<Quantity> q = {
      {"io", 0.02, [](const sim::Row& r) { return sum(r.io_read_bytes, r.io_write_bytes); }},
      {"dram", 0.05, [](const sim::Row& r) { return sum(r.dram_read_bytes, r.dram_write_bytes); }},
      {"flops", 0.01, [](const sim::Row& r) { return r.flops_tensor; }},
      {"time", 0.0, [](const sim::Row& r) { return r.time_ms; }},
  };
  return q;
}

// Whether docs/profiler.md sets a validation target for this quantity on this row (total rows; io
// and FLOPs only for our tiled kernels, since cuBLAS's internal tiling decides standard's io).
bool has_target(const Quantity& q, const sim::Row& r) {
  if (!r.is_total() || q.target == 0) return false;
  if (r.algo == sim::RowAlgo::standard) return std::string(q.name) == "dram";
  return true;
}

struct Joined {
  sim::Row predicted, measured;
  std::vector<std::optional<double>> p, m, err;
};

std::vector<std::string> output_columns() {
  std::vector<std::string> c;
  for (const auto& k : sim::key_columns())
    if (k != "source") c.push_back(k);
  c.push_back("predicted_source");
  for (const auto& q : quantities()) {
    c.push_back(std::string(q.name) + "_predicted");
    c.push_back(std::string(q.name) + "_measured");
    c.push_back(std::string("rel_err_") + q.name);
  }
  return c;
}

std::string number(const std::optional<double>& v) {
  if (!v) return "";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", *v);
  return buf;
}

std::string percent(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%+.2f%%", *v * 100);
  return buf;
}

std::vector<std::string> cells(const Joined& j) {
  std::vector<std::string> out;
  for (const auto& k : sim::key_columns())
    if (k != "source") out.push_back(sim::cell(j.measured, k));
  out.push_back(sim::to_string(j.predicted.source));
  for (size_t i = 0; i < quantities().size(); ++i) {
    out.push_back(number(j.p[i]));
    out.push_back(number(j.m[i]));
    out.push_back(number(j.err[i]));
  }
  return out;
}

std::vector<sim::Row> read_rows(const std::string& option, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("--" + option + " '" + path + "': cannot read the file");
  return sim::read_rows_csv(in, "--" + option + " " + path);
}

// The summary: for each quantity, the rows compared, the median and largest |error|, and, where
// a validation target is set, how many total rows meet it.
std::string summary(const std::vector<Joined>& rows) {
  std::ostringstream s;
  s << "summary (relative error = (predicted - measured) / measured):\n";
  for (size_t i = 0; i < quantities().size(); ++i) {
    const Quantity& q = quantities()[i];
    std::vector<double> all;
    int targeted = 0, met = 0;
    for (const auto& j : rows) {
      if (!j.err[i]) continue;
      all.push_back(std::fabs(*j.err[i]));
      if (has_target(q, j.measured)) {
        ++targeted;
        if (std::fabs(*j.err[i]) <= q.target) ++met;
      }
    }
    char line[200];
    if (all.empty()) {
      std::snprintf(line, sizeof line, "  %-5s no row has both values\n", q.name);
    } else {
      std::sort(all.begin(), all.end());
      std::snprintf(line, sizeof line, "  %-5s %zu rows, median |err| %.2f%%, max |err| %.2f%%", q.name,
                    all.size(), 100 * all[all.size() / 2], 100 * all.back());
      std::string text = line;
      if (q.target > 0 && targeted > 0) {
        std::snprintf(line, sizeof line, "; total rows within ±%.0f%%: %d of %d", 100 * q.target,
                      met, targeted);
        text += line;
      }
      std::snprintf(line, sizeof line, "%s\n", text.c_str());
    }
    s << line;
  }
  return s.str();
}

int run_compare(Invocation& inv) {
  if (!inv.options.count("predicted") || !inv.options.count("measured"))
    throw UsageError("needs two CSV files: PREDICTED (rows of flashio simulate) and MEASURED (rows "
                     "of flashio profile), as arguments or as --predicted and --measured");
  const std::string pred_path = inv.options["predicted"].as<std::string>();
  const std::string meas_path = inv.options["measured"].as<std::string>();
  const std::vector<sim::Row> predicted = read_rows("predicted", pred_path);
  const std::vector<sim::Row> measured = read_rows("measured", meas_path);

  std::map<std::string, const sim::Row*> by_key;
  for (const auto& r : predicted) {
    if (r.source == sim::RowSource::measured || r.source == sim::RowSource::bound) continue;
    by_key.emplace(join_key(r), &r);  // the first predicted row of a key wins
  }
  std::vector<Joined> joined;
  int unmatched = 0;
  for (const auto& m : measured) {
    if (m.source != sim::RowSource::measured && m.source != sim::RowSource::peer) continue;
    const auto it = by_key.find(join_key(m));
    if (it == by_key.end()) {
      ++unmatched;
      continue;
    }
    Joined j{*it->second, m, {}, {}, {}};
    for (const auto& q : quantities()) {
      j.p.push_back(q.of(j.predicted));
      j.m.push_back(q.of(j.measured));
      j.err.push_back(rel_err(j.p.back(), j.m.back()));
    }
    joined.push_back(std::move(j));
  }
  if (joined.empty())
    throw UsageError("no row of --measured " + meas_path + " matches a row of --predicted " +
                     pred_path + " on the key columns (algo, pass, kernel, shape, dtype, causal, "
                     "sram_bytes, block_r, block_c, hw, ...); simulate with the tiling profile used");

  auto target = inv.open_output();
  std::ostream& out = target->stream();
  const auto columns = output_columns();
  if (inv.output.format == Format::csv) {
    for (size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << columns[i];
    out << '\n';
    for (const auto& j : joined) {
      const auto c = cells(j);
      for (size_t i = 0; i < c.size(); ++i) out << (i ? "," : "") << c[i];
      out << '\n';
    }
  } else if (inv.output.format == Format::json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& j : joined) {
      nlohmann::json o;
      const auto c = cells(j);
      for (size_t i = 0; i < c.size(); ++i) o[columns[i]] = c[i];
      rows.push_back(o);
    }
    out << nlohmann::json{{"rows", rows}, {"summary", summary(joined)}}.dump(1) << '\n';
  } else {
    char line[400];
    std::snprintf(line, sizeof line, "%-8s %-6s %-24s %6s %6s %4s %4s %10s %10s %10s %10s\n", "algo",
                  "pass", "kernel", "B·H", "N", "d", "caus", "io", "dram", "flops", "time");
    out << line;
    for (const auto& j : joined) {
      if (!inv.output.all_kernels && !j.measured.is_total()) continue;
      const sim::Row& r = j.measured;
      std::snprintf(line, sizeof line, "%-8s %-6s %-24s %6lld %6lld %4lld %4d %10s %10s %10s %10s\n",
                    sim::to_string(r.algo).c_str(), sim::to_string(r.pass).c_str(),
                    sim::kernel_text(r.kernel).c_str(),
                    static_cast<long long>(r.batch * r.heads), static_cast<long long>(r.seqlen),
                    static_cast<long long>(r.headdim), r.causal, percent(j.err[0]).c_str(),
                    percent(j.err[1]).c_str(), percent(j.err[2]).c_str(), percent(j.err[3]).c_str());
      out << line;
    }
    out << summary(joined);
  }
  target->commit();
  if (inv.output.format != Format::table) *inv.err << summary(joined);
  if (unmatched > 0)
    *inv.err << "flashio compare: " << unmatched << " measured rows had no predicted row\n";
  return kExitOk;
}

const SubcommandRegistration registration({
    .name = "compare",
    .summary = "join predicted and measured rows; relative error of io, dram, tensor FLOPs, time",
    .order = 60,
    .takes_sweep = false,
    .add_options =
        [](po::options_description& o) {
          o.add_options()("predicted", po::value<std::string>(),
                          "CSV rows of flashio simulate (source=model or cache)")(
              "measured", po::value<std::string>(), "CSV rows of flashio profile (source=measured)");
        },
    .run = run_compare,
    .positional = {"predicted", "measured"},
});

}  // namespace
}  // namespace flashio::cli
