// What --out does with whatever its path names, write errors on any output, and signals
// (experiments/README.md, "Output" and "Errors and exit status"): a regular file is replaced
// atomically and keeps its mode, a file nobody may write is refused, a symlink's target gets the
// output and the link stays, a device or a FIFO is written straight through (a FIFO without a
// reader is an error, not a hang), a failed write is exit 2 with one line, and SIGINT, SIGTERM and
// SIGHUP leave no temporary file.
//
// Through the built binary: the kernel must see a real process (its signals, its standard output
// on a full device). Devices are copies made with mknod in a temp folder (the tests run as root),
// never /dev/null or /dev/full themselves: a runner that replaced its --out would destroy them.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli_harness.h"

using namespace flashio::cli::test;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// A small csv (a few rows, far below a pipe's 64 KiB, so a FIFO holds all of it unread).
const std::vector<std::string> kSmallCsv = {"simulate", "--seqlen", "97", "--headdim", "40",
                                            "--format", "csv"};

std::vector<std::string> with_out(std::vector<std::string> args, const fs::path& out) {
  args.insert(args.end(), {"--out", out.string()});
  return args;
}

std::string expected_small_csv() {
  const CliResult r = run_in_process(kSmallCsv);
  REQUIRE(r.status == 0);
  REQUIRE(r.out.size() > 100);
  REQUIRE(r.out.size() < 65536);
  return r.out;
}

pid_t spawn(const std::vector<std::string>& args, const fs::path& stdout_path, const fs::path& stderr_path) {
  return spawn_binary(args, stdout_path, stderr_path);
}

// waitpid's status, or -1 when the process still ran after `limit` (it is then killed).
int wait_at_most(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  int wstatus = 0;
  while (Clock::now() < deadline) {
    if (::waitpid(pid, &wstatus, WNOHANG) == pid) return wstatus;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &wstatus, 0);
  return -1;
}

// The binary run to its end (at most 30 s: a hang fails the test instead of blocking it).
CliResult run_to(const std::vector<std::string>& args, const fs::path& stdout_path) {
  const TempDir logs;
  const pid_t pid = spawn(args, stdout_path, logs / "stderr");
  const int wstatus = wait_at_most(pid, std::chrono::seconds(30));
  CliResult r;
  r.status = wstatus >= 0 && WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
  r.err = read_file(logs / "stderr");
  if (fs::is_regular_file(stdout_path)) r.out = read_file(stdout_path);
  return r;
}

CliResult run_out(const std::vector<std::string>& args) {
  const TempDir logs;
  return run_to(args, logs / "stdout");
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

unsigned mode_of(const fs::path& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A character device with the numbers of `original` (/dev/null, /dev/full) at `copy`; false when
// mknod is not allowed here.
bool device_copy(const char* original, const fs::path& copy) {
  struct stat st {};
  if (::stat(original, &st) != 0 || !S_ISCHR(st.st_mode)) return false;
  return ::mknod(copy.c_str(), S_IFCHR | 0666, st.st_rdev) == 0;
}

bool is_device_like(const fs::path& path, const char* original) {
  struct stat copy {}, real {};
  return ::lstat(path.c_str(), &copy) == 0 && ::stat(original, &real) == 0 &&
         S_ISCHR(copy.st_mode) && copy.st_rdev == real.st_rdev;
}

}  // namespace

TEST_CASE("the --out option: on a FIFO that no process reads is exit 2 at once naming the FIFO, which stays "
          "a FIFO", "[output]") {
  const TempDir dir;
  const fs::path fifo = dir / "rows.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  const auto start = Clock::now();
  const CliResult r = run_out(with_out(kSmallCsv, fifo));
  CHECK(Clock::now() - start < std::chrono::seconds(10));
  CHECK(r.status == 2);
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(contains(lines[0], fifo.string()));
  CHECK(contains(lines[0], "no process reads"));
  CHECK(fs::is_fifo(fs::symlink_status(fifo)));
  CHECK(entries(dir.path()) == std::vector<std::string>{"rows.fifo"});
}

TEST_CASE("the --out option: on a FIFO with a reader writes the output through it", "[output]") {
  const TempDir dir;
  const fs::path fifo = dir / "rows.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  // The reader opens first (non-blocking, so it waits for no writer); the output fits in the
  // pipe, so the run ends before anything is read.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(reader >= 0);
  const CliResult r = run_out(with_out(kSmallCsv, fifo));
  std::string received;
  char chunk[4096];
  for (ssize_t n; (n = ::read(reader, chunk, sizeof chunk)) > 0;) received.append(chunk, n);
  ::close(reader);
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(received == expected_small_csv());
  CHECK(fs::is_fifo(fs::symlink_status(fifo)));
  CHECK(entries(dir.path()) == std::vector<std::string>{"rows.fifo"});
}

TEST_CASE("the --out option: through a symlink replaces what it points to and leaves the link a link",
          "[output]") {
  const TempDir dir;
  fs::create_directory(dir / "sub");
  write_file(dir / "target.csv", "old\n");
  fs::create_symlink("target.csv", dir / "rows.csv");
  // A link to a name that does not exist yet: the name is created, the link stays.
  fs::create_symlink("sub/created.csv", dir / "new.csv");
  const std::string expected = expected_small_csv();

  const CliResult r = run_out(with_out(kSmallCsv, dir / "rows.csv"));
  CHECK(r.status == 0);
  CHECK(fs::is_symlink(dir / "rows.csv"));
  CHECK(fs::read_symlink(dir / "rows.csv") == "target.csv");
  CHECK(read_file(dir / "target.csv") == expected);

  const CliResult fresh = run_out(with_out(kSmallCsv, dir / "new.csv"));
  CHECK(fresh.status == 0);
  CHECK(fs::is_symlink(dir / "new.csv"));
  CHECK(read_file(dir / "sub" / "created.csv") == expected);

  CHECK(entries(dir.path()) == std::vector<std::string>{"new.csv", "rows.csv", "sub", "target.csv"});
  CHECK(entries(dir / "sub") == std::vector<std::string>{"created.csv"});
}

TEST_CASE("the --out option: on a device is written straight through, never replaced, a full device is "
          "exit 2 with one line", "[output]") {
  const TempDir dir;
  const fs::path null_copy = dir / "null", full_copy = dir / "full";
  if (!device_copy("/dev/null", null_copy) || !device_copy("/dev/full", full_copy)) {
    WARN("mknod of a copy of /dev/null or /dev/full failed (" << std::strerror(errno)
                                                              << "): the device cases are skipped");
    return;
  }
  const CliResult r = run_out(with_out(kSmallCsv, null_copy));
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(is_device_like(null_copy, "/dev/null"));

  for (const auto& format : {"csv", "table", "json"}) {
    INFO("--format " << format);
    const CliResult full = run_out({"simulate", "--seqlen", "97,1024", "--format", format, "--out",
                                    full_copy.string()});
    CHECK(full.status == 2);
    const auto lines = full.err_lines();
    REQUIRE(lines.size() == 1);
    CHECK(contains(lines[0], full_copy.string()));
    CHECK(contains(lines[0], "writing failed"));
    CHECK(is_device_like(full_copy, "/dev/full"));
  }
  CHECK(entries(dir.path()) == std::vector<std::string>{"full", "null"});
}

TEST_CASE("the --out option: on a file nobody may write is exit 2 with one line and the file untouched",
          "[output]") {
  const TempDir dir;
  const fs::path file = dir / "rows.csv";
  write_file(file, "keep me\n");
  REQUIRE(::chmod(file.c_str(), 0444) == 0);
  const CliResult r = run_out(with_out(kSmallCsv, file));
  CHECK(r.status == 2);
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(contains(lines[0], "--out"));
  CHECK(contains(lines[0], file.string()));
  CHECK(contains(lines[0], "not writable"));
  CHECK(read_file(file) == "keep me\n");
  CHECK(mode_of(file) == 0444);
  CHECK(entries(dir.path()) == std::vector<std::string>{"rows.csv"});
}

TEST_CASE("the --out option: replacing a file keeps its mode, a new file gets the umask's", "[output]") {
  const TempDir dir;
  const std::string expected = expected_small_csv();
  for (const unsigned mode : {0600u, 0640u, 0755u}) {
    INFO("mode " << std::oct << mode);
    const fs::path file = dir / ("mode" + std::to_string(mode) + ".csv");
    write_file(file, "old\n");
    REQUIRE(::chmod(file.c_str(), mode) == 0);
    const CliResult r = run_out(with_out(kSmallCsv, file));
    CHECK(r.status == 0);
    CHECK(read_file(file) == expected);
    CHECK(mode_of(file) == mode);
  }
  const mode_t mask = ::umask(0);
  ::umask(mask);
  const fs::path fresh = dir / "fresh.csv";
  CHECK(run_out(with_out(kSmallCsv, fresh)).status == 0);
  CHECK(mode_of(fresh) == (0666u & ~static_cast<unsigned>(mask)));
  CHECK(entries(dir.path()).size() == 4);
}

TEST_CASE("the --out option: takes a file name of 250 and of 255 (NAME_MAX) characters", "[output]") {
  const TempDir dir;
  const std::string expected = expected_small_csv();
  for (const size_t length : {size_t{250}, size_t{255}}) {
    INFO("name of " << length << " characters");
    const std::string name = std::string(length - 4, 'n') + ".csv";
    const CliResult r = run_out(with_out(kSmallCsv, dir / name));
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(read_file(dir / name) == expected);
    CHECK(entries(dir.path()) == std::vector<std::string>{name});
    fs::remove(dir / name);
  }
}

TEST_CASE("standard output on a full device is exit 2 with one line saying the write failed",
          "[output]") {
  if (!fs::is_character_file("/dev/full")) {
    WARN("no /dev/full here: skipped");
    return;
  }
  const TempDir dir;
  const std::string predicted = expected_small_csv();
  // The same rows as measured ones: the source column (the first) says so.
  std::string measured;
  for (const std::string& line : split_lines(predicted))
    measured += (line.rfind("model,", 0) == 0 ? "measured," + line.substr(6) : line) + "\n";
  write_file(dir / "pred.csv", predicted);
  write_file(dir / "meas.csv", measured);
  REQUIRE(run_in_process({"compare", (dir / "pred.csv").string(), (dir / "meas.csv").string()})
              .status == 0);

  const std::vector<std::vector<std::string>> commands = {
      {"simulate"},
      kSmallCsv,
      {"simulate", "--seqlen", "97", "--format", "json"},
      {"compare", (dir / "pred.csv").string(), (dir / "meas.csv").string()},
      {"compare", (dir / "pred.csv").string(), (dir / "meas.csv").string(), "--format", "csv"},
      {"explain"},
      {"bound"},
      {"simulate", "--help"},
  };
  for (const auto& args : commands) {
    INFO("flashio " << args.front() << " (" << args.size() << " arguments) > /dev/full");
    const CliResult r = run_to(args, "/dev/full");
    CHECK(r.status == 2);
    const auto lines = r.err_lines();
    REQUIRE(lines.size() == 1);
    CHECK(contains(lines[0], "standard output"));
    CHECK(contains(lines[0], "writing failed"));
  }
}

TEST_CASE("a csv sweep into a full device stops at the first failed write", "[output]") {
  if (!fs::is_character_file("/dev/full")) {
    WARN("no /dev/full here: skipped");
    return;
  }
  // A million configurations take the model tens of seconds; the first 64 KiB fail at once.
  const auto start = Clock::now();
  const CliResult r = run_to({"simulate", "--algo", "flash2", "--seqlen", "1:1000000:1", "--format",
                              "csv"},
                             "/dev/full");
  CHECK(Clock::now() - start < std::chrono::seconds(10));
  CHECK(r.status == 2);
  CHECK(r.err_lines().size() == 1);
}

TEST_CASE("SIGINT, SIGTERM or SIGHUP during a sweep into --out leave no temporary file and the "
          "old file as it was", "[output]") {
  const std::vector<std::pair<int, const char*>> signals = {
      {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"}, {SIGHUP, "SIGHUP"}};
  for (const auto& [signal_number, signal_name] : signals)
    for (const bool existing : {true, false}) {
      INFO(signal_name << (existing ? ", x.csv existed" : ", no x.csv before"));
      const TempDir dir, logs;
      const fs::path file = dir / "x.csv";
      if (existing) write_file(file, "old\n");
      // Walking 200,000 flash1 schedules takes minutes: the signal comes mid-sweep.
      const pid_t pid = spawn({"simulate", "--count", "walk", "--algo", "flash1", "--seqlen",
                               "1:200000:1", "--format", "csv", "--out", file.string()},
                              logs / "stdout", logs / "stderr");
      // Until the temporary file is there beside x.csv, and half a second more.
      const size_t before = existing ? 1 : 0;
      const auto deadline = Clock::now() + std::chrono::seconds(10);
      while (entries(dir.path()).size() == before && Clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      CHECK(entries(dir.path()).size() == before + 1);
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      REQUIRE(::kill(pid, signal_number) == 0);
      const int wstatus = wait_at_most(pid, std::chrono::seconds(10));
      REQUIRE(wstatus != -1);
      CHECK(WIFSIGNALED(wstatus));  // still running when the signal came, and ended by it
      CHECK((WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == signal_number));
      if (existing) {
        CHECK(entries(dir.path()) == std::vector<std::string>{"x.csv"});
        CHECK(read_file(file) == "old\n");
      } else {
        CHECK(entries(dir.path()).empty());
      }
    }
}
