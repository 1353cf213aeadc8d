// One error type for bad input. An error about one input carries that input's Field, so each
// front end names it in its own words: the CLI by its option ("--seqlen"), the GUI by its widget
// label. sim's own messages name the field by sim's spelling (field_name) and never by a
// front end's; the CLI prints its message as one line and exits with status 2.
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace flashio::sim {

// The inputs sim checks, by what they are rather than how a front end spells them.
enum class Field {
  batch,         // Problem::batch, B
  heads,         // Problem::heads, H
  seqlen,        // Problem::seqlen, N
  headdim,       // Problem::headdim, d
  kv_heads,      // Problem::kv_heads, Hkv
  seqlen_k,      // Problem::seqlen_k, Nk
  key_lengths,   // Problem::key_lengths, per-sequence key lengths
  varlen,        // Problem::varlen, a variable-length batch packed without padding
  window_left,   // Problem::window_left, a sliding window's left side
  window_right,  // Problem::window_right, its right side
  mask,          // Problem::mask, the key-padding mask pass of standard attention
  dropout,       // Problem::dropout
  pass,          // Problem::pass
  algo,          // Config::algo
  sram_bytes,    // Config::sram_bytes, M
  block_r,       // Tiling::block_r, Br
  block_c,       // Tiling::block_c, Bc
  tiling,        // Br and Bc together (their tiles must fit in M)
  tiling_source, // Config::tiling_source: how an open tiling is chosen (rule, kernel)
  block_mask,    // Config::block_mask
  splits,        // Config::splits, split-KV's key splits S
  page_size,     // Config::page_size, a paged KV cache's page size P
  kernel_impl,   // Config::kernel_impl, the forward kernel's family (mma_sync, wgmma, wgmma_ws)
  hardware,      // the hardware preset or file, and its L2 geometry
  count_method,  // the CountMethod asked of simulate
  tracked_row,   // explain's tracked row of Q
};

// Every Field, for the front ends' tables and their tests.
inline constexpr Field kAllFields[] = {
    Field::batch,      Field::heads,   Field::seqlen,  Field::headdim,    Field::kv_heads,
    Field::seqlen_k,   Field::key_lengths, Field::varlen, Field::window_left, Field::window_right, Field::mask,
    Field::dropout,    Field::pass,    Field::algo,    Field::sram_bytes, Field::block_r,
    Field::block_c,    Field::tiling,  Field::tiling_source, Field::block_mask, Field::splits,
    Field::page_size,  Field::kernel_impl,
    Field::hardware, Field::count_method, Field::tracked_row};

// sim's spelling: the member's name in sim's structs.
constexpr std::string_view field_name(Field field) {
  switch (field) {
    case Field::batch: return "batch";
    case Field::heads: return "heads";
    case Field::seqlen: return "seqlen";
    case Field::headdim: return "headdim";
    case Field::kv_heads: return "kv_heads";
    case Field::seqlen_k: return "seqlen_k";
    case Field::key_lengths: return "key_lengths";
    case Field::varlen: return "varlen";
    case Field::window_left: return "window_left";
    case Field::window_right: return "window_right";
    case Field::mask: return "mask";
    case Field::dropout: return "dropout";
    case Field::pass: return "pass";
    case Field::algo: return "algo";
    case Field::sram_bytes: return "sram_bytes";
    case Field::block_r: return "block_r";
    case Field::block_c: return "block_c";
    case Field::tiling: return "tiling";
    case Field::tiling_source: return "tiling_source";
    case Field::block_mask: return "block_mask";
    case Field::splits: return "splits";
    case Field::page_size: return "page_size";
    case Field::kernel_impl: return "kernel_impl";
    case Field::hardware: return "hardware";
    case Field::count_method: return "count_method";
    case Field::tracked_row: return "tracked_row";
  }
  return "input";
}

class InvalidInput : public std::runtime_error {
 public:
  // Bad input that is no one field (a rows file, tensors handed to execute): what() is
  // `message`.
  explicit InvalidInput(const std::string& message)
      : std::runtime_error(message), problem_(message) {}
  // Bad input in `field`: `problem` says what is wrong and what is allowed, in words that read
  // after any name of the field ("must be a positive integer (got 0)"). what() is
  // "<field_name>: <problem>".
  InvalidInput(Field field, const std::string& problem)
      : std::runtime_error(std::string(field_name(field)) + ": " + problem),
        field_(field),
        problem_(problem) {}

  const std::optional<Field>& field() const { return field_; }
  // The message without the field's name; what() when there is no field.
  const std::string& problem() const { return problem_; }

 private:
  std::optional<Field> field_;
  std::string problem_;
};

}  // namespace flashio::sim
