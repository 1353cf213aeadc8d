#include "sim/block_mask.h"

#include <algorithm>
#include <filesystem>

#include <fstream>
#include <random>
#include <sstream>

#include "sim/errors.h"
#include "sim/text_file.h"
#include "sim/trim.h"

namespace flashio::sim {
namespace {

const char* kAllowed = "allowed: banded:W, random:DENSITY[:SEED] or a file of 0/1 rows, each optionally @T (T tokens a block, default 128)";

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
  int64_t block = kMaskBlockTokens;  // T
  int64_t width = 0;
  double density = 1.0;
  uint64_t seed = 0;
  std::string path;
};

// Splits a trailing "@T" off `text` into `block` (a whole number ≥ 1); throws when malformed.
void split_block(std::string& text, int64_t& block, const std::string& whole) {
  const auto at = text.rfind('@');
  if (at == std::string::npos) return;
  int64_t t = 0;
  if (!parse_int(text.substr(at + 1), t) || t < 1)
    throw InvalidInput(Field::block_mask, "'" + whole + "': T in @T must be an integer >= 1 (tokens a block); " + kAllowed);
  block = t;
  text = text.substr(0, at);
}

Parsed parse(const BlockMaskSpec& spec) {
  Parsed p;
  std::string t = spec.text;
  if (t.empty()) return p;
  // A file whose own name holds '@' is that file; otherwise a trailing @T gives the block size.
  std::error_code exists_ec;
  const bool whole_is_file = std::filesystem::exists(t, exists_ec);
  if (!whole_is_file) split_block(t, p.block, spec.text);
  if (t.rfind("banded:", 0) == 0) {
    p.kind = Parsed::banded;
    if (!parse_int(t.substr(7), p.width) || p.width < 0)
      throw InvalidInput(Field::block_mask, "'" + spec.text + "': W must be an integer >= 0; " + kAllowed);
    return p;
  }
  if (t.rfind("random:", 0) == 0) {
    p.kind = Parsed::random;
    std::string rest = t.substr(7);
    const auto colon = rest.find(':');
    std::string dens = rest.substr(0, colon);
    if (!parse_real(dens, p.density) || !(p.density > 0.0 && p.density <= 1.0))
      throw InvalidInput(Field::block_mask, "'" + spec.text + "': DENSITY must be in (0, 1]; " + kAllowed);
    if (colon != std::string::npos) {
      int64_t seed = 0;
      if (!parse_int(rest.substr(colon + 1), seed) || seed < 0)
        throw InvalidInput(Field::block_mask,
                           "'" + spec.text + "': SEED must be an integer >= 0; " + kAllowed);
      p.seed = static_cast<uint64_t>(seed);
    }
    return p;
  }
  p.kind = Parsed::file;
  p.path = t;
  std::error_code ec;
  if (std::filesystem::is_directory(t, ec))
    throw InvalidInput(Field::block_mask, "'" + spec.text + "' is a directory; " + kAllowed);
  if (!std::ifstream(t).good())
    throw InvalidInput(Field::block_mask,
                       "'" + spec.text + "' is not a spec nor a readable file; " + kAllowed);
  return p;
}

}  // namespace

void validate_block_mask_spec(const BlockMaskSpec& spec) { (void)parse(spec); }

int64_t block_mask_tokens(const BlockMaskSpec& spec) { return parse(spec).block; }

BlockMask::BlockMask(const BlockMaskSpec& spec, const Problem& problem) : n_(problem.seqlen), causal_(problem.causal) {
  const Parsed p = parse(spec);
  block_ = p.block;
  blocks_ = (std::max<int64_t>(n_, 1) + block_ - 1) / block_;
  bits_.assign(static_cast<size_t>(blocks_ * blocks_), 1);
  const int64_t b = blocks_;
  switch (p.kind) {
    case Parsed::dense: break;
    case Parsed::banded:
      for (int64_t i = 0; i < b; ++i)
        for (int64_t j = 0; j < b; ++j) bits_[i * b + j] = (i - j <= p.width && j - i <= p.width) ? 1 : 0;
      break;
    case Parsed::random: {
      // mt19937_64 with the given seed: the same spec gives the same mask on every machine.
      std::mt19937_64 rng(p.seed);
      std::uniform_real_distribution<double> u(0.0, 1.0);
      for (int64_t i = 0; i < b; ++i)
        for (int64_t j = 0; j < b; ++j) {
          const bool keep = u(rng) < p.density;
          bits_[i * b + j] = (keep || i == j) ? 1 : 0;
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
      const std::string t = std::to_string(block_);
      const std::string shape = "⌈N/" + t + "⌉ × ⌈N/" + t + "⌉ = " + std::to_string(b) + " × " + std::to_string(b) +
                                " blocks of " + t + " × " + t + " tokens at N = " + std::to_string(n_);
      while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line[0] == '#') continue;
        if (row >= b || static_cast<int64_t>(line.size()) != b || line.find_first_not_of("01") != std::string::npos)
          throw InvalidInput(Field::block_mask, p.path + ": line " + std::to_string(row + 1) + " must be " +
                                                    std::to_string(b) + " characters of 0/1 (the mask is " + shape + ")");
        for (int64_t j = 0; j < b; ++j) bits_[row * b + j] = line[j] == '1';
        ++row;
      }
      if (row != b)
        throw InvalidInput(Field::block_mask, p.path + ": has " + std::to_string(row) + " rows; the mask is " + shape);
      break;
    }
  }
  // Causal: a block above the diagonal holds no score with key ≤ query.
  if (causal_)
    for (int64_t i = 0; i < b; ++i)
      for (int64_t j = i + 1; j < b; ++j) bits_[i * b + j] = 0;
  prefix_.assign(static_cast<size_t>((b + 1) * (b + 1)), 0);
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < b; ++j)
      prefix_[(i + 1) * (b + 1) + j + 1] = prefix_[i * (b + 1) + j + 1] + prefix_[(i + 1) * (b + 1) + j] -
                                           prefix_[i * (b + 1) + j] + bits_[i * b + j];
}

int64_t BlockMask::count(int64_t b0, int64_t b1, int64_t c0, int64_t c1) const {
  const int64_t w = blocks_ + 1;
  return int64_t{prefix_[b1 * w + c1]} - prefix_[b0 * w + c1] - prefix_[b1 * w + c0] + prefix_[b0 * w + c0];
}

bool BlockMask::overlaps_nonzero(int64_t q0, int64_t q1, int64_t k0, int64_t k1) const {
  if (q1 <= q0 || k1 <= k0) return false;
  // A nonzero block below the diagonal holds only kept scores; a nonzero diagonal block holds a
  // kept score in every rectangle that overlaps it and reaches the causal triangle (its last
  // query at or past its first key), which the caller's causal tile test has established.
  const int64_t b0 = q0 / block_, b1 = (q1 - 1) / block_ + 1;
  const int64_t c0 = k0 / block_, c1 = (k1 - 1) / block_ + 1;
  if (b1 == b0 + 1 && c1 == c0 + 1) return nonzero(b0, c0);  // within one block: its bit
  return count(b0, b1, c0, c1) > 0;
}

double BlockMask::density() const {
  const double all = causal_ ? static_cast<double>(blocks_) * static_cast<double>(blocks_ + 1) / 2.0
                             : static_cast<double>(blocks_) * static_cast<double>(blocks_);
  return static_cast<double>(nonzero_count()) / all;
}

int64_t BlockMask::tokens_in(int64_t block) const {
  return std::min(block_, n_ - block * block_);
}

int64_t BlockMask::kept_queries() const {
  int64_t tokens = 0;
  for (int64_t i = 0; i < blocks_; ++i)
    if (count(i, i + 1, 0, blocks_) > 0) tokens += tokens_in(i);
  return tokens;
}

int64_t BlockMask::kept_keys() const {
  int64_t tokens = 0;
  for (int64_t j = 0; j < blocks_; ++j)
    if (count(0, blocks_, j, j + 1) > 0) tokens += tokens_in(j);
  return tokens;
}

double BlockMask::convention_scores() const {
  double scores = 0;
  for (int64_t i = 0; i < blocks_; ++i)
    for (int64_t j = 0; j < blocks_; ++j) {
      if (!nonzero(i, j) || (causal_ && j > i)) continue;
      const double ti = static_cast<double>(tokens_in(i)), tj = static_cast<double>(tokens_in(j));
      scores += causal_ && i == j ? ti * ti / 2 : ti * tj;
    }
  return scores;
}

}  // namespace flashio::sim
