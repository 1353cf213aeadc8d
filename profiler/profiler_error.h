// Why a measurement could not be taken. The first four kinds are the user's situation, not a
// bug: `flashio profile` prints the message as one line and exits with status 2 (docs/profiler.md,
// "Errors"). cuda_failure is a failure while measuring (exit status 1).
#pragma once
#include <stdexcept>
#include <string>

namespace flashio::profiler {

enum class ErrorKind {
  no_gpu,                   // no CUDA device visible
  insufficient_privileges,  // counters restricted to admin users (NVreg_RestrictProfilingToAdminUsers)
  other_client,             // another CUPTI client is attached (running under ncu or nsys)
  unsupported_device,       // MIG instance, vGPU without profiling, compute capability < 7.0, ...
  cuda_failure,             // a CUDA or CUPTI call failed while measuring
};

class ProfilerError : public std::runtime_error {
 public:
  ProfilerError(ErrorKind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }
  // The user's situation (exit status 2) rather than a failure while measuring.
  bool is_usage() const { return kind_ != ErrorKind::cuda_failure; }

 private:
  ErrorKind kind_;
};

}  // namespace flashio::profiler
