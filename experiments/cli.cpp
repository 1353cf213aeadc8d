#include "experiments/cli.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <new>
#include <sstream>

#include <boost/program_options.hpp>

#include "experiments/subcommand.h"
#include "experiments/usage_error.h"
#include "sim/errors.h"
#include "sim/text_file.h"
#include "sim/trim.h"

#ifndef FLASHIO_VERSION
#define FLASHIO_VERSION "unknown"
#endif

namespace flashio::cli {
namespace {

namespace po = boost::program_options;

std::string subcommand_names() {
  std::string names;
  for (const Subcommand* s : subcommands()) names += (names.empty() ? "" : ", ") + s->name;
  return names;
}

// Messages are one line (experiments/README.md, "Errors and exit status").
std::string one_line(std::string text) {
  for (char& ch : text)
    if (ch == '\n' || ch == '\r') ch = ' ';
  return text;
}

// Program_options' what() replaces each %name% placeholder of its template until none is left,
// rescanning the text it inserted, so a token that holds one (`--%canonical_option%`,
// `--row %value%`) never finishes and the user's text is reformatted. The message is built here
// from the same template and values in one pass instead: each placeholder is replaced once and
// the inserted text is never scanned again. The values are protected members; a derived class
// may name them (a pointer to a member of the base, applied to the caught error).
class PoErrorParts : public po::error_with_option_name {
 public:
  static std::string message(const po::error_with_option_name& e) {
    std::map<std::string, std::string> values = e.*(&PoErrorParts::m_substitutions);
    values["canonical_option"] = e.get_option_name();
    values["prefix"] = (e.*(&PoErrorParts::get_canonical_option_prefix))();
    std::string text = e.m_error_template;
    if (const auto* ambiguous = dynamic_cast<const po::ambiguous_option*>(&e)) {
      const std::set<std::string> names(ambiguous->alternatives().begin(),
                                        ambiguous->alternatives().end());
      std::string list;
      size_t left = names.size();
      for (const std::string& name : names)
        list += "'" + values["prefix"] + name + "'" + (--left > 1 ? ", " : left == 1 ? ", and " : "");
      if (!list.empty()) text += " and matches " + list;
    }
    // A missing or empty value makes Boost use its fixed wording ("option '%canonical_option%'"
    // becomes "option"); that wording is Boost's own, never the user's.
    for (const auto& [name, from_to] : e.*(&PoErrorParts::m_substitution_defaults)) {
      const auto it = values.find(name);
      if (it != values.end() && !it->second.empty()) continue;
      for (size_t at = text.find(from_to.first); at != std::string::npos;
           at = text.find(from_to.first, at + from_to.second.size()))
        text.replace(at, from_to.first.size(), from_to.second);
    }
    std::string out;
    for (size_t i = 0; i < text.size();) {
      const size_t close = text[i] == '%' ? text.find('%', i + 1) : std::string::npos;
      const auto it = close == std::string::npos ? values.end()
                                                 : values.find(text.substr(i + 1, close - i - 1));
      if (it == values.end()) {
        out += text[i++];
        continue;
      }
      out += it->second;
      i = close + 1;
    }
    return out;
  }
};

// The message of any Program_options error, never formatted by Boost's substitution.
std::string po_message(const po::error& e) {
  if (const auto* named = dynamic_cast<const po::error_with_option_name*>(&e))
    return PoErrorParts::message(*named);
  return e.what();  // the other errors' text is fixed when they are thrown
}

// Reads the experiment file's `option = value` lines with Program_options' config-file parser.
// Values already stored from the command line are kept: the command line wins.
void store_config_file(const std::string& path, const po::options_description& options,
                       po::variables_map& vm) {
  const sim::TextFile file = sim::read_text_file(path, sim::kMaxSettingsFileBytes);
  if (!file.problem.empty())
    throw UsageError("--config '" + path + "' " + file.problem +
                     "; expected a file of `option = value` lines");
  std::istringstream in(file.text);
  try {
    po::store(po::parse_config_file(in, options, /*allow_unregistered=*/false), vm);
  } catch (const po::error& e) {
    throw UsageError("--config '" + path + "': " + po_message(e) +
                     " (lines are `option = value` with the long option names)");
  }
}

int run_subcommand(const Subcommand& sub, const std::vector<std::string>& args, std::ostream& out,
                   std::ostream& err, bool err_is_terminal, int64_t max_sweep_configs) {
  po::options_description general("General");
  general.add_options()
      ("help,h", "print this help")
      ("config", po::value<std::string>(),
       "experiment file of `option = value` lines (same long names); the command line wins");
  po::options_description all("flashio " + sub.name + ": " + sub.summary);
  all.add(general);
  po::options_description problem("Problem and tiling (each a list or range; swept)");
  if (sub.takes_sweep) {
    add_sweep_options(problem, sub.defaults);
    all.add(problem);
  }
  po::options_description output("Output");
  if (sub.takes_output) {
    add_output_options(output);
    all.add(output);
  }
  po::options_description own("Options of " + sub.name);
  if (sub.add_options) {
    sub.add_options(own);
    all.add(own);
  }

  Invocation inv;
  inv.name = sub.name;
  inv.command_line = args;
  inv.out = &out;
  inv.err = &err;
  inv.progress = err_is_terminal;
  try {
    const std::vector<std::string> rest(args.begin() + 2, args.end());
    po::positional_options_description bare;
    for (const std::string& name : sub.positional) bare.add(name.c_str(), 1);
    po::store(po::command_line_parser(rest).options(all).positional(bare).run(), inv.options);
  } catch (const po::error& e) {
    throw UsageError(po_message(e) + "; see flashio " + sub.name + " --help");
  }
  if (inv.options.count("help")) {
    out << all << '\n';
    return kExitOk;
  }
  // Every option of the file is checked against the same table as the command line. The
  // file's options that the subcommand does not have are errors, so a typo is never ignored.
  if (inv.options.count("config"))
    store_config_file(inv.options["config"].as<std::string>(), all, inv.options);
  po::notify(inv.options);
  if (sub.takes_sweep) inv.sweep = read_sweep(inv.options, sub.defaults, max_sweep_configs);
  if (sub.takes_output) inv.output = read_output_options(inv.options);
  return sub.run(inv);
}

}  // namespace

std::string usage_text() {
  std::ostringstream text;
  text << "flashio " << FLASHIO_VERSION
       << ": IO of standard attention and FlashAttention, predicted and measured\n\n"
          "usage: flashio <subcommand> [options]   (flashio <subcommand> --help for its options)\n\n"
          "subcommands:\n";
  for (const Subcommand* s : subcommands()) {
    std::string name = s->name;
    name.resize(std::max<size_t>(name.size(), 10), ' ');
    text << "  " << name << "  " << s->summary << '\n';
  }
  text << "\nWith no options, `flashio simulate` compares standard attention and FlashAttention on\n"
          "the paper's GPT-2 medium example (B=64, H=16, N=1024, d=64, fp16) on an H200.\n"
          "Options, the sweep syntax and the output columns: experiments/README.md.\n";
  return text.str();
}

namespace {

int run_unchecked(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                  bool err_is_terminal, int64_t max_sweep_configs) {
  std::string prefix = "flashio";
  try {
    if (args.size() < 2) {
      err << "flashio: missing subcommand; allowed: " << subcommand_names()
          << " (flashio --help explains them)\n";
      return kExitUsage;
    }
    const std::string& name = args[1];
    if (name == "--help" || name == "-h" || name == "help") {
      out << usage_text();
      return kExitOk;
    }
    if (name == "--version") {
      out << "flashio " << FLASHIO_VERSION << '\n';
      return kExitOk;
    }
    const Subcommand* sub = find_subcommand(name);
    if (!sub) {
      if (is_cuda_only_subcommand(name)) {
        err << "flashio was built without CUDA: `flashio " << name
            << "` needs a build with -DFLASHIO_CUDA=ON and the CUDA toolkit\n";
        return kExitUsage;
      }
      err << "flashio: unknown subcommand '" << name << "'; allowed: " << subcommand_names()
          << '\n';
      return kExitUsage;
    }
    prefix += " " + name;
    return run_subcommand(*sub, args, out, err, err_is_terminal, max_sweep_configs);
  } catch (const UsageError& e) {
    err << prefix << ": " << one_line(e.what()) << '\n';
    return kExitUsage;
  } catch (const sim::InvalidInput& e) {
    err << prefix << ": " << one_line(usage_message(e)) << '\n';
    return kExitUsage;
  } catch (const po::error& e) {
    err << prefix << ": " << one_line(po_message(e)) << '\n';
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    // A last resort: the model's limits (docs/architecture.md, "Limits") keep every accepted
    // configuration within memory, so this is a machine with less memory than they assume.
    err << prefix << ": out of memory; the run needs more memory than this machine gives it "
                     "(narrow the sweep or the problem)\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    err << prefix << ": internal error: " << one_line(e.what()) << '\n';
    return kExitFailure;
  }
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
            bool err_is_terminal, int64_t max_sweep_configs) {
  const int status = run_unchecked(args, out, err, err_is_terminal, max_sweep_configs);
  // Results are checked as they are written; this catches what else went to standard output
  // (--help, explain) and its last buffered bytes. A run that failed has said so already.
  out.flush();
  if (out || status != kExitOk) return status;
  std::string prefix = "flashio";
  if (args.size() > 1 && find_subcommand(args[1])) prefix += " " + args[1];
  err << prefix << ": " << write_failure(out) << '\n';
  return kExitUsage;
}

}  // namespace flashio::cli
