// flashio-gui's command line: the runner's option names (experiments/README.md,
// "Options"), single values (a list for --algo), plus --screenshot FILE, --results FILE and
// --view NAME.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <QString>
#include <QStringList>

#include "gui/workbench_params.h"

namespace flashio::gui {

struct CommandLine {
  WorkbenchParams params;
  bool params_given = false;  // any problem option given: do not restore the saved ones
  QString screenshot_path;    // non-empty: render offscreen to this PNG and exit
  QStringList results_paths;
  QString view;               // empty: the last one (or block)
  bool help = false;
  bool no_cache = false;      // --no-cache: skip the L2-model curves
  // Teaching view: the screenshot of --view tiling runs to this step (−1: last).
  int tiling_step = -1;
};

// Parses arguments (argv without the program name). Returns the message to print (one line,
// naming the option and what is allowed) when the input is bad.
struct ParseResult {
  CommandLine line;
  std::string error;  // empty on success
};
ParseResult parse_command_line(const QStringList& arguments);
std::string usage_text();

}  // namespace flashio::gui
