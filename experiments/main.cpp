// flashio: the command-line runner (experiments/README.md). All the work is in flashio_cli.
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "experiments/cli.h"
#include "experiments/output.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv, argv + argc);
  // Standard output through a buffer that keeps the reason a write failed (a full disk), which
  // run_cli reports with exit status 2 (experiments/README.md, "Errors and exit status").
  flashio::cli::FdStreambuf stdout_buffer(STDOUT_FILENO, "standard output");
  std::ostream out(&stdout_buffer);
  return flashio::cli::run_cli(args, out, std::cerr, ::isatty(STDERR_FILENO) != 0);
}
