// One error type for bad input: the CLI prints what() as one line and exits with status 2.
#pragma once
#include <stdexcept>
#include <string>

namespace flashio::sim {

class InvalidInput : public std::runtime_error {
 public:
  explicit InvalidInput(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace flashio::sim
