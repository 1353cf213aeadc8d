// The sweep syntax: lists, inclusive ranges (xK multiplies, S adds), sizes with 1024- and
// 1000-based units.
#include <catch2/catch.hpp>

#include "experiments/usage_error.h"
#include "experiments/value_list.h"

using flashio::cli::UsageError;
using Ints = std::vector<int64_t>;

TEST_CASE("an additive range includes its end when a step lands on it") {
  CHECK(flashio::cli::parse_int_list("--seqlen", "1000:4000:1000") == Ints{1000, 2000, 3000, 4000});
  CHECK(flashio::cli::parse_int_list("--seqlen", "97:97:5") == Ints{97});
}

TEST_CASE("an additive range stops at the last step not above its end") {
  CHECK(flashio::cli::parse_int_list("--seqlen", "97:300:100") == Ints{97, 197, 297});
  CHECK(flashio::cli::parse_int_list("--seqlen", "1:1025:+512") == Ints{1, 513, 1025});
}

TEST_CASE("a range without a step adds 1") {
  CHECK(flashio::cli::parse_int_list("--batch", "1:4") == Ints{1, 2, 3, 4});
}

TEST_CASE("xK multiplies, inclusive of the end, stopping below it otherwise") {
  CHECK(flashio::cli::parse_int_list("--block-c", "16:512:x2") == Ints{16, 32, 64, 128, 256, 512});
  CHECK(flashio::cli::parse_int_list("--block-c", "3:100:x3") == Ints{3, 9, 27, 81});
  CHECK(flashio::cli::parse_int_list("--block-c", "5:5:x2") == Ints{5});
}

TEST_CASE("lists mix values and ranges, keep their order and drop repeats") {
  CHECK(flashio::cli::parse_int_list("--seqlen", "1025, 16:64:x2,64,97") == Ints{1025, 16, 32, 64, 97});
}

TEST_CASE("malformed lists and ranges are usage errors naming the option") {
  for (const char* bad : {"", "abc", "1,,2", "10:1:1", "1:10:0", "1:10:-2", "1:10:x1", "1:10:x",
                          "0:8:x2", "1:2:3:4", "12.5", "1e3", "1:1000000000000"}) {
    INFO(bad);
    try {
      flashio::cli::parse_int_list("--seqlen", bad);
      FAIL("accepted");
    } catch (const UsageError& e) {
      CHECK(std::string(e.what()).find("--seqlen") != std::string::npos);
    }
  }
}

TEST_CASE("sizes: KiB, MiB are 1024-based, KB, MB 1000-based, plain numbers bytes") {
  using flashio::cli::parse_size_bytes;
  CHECK(parse_size_bytes("--sram", "227KiB") == 232448);
  CHECK(parse_size_bytes("--sram", "192KB") == 192000);
  CHECK(parse_size_bytes("--sram", "192kB") == 192000);
  CHECK(parse_size_bytes("--sram", "1MiB") == 1048576);
  CHECK(parse_size_bytes("--sram", "1MB") == 1000000);
  CHECK(parse_size_bytes("--sram", "232448") == 232448);
  CHECK(parse_size_bytes("--sram", "97B") == 97);
  CHECK(parse_size_bytes("--sram", "12 KiB") == 12288);
  CHECK(parse_size_bytes("--sram", "1.5KiB") == 1536);
  for (const char* bad : {"0.5B", "12kib", "12 parsecs", "KiB", "", "1.0001KiB"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_size_bytes("--sram", bad), UsageError);
  }
}

TEST_CASE("size ranges take units at both ends and in an additive step") {
  CHECK(flashio::cli::parse_size_list("--sram", "64KiB:256KiB:x2") == Ints{65536, 131072, 262144});
  CHECK(flashio::cli::parse_size_list("--sram", "100KB:200KB:50KB") == Ints{100000, 150000, 200000});
}

TEST_CASE("a real range ends at its end despite binary rounding") {
  const auto v = flashio::cli::parse_real_list("--dropout", "0:0.3:0.1");
  REQUIRE(v.size() == 4);
  CHECK(v.back() == Approx(0.3));
}

TEST_CASE("switches take 0, 1 or both") {
  CHECK(flashio::cli::parse_switch_list("--causal", "0,1") == std::vector<int>{0, 1});
  CHECK(flashio::cli::parse_switch_list("--causal", "true") == std::vector<int>{1});
  CHECK_THROWS_AS(flashio::cli::parse_switch_list("--causal", "2"), UsageError);
}

