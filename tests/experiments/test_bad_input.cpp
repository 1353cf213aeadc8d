// Bad input (experiments/README.md, "Errors and exit status"): one line on stderr naming the
// option, exit status 2, and no output file created or truncated. Run through the binary, as a
// user meets them.
#include <catch2/catch.hpp>
#include <algorithm>
#include <set>
#include <sstream>

#include "cli_harness.h"
#include "experiments/usage_error.h"
#include "sim/errors.h"
#include "sim/row.h"

using namespace flashio::cli::test;

namespace {

struct BadCase {
  std::vector<std::string> args;
  std::string names;  // what the one line must mention
};

// Runs the case twice, --out naming a new file and an existing one; checks status, the one
// line, and that neither file was touched.
void check_rejected(const BadCase& c) {
  INFO("flashio " << [&] {
    std::string s;
    for (const auto& a : c.args) s += a + " ";
    return s;
  }());
  TempDir dir;
  const auto fresh = dir / "fresh.csv", existing = dir / "existing.csv";
  write_file(existing, "keep me\n");
  for (const auto& out : {fresh, existing}) {
    auto args = c.args;
    if (args.front() != "explain") args.insert(args.end(), {"--out", out.string()});
    const CliResult r = run_binary(args);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    const auto lines = r.err_lines();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find(c.names) != std::string::npos);
  }
  CHECK(!std::filesystem::exists(fresh));
  CHECK(read_file(existing) == "keep me\n");
  int entries = 0;  // no temporary left behind
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  CHECK(entries == 1);
}

}  // namespace

TEST_CASE("an unknown option is rejected with its name") {
  check_rejected({{"simulate", "--frobnicate", "3"}, "--frobnicate"});
}

TEST_CASE("an unknown algorithm is rejected with the allowed ones") {
  check_rejected({{"simulate", "--algo", "flash2,flash3"}, "standard, flash1, flash2, blocksparse"});
}

TEST_CASE("N, d, B, H <= 0 are rejected naming the option") {
  check_rejected({{"simulate", "--seqlen", "0"}, "--seqlen"});
  check_rejected({{"simulate", "--seqlen=-97"}, "--seqlen"});
  check_rejected({{"simulate", "--headdim", "0"}, "--headdim"});
  check_rejected({{"simulate", "--batch", "0"}, "--batch"});
  check_rejected({{"simulate", "--heads=-1"}, "--heads"});
  check_rejected({{"bound", "--seqlen", "1025,0"}, "--seqlen"});
}

TEST_CASE("a single tiling that does not fit in M is an error naming the tiling and M") {
  check_rejected({{"simulate", "--algo", "flash2", "--block-r", "1025", "--block-c", "1025"},
                  "--block-r"});
}

TEST_CASE("M < d is an error naming --sram") {
  check_rejected({{"simulate", "--algo", "flash1", "--sram", "97B", "--headdim", "64"}, "--sram"});
}

TEST_CASE("a configuration the model refuses is an error naming the option that sets it") {
  check_rejected({{"simulate", "--algo", "flash2", "--mask", "--causal"}, "--mask: "});
  check_rejected({{"simulate", "--algo", "flash2", "--dropout", "0.1", "--splits", "2"}, "--dropout: "});
  check_rejected({{"simulate", "--algo", "flash1", "--dropout", "0.1", "--window-left", "8"}, "--dropout: "});
  check_rejected({{"simulate", "--algo", "flash2", "--seqlen", "4096", "--count", "execute"},
                  "--count: "});
  check_rejected({{"explain", "--seqlen", "10", "--row", "10"}, "--row: "});
}

TEST_CASE("flash1 and flash2 take --dropout (fused into their tiles), forward and backward, causal too") {
  const CliResult r = run_binary({"simulate", "--algo", "flash1,flash2", "--dropout", "0,0.1", "--pass", "fwdbwd",
                                  "--causal=0,1", "--seqlen", "512", "--format", "csv"});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  // A total row for each algorithm × dropout × causal.
  std::istringstream lines(r.out);
  int totals = 0;
  for (std::string line; std::getline(lines, line);)
    totals += line.rfind("model,flash1,fwdbwd,total,", 0) == 0 || line.rfind("model,flash2,fwdbwd,total,", 0) == 0;
  CHECK(totals == 2 * 2 * 2);
}

TEST_CASE("a sweep in which no configuration can exist is an error") {
  check_rejected({{"simulate", "--algo", "flash1,flash2", "--block-r", "2048,4096", "--block-c", "2048"},
                  "none of the 4 configurations"});
}

TEST_CASE("malformed values are rejected naming the option and what is allowed") {
  check_rejected({{"simulate", "--format", "xml"}, "--format"});
  check_rejected({{"simulate", "--dtype", "fp8"}, "fp16, bf16, fp32"});
  check_rejected({{"simulate", "--sram", "12 parsecs"}, "KiB"});
  check_rejected({{"simulate", "--count", "guess"}, "--count"});
  check_rejected({{"simulate", "--causal=2"}, "--causal"});
  check_rejected({{"simulate", "--seqlen", "4096:1024:x2"}, "--seqlen"});
  check_rejected({{"simulate", "--hw", "no-such-gpu"}, "--hw"});
  check_rejected({{"simulate", "--algo", "blocksparse", "--block-mask", "stripes:3"}, "--block-mask"});
  check_rejected({{"simulate", "--algo", "blocksparse", "--block-mask", "banded:1@0"}, "--block-mask"});
  check_rejected({{"simulate", "--algo", "blocksparse", "--block-mask", "random:0.5@x"}, "--block-mask"});
  check_rejected({{"simulate", "--dropout", "1.5"}, "--dropout"});
}

TEST_CASE("an unknown subcommand is rejected with the allowed ones") {
  const CliResult r = run_binary({"simulat"});
  CHECK(r.status == 2);
  REQUIRE(r.err_lines().size() == 1);
  CHECK(r.err.find("simulate, bound, explain") != std::string::npos);
  CHECK(run_binary({}).status == 2);
}

TEST_CASE("a malformed experiment file is rejected naming --config") {
  TempDir files;
  write_file(files / "not_options.cfg", "seqlen = 1024\nthis line has no equals sign\n");
  write_file(files / "unknown.cfg", "seqlen = 1024\nfrobnicate = 3\n");
  write_file(files / "bad_value.cfg", "seqlen = many\n");
  check_rejected({{"simulate", "--config", (files / "not_options.cfg").string()}, "--config"});
  check_rejected({{"simulate", "--config", (files / "unknown.cfg").string()}, "frobnicate"});
  check_rejected({{"simulate", "--config", (files / "bad_value.cfg").string()}, "--seqlen"});
  check_rejected({{"simulate", "--config", (files / "missing.cfg").string()}, "--config"});
}

TEST_CASE("an unwritable --out is rejected before any work, naming --out") {
  TempDir dir;
  for (const std::string& out : {std::string("/nonexistent-flashio-dir/rows.csv"), dir.path().string()}) {
    const CliResult r = run_binary({"simulate", "--out", out});
    CHECK(r.status == 2);
    REQUIRE(r.err_lines().size() == 1);
    CHECK(r.err.find("--out") != std::string::npos);
  }
  CHECK(!std::filesystem::exists("/nonexistent-flashio-dir"));
}

TEST_CASE("explain refuses problems too large to trace and sweeps") {
  check_rejected({{"explain", "--seqlen", "65"}, "--seqlen"});
  check_rejected({{"explain", "--seqlen", "8,16"}, "one configuration"});
  check_rejected({{"explain", "--row", "10", "--seqlen", "10"}, "--row"});
}

TEST_CASE("the model's errors reach the user named by the option that sets the field") {
  // Every field's option is one the runner takes (simulate's, or explain's --row).
  const std::string help = run_in_process({"simulate", "--help"}).out +
                           run_in_process({"explain", "--help"}).out;
  for (flashio::sim::Field field : flashio::sim::kAllFields) {
    const std::string option(flashio::cli::option_name(field));
    INFO(flashio::sim::field_name(field) << " -> " << option);
    CHECK(option.rfind("--", 0) == 0);
    size_t start = 0;  // "--block-r/--block-c" names two options
    while (start < option.size()) {
      const size_t slash = option.find('/', start);
      const std::string one =
          option.substr(start, slash == std::string::npos ? slash : slash - start);
      CHECK(help.find("  " + one + " ") != std::string::npos);
      start = slash == std::string::npos ? option.size() : slash + 1;
    }
  }
  const flashio::sim::InvalidInput e(flashio::sim::Field::sram_bytes, "must be a positive size");
  CHECK(flashio::cli::usage_message(e) == "--sram: must be a positive size");
  const flashio::sim::InvalidInput plain("r.csv:2: expected 20 columns");
  CHECK(flashio::cli::usage_message(plain) == "r.csv:2: expected 20 columns");
  // Through the runner: the field's option, and no sim spelling of it.
  const CliResult r = run_in_process({"explain", "--seqlen", "10", "--row", "10"});
  CHECK(r.status == 2);
  CHECK(r.err.find("--row: ") != std::string::npos);
  CHECK(r.err.find("tracked_row") == std::string::npos);
}

TEST_CASE("grouped-query and Nq != Nk shapes: bad values are rejected naming the option, and the GPU "
          "subcommands refuse what no kernel is built for") {
  check_rejected({{"simulate", "--heads", "12", "--kv-heads", "5"}, "--kv-heads"});
  check_rejected({{"simulate", "--kv-heads", "0"}, "--kv-heads"});
  check_rejected({{"simulate", "--seqlen-k", "0"}, "--seqlen-k"});
  check_rejected({{"simulate", "--seqlen", "100", "--seqlen-k", "50", "--causal"}, "--seqlen-k"});
  check_rejected({{"simulate", "--gqa-pack", "2"}, "--gqa-pack"});
  check_rejected({{"simulate", "--algo", "blocksparse", "--heads", "4", "--kv-heads", "2"}, "--kv-heads"});
  check_rejected({{"explain", "--seqlen", "16", "--seqlen-k", "32", "--headdim", "4", "--sram", "1KiB"}, "--seqlen-k"});
}

TEST_CASE("the options kv-heads, seqlen-k and gqa-pack are key columns of every row, resolved when not given") {
  const CliResult r = run_in_process({"simulate", "--algo", "flash2", "--heads", "8", "--kv-heads", "2", "--seqlen", "1",
                               "--seqlen-k", "4096", "--gqa-pack", "0,1", "--format", "csv"});
  REQUIRE(r.status == 0);
  CHECK(r.out.find(",kv_heads,seqlen_k,gqa_pack,splits,") != std::string::npos);
  CHECK(r.out.find(",2,4096,0,1,") != std::string::npos);
  CHECK(r.out.find(",2,4096,1,1,") != std::string::npos);
  const CliResult square = run_in_process({"simulate", "--algo", "flash2", "--heads", "8", "--seqlen", "97", "--format", "csv"});
  REQUIRE(square.status == 0);
  CHECK(square.out.find(",8,97,1,1,") != std::string::npos);  // Hkv = H, Nk = N, one split
}

TEST_CASE("bound's derived tiling counts the key tiles over Nk, the query tiles over Nq") {
  const CliResult r = run_in_process({"bound", "--seqlen", "1", "--seqlen-k", "4096", "--headdim", "64"});
  REQUIRE(r.status == 0);
  // flash2's rule at M = 227 KiB, d = 64: Br = 454, Bc = 64, so Tr = 1 and Tc = 4096 / 64.
  CHECK(r.out.find("Bc = min(Br, d) = 64; Tr = 1, Tc = 64") != std::string::npos);
}

TEST_CASE("split-KV: --splits takes counts and auto, rejects 0, words, counts beyond the key tiles and other "
          "algorithms naming the option, and its rows carry the split count") {
  check_rejected({{"simulate", "--splits", "0"}, "--splits"});
  // best needs the time model's calibration, which the a100-40gb preset does not carry.
  check_rejected({{"simulate", "--algo", "flash2", "--splits", "best", "--hw", "a100-40gb", "--seqlen", "1",
                   "--seqlen-k", "4096", "--block-r", "64", "--block-c", "64"},
                  "--splits"});
  check_rejected({{"simulate", "--splits", "two"}, "--splits"});
  check_rejected({{"simulate", "--algo", "flash1", "--splits", "2"}, "--splits"});
  check_rejected({{"simulate", "--seqlen", "100", "--block-r", "64", "--block-c", "64", "--splits", "3"}, "--splits"});
  check_rejected({{"explain", "--seqlen", "16", "--headdim", "4", "--sram", "1KiB", "--splits", "2"}, "--splits"});
  const CliResult r = run_in_process({"simulate", "--algo", "flash2", "--batch", "8", "--heads", "32", "--kv-heads", "8",
                                      "--seqlen", "1", "--seqlen-k", "32768", "--headdim", "128", "--tiling", "kernel",
                                      "--splits", "1,auto,5", "--format", "csv", "--kernels"});
  REQUIRE(r.status == 0);
  // auto on the H200: 64 packed row tiles; 2 splits fill 128 of the 132 SMs (97 % of a wave).
  CHECK(r.out.find(",8,32768,1,2,") != std::string::npos);
  CHECK(r.out.find(",8,32768,1,5,") != std::string::npos);
  CHECK(r.out.find("flash2_fwd_combine") != std::string::npos);
}

TEST_CASE("a paged KV cache: --page-size rejects sizes that are not multiples of 16, other algorithms and a "
          "backward naming the option, and its rows carry the page size") {
  check_rejected({{"simulate", "--algo", "flash2", "--page-size", "24"}, "--page-size"});
  check_rejected({{"simulate", "--algo", "flash2", "--page-size", "-16"}, "--page-size"});
  check_rejected({{"simulate", "--algo", "flash1", "--page-size", "16"}, "--page-size"});
  check_rejected({{"simulate", "--algo", "flash2", "--page-size", "16", "--pass", "fwdbwd"}, "--page-size"});
  const CliResult r = run_in_process({"simulate", "--algo", "flash2", "--batch", "2", "--heads", "8", "--kv-heads", "2",
                                      "--seqlen", "1", "--seqlen-k", "1000", "--page-size", "0,16", "--format", "csv"});
  REQUIRE(r.status == 0);
  CHECK(r.out.find(",splits,page_size,lengths,") != std::string::npos);
  CHECK(r.out.find(",2,1000,1,1,16,,") != std::string::npos);
  CHECK(r.out.find(",2,1000,1,1,0,,") != std::string::npos);
}

namespace {
std::vector<flashio::sim::Row> csv_rows(const std::string& text) {
  std::istringstream in(text);
  return flashio::sim::read_rows_csv(in, "output");
}
}  // namespace

TEST_CASE("per-sequence key lengths: --lengths rejects unreadable files, bad lines, a count other than B, lengths "
          "beyond --seqlen-k, other algorithms and explain naming the option, and its rows carry the file") {
  TempDir dir;
  const auto good = dir / "lengths.txt", bad = dir / "bad.txt";
  write_file(good, "4096\n100\n");
  write_file(bad, "4096\nlots\n");
  check_rejected({{"simulate", "--algo", "flash2", "--lengths", (dir / "missing.txt").string()}, "--lengths"});
  check_rejected({{"simulate", "--algo", "flash2", "--batch", "2", "--seqlen-k", "4096", "--lengths", bad.string()},
                  "--lengths"});
  check_rejected({{"simulate", "--algo", "flash2", "--batch", "3", "--seqlen-k", "4096", "--lengths", good.string()},
                  "--lengths"});
  check_rejected({{"simulate", "--algo", "flash2", "--batch", "2", "--seqlen-k", "2048", "--lengths", good.string()},
                  "--lengths"});
  check_rejected({{"simulate", "--algo", "standard", "--batch", "2", "--seqlen-k", "4096", "--seqlen", "4096", "--lengths",
                   good.string()},
                  "--lengths"});
  check_rejected({{"simulate", "--algo", "blocksparse", "--batch", "2", "--seqlen", "4096", "--lengths", good.string()},
                  "--lengths"});
  const auto small = dir / "small.txt";
  write_file(small, "16\n8\n");
  check_rejected({{"explain", "--batch", "2", "--seqlen", "16", "--headdim", "4", "--sram", "1KiB", "--lengths",
                   small.string()},
                  "--lengths"});
  const CliResult r = run_in_process({"simulate", "--algo", "flash2", "--batch", "2", "--seqlen", "1", "--seqlen-k",
                                      "4096", "--lengths", good.string(), "--format", "csv"});
  REQUIRE(r.status == 0);
  CHECK(r.out.find("," + good.string() + ",") != std::string::npos);
  // flash1 and flash2 take them in both passes; a sweep with standard skips it there.
  const CliResult both = run_in_process({"simulate", "--algo", "standard,flash1,flash2", "--batch", "2", "--seqlen", "4096",
                                         "--lengths", good.string(), "--pass", "fwd,bwd,fwdbwd", "--format", "csv"});
  REQUIRE(both.status == 0);
  CHECK(both.err.empty());
  std::istringstream lines(both.out);
  int totals = 0, standard = 0;
  for (std::string line; std::getline(lines, line);) {
    const bool total = line.find(",total,") != std::string::npos;
    totals += total;
    standard += total && line.rfind("model,standard,", 0) == 0;
  }
  CHECK(totals == 2 * 3);
  CHECK(standard == 0);
}

TEST_CASE("key padding: --mask runs in flash1 and flash2 as the built-in key lengths, forward and backward, its rows "
          "carry mask=1, and with causal, --lengths or blocksparse it is an error naming --mask") {
  TempDir dir;
  const auto lengths = dir / "lengths.txt";
  write_file(lengths, "300\n263\n225\n188\n");  // the built-in 300 - floor(b*300/8) of B = 4
  for (const std::string algo : {"flash1", "flash2"}) {
    INFO(algo);
    const std::vector<std::string> base = {"simulate", "--algo", algo, "--batch", "4", "--heads", "2", "--seqlen", "300",
                                           "--headdim", "64", "--pass", "fwdbwd", "--format", "csv"};
    auto with = [&](std::vector<std::string> extra) {
      std::vector<std::string> args = base;
      args.insert(args.end(), extra.begin(), extra.end());
      return run_in_process(args);
    };
    const CliResult mask = with({"--mask"}), file = with({"--lengths", lengths.string()}), none = with({});
    REQUIRE(mask.status == 0);
    REQUIRE(file.status == 0);
    REQUIRE(none.status == 0);
    CHECK(mask.err.empty());
    const std::vector<flashio::sim::Row> m = csv_rows(mask.out), f = csv_rows(file.out), n = csv_rows(none.out);
    REQUIRE(m.size() == f.size());
    REQUIRE(m.size() == n.size());
    for (size_t i = 0; i < m.size(); ++i) {
      CHECK(m[i].mask == 1);
      CHECK(f[i].mask == 0);
      CHECK(m[i].lengths.empty());
      CHECK(m[i].io_read_bytes == f[i].io_read_bytes);  // the same key lengths
      CHECK(m[i].io_write_bytes == f[i].io_write_bytes);
      CHECK(m[i].flops == f[i].flops);
      CHECK(m[i].time_ms == f[i].time_ms);
    }
    CHECK(*m.back().io_read_bytes < *n.back().io_read_bytes);  // padding skips keys
    CHECK(*m.back().flops < *n.back().flops);                  // the convention counts each sequence's own keys
    check_rejected({{"simulate", "--algo", algo, "--mask", "--causal"}, "--mask: causal"});
    check_rejected({{"simulate", "--algo", algo, "--batch", "4", "--seqlen", "300", "--mask", "--lengths", lengths.string()},
                    "--mask: "});
    check_rejected({{"explain", "--algo", algo, "--batch", "2", "--seqlen", "16", "--headdim", "4", "--sram", "1KiB",
                     "--mask"},
                    "--mask: "});
  }
  check_rejected({{"simulate", "--algo", "blocksparse", "--mask"}, "--mask: "});
}

TEST_CASE("a variable-length batch: --varlen without --lengths, with another algorithm, --seqlen-k other than --seqlen, "
          "--mask, --dropout, a window, --splits, --page-size or in explain is an error naming --varlen, and --lengths F "
          "--varlen=0,1 gives the padded and the packed rows side by side") {
  TempDir dir;
  const auto lengths = dir / "lengths.txt", small = dir / "small.txt", long_one = dir / "long.txt";
  write_file(lengths, "1\n17\n1000\n513\n");
  write_file(small, "16\n8\n");
  write_file(long_one, "1\n17\n1025\n513\n");
  const std::vector<std::string> base = {"simulate", "--batch", "4", "--heads", "8", "--seqlen", "1024",
                                         "--headdim", "64", "--lengths", lengths.string(), "--varlen"};
  auto with = [&](std::vector<std::string> extra, std::vector<std::string> args = {}) {
    if (args.empty()) args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  check_rejected({{"simulate", "--algo", "flash2", "--varlen"}, "--varlen: "});
  for (const std::string algo : {"standard", "flash1", "blocksparse"})
    check_rejected({with({"--algo", algo}), "--varlen: packs sequences as FlashAttention-2's varlen API"});
  check_rejected({with({"--algo", "flash2", "--seqlen-k", "2048"}), "--varlen: "});
  check_rejected({with({"--algo", "flash2", "--mask"}), "--varlen: "});
  check_rejected({with({"--algo", "flash2", "--dropout", "0.1"}), "--varlen: "});
  check_rejected({with({"--algo", "flash2", "--window-left", "16"}), "--varlen: "});
  check_rejected({with({"--algo", "flash2", "--splits", "2"}), "--varlen: "});
  check_rejected({with({"--algo", "flash2", "--page-size", "16"}), "--varlen: "});
  check_rejected({{"simulate", "--algo", "flash2", "--batch", "4", "--seqlen", "1024", "--lengths", long_one.string(),
                   "--varlen"},
                  "--lengths: "});
  check_rejected({{"explain", "--algo", "flash2", "--batch", "2", "--seqlen", "16", "--headdim", "4", "--sram", "1KiB",
                   "--lengths", small.string(), "--varlen"},
                  "--varlen: "});
  // Allowed: causal (each packed sequence is its own square), grouped-query attention packed and not,
  // --splits auto (one split), and a sweep of all algorithms, the others skipped at varlen = 1.
  for (const std::string pack : {"0", "1"}) {
    const CliResult r = run_in_process(with({"--algo", "flash2", "--causal", "--kv-heads", "2", "--gqa-pack", pack,
                                             "--splits", "auto", "--pass", "fwdbwd", "--format", "csv"}));
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    const std::vector<flashio::sim::Row> rows = csv_rows(r.out);
    REQUIRE(rows.size() == 5);
    for (const auto& row : rows) {
      CHECK(row.varlen == 1);
      CHECK(row.splits == 1);
    }
  }
  const std::vector<std::string> sweep = {"simulate", "--algo", "standard,flash1,flash2", "--batch", "4", "--heads", "8",
                                          "--seqlen", "1024", "--headdim", "64", "--lengths", lengths.string(),
                                          "--varlen=0,1", "--pass", "fwdbwd", "--format", "csv"};
  const CliResult r = run_in_process(sweep);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  std::vector<const flashio::sim::Row*> totals;
  const std::vector<flashio::sim::Row> rows = csv_rows(r.out);
  for (const auto& row : rows)
    if (row.is_total()) totals.push_back(&row);
  REQUIRE(totals.size() == 3);  // padded: flash1, flash2 (standard takes no lengths); packed: flash2
  CHECK(totals[0]->algo == flashio::sim::RowAlgo::flash1);
  CHECK(totals[0]->varlen == 0);
  CHECK(totals[1]->algo == flashio::sim::RowAlgo::flash2);
  CHECK(totals[1]->varlen == 0);
  CHECK(totals[2]->algo == flashio::sim::RowAlgo::flash2);
  CHECK(totals[2]->varlen == 1);
  CHECK(totals[2]->lengths == lengths.string());
  // The padding's cost: the packed row moves and computes less.
  CHECK(*totals[2]->io_read_bytes < *totals[1]->io_read_bytes);
  CHECK(*totals[2]->io_write_bytes < *totals[1]->io_write_bytes);
  CHECK(*totals[2]->flops < *totals[1]->flops);
  // The table shows varlen as a column where it varies.
  std::vector<std::string> table = sweep;
  table.resize(table.size() - 2);
  const CliResult shown = run_in_process(table);
  REQUIRE(shown.status == 0);
  CHECK(shown.out.find("varlen") != std::string::npos);
}

TEST_CASE("split-KV: --splits best is the count the time model predicts fastest, auto or best naming a count "
          "already listed adds no row, and a count above 1 skips the other algorithms of the sweep") {
  const std::vector<std::string> decode = {"simulate", "--batch", "8", "--heads", "32", "--kv-heads", "8", "--seqlen",
                                           "1", "--seqlen-k", "131072", "--headdim", "128", "--tiling", "kernel",
                                           "--format", "csv"};
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = decode;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_in_process(args);
  };
  const CliResult best = run({"--algo", "flash2", "--splits", "best"});
  REQUIRE(best.status == 0);
  const std::vector<flashio::sim::Row> best_rows = csv_rows(best.out);
  REQUIRE(best_rows.size() == 3);  // flash2_fwd, flash2_fwd_combine, total
  const int64_t chosen = best_rows.front().splits;
  const CliResult all = run({"--algo", "flash2", "--splits", "1:128"});
  REQUIRE(all.status == 0);
  double fastest = 1e300;
  for (const flashio::sim::Row& r : csv_rows(all.out))
    if (r.is_total()) fastest = std::min(fastest, *r.time_ms);
  for (const flashio::sim::Row& r : best_rows)
    if (r.is_total()) CHECK(*r.time_ms == Approx(fastest));
  CHECK(chosen > 1);
  // auto and best resolving to a listed count, and flash1 with a count above 1: one row each.
  const CliResult mixed = run({"--algo", "flash1,flash2", "--splits", "1,2,auto", "--count", "formula"});
  REQUIRE(mixed.status == 0);
  int flash1_totals = 0, flash2_totals = 0;
  for (const flashio::sim::Row& r : csv_rows(mixed.out))
    if (r.is_total()) (r.algo == flashio::sim::RowAlgo::flash1 ? flash1_totals : flash2_totals) += 1;
  CHECK(flash1_totals == 1);  // splits 1 only; auto resolves to 1 for flash1
  CHECK(flash2_totals == 2);  // 1 and 2; auto resolves to 2 here
}

TEST_CASE("a sliding window: --window-left and --window-right reject negative and non-numeric sides, causal with a "
          "right side, a window over a block mask or splits, naming the option, and rows carry the window") {
  check_rejected({{"simulate", "--algo", "flash2", "--window-left", "-2"}, "--window-left"});
  check_rejected({{"simulate", "--algo", "flash2", "--window-right", "x"}, "--window-right"});
  check_rejected({{"simulate", "--algo", "flash2", "--causal", "--window-right", "4"}, "--window-right"});
  check_rejected({{"simulate", "--algo", "flash2", "--window-left", "8", "--splits", "2"}, "--window-left"});
  check_rejected({{"simulate", "--algo", "blocksparse", "--block-mask", "banded:1", "--window-left", "8"}, "--window-left"});
  const CliResult r = run_in_process({"simulate", "--algo", "flash2", "--batch", "1", "--heads", "2", "--seqlen", "1000",
                                      "--window-left", "16,none", "--window-right", "0", "--format", "csv"});
  REQUIRE(r.status == 0);
  CHECK(r.out.find(",window_left,window_right,") != std::string::npos);
  CHECK(r.out.find(",16,0,") != std::string::npos);
  CHECK(r.out.find(",none,0,") != std::string::npos);
}

TEST_CASE("the forward kernel's family: --kernel rejects an unknown name, a dense-only family with a variant, a tiling "
          "without the family, flash1 and standard, naming --kernel and what is allowed") {
  check_rejected({{"simulate", "--algo", "flash2", "--kernel", "wgmma3"}, "--kernel 'wgmma3' is unknown; allowed: "
                                                                         "mma_sync, wgmma, wgmma_ws"});
  check_rejected({{"simulate", "--algo", "flash2", "--kernel", "mma_sync,"}, "--kernel"});
  // wgmma_ws runs dense attention only: refused with dropout at its own tiling (d = 128 128x128)
  // and as a default, and at a tiling it lacks (d = 64 128x64) whatever the problem.
  check_rejected({{"simulate", "--algo", "flash2", "--headdim", "128", "--block-r", "128", "--block-c", "128",
                   "--kernel", "wgmma_ws", "--dropout", "0.1"},
                  "--kernel: "});
  check_rejected({{"simulate", "--algo", "flash2", "--tiling", "kernel", "--kernel", "wgmma_ws", "--dropout", "0.1"},
                  "--kernel: "});
  check_rejected({{"simulate", "--algo", "flash2", "--block-r", "128", "--block-c", "64", "--kernel", "wgmma_ws"},
                  "--kernel: no flash2 fwd kernel for d=64 fp16 128x64 on wgmma_ws"});
  check_rejected({{"simulate", "--algo", "flash2", "--headdim", "64", "--block-r", "64", "--block-c", "64", "--kernel",
                   "wgmma"},
                  "--kernel: no flash2 fwd kernel for d=64 fp16 64x64 on wgmma"});
  check_rejected({{"simulate", "--algo", "flash2", "--headdim", "128", "--block-r", "128", "--block-c", "128",
                   "--kernel", "mma_sync"},
                  "allowed at that tiling: wgmma"});
  // --tiling kernel takes the family's default: d = 128 has none on mma_sync.
  check_rejected({{"simulate", "--algo", "flash2", "--headdim", "128", "--tiling", "kernel", "--kernel", "mma_sync"},
                  "--kernel: no default flash2 fwd kernel on mma_sync for d=128 fp16; give its tiling"});
  check_rejected({{"simulate", "--algo", "flash1", "--tiling", "kernel", "--kernel", "wgmma_ws"}, "--kernel: "});
  check_rejected({{"simulate", "--algo", "standard", "--kernel", "mma_sync"}, "--kernel: "});
  // Every algorithm of the default list refuses it (standard is left out): one line, the first refusal's.
  check_rejected({{"simulate", "--block-r", "64", "--block-c", "64", "--kernel", "wgmma"}, "--kernel: "});
  // A backward alone runs the family's forward first (at the backward's given tiling here).
  check_rejected({{"simulate", "--algo", "flash2", "--pass", "bwd", "--block-r", "64", "--block-c", "64", "--kernel",
                   "wgmma"},
                  "--kernel: "});
  check_rejected({{"tune", "--algo", "flash1", "--kernel", "wgmma"}, "--kernel: no flash1 fwd kernel on wgmma"});
  check_rejected({{"bound", "--algo", "flash2", "--kernel", "wgmma"}, "--kernel: "});
}

TEST_CASE("a kernel family list: --kernel sweeps the forward's family like any list, kernel_impl the rows' key, "
          "a family a tiling lacks skipped, standard left out where the sweep runs a tiled algorithm") {
  // 128x128: d = 64's forward is mma_sync, d = 128's wgmma. Each family runs where it is built.
  const CliResult r = run_in_process({"simulate", "--algo", "standard,flash2", "--headdim", "64,128", "--block-r",
                                      "128", "--block-c", "128", "--kernel", "mma_sync,wgmma", "--pass", "fwd,bwd",
                                      "--format", "csv"});
  REQUIRE(r.status == 0);
  // Standard is not applicable (not counted); flash2 at the family its tiling lacks is skipped.
  CHECK(r.err.find("skipped 4 of 8 configurations") != std::string::npos);
  CHECK(r.err.find("--kernel: no flash2 fwd kernel") != std::string::npos);
  const auto lines = split_lines(r.out);
  REQUIRE(!lines.empty());
  const auto header = split_csv(lines[0]);
  const auto column = [&](const std::string& name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const size_t impl = column("kernel_impl"), algo = column("algo"), d = column("headdim"), pass = column("pass");
  REQUIRE(impl < header.size());
  std::set<std::string> seen;
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto cells = split_csv(lines[i]);
    CHECK(cells[algo] == "flash2");
    // A forward row names its family; a backward row the backward's, at the same (given) tiling: its
    // first entry (mma_sync at d = 64), none at d = 128 (its backwards are 64x128).
    if (cells[pass] == "fwd")
      CHECK(cells[impl] == (cells[d] == "64" ? "mma_sync" : "wgmma"));
    else
      CHECK(cells[impl] == (cells[d] == "64" ? "mma_sync" : ""));
    seen.insert(cells[d] + " " + cells[pass]);
  }
  CHECK(seen == std::set<std::string>{"64 fwd", "64 bwd", "128 fwd", "128 bwd"});
  const CliResult unset = run_in_process({"simulate", "--algo", "standard,flash2", "--headdim", "128", "--block-r",
                                          "128", "--block-c", "128", "--format", "csv"});
  REQUIRE(unset.status == 0);
  CHECK(unset.out.find(",none,none,wgmma,") != std::string::npos);  // flash2: the tiling's first kernel
  CHECK(unset.out.find(",none,none,,") != std::string::npos);       // standard: no built kernel
  // At the kernels' default tilings a backward row names the default backward (wgmma, dense only),
  // a forward+backward row its forward (wgmma_ws); with dropout the backward is mma_sync.
  const auto impl_of_total = [](const std::vector<std::string>& args) {
    const CliResult run = run_in_process(args);
    REQUIRE(run.status == 0);
    const auto rows = split_lines(run.out);
    const auto head = split_csv(rows.at(0));
    const size_t at = static_cast<size_t>(std::find(head.begin(), head.end(), "kernel_impl") - head.begin());
    const size_t kernel = static_cast<size_t>(std::find(head.begin(), head.end(), "kernel") - head.begin());
    for (const auto& line : rows)
      if (const auto cells = split_csv(line); cells.at(kernel) == "total") return cells.at(at);
    return std::string("no total row");
  };
  for (const char* headdim : {"64", "128"}) {
    CHECK(impl_of_total({"simulate", "--algo", "flash2", "--headdim", headdim, "--tiling", "kernel", "--pass", "bwd",
                         "--format", "csv"}) == "wgmma");
    CHECK(impl_of_total({"simulate", "--algo", "flash2", "--headdim", headdim, "--tiling", "kernel", "--pass",
                         "fwdbwd", "--format", "csv"}) == "wgmma_ws");
    CHECK(impl_of_total({"simulate", "--algo", "flash2", "--headdim", headdim, "--tiling", "kernel", "--pass", "bwd",
                         "--dropout", "0.1", "--format", "csv"}) == "mma_sync");
  }
}
