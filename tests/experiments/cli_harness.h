// Runs `flashio` for the tests: in-process (run_cli with string streams) or as the built binary
// (a child process whose stdout and stderr are captured).
#pragma once
#include <sys/types.h>
#include <filesystem>
#include <string>
#include <vector>

namespace flashio::cli::test {

struct CliResult {
  int status = -1;
  std::string out, err;
  // Lines of stderr (progress is off in tests, so these are the messages).
  std::vector<std::string> err_lines() const;
};

// args without the program name: {"simulate", "--seqlen", "97"}.
CliResult run_in_process(const std::vector<std::string>& args);
// Starts the built binary (arguments passed without a shell) with standard output on
// `stdout_path` (a file or a device) and standard error on `stderr_path`; SIGINT, SIGTERM and
// SIGHUP at their defaults, as from a shell's foreground. The caller waits for it.
pid_t spawn_binary(const std::vector<std::string>& args, const std::filesystem::path& stdout_path,
                   const std::filesystem::path& stderr_path);
// The arguments as one line, for test messages ("simulate --seqlen 97 ").
std::string command_text(const std::vector<std::string>& args);
// The built binary, arguments passed without a shell.
CliResult run_binary(const std::vector<std::string>& args);

// The built binary, killed if it runs longer than `limit_s` seconds (then status is -1 and
// timed_out is set): for inputs that once made it hang.
struct TimedResult {
  CliResult result;
  bool timed_out = false;
};
TimedResult run_binary_within(const std::vector<std::string>& args, double limit_s);

// A fresh empty directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

std::string read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, const std::string& text);
std::vector<std::string> split_lines(const std::string& text);
std::vector<std::string> split_csv(const std::string& line);

}  // namespace flashio::cli::test
