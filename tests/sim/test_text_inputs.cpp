// The text files a user hands the model (hardware files, block-mask files, rows csv, the
// occupancy csv) are read as written: a leading UTF-8 byte-order mark is not part of the first
// key or cell, quoted csv fields come back as they were written, and values that the model
// cannot use are refused with one message naming the file, the line and the key.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "sim/block_mask.h"
#include "sim/errors.h"
#include "sim/hardware.h"
#include "sim/kernel_catalog.h"
#include "sim/row.h"

using namespace flashio::sim;

namespace {

const std::string kBom = "\xEF\xBB\xBF";

// A file under the temp dir, removed when the test ends.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& name)
      : path((std::filesystem::temp_directory_path() /
              ("flashio-sim-" + std::to_string(::getpid()) + "-" + name))
                 .string()) {}
  ~TempFile() { std::remove(path.c_str()); }
  void write(const std::string& text) const { std::ofstream(path, std::ios::binary) << text; }
};

const std::string kHardware =
    "name = bom-machine\nsram_bytes = 100KiB\nsm_count = 7\nl2_bytes = 1MiB\n"
    "hbm_bytes_per_s = 1e12\ntensor_flops_per_s = 1e14\ncuda_core_flops_per_s = 1e13\n"
    "exp_per_s = 1e12\n";

}  // namespace

TEST_CASE("a leading UTF-8 byte-order mark is skipped by every text reader", "[bom]") {
  SECTION("hardware file: the first key is 'name', not '\\ufeffname'") {
    TempFile f("bom_hw.txt");
    f.write(kBom + kHardware);
    const Hardware h = load_hardware_file(f.path);
    CHECK(h.name == "bom-machine");
    CHECK(h.sm_count == 7);
  }
  SECTION("block-mask file: the first row is 0/1 characters") {
    TempFile f("bom_mask.txt");
    f.write(kBom + "110\n011\n001\n");
    Problem p;
    p.seqlen = 3 * 128;  // 3 × 3 blocks of 128 tokens
    const BlockMask mask({f.path}, p);
    CHECK(mask.nonzero_count() == 5);
    CHECK(mask.nonzero(0, 1));
    CHECK(!mask.nonzero(0, 2));
  }
  SECTION("rows csv: the first column is 'source'") {
    Row r;
    r.seqlen = 97;
    r.headdim = 40;
    r.hw = "h200";
    std::istringstream in(kBom + csv_header() + "\n" + to_csv_line(r) + "\n");
    const auto rows = read_rows_csv(in, "bom.csv");
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].seqlen == 97);
    CHECK(rows[0].headdim == 40);
  }
  SECTION("occupancy csv: the header matches") {
    const auto rows = parse_occupancy_csv(
        kBom + occupancy_csv_header() + "\nh200,flash2_fwd,40,fp16,64,48,2\n", "bom_occ.csv");
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].headdim == 40);
  }
  SECTION("only a mark at the very start is skipped") {
    TempFile f("bom_mid.txt");
    f.write(kHardware + kBom + "sm_count = 8\n");
    CHECK_THROWS_WITH(load_hardware_file(f.path), Catch::Contains(":9: unknown key"));
  }
}

TEST_CASE("a hardware file's numbers are finite decimals, its keys given once, its L2 sizes powers of two",
          "[hardware]") {
  TempFile f("hw_refusals.txt");
  // Each line replaces the base file's line for its key (the last line, :8:), except the
  // duplicates, which are added after it (:9:).
  struct Case {
    std::string line, names;
    bool replaces = true;
  };
  const std::vector<Case> cases = {
      {"exp_per_s = inf", ":8: exp_per_s 'inf': must be a finite positive decimal"},
      {"exp_per_s = nan", ":8: exp_per_s 'nan'"},
      {"hbm_bytes_per_s = 0x1p40", ":8: hbm_bytes_per_s '0x1p40'"},
      {"tensor_flops_per_s = 1e400", ":8: '1e400' is not a number for tensor_flops_per_s"},
      {"sm_count = 9", ":9: duplicate key 'sm_count'", false},
      {"name = other", ":9: duplicate key 'name'", false},
      {"l2_line_bytes = 3", "l2_line_bytes must be a power of two (got 3)", false},
      {"l2_sector_bytes = 24", "l2_sector_bytes must be a power of two (got 24)", false},
      {"l2_line_bytes = 16",
       "l2_line_bytes must hold 1 to 8 sectors of l2_sector_bytes (got 16 and 32)", false},
      {"l2_line_bytes = 512", "(got 512 and 32)", false},
  };
  for (const Case& c : cases) {
    INFO(c.line);
    std::string text;
    std::istringstream base(kHardware);
    const std::string key = c.line.substr(0, c.line.find(' '));
    for (std::string line; std::getline(base, line);)
      if (!c.replaces || line.rfind(key + " ", 0) != 0) text += line + "\n";
    f.write(text + c.line + "\n");
    try {
      load_hardware_file(f.path);
      FAIL("accepted");
    } catch (const InvalidInput& e) {
      INFO(e.what());
      CHECK(e.field() == Field::hardware);
      CHECK(std::string(e.what()).find(c.names) != std::string::npos);
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
  }
  // The allowed forms still load: decimals with exponents, powers of two with a unit.
  f.write(kHardware + "l2_line_bytes = 256B\nl2_sector_bytes = 64\n");
  const Hardware h = load_hardware_file(f.path);
  CHECK(h.l2_line_bytes == 256);
  CHECK(h.l2_sector_bytes == 64);
  CHECK(h.hbm_bytes_per_s == 1e12);
}

TEST_CASE("a rows csv quotes cells holding commas, quotes or line breaks and reads them back",
          "[rows][csv]") {
  Row r;
  r.seqlen = 97;
  r.headdim = 40;
  r.hw = "lab \"x\", rev 2";
  r.block_mask = "masks/a,b\nc.txt";
  r.io_read_bytes = 12345;
  const std::string line = to_csv_line(r);
  CHECK(line.find("\"lab \"\"x\"\", rev 2\"") != std::string::npos);  // RFC 4180
  std::istringstream in(csv_header() + "\n" + line + "\n" + to_csv_line(Row{}) + "\n");
  const auto rows = read_rows_csv(in, "quoted.csv");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].hw == r.hw);
  CHECK(rows[0].block_mask == r.block_mask);
  CHECK(rows[0].io_read_bytes == 12345);
  CHECK(rows[0].seqlen == 97);
  // A quote left open runs to the end of the file: refused, naming the file.
  std::istringstream open(csv_header() + "\n" + line.substr(0, line.find("rev")) + "\n");
  CHECK_THROWS_WITH(read_rows_csv(open, "open.csv"), Catch::Contains("open.csv:") &&
                                                         Catch::Contains("not closed"));
}

TEST_CASE("a rows csv refuses nan and inf in value cells, naming the line and column", "[rows][csv]") {
  const auto& columns = row_columns();
  const size_t time_at =
      std::find(columns.begin(), columns.end(), "time_ms") - columns.begin();
  REQUIRE(time_at < columns.size());
  for (const std::string bad : {"nan", "inf", "-inf", "1e999"}) {
    INFO(bad);
    Row r;
    r.seqlen = 97;
    r.headdim = 40;
    std::string line;
    for (size_t i = 0; i < columns.size(); ++i)
      line += (i ? "," : "") + (i == time_at ? bad : cell(r, columns[i]));
    std::istringstream in(csv_header() + "\n" + line + "\n");
    CHECK_THROWS_WITH(read_rows_csv(in, "bad.csv"),
                      Catch::Contains("bad.csv:2: column 'time_ms': '" + bad + "'"));
  }
}
