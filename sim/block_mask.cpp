#include "sim/block_mask.h"
#include <filesystem>

#include <fstream>
#include <random>
#include <sstream>

#include "sim/errors.h"
#include "sim/text_file.h"
#include "sim/trim.h"

namespace flashio::sim {
namespace {

const char* kAllowed = "allowed: banded:W, random:DENSITY[:SEED] or a file of 0/1 rows";

bool parse_int(const std::string& s, int64_t& out) {
  try {
    size_t used = 0;
    out = std::stoll(s, &used);
    return used == s.size();
  } catch (const std::logic_error&) {
    return false;
  }
}

bool parse_real(const std::string& s, double& out) {
  try {
    size_t used = 0;
    out = std::stod(s, &used);
    return used == s.size();
  } catch (const std::logic_error&) {
    return false;
  }
}

struct Parsed {
  enum Kind { dense, banded, random, file } kind = dense;
  int64_t width = 0;
  double density = 1.0;
  uint64_t seed = 0;
  std::string path;
};

Parsed parse(const BlockMaskSpec& spec) {
  Parsed p;
  const std::string& t = spec.text;
  if (t.empty()) return p;
  if (t.rfind("banded:", 0) == 0) {
    p.kind = Parsed::banded;
    if (!parse_int(t.substr(7), p.width) || p.width < 0)
      throw InvalidInput(Field::block_mask, "'" + t + "': W must be an integer >= 0; " + kAllowed);
    return p;
  }
  if (t.rfind("random:", 0) == 0) {
    p.kind = Parsed::random;
    std::string rest = t.substr(7);
    const auto colon = rest.find(':');
    std::string dens = rest.substr(0, colon);
    if (!parse_real(dens, p.density) || !(p.density > 0.0 && p.density <= 1.0))
      throw InvalidInput(Field::block_mask, "'" + t + "': DENSITY must be in (0, 1]; " + kAllowed);
    if (colon != std::string::npos) {
      int64_t seed = 0;
      if (!parse_int(rest.substr(colon + 1), seed) || seed < 0)
        throw InvalidInput(Field::block_mask,
                           "'" + t + "': SEED must be an integer >= 0; " + kAllowed);
      p.seed = static_cast<uint64_t>(seed);
    }
    return p;
  }
  p.kind = Parsed::file;
  p.path = t;
  std::error_code ec;
  if (std::filesystem::is_directory(t, ec))
    throw InvalidInput(Field::block_mask, "'" + t + "' is a directory; " + kAllowed);
  if (!std::ifstream(t).good())
    throw InvalidInput(Field::block_mask,
                       "'" + t + "' is not a spec nor a readable file; " + kAllowed);
  return p;
}

}  // namespace

void validate_block_mask_spec(const BlockMaskSpec& spec) { (void)parse(spec); }

BlockMask::BlockMask(const BlockMaskSpec& spec, int64_t tiles_r, int64_t tiles_c)
    : tiles_r_(tiles_r), tiles_c_(tiles_c), bits_(static_cast<size_t>(tiles_r * tiles_c), 1) {
  const Parsed p = parse(spec);
  switch (p.kind) {
    case Parsed::dense: break;
    case Parsed::banded:
      for (int64_t i = 0; i < tiles_r; ++i)
        for (int64_t j = 0; j < tiles_c; ++j)
          bits_[i * tiles_c + j] = (i - j <= p.width && j - i <= p.width) ? 1 : 0;
      break;
    case Parsed::random: {
      // mt19937_64 with the given seed: the same spec gives the same mask on every machine.
      std::mt19937_64 rng(p.seed);
      std::uniform_real_distribution<double> u(0.0, 1.0);
      for (int64_t i = 0; i < tiles_r; ++i)
        for (int64_t j = 0; j < tiles_c; ++j) {
          const bool keep = u(rng) < p.density;
          bits_[i * tiles_c + j] = (keep || i == j) ? 1 : 0;
        }
      break;
    }
    case Parsed::file: {
      const TextFile file = read_text_file(p.path, kMaxMaskFileBytes);
      if (!file.problem.empty())
        throw InvalidInput(Field::block_mask, "'" + p.path + "' " + file.problem + "; " + kAllowed);
      std::istringstream in(file.text);
      std::string line;
      int64_t row = 0;
      while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line[0] == '#') continue;
        if (row >= tiles_r || static_cast<int64_t>(line.size()) != tiles_c ||
            line.find_first_not_of("01") != std::string::npos)
          throw InvalidInput(Field::block_mask, p.path + ": line " + std::to_string(row + 1) +
                             " must be " + std::to_string(tiles_c) +
                             " characters of 0/1 (the grid is Tr x Tc = " +
                             std::to_string(tiles_r) + " x " + std::to_string(tiles_c) + ")");
        for (int64_t j = 0; j < tiles_c; ++j) bits_[row * tiles_c + j] = line[j] == '1';
        ++row;
      }
      if (row != tiles_r)
        throw InvalidInput(Field::block_mask, p.path + ": has " + std::to_string(row) +
                           " rows; the grid needs Tr = " + std::to_string(tiles_r));
      break;
    }
  }
}

int64_t BlockMask::nonzero_count() const {
  int64_t n = 0;
  for (auto b : bits_) n += b;
  return n;
}

double BlockMask::density() const {
  return static_cast<double>(nonzero_count()) / static_cast<double>(tiles_r_ * tiles_c_);
}

}  // namespace flashio::sim
