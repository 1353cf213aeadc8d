// Sizes as people type and read them (sim/byte_size.h, sim/trim.h): the formatters print in
// spellings the parser reads back, and hardware files take sizes with units.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "sim/byte_size.h"
#include "sim/errors.h"
#include "sim/hardware.h"
#include "sim/trim.h"

using namespace flashio::sim;

TEST_CASE("trim drops the blank space around text and keeps the space inside", "[text]") {
  CHECK(trim(" \t 227 KiB\r\n") == "227 KiB");
  CHECK(trim("h200") == "h200");
  CHECK(trim("") == "");
  CHECK(trim(" \t\r\n ") == "");
}

TEST_CASE("traffic prints with three significant digits, 1000-based in KB, MB, GB",
          "[byte_size]") {
  CHECK(format_bytes(999) == "999 B");
  CHECK(format_bytes(1000) == "1.00 KB");
  CHECK(format_bytes(192000) == "192 KB");
  CHECK(format_bytes(12'345'678) == "12.3 MB");
  CHECK(format_bytes(1.5e9) == "1.50 GB");
  CHECK(format_bytes(939'524'096) == "940 MB");
  CHECK(format_bytes(99'960) == "100 KB");  // rounds up to three digits, not "100.0"
}

TEST_CASE("shared memory prints 1024-based in KiB, MiB", "[byte_size]") {
  CHECK(format_bytes_binary(512) == "512 B");
  CHECK(format_bytes_binary(232448) == "227 KiB");
  CHECK(format_bytes_binary(1.5 * 1048576) == "1.50 MiB");
  CHECK(format_bytes_binary(97 * 1024 + 512) == "97.5 KiB");
}

TEST_CASE("what the formatters print, the parser reads: exactly for format_size, within the "
          "three digits for format_bytes", "[byte_size]") {
  for (int64_t bytes : {int64_t{232448}, int64_t{192000}, int64_t{1000001}, int64_t{97 * 1024},
                        int64_t{3} << 30, int64_t{5'000'000'000}, int64_t{97}}) {
    const std::string text = format_size(bytes);
    INFO(text);
    CHECK(parse_byte_size(text).bytes == bytes);
  }
  CHECK(format_size(232448) == "227 KiB");
  CHECK(format_size(192000) == "192 KB");
  CHECK(format_size(1000001) == "1000001 B");
  for (double bytes : {999.0, 1000.0, 192000.0, 12'345'678.0, 1.5e9, 62'914'560.0}) {
    for (const std::string& text : {format_bytes(bytes), format_bytes_binary(bytes)}) {
      INFO(text);
      const auto parsed = parse_byte_size(text);
      REQUIRE(parsed.bytes);
      CHECK(std::abs(static_cast<double>(*parsed.bytes) - bytes) <= 0.005 * bytes);
    }
  }
}

TEST_CASE("a hardware file's sizes take the parser's units, counts stay plain integers",
          "[byte_size][hardware]") {
  const std::string path = "test_byte_size_hw.txt";
  const std::string rest =  // five lines
      "sm_count = 132\nhbm_bytes_per_s = 4.8e12\ntensor_flops_per_s = 989.4e12\n"
      "cuda_core_flops_per_s = 66.9e12\nexp_per_s = 3.9e12\n";
  {
    std::ofstream f(path);
    f << "name = h200-by-units\nsram_bytes = 227KiB\nsmem_per_sm_bytes = 228 KiB\n"
         "l2_bytes = 60MiB\nl2_line_bytes = 128B\nl2_sector_bytes = 32\n" << rest;
  }
  const Hardware h = load_hardware_file(path);
  CHECK(h.sram_bytes == 232448);
  CHECK(h.smem_per_sm_bytes == 233472);
  CHECK(h.l2_bytes == 62914560);
  CHECK(h.l2_line_bytes == 128);
  CHECK(h.l2_sector_bytes == 32);
  CHECK(h.sm_count == 132);
  // A size the parser refuses names the file, the line, the key and the allowed units.
  {
    std::ofstream f(path);
    f << "name = bad\nsram_bytes = 12 parsecs\n" << rest;
  }
  try {
    load_hardware_file(path);
    FAIL("accepted");
  } catch (const InvalidInput& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(e.field() == Field::hardware);
    CHECK(what.find(path + ":2: sram_bytes '12 parsecs'") != std::string::npos);
    CHECK(what.find(kByteSizeSyntax) != std::string::npos);
  }
  // A count does not take a unit.
  {
    std::ofstream f(path);
    f << "name = bad\nsram_bytes = 227KiB\nl2_bytes = 60MiB\n" << rest << "l2_ways = 16KiB\n";
  }
  CHECK_THROWS_WITH(load_hardware_file(path), Catch::Contains(":9: l2_ways"));
  std::remove(path.c_str());
}
