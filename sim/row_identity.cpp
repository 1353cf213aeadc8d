#include "sim/row_identity.h"

#include <array>
#include <stdexcept>

namespace flashio::sim {
namespace {

constexpr std::array kAllSources = {RowSource::model, RowSource::cache, RowSource::measured,
                                    RowSource::peer, RowSource::bound};

constexpr std::array kAllAlgos = {
    RowAlgo::standard,        RowAlgo::flash1,     RowAlgo::flash2,  RowAlgo::blocksparse,
    RowAlgo::torch_flash,     RowAlgo::torch_cudnn, RowAlgo::torch_efficient,
    RowAlgo::torch_math,      RowAlgo::compulsory, RowAlgo::theorem2, RowAlgo::saha_ye,
    RowAlgo::standard_theta,
};

template <typename T>
std::string join_spellings(std::span<const T> values) {
  std::string text;
  for (T v : values) text += (text.empty() ? "" : ", ") + to_string(v);
  return text;
}

}  // namespace

std::string to_string(RowSource source) {
  switch (source) {
    case RowSource::model: return "model";
    case RowSource::cache: return "cache";
    case RowSource::measured: return "measured";
    case RowSource::peer: return "peer";
    case RowSource::bound: return "bound";
  }
  throw std::logic_error("RowSource out of range");
}

std::optional<RowSource> parse_row_source(std::string_view text) {
  for (RowSource s : kAllSources)
    if (to_string(s) == text) return s;
  return std::nullopt;
}

std::span<const RowSource> all_row_sources() { return kAllSources; }
std::string allowed_row_sources() { return join_spellings(all_row_sources()); }

std::optional<Algo> model_algo(RowAlgo algo) {
  switch (algo) {
    case RowAlgo::standard: return Algo::standard;
    case RowAlgo::flash1: return Algo::flash1;
    case RowAlgo::flash2: return Algo::flash2;
    case RowAlgo::blocksparse: return Algo::blocksparse;
    case RowAlgo::torch_flash:
    case RowAlgo::torch_cudnn:
    case RowAlgo::torch_efficient:
    case RowAlgo::torch_math:
    case RowAlgo::compulsory:
    case RowAlgo::theorem2:
    case RowAlgo::saha_ye:
    case RowAlgo::standard_theta: return std::nullopt;
  }
  throw std::logic_error("RowAlgo out of range");
}

RowAlgo row_algo(Algo algo) {
  switch (algo) {
    case Algo::standard: return RowAlgo::standard;
    case Algo::flash1: return RowAlgo::flash1;
    case Algo::flash2: return RowAlgo::flash2;
    case Algo::blocksparse: return RowAlgo::blocksparse;
  }
  throw std::logic_error("Algo out of range");
}

// The model's algorithms keep the one spelling of sim/types.cpp.
std::string to_string(RowAlgo algo) {
  if (const auto model = model_algo(algo)) return to_string(*model);
  switch (algo) {
    case RowAlgo::standard:
    case RowAlgo::flash1:
    case RowAlgo::flash2:
    case RowAlgo::blocksparse: break;  // spelled above
    case RowAlgo::torch_flash: return "torch_flash";
    case RowAlgo::torch_cudnn: return "torch_cudnn";
    case RowAlgo::torch_efficient: return "torch_efficient";
    case RowAlgo::torch_math: return "torch_math";
    case RowAlgo::compulsory: return "compulsory";
    case RowAlgo::theorem2: return "theorem2";
    case RowAlgo::saha_ye: return "saha_ye";
    case RowAlgo::standard_theta: return "standard_theta";
  }
  throw std::logic_error("RowAlgo out of range");
}

std::optional<RowAlgo> parse_row_algo(std::string_view text) {
  for (RowAlgo a : kAllAlgos)
    if (to_string(a) == text) return a;
  return std::nullopt;
}

std::span<const RowAlgo> all_row_algos() { return kAllAlgos; }
std::string allowed_row_algos() { return join_spellings(all_row_algos()); }

}  // namespace flashio::sim
