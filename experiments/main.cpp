// flashio: the command-line runner (experiments/README.md). All the work is in flashio_cli.
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "experiments/cli.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  const std::vector<std::string> args(argv, argv + argc);
  return flashio::cli::run_cli(args, std::cout, std::cerr, ::isatty(STDERR_FILENO) != 0);
}
