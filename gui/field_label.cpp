#include "gui/field_label.h"

namespace flashio::gui {

std::string_view field_label(sim::Field field) {
  using sim::Field;
  switch (field) {
    case Field::batch: return "B (batch)";
    case Field::heads: return "H (heads)";
    case Field::seqlen: return "N (seqlen)";
    case Field::headdim: return "d (headdim)";
    case Field::kv_heads: return "Hkv (K/V heads)";
    case Field::seqlen_k: return "Nk (keys)";
    case Field::mask: return "key-padding mask";  // the panel's "key-padding mask (built-in lengths)"
    case Field::dropout: return "dropout";
    case Field::pass: return "pass";
    case Field::algo: return "algorithm";
    case Field::sram_bytes: return "M";
    case Field::block_r: return "Br";
    case Field::block_c: return "Bc";
    case Field::tiling: return "tiling (Br, Bc)";
    case Field::tiling_source: return "tiling choice";  // no widget: the workbench uses the rule
    case Field::block_mask: return "block mask";
    case Field::splits: return "splits (split-KV)";
    case Field::page_size: return "page size (paged KV)";
    case Field::kernel_impl: return "kernel";  // the panel's kernel family combo beside the tiling
    case Field::key_lengths: return "key lengths file";
    case Field::varlen: return "packed (varlen)";  // the panel's check box beside the lengths file
    case Field::window_left: return "window left";
    case Field::window_right: return "window right";
    case Field::hardware: return "hardware preset";
    case Field::count_method: return "count method";  // the workbench counts with formula and walk
    case Field::tracked_row: return "row";
  }
  return sim::field_name(field);
}

std::string error_message(const std::exception& error) {
  if (const auto* invalid = dynamic_cast<const sim::InvalidInput*>(&error);
      invalid && invalid->field())
    return std::string(field_label(*invalid->field())) + ": " + invalid->problem();
  return error.what();
}

}  // namespace flashio::gui
