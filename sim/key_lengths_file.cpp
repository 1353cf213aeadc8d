#include "sim/key_lengths_file.h"

#include <charconv>
#include <sstream>

#include "sim/errors.h"
#include "sim/text_file.h"
#include "sim/trim.h"

namespace flashio::sim {

KeyLengths read_key_lengths(const std::string& path) {
  const TextFile file = read_text_file(path, kMaxLengthsFileBytes);
  const std::string allowed = "allowed: a text file of one positive key length per line, one line per sequence";
  if (!file.problem.empty()) throw InvalidInput(Field::key_lengths, "'" + path + "' " + file.problem + "; " + allowed);
  auto values = std::make_shared<std::vector<int64_t>>();
  std::istringstream in(file.text);
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    const std::string_view text = trim(line);
    if (text.empty() || text.front() == '#') continue;
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v < 1)
      throw InvalidInput(Field::key_lengths, path + ": line " + std::to_string(number) + " ('" + std::string(text) +
                                                 "') is not a positive integer; " + allowed);
    values->push_back(v);
  }
  if (values->empty()) throw InvalidInput(Field::key_lengths, path + " holds no key length; " + allowed);
  return KeyLengths{std::move(values), path};
}

}  // namespace flashio::sim
