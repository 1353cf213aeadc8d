// The rows csv reader (sim/row.h): any text is rows or one InvalidInput; rows it accepts write
// back (to_csv_line) to csv that reads back to the same rows.
#include <cstdint>
#include <sstream>

#include "fuzz/fuzz_input.h"
#include "sim/errors.h"
#include "sim/row.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace sim = flashio::sim;
  std::istringstream in(flashio::fuzz::text_of(data, size));
  try {
    const std::vector<sim::Row> rows = sim::read_rows_csv(in, "fuzz");
    std::string written = sim::csv_header() + "\n";
    for (const sim::Row& r : rows) written += sim::to_csv_line(r) + "\n";
    std::istringstream again(written);
    const std::vector<sim::Row> back = sim::read_rows_csv(again, "written");
    if (back.size() != rows.size()) flashio::fuzz::violated("rows did not read back");
    for (size_t i = 0; i < rows.size(); ++i)
      if (sim::to_csv_line(back[i]) != sim::to_csv_line(rows[i])) flashio::fuzz::violated("a row changed");
  } catch (const sim::InvalidInput&) {
  }
  return 0;
}
