#include "experiments/output.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>

#include "experiments/usage_error.h"
#include "experiments/value_list.h"

#ifndef FLASHIO_VERSION
#define FLASHIO_VERSION "unknown"
#endif

namespace flashio::cli {
namespace fs = std::filesystem;

void add_output_options(po::options_description& options) {
  options.add_options()
      ("format", po::value<std::string>(), "table, csv or json [table]")
      ("out", po::value<std::string>(), "write the results to FILE (a file is replaced only on "
                                        "success; a device or FIFO is written to) [standard output]")
      ("kernels", po::bool_switch(), "table: one row per kernel, not only each configuration's "
                                      "total (csv and json always have every row)");
}

OutputOptions read_output_options(const po::variables_map& vm) {
  OutputOptions o;
  if (vm.count("format")) {
    const std::string f = vm["format"].as<std::string>();
    if (f == "table") o.format = Format::table;
    else if (f == "csv") o.format = Format::csv;
    else if (f == "json") o.format = Format::json;
    else throw UsageError("--format '" + f + "' is unknown; allowed: table, csv, json");
  }
  if (vm.count("out")) {
    o.out_path = vm["out"].as<std::string>();
    if (o.out_path.empty()) throw UsageError("--out needs a file name");
  }
  if (vm.count("kernels")) o.all_kernels = vm["kernels"].as<bool>();
  return o;
}

// ---- writing to a file descriptor ----------------------------------------------------------

FdStreambuf::FdStreambuf(int fd, std::string name)
    : fd_(fd), name_(std::move(name)), buffer_(64 * 1024) {
  setp(buffer_.data(), buffer_.data() + buffer_.size());
}

bool FdStreambuf::drain() {
  const char* next = pbase();
  size_t left = static_cast<size_t>(pptr() - pbase());
  while (left > 0 && error_ == 0) {
    const ssize_t n = ::write(fd_, next, left);
    if (n > 0) {
      next += n;
      left -= static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // A descriptor inherited in non-blocking mode (a shared terminal or pipe): wait until it
      // takes bytes again rather than lose them.
      pollfd ready{fd_, POLLOUT, 0};
      ::poll(&ready, 1, -1);
    } else {
      error_ = n < 0 ? errno : EIO;
    }
  }
  // After an error the buffer is reused and dropped: nothing more reaches the descriptor.
  setp(buffer_.data(), buffer_.data() + buffer_.size());
  return error_ == 0;
}

FdStreambuf::int_type FdStreambuf::overflow(int_type ch) {
  if (error_ != 0 || !drain()) return traits_type::eof();
  if (!traits_type::eq_int_type(ch, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(ch);
    pbump(1);
  }
  return traits_type::not_eof(ch);
}

int FdStreambuf::sync() { return error_ == 0 && drain() ? 0 : -1; }

std::string write_failure(const std::ostream& out) {
  const auto* fd_buffer = dynamic_cast<const FdStreambuf*>(out.rdbuf());
  const std::string name = fd_buffer ? fd_buffer->name() : std::string("the output");
  const std::string reason = fd_buffer && fd_buffer->error() != 0
                                 ? std::string(std::strerror(fd_buffer->error()))
                                 : std::string("the stream failed");
  return name + ": writing failed (" + reason + ")";
}

void check_written(const std::ostream& out) {
  if (!out) throw UsageError(write_failure(out));
}

// ---- temporary files and signals -------------------------------------------------------------

namespace {

// The temporary files of the OutputTargets alive, for the signal handler: fixed buffers, because
// a handler may not allocate (async-signal-safe functions only: unlink, sigaction, raise).
constexpr int kTempSlots = 8;
struct TempSlot {
  std::atomic<bool> used{false};
  char path[PATH_MAX];
};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler reads it");
TempSlot temp_slots[kTempSlots];

constexpr int kCleanedSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction previous_actions[std::size(kCleanedSignals)];

extern "C" void remove_temps_and_reraise(int signal_number) {
  for (TempSlot& slot : temp_slots)
    if (slot.used.load(std::memory_order_acquire)) ::unlink(slot.path);
  // The action there was before (the default: end the process) handles the signal again.
  for (size_t i = 0; i < std::size(kCleanedSignals); ++i)
    if (kCleanedSignals[i] == signal_number) ::sigaction(signal_number, &previous_actions[i], nullptr);
  ::raise(signal_number);
}

// Holds SIGINT, SIGTERM and SIGHUP back while a temporary is created, renamed or removed and
// its slot changes, so that a signal never finds a temporary unregistered.
class SignalsHeld {
 public:
  SignalsHeld() {
    sigset_t held;
    sigemptyset(&held);
    for (int s : kCleanedSignals) sigaddset(&held, s);
    pthread_sigmask(SIG_BLOCK, &held, &before_);
  }
  ~SignalsHeld() { pthread_sigmask(SIG_SETMASK, &before_, nullptr); }
  SignalsHeld(const SignalsHeld&) = delete;
  SignalsHeld& operator=(const SignalsHeld&) = delete;

 private:
  sigset_t before_;
};

// Installs the handler where the signal's action is not already it. An ignored signal (nohup's
// SIGHUP) stays ignored; another handler runs after ours.
void install_signal_handlers() {
  for (size_t i = 0; i < std::size(kCleanedSignals); ++i) {
    struct sigaction current {};
    ::sigaction(kCleanedSignals[i], nullptr, &current);
    if (current.sa_handler == SIG_IGN || current.sa_handler == remove_temps_and_reraise) continue;
    previous_actions[i] = current;
    struct sigaction action {};
    action.sa_handler = remove_temps_and_reraise;
    sigemptyset(&action.sa_mask);
    for (int s : kCleanedSignals) sigaddset(&action.sa_mask, s);
    ::sigaction(kCleanedSignals[i], &action, nullptr);
  }
}

// Call with the signals held.
int register_temp(const std::string& path) {
  if (path.size() >= PATH_MAX) throw std::logic_error("temporary path longer than PATH_MAX");
  for (int i = 0; i < kTempSlots; ++i) {
    if (temp_slots[i].used.load(std::memory_order_relaxed)) continue;
    std::memcpy(temp_slots[i].path, path.c_str(), path.size() + 1);
    temp_slots[i].used.store(true, std::memory_order_release);
    install_signal_handlers();
    return i;
  }
  throw std::logic_error("more than " + std::to_string(kTempSlots) + " output files open at once");
}

void unregister_temp(int slot) {
  if (slot >= 0) temp_slots[slot].used.store(false, std::memory_order_release);
}

mode_t current_umask() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace

// ---- OutputTarget ----------------------------------------------------------------------------

OutputTarget::OutputTarget(const std::string& path, std::ostream& standard_output,
                           const std::string& option)
    : path_(path), option_(option), standard_output_(standard_output) {
  if (path_.empty()) return;
  try {
    struct stat existing {};
    if (::stat(path_.c_str(), &existing) == 0) {
      if (S_ISDIR(existing.st_mode)) fail(" is a directory; give a file name");
      if (S_ISREG(existing.st_mode)) {
        // A symlink's target is replaced, not the link: the rename goes to the resolved path.
        char resolved[PATH_MAX];
        if (!::realpath(path_.c_str(), resolved)) fail(": cannot resolve the path (" + errno_text() + ")");
        // Root may write any file; a file nobody may write is refused all the same.
        if ((existing.st_mode & 0222) == 0 || ::access(resolved, W_OK) != 0) {
          char mode[16];
          std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(existing.st_mode & 07777));
          fail(std::string(" is not writable (mode ") + mode +
               "); make it writable (chmod u+w) or give another file");
        }
        open_replacement(resolved, &existing);
      } else {
        open_straight(existing);
      }
    } else if (errno == ENOENT) {
      // Absent, or a symlink to a name that does not exist yet: follow the links to the name
      // to create.
      std::string name = path_;
      for (int hops = 0;; ++hops) {
        if (hops == 40) fail(": too many levels of symbolic links");
        struct stat entry {};
        if (::lstat(name.c_str(), &entry) != 0) {
          if (errno == ENOENT) break;
          fail(": " + errno_text());
        }
        if (!S_ISLNK(entry.st_mode)) fail(" changed while it was being opened; run again");
        std::vector<char> target(static_cast<size_t>(entry.st_size > 0 ? entry.st_size : PATH_MAX) + 1);
        const ssize_t n = ::readlink(name.c_str(), target.data(), target.size());
        if (n < 0 || static_cast<size_t>(n) >= target.size()) fail(": cannot read the symbolic link");
        const fs::path next(std::string(target.data(), static_cast<size_t>(n)));
        name = next.is_absolute() ? next.string() : (fs::path(name).parent_path() / next).string();
      }
      open_replacement(name, nullptr);
    } else {
      fail(": " + errno_text() + "; give a file in an existing, writable directory");
    }
    buffer_ = std::make_unique<FdStreambuf>(fd_, option_ + " '" + path_ + "'");
    file_.rdbuf(buffer_.get());
  } catch (...) {
    discard();
    throw;
  }
}

void OutputTarget::fail(const std::string& what) const {
  throw UsageError(option_ + " '" + path_ + "'" + what);
}

void OutputTarget::open_replacement(const std::string& final_path, const struct ::stat* existing) {
  final_path_ = final_path;
  const fs::path target(final_path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    fail(": directory '" + dir.string() +
         "' does not exist; give a file in an existing, writable directory");
  // Same directory, so that the final rename is atomic and never crosses file systems; a short
  // name, so that a target name of NAME_MAX characters still has a temporary.
  std::string name = (dir / ".flashio-XXXXXX").string();
  {
    SignalsHeld held;
    fd_ = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd_ < 0)
      fail(": cannot write in '" + dir.string() + "' (" + errno_text() +
           "); give a file in a writable directory");
    temp_path_ = name;
    temp_slot_ = register_temp(temp_path_);
  }
  // mkostemp makes the file 0600: give it the mode the replaced file had, or a new file's.
  mode_t mode = 0666 & ~current_umask();
  if (existing) {
    // The owner first: changing it may clear set-id bits, which the chmod then restores. Only
    // root may give a file away; otherwise the owner stays the user, as with any new file.
    if (::fchown(fd_, existing->st_uid, existing->st_gid) != 0) {
    }
    mode = existing->st_mode & 07777;
  }
  if (::fchmod(fd_, mode) != 0) fail(": cannot set the mode of the temporary file (" + errno_text() + ")");
}

void OutputTarget::open_straight(const struct ::stat& existing) {
  const bool fifo = S_ISFIFO(existing.st_mode);
  if (!fifo && !S_ISCHR(existing.st_mode) && !S_ISBLK(existing.st_mode))
    fail(S_ISSOCK(existing.st_mode) ? " is a socket; give a file, a device or a FIFO"
                                    : " is not a file, a device or a FIFO");
  // Non-blocking, so that a FIFO nobody reads is an error at once, not a hang.
  fd_ = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd_ < 0) {
    if (fifo && errno == ENXIO)
      fail(" is a FIFO that no process reads; start its reader first, or give a file");
    fail(": cannot open it for writing (" + errno_text() + ")");
  }
  struct stat opened {};
  if (::fstat(fd_, &opened) != 0 || S_ISREG(opened.st_mode) || S_ISDIR(opened.st_mode))
    fail(" changed while it was being opened; run again");
  // Writes then wait for a slow reader, as on standard output.
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK) != 0)
    fail(": cannot open it for writing (" + errno_text() + ")");
}

void OutputTarget::discard() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!temp_path_.empty()) {
    SignalsHeld held;
    ::unlink(temp_path_.c_str());
    unregister_temp(temp_slot_);
    temp_slot_ = -1;
    temp_path_.clear();
  }
}

OutputTarget::~OutputTarget() {
  if (!committed_) discard();
}

void OutputTarget::commit() {
  if (path_.empty()) {
    standard_output_.flush();
    check_written(standard_output_);
    return;
  }
  file_.flush();
  check_written(file_);
  if (!temp_path_.empty() && ::fsync(fd_) != 0 && errno != EINVAL)
    fail(": writing failed (" + errno_text() + ")");
  const int closed = ::close(fd_);
  fd_ = -1;
  // Linux closes the descriptor even when close() is interrupted.
  if (closed != 0 && errno != EINTR) fail(": writing failed (" + errno_text() + ")");
  if (!temp_path_.empty()) {
    SignalsHeld held;
    if (::rename(temp_path_.c_str(), final_path_.c_str()) != 0)
      fail(": cannot replace '" + final_path_ + "' (" + errno_text() + ")");
    unregister_temp(temp_slot_);
    temp_slot_ = -1;
    temp_path_.clear();
  }
  committed_ = true;
}

// ---- context ---------------------------------------------------------------------------------

nlohmann::json hardware_json(const sim::Hardware& hw) {
  return {{"name", hw.name},
          {"sram_bytes", hw.sram_bytes},
          {"smem_per_sm_bytes", hw.smem_per_sm_bytes},
          {"sm_count", hw.sm_count},
          {"l2_bytes", hw.l2_bytes},
          {"l2_line_bytes", hw.l2_line_bytes},
          {"l2_sector_bytes", hw.l2_sector_bytes},
          {"l2_ways", hw.l2_ways},
          {"l2_partitions", hw.l2_partitions},
          {"hbm_bytes_per_s", hw.hbm_bytes_per_s},
          {"tensor_flops_per_s", hw.tensor_flops_per_s},
          {"cuda_core_flops_per_s", hw.cuda_core_flops_per_s},
          {"exp_per_s", hw.exp_per_s}};
}

nlohmann::json context_json(const RunContext& c) {
  char date[32];
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
  std::string command;
  for (const auto& a : c.command_line) command += (command.empty() ? "" : " ") + a;
  nlohmann::json hw = nlohmann::json::array();
  for (const auto& h : c.hardware) hw.push_back(hardware_json(h));
  nlohmann::json j = {{"version", FLASHIO_VERSION},
                      {"subcommand", c.subcommand},
                      {"command_line", command},
                      {"hardware", hw},
                      {"date", date},
                      {"columns", sim::row_columns()}};
  if (!c.count_method.empty()) j["count"] = c.count_method;
  return j;
}

// ---- writers ---------------------------------------------------------------------------------

namespace {

class CsvWriter : public RowWriter {
 public:
  explicit CsvWriter(std::ostream& out) : out_(out) {}
  void write(const sim::Row& row) override {
    if (!started_) begin();
    out_ << sim::to_csv_line(row) << '\n';
    check_written(out_);
  }
  void finish() override {
    if (!started_) begin();
    out_.flush();
  }

 private:
  void begin() {
    out_ << sim::csv_header() << '\n';
    started_ = true;
  }
  std::ostream& out_;
  bool started_ = false;
};

class JsonWriter : public RowWriter {
 public:
  JsonWriter(std::ostream& out, RunContext context) : out_(out), context_(std::move(context)) {}
  void write(const sim::Row& row) override {
    if (!started_) begin();
    out_ << (first_ ? "\n  " : ",\n  ") << sim::to_json(row).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    first_ = false;
    check_written(out_);
  }
  void finish() override {
    if (!started_) begin();
    out_ << "\n]}\n";
    out_.flush();
  }

 private:
  void begin() {
    out_ << "{\"context\": " << context_json(context_).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << ",\n\"rows\": [";
    started_ = true;
  }
  std::ostream& out_;
  RunContext context_;
  bool started_ = false, first_ = true;
};

class TableWriter : public RowWriter {
 public:
  TableWriter(std::ostream& out, bool all_kernels, TableNotes notes)
      : out_(out), all_kernels_(all_kernels), notes_(std::move(notes)) {}
  void write(const sim::Row& row) override {
    if (all_kernels_ || row.is_total()) rows_.push_back(row);
  }
  void finish() override { print_table(out_, rows_, all_kernels_, notes_); }

 private:
  std::ostream& out_;
  bool all_kernels_;
  TableNotes notes_;
  std::vector<sim::Row> rows_;
};

std::string fixed3(double v) {
  char buf[48];
  const double a = std::abs(v);
  std::snprintf(buf, sizeof buf,
                a >= 100  ? "%.0f"
                : a >= 10 ? "%.1f"
                : a >= 1  ? "%.2f"
                : a >= 0.1 ? "%.3f"
                           : "%.3g",
                v);
  return buf;
}

// A column of the table: its heading and how a row's cell is printed.
struct Column {
  std::string heading;
  bool numeric = false;
  std::function<std::string(const sim::Row&)> cell;
};

std::string optional_text(const std::optional<double>& v, std::string (*format)(double)) {
  return v ? format(*v) : "";
}

// Key columns except those a comparison with standard must ignore (standard ignores M and the
// tiling; the algorithm and kernel are what is compared).
std::string comparison_key(const sim::Row& r) {
  // The tiling and the kernel family are an algorithm's own (standard has neither).
  static const std::set<std::string> ignored = {"algo",    "kernel",  "sram_bytes", "block_r",
                                                "block_c", "block_mask", "kernel_impl"};
  std::string k;
  for (const auto& c : sim::key_columns())
    if (!ignored.count(c)) k += sim::cell(r, c) + "|";
  return k;
}

}  // namespace

void print_table(std::ostream& out, const std::vector<sim::Row>& all_rows, bool all_kernels,
                 const TableNotes& notes) {
  std::vector<const sim::Row*> rows;
  for (const auto& r : all_rows)
    if (all_kernels || r.is_total()) rows.push_back(&r);
  if (rows.empty()) {
    out << "(no rows)\n";
    return;
  }
  // Key columns that are the same in every row go into one heading line; the others become
  // columns. The algorithm always is a column.
  std::vector<Column> columns;
  std::string heading;
  auto varies = [&](const std::string& key) {
    for (const auto* r : rows)
      if (sim::cell(*r, key) != sim::cell(*rows.front(), key)) return true;
    return false;
  };
  for (const std::string& key : sim::key_columns()) {
    if (key == "block_c") continue;  // printed with block_r as Br×Bc
    const bool is_tiling = key == "block_r";
    const bool shown = key == "algo" || (key == "kernel" && all_kernels) || varies(key) ||
                       (is_tiling && varies("block_c"));
    if (shown) {
      if (is_tiling)
        columns.push_back({"Br×Bc", false, [](const sim::Row& r) {
                             if (r.algo == sim::RowAlgo::standard) return std::string("-");  // ignores it
                             return r.block_r && r.block_c ? std::to_string(*r.block_r) + "×" +
                                                                 std::to_string(*r.block_c)
                                                           : std::string();
                           }});
      else if (key == "sram_bytes")
        columns.push_back({"M", false, [](const sim::Row& r) {
                             return r.sram_bytes ? format_size(*r.sram_bytes) : std::string();
                           }});
      else
        columns.push_back({key, key == "batch" || key == "heads" || key == "seqlen" ||
                                    key == "headdim" || key == "dropout" || key == "kv_heads" || key == "seqlen_k" ||
                                    key == "splits" || key == "page_size",
                           [key](const sim::Row& r) { return sim::cell(r, key); }});
      continue;
    }
    const std::string value = sim::cell(*rows.front(), key);
    // Variant columns at their defaults say nothing; leave them out of the heading.
    const sim::Row& first = *rows.front();
    const bool grouped = first.kv_heads != first.heads;
    if ((key == "mask" && value == "0") || (key == "dropout" && value == "0") ||
        (key == "block_mask" && value.empty()) || (key == "kernel" && first.is_total()) ||
        (key == "kv_heads" && !grouped) || (key == "seqlen_k" && first.seqlen_k == first.seqlen) ||
        (key == "gqa_pack" && !grouped) || (key == "splits" && first.splits == 1) ||
        (key == "page_size" && first.page_size == 0) || (key == "lengths" && first.lengths.empty()) ||
        (key == "varlen" && value == "0") ||
        (key == "window_left" && value == "none") || (key == "window_right" && value == "none") ||
        (key == "kernel_impl" && value.empty()))
      continue;
    std::string shown_value = value;
    if (key == "sram_bytes" && rows.front()->sram_bytes) shown_value = format_size(*rows.front()->sram_bytes);
    if (is_tiling) shown_value = value + "×" + sim::cell(*rows.front(), "block_c");
    heading += (heading.empty() ? "" : "  ") + (is_tiling ? std::string("Br×Bc") : key) + "=" +
               shown_value;
  }

  auto any = [&](std::optional<double> sim::Row::*field) {
    for (const auto* r : rows)
      if ((*r).*field) return true;
    return false;
  };
  auto value_column = [&](const char* heading_text, std::optional<double> sim::Row::*field,
                          std::string (*format)(double)) {
    if (any(field))
      columns.push_back({heading_text, true, [field, format](const sim::Row& r) {
                           return optional_text(r.*field, format);
                         }});
  };
  value_column("FLOPs", &sim::Row::flops, format_flops);
  value_column("tensor FLOPs", &sim::Row::flops_tensor, format_flops);
  value_column("io read", &sim::Row::io_read_bytes, format_bytes);
  value_column("io write", &sim::Row::io_write_bytes, format_bytes);
  value_column("dram read", &sim::Row::dram_read_bytes, format_bytes);
  value_column("dram write", &sim::Row::dram_write_bytes, format_bytes);
  value_column("extra memory", &sim::Row::extra_memory_bytes, format_bytes);
  value_column("time ms", &sim::Row::time_ms, fixed3);
  value_column("TFLOP/s", &sim::Row::tflops, fixed3);

  // Against standard attention of the same problem, when the rows have it: how many times
  // fewer io bytes, and how many times faster by the predicted time.
  std::map<std::string, const sim::Row*> standard;
  for (const auto* r : rows)
    if (r->algo == sim::RowAlgo::standard && r->is_total()) standard.emplace(comparison_key(*r), r);
  bool compared = false;
  for (const auto* r : rows)
    compared |= r->algo != sim::RowAlgo::standard && r->is_total() && standard.count(comparison_key(*r));
  if (compared) {
    auto ratio = [&standard](const sim::Row& r, auto get) -> std::string {
      if (!r.is_total()) return "";
      const auto it = standard.find(comparison_key(r));
      if (it == standard.end()) return "";
      const auto base = get(*it->second), mine = get(r);
      if (!base || !mine || *mine <= 0) return "";
      return fixed3(*base / *mine) + "×";
    };
    columns.push_back({"io ÷ std", true, [ratio](const sim::Row& r) {
                         return ratio(r, [](const sim::Row& x) -> std::optional<double> {
                           if (!x.io_read_bytes || !x.io_write_bytes) return std::nullopt;
                           return *x.io_read_bytes + *x.io_write_bytes;
                         });
                       }});
    columns.push_back({"speedup", true, [ratio](const sim::Row& r) {
                         return ratio(r, [](const sim::Row& x) { return x.time_ms; });
                       }});
  }

  // Widths in characters (UTF-8 "×" and "÷" count as one).
  auto width = [](const std::string& s) {
    size_t w = 0;
    for (unsigned char ch : s) w += (ch & 0xC0) != 0x80;
    return w;
  };
  std::vector<std::vector<std::string>> cells(rows.size());
  std::vector<size_t> widths;
  for (const auto& c : columns) widths.push_back(width(c.heading));
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t k = 0; k < columns.size(); ++k) {
      cells[i].push_back(columns[k].cell(*rows[i]));
      widths[k] = std::max(widths[k], width(cells[i][k]));
    }
  auto print_line = [&](const std::vector<std::string>& line) {
    std::string text;
    for (size_t k = 0; k < columns.size(); ++k) {
      const std::string pad(widths[k] - width(line[k]), ' ');
      if (k) text += "  ";
      text += columns[k].numeric ? pad + line[k] : line[k] + (k + 1 < columns.size() ? pad : "");
    }
    out << text << '\n';
  };
  if (!heading.empty()) out << heading << "\n\n";
  std::vector<std::string> headings;
  for (const auto& c : columns) headings.push_back(c.heading);
  print_line(headings);
  size_t total_width = 0;
  for (size_t w : widths) total_width += w + 2;
  std::string rule;
  for (size_t k = 0; k + 2 < total_width; ++k) rule += "-";
  out << rule << '\n';
  for (const auto& line : cells) print_line(line);
  if (!notes.lines.empty()) out << '\n';
  for (const auto& line : notes.lines) out << line << '\n';
}

void check_table_size(const OutputOptions& options, int64_t rows) {
  if (options.format != Format::table) return;
  // At most every key column (Br×Bc as one), nine value columns and the two ratios to standard.
  const auto columns = static_cast<int64_t>(sim::key_columns().size()) + 11;
  if (rows > kMaxTableCells / columns)
    throw UsageError("--format table keeps every row until the end: up to " + std::to_string(rows) + " rows × " +
                     std::to_string(columns) + " columns here, more than its limit of " +
                     std::to_string(kMaxTableCells) + " cells; allowed: a smaller sweep, or --format csv or json "
                     "(written as they come)");
}

std::unique_ptr<RowWriter> make_row_writer(const OutputOptions& options, std::ostream& out,
                                           const RunContext& context, TableNotes notes) {
  switch (options.format) {
    case Format::csv: return std::make_unique<CsvWriter>(out);
    case Format::json: return std::make_unique<JsonWriter>(out, context);
    case Format::table: break;
  }
  return std::make_unique<TableWriter>(out, options.all_kernels, std::move(notes));
}

}  // namespace flashio::cli
