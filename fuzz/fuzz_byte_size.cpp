// sim's byte-size parser (sim/byte_size.h): any text is a size or an error, and an accepted size
// reads back from its own spelling.
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "sim/byte_size.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parsed = flashio::sim::parse_byte_size(flashio::fuzz::text_of(data, size));
  if (parsed.bytes) {
    const auto back = flashio::sim::parse_byte_size(flashio::sim::format_size(*parsed.bytes));
    if (!back.bytes || *back.bytes != *parsed.bytes) flashio::fuzz::violated("format_size does not read back");
  } else if (parsed.error.empty()) {
    flashio::fuzz::violated("a refused size without a reason");
  }
  return 0;
}
