// What the libFuzzer harnesses share (docs/fuzzing.md): the input as text, and a private file
// for readers that take a path (hardware files, block masks).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <unistd.h>

namespace flashio::fuzz {

inline std::string text_of(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// The input written to a file of this process's own (one per process, reused), for the readers
// that take a path.
inline std::string as_file(const std::string& text, const char* tag) {
  const std::string path = "/tmp/flashio-fuzz-" + std::string(tag) + "-" + std::to_string(getpid());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

// A property the harness checks failed: abort, so libFuzzer keeps the input as a crash.
[[noreturn]] inline void violated(const char* what) {
  std::fprintf(stderr, "property violated: %s\n", what);
  std::abort();
}

}  // namespace flashio::fuzz
