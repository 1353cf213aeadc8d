#include "sim/text_file.h"

#include <filesystem>
#include <fstream>

#include "sim/byte_size.h"
#include "sim/trim.h"

namespace flashio::sim {
namespace {

std::string too_large(int64_t max_bytes) {
  return "is larger than " + format_size(max_bytes) + ", the most this kind of file may hold";
}

}  // namespace

TextFile read_text_file(const std::string& path, int64_t max_bytes) {
  TextFile file;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    file.problem = "is a directory";
    return file;
  }
  // A regular file's size is known: refuse one too large before reading it.
  if (std::filesystem::is_regular_file(path, ec)) {
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > static_cast<uintmax_t>(max_bytes)) {
      file.problem = too_large(max_bytes);
      return file;
    }
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    file.problem = "cannot be read";
    return file;
  }
  // In chunks, stopping one byte past the limit: the size of a device or a pipe is not known
  // beforehand, and /dev/zero never ends.
  constexpr std::streamsize kChunk = 1 << 16;
  std::string chunk(static_cast<size_t>(kChunk), '\0');
  while (in) {
    in.read(chunk.data(), kChunk);
    file.text.append(chunk.data(), static_cast<size_t>(in.gcount()));
    if (static_cast<int64_t>(file.text.size()) > max_bytes) {
      file.text.clear();
      file.problem = too_large(max_bytes);
      return file;
    }
  }
  if (in.bad()) {
    file.text.clear();
    file.problem = "could not be read to its end";
    return file;
  }
  file.text = std::string(without_utf8_bom(file.text));
  return file;
}

}  // namespace flashio::sim
