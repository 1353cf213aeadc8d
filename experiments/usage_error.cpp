#include "experiments/usage_error.h"

namespace flashio::cli {

std::string usage_message(const sim::InvalidInput& error) {
  if (!error.field()) return error.what();
  return std::string(option_name(*error.field())) + ": " + error.problem();
}

}  // namespace flashio::cli
