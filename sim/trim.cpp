#include "sim/trim.h"

namespace flashio::sim {

std::string_view trim(std::string_view text) {
  constexpr std::string_view kBlank = " \t\r\n";
  const auto b = text.find_first_not_of(kBlank);
  if (b == std::string_view::npos) return {};
  const auto e = text.find_last_not_of(kBlank);
  return text.substr(b, e - b + 1);
}

std::string_view without_utf8_bom(std::string_view text) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (text.substr(0, kBom.size()) == kBom) text.remove_prefix(kBom.size());
  return text;
}

}  // namespace flashio::sim
