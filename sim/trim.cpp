#include "sim/trim.h"

namespace flashio::sim {

std::string_view trim(std::string_view text) {
  constexpr std::string_view kBlank = " \t\r\n";
  const auto b = text.find_first_not_of(kBlank);
  if (b == std::string_view::npos) return {};
  const auto e = text.find_last_not_of(kBlank);
  return text.substr(b, e - b + 1);
}

}  // namespace flashio::sim
