#include "cli_harness.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>
#include <random>
#include <sstream>
#include <stdexcept>

#include "experiments/cli.h"

namespace flashio::cli::test {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> fields;
  std::string cur;
  for (char ch : line) {
    if (ch == ',') {
      fields.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  fields.push_back(cur);
  return fields;
}

std::vector<std::string> CliResult::err_lines() const { return split_lines(err); }

std::string command_text(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += a + " ";
  return s;
}

CliResult run_in_process(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"flashio"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::ostringstream out, err;
  CliResult r;
  r.status = run_cli(argv, out, err, false);
  r.out = out.str();
  r.err = err.str();
  return r;
}

pid_t spawn_binary(const std::vector<std::string>& args, const std::filesystem::path& stdout_path,
                   const std::filesystem::path& stderr_path) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int out_fd = ::open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err_fd = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out_fd < 0 || err_fd < 0) ::_exit(126);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    // SIGINT, SIGTERM and SIGHUP at their defaults, unblocked, as from a shell's foreground.
    for (int s : {SIGINT, SIGTERM, SIGHUP}) ::signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    std::vector<std::string> argv_text = {FLASHIO_BINARY};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(FLASHIO_BINARY, argv.data());
    ::_exit(127);
  }
  return pid;
}

CliResult run_binary(const std::vector<std::string>& args) {
  TempDir dir;
  const auto out_path = dir / "stdout", err_path = dir / "stderr";
  const pid_t pid = spawn_binary(args, out_path, err_path);
  int wstatus = 0;
  ::waitpid(pid, &wstatus, 0);
  CliResult r;
  r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  return r;
}

TimedResult run_binary_within(const std::vector<std::string>& args, double limit_s) {
  TempDir dir;
  const auto out_path = dir / "stdout", err_path = dir / "stderr";
  const pid_t pid = spawn_binary(args, out_path, err_path);
  TimedResult t;
  int wstatus = 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (::waitpid(pid, &wstatus, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &wstatus, 0);
      t.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  t.result.status = !t.timed_out && WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
  t.result.out = read_file(out_path);
  t.result.err = read_file(err_path);
  return t;
}

TempDir::TempDir() {
  std::random_device rd;
  path_ = std::filesystem::temp_directory_path() /
          ("flashio-cli-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

}  // namespace flashio::cli::test
