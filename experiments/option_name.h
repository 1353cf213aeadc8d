// The option that sets a sim::Field ("--seqlen"): the one table from sim's fields to the
// options of the runner (experiments/README.md) and of flashio-gui, which spells them alike.
// Header-only, so the GUI uses it without linking the runner.
#pragma once
#include <string_view>

#include "sim/errors.h"

namespace flashio::cli {

inline std::string_view option_name(sim::Field field) {
  using sim::Field;
  switch (field) {
    case Field::batch: return "--batch";
    case Field::heads: return "--heads";
    case Field::seqlen: return "--seqlen";
    case Field::headdim: return "--headdim";
    case Field::kv_heads: return "--kv-heads";
    case Field::seqlen_k: return "--seqlen-k";
    case Field::mask: return "--mask";
    case Field::dropout: return "--dropout";
    case Field::pass: return "--pass";
    case Field::algo: return "--algo";
    case Field::sram_bytes: return "--sram";
    case Field::block_r: return "--block-r";
    case Field::block_c: return "--block-c";
    case Field::tiling: return "--block-r/--block-c";
    case Field::tiling_source: return "--tiling";
    case Field::block_mask: return "--block-mask";
    case Field::splits: return "--splits";
    case Field::page_size: return "--page-size";
    case Field::kernel_impl: return "--kernel";
    case Field::key_lengths: return "--lengths";
    case Field::varlen: return "--varlen";
    case Field::window_left: return "--window-left";
    case Field::window_right: return "--window-right";
    case Field::hardware: return "--hw";
    case Field::count_method: return "--count";
    case Field::tracked_row: return "--row";
  }
  return sim::field_name(field);
}

}  // namespace flashio::cli
