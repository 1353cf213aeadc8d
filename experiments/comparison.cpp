#include "experiments/comparison.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

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
  double target;       // the validation target on each total row, |err| at most (0: none)
  std::optional<double> (*of)(const sim::Row&);
  double median_target = 0;  // the target on the median |err| of the total rows (0: none)
};

const std::vector<Quantity>& quantities() {
  static const std::vector<Quantity> q = {
      {"io", 0.02, [](const sim::Row& r) { return sum(r.io_read_bytes, r.io_write_bytes); }},
      {"dram", 0.05, [](const sim::Row& r) { return sum(r.dram_read_bytes, r.dram_write_bytes); }},
      {"flops", 0.01, [](const sim::Row& r) { return r.flops_tensor; }},
      // The time model's targets (docs/time_model.md, "Targets"): every total row within 25 %,
      // their median within 10 %.
      {"time", 0.25, [](const sim::Row& r) { return r.time_ms; }, 0.10},
  };
  return q;
}

// Whether docs/profiler.md sets a validation target for this quantity on this row (total rows; io
// and FLOPs only for our tiled kernels, since cuBLAS's internal tiling decides standard's io).
bool has_target(const Quantity& q, const sim::Row& r) {
  if (!r.is_total() || q.target == 0) return false;
  if (r.algo == sim::RowAlgo::standard) return std::string(q.name) == "dram" || std::string(q.name) == "time";
  return true;
}

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

}  // namespace

// The summary: for each quantity, the rows compared, the median and largest |error|, and, where
// a validation target is set, how many total rows meet it.
std::string comparison_summary(const std::vector<Joined>& rows) {
  std::ostringstream s;
  s << "summary (relative error = (predicted - measured) / measured):\n";
  for (size_t i = 0; i < quantities().size(); ++i) {
    const Quantity& q = quantities()[i];
    std::vector<double> all, targeted_errors;
    int targeted = 0, met = 0;
    for (const auto& j : rows) {
      if (!j.err[i]) continue;
      all.push_back(std::fabs(*j.err[i]));
      if (has_target(q, j.measured)) {
        ++targeted;
        targeted_errors.push_back(std::fabs(*j.err[i]));
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
      if (q.median_target > 0 && !targeted_errors.empty()) {
        std::sort(targeted_errors.begin(), targeted_errors.end());
        const double median = targeted_errors[targeted_errors.size() / 2];
        std::snprintf(line, sizeof line, "; their median %.2f%% (target ≤ %.0f%%: %s)", 100 * median,
                      100 * q.median_target, median <= q.median_target ? "met" : "missed");
        text += line;
      }
      std::snprintf(line, sizeof line, "%s\n", text.c_str());
    }
    s << line;
  }
  return s.str();
}

std::vector<Joined> join_rows(const std::vector<sim::Row>& predicted, const std::vector<sim::Row>& measured,
                              int& unmatched) {
  std::map<std::string, const sim::Row*> by_key;
  for (const auto& r : predicted) {
    if (r.source == sim::RowSource::measured || r.source == sim::RowSource::bound) continue;
    by_key.emplace(join_key(r), &r);  // the first predicted row of a key wins
  }
  std::vector<Joined> joined;
  unmatched = 0;
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
  return joined;
}

void write_comparison(const OutputOptions& options, const RunContext& context, std::ostream& out,
                      const std::vector<Joined>& joined) {
  const auto columns = output_columns();
  if (options.format == Format::csv) {
    for (size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << columns[i];
    out << '\n';
    for (const auto& j : joined) {
      const auto c = cells(j);
      for (size_t i = 0; i < c.size(); ++i) out << (i ? "," : "") << sim::csv_field(c[i]);
      out << '\n';
    }
  } else if (options.format == Format::json) {
    nlohmann::json rows = nlohmann::json::array();
    auto value = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    for (const auto& j : joined) {
      nlohmann::json o = sim::to_json(j.measured);  // the key columns, typed
      for (const auto& name : sim::row_columns())
        if (name != "source" && std::find(sim::key_columns().begin(), sim::key_columns().end(), name) ==
                                    sim::key_columns().end())
          o.erase(name);  // the value columns are the comparison's below
      o.erase("source");
      o["predicted_source"] = sim::to_string(j.predicted.source);
      for (size_t i = 0; i < quantities().size(); ++i) {
        const std::string q = quantities()[i].name;
        o[q + "_predicted"] = value(j.p[i]);
        o[q + "_measured"] = value(j.m[i]);
        o["rel_err_" + q] = value(j.err[i]);
      }
      rows.push_back(o);
    }
    out << nlohmann::json{{"context", context_json(context)}, {"rows", rows}, {"summary", comparison_summary(joined)}}
               .dump(1, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
  } else {
    // The kernel column as wide as its longest name, so no name is cut.
    int kernel_width = 6;
    for (const auto& j : joined)
      kernel_width = std::max(kernel_width, static_cast<int>(sim::kernel_text(j.measured.kernel).size()));
    char line[600];
    std::snprintf(line, sizeof line, "%-11s %-6s %-*s %6s %6s %4s %4s %10s %10s %10s %10s\n", "algo", "pass",
                  kernel_width, "kernel", "B·H", "N", "d", "caus", "io", "dram", "flops", "time");
    out << line;
    for (const auto& j : joined) {
      if (!options.all_kernels && !j.measured.is_total()) continue;
      const sim::Row& r = j.measured;
      // B·H in double: the rows files' B and H are any 64-bit integers, and their product may not be.
      std::snprintf(line, sizeof line, "%-11s %-6s %-*s %6.0f %6lld %4lld %4d %10s %10s %10s %10s\n",
                    sim::to_string(r.algo).c_str(), sim::to_string(r.pass).c_str(), kernel_width,
                    sim::kernel_text(r.kernel).c_str(),
                    static_cast<double>(r.batch) * static_cast<double>(r.heads), static_cast<long long>(r.seqlen),
                    static_cast<long long>(r.headdim), r.causal, percent(j.err[0]).c_str(),
                    percent(j.err[1]).c_str(), percent(j.err[2]).c_str(), percent(j.err[3]).c_str());
      out << line;
    }
    out << comparison_summary(joined);
  }
}

}  // namespace flashio::cli
