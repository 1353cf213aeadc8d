// The runner's list and range parsers (experiments/value_list.h): any text is a list or one
// UsageError, never a crash, a hang or an unbounded list; a size list's values read back from
// their own spelling (format_size).
#include <cstdint>

#include "experiments/usage_error.h"
#include "experiments/value_list.h"
#include "fuzz/fuzz_input.h"
#include "sim/byte_size.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text = flashio::fuzz::text_of(data + 1, size - 1);
  namespace cli = flashio::cli;
  try {
    switch (data[0] % 5) {
      case 0: cli::parse_int_list("--seqlen", text); break;
      case 1: {
        for (int64_t v : cli::parse_size_list("--sram", text)) {
          const auto back = flashio::sim::parse_byte_size(flashio::sim::format_size(v));
          if (!back.bytes || *back.bytes != v) flashio::fuzz::violated("format_size does not read back");
        }
        break;
      }
      case 2: cli::parse_real_list("--dropout", text); break;
      case 3: cli::parse_switch_list("--causal", text); break;
      case 4: cli::parse_name_list("--algo", text); break;
    }
  } catch (const cli::UsageError&) {
  }
  return 0;
}
