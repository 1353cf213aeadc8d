// The text files a user hands the model (hardware files, block-mask files, rows csv, the
// occupancy csv) are read as written: a leading UTF-8 byte-order mark is not part of the first
// key or cell, quoted csv fields come back as they were written, and values that the model
// cannot use are refused with one message naming the file, the line and the key.
#include <catch2/catch.hpp>

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
    const BlockMask mask({f.path}, 3, 3);
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
