// The identity columns of a row (docs/rows.md) as typed values, each with one spelling table
// (row_identity.cpp): `source` (who produced the row) and `algo` (the model's algorithms, the
// peers' PyTorch backends and the bounds, one identity so that every row's algo column has a
// type). The `kernel` column is the model's KernelKind or the configuration's total
// (sim/row.h); `pass` and `dtype` are sim::Pass and sim::DType. A string appears only at the
// edges: csv, json, table text, labels. Every switch over these lists each value (sim builds
// with -Werror=switch), so a new one cannot be forgotten.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sim/types.h"

namespace flashio::sim {

// model: closed form, walk or execute (which agree); cache: the L2 model (fills dram_*);
// measured: flashio profile or bench; peer: experiments/peers.py; bound: sim/bounds.h.
enum class RowSource { model, cache, measured, peer, bound };

std::string to_string(RowSource source);
std::optional<RowSource> parse_row_source(std::string_view text);
std::span<const RowSource> all_row_sources();
std::string allowed_row_sources();  // "model, cache, measured, peer, bound"

// The algo column. The model's algorithms (sim::Algo) are spelled as to_string(Algo) spells
// them; the peers' are PyTorch's SDPA backends (experiments/peers.py writes
// algo=torch_<backend>); the bounds' are sim/bounds.h's.
enum class RowAlgo {
  // the model's (sim::Algo)
  standard,
  flash1,
  flash2,
  blocksparse,
  // the peers' (experiments/peers.py)
  torch_flash,
  torch_cudnn,
  torch_efficient,
  torch_math,
  // the bounds' (sim/bounds.h)
  compulsory,
  theorem2,
  saha_ye,
  standard_theta,
};

std::string to_string(RowAlgo algo);
std::optional<RowAlgo> parse_row_algo(std::string_view text);
std::span<const RowAlgo> all_row_algos();
std::string allowed_row_algos();

// The model's algorithm a row algo is (nullopt for a peer or a bound), and back.
std::optional<Algo> model_algo(RowAlgo algo);
RowAlgo row_algo(Algo algo);

}  // namespace flashio::sim
