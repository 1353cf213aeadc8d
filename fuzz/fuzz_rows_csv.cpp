// The rows csv reader (sim/row.h): any text is rows or one InvalidInput; rows it accepts write
// (to_csv_line) to csv that reads back, and the csv flashio writes is a fixed point: read and
// written again it is the same text. (The first write may round: a value that is not an integer
// is written with 9 significant digits, so 1523371212825.6 becomes 1.52337121e+12, which reads
// back as the integer 1523371210000 and is written so from then on; found by this harness.)
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
    std::string rewritten = sim::csv_header() + "\n";
    for (const sim::Row& r : back) rewritten += sim::to_csv_line(r) + "\n";
    std::istringstream third(rewritten);
    std::string fixed = sim::csv_header() + "\n";
    for (const sim::Row& r : sim::read_rows_csv(third, "rewritten")) fixed += sim::to_csv_line(r) + "\n";
    if (fixed != rewritten) flashio::fuzz::violated("flashio's csv does not read back to itself");
  } catch (const sim::InvalidInput&) {
  }
  return 0;
}
