// flash1 and flash2 against the double-precision reference (sim::dense_reference, tests/kernels/compare.h):
// forward O and log-sum-exp, backward dQ, dK, dV, on awkward and round shapes, causal and not,
// every registered tiling, outputs poisoned first, fresh random inputs each run.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <sstream>
#include <utility>
#include <vector>

#include "kernel_check.h"
#include "kernels/attention.h"
#include "compare.h"
#include "profiler/kernel_bridge.h"
#include "sim/hardware.h"

namespace fk = flashio::kernels;
using flashio::test::AttentionErrors;
using flashio::test::describe;
using flashio::test::ErrorStats;
using flashio::test::within_tolerance;

namespace {

// NaNs left in the outputs (they are poisoned with NaN before each run): 0 when every element was written.
int nan_count(std::initializer_list<const std::vector<float>*> outputs) {
  int nan = 0;
  for (const std::vector<float>* t : outputs)
    for (float x : *t) nan += std::isnan(x);
  return nan;
}

std::string label(const fk::AttentionConfig& c, const char* what) {
  std::ostringstream s;
  s << what << " " << fk::to_string(c.algo) << " " << fk::to_string(c.dtype) << " B" << c.batch << " H" << c.heads;
  if (fk::kv_heads_of(c) != c.heads) s << " Hkv" << fk::kv_heads_of(c) << (c.gqa_pack ? " packed" : " unpacked");
  s << " N" << c.seqlen;
  if (fk::keys_of(c) != c.seqlen) s << " Nk" << fk::keys_of(c);
  s << " d" << c.headdim << (c.causal ? " causal" : "") << " fwd " << c.block_r << "x" << c.block_c << " bwd "
    << c.bwd_block_r << "x" << c.bwd_block_c;
  if (c.splits != 1) s << " splits " << c.splits;
  if (c.page_size != 0) s << " page " << c.page_size;
  if (!c.key_lengths.empty()) s << " lengths " << c.key_lengths.front() << ".." << c.key_lengths.back();
  if (!c.block_mask.empty()) s << " block mask " << c.block_mask.blocks << "^2 of " << c.block_mask.block_tokens;
  if (c.dropout > 0.0) s << " dropout " << c.dropout;
  if (c.window_left >= 0 || c.window_right >= 0)
    s << " window " << (c.window_left < 0 ? std::string("none") : std::to_string(c.window_left)) << ","
      << (c.window_right < 0 ? std::string("none") : std::to_string(c.window_right));
  return s.str();
}

// Runs `config` and, on the same inputs, the standard path; checks the kernel's errors against
// the rule. Backward included when `backward`. standard has no kernels for grouped-query
// attention or Nq != Nk: there the absolute limits alone apply.
void check_against_reference(const fk::AttentionConfig& config, bool backward) {
  const uint64_t seed = flashio::test::fresh_seed();
  const fk::Pass pass = backward ? fk::Pass::fwdbwd : fk::Pass::fwd;
  fk::HostInputs in;
  uint64_t dropout_seed = 0;
  const fk::HostOutputs got = flashio::test::run_config(config, pass, seed, &in, &dropout_seed);
  fk::AttentionConfig standard = config;
  standard.algo = fk::Algo::standard;
  standard.block_r = standard.block_c = standard.bwd_block_r = standard.bwd_block_c = 0;
  standard.splits = 1;  // only flash2 splits its forward
  standard.page_size = 0;  // and reads a paged cache
  standard.key_lengths.clear();  // and per-sequence lengths (then not square: the reference alone)
  // standard takes no block mask: block-sparse runs against the reference alone, as GQA does.
  const bool square = fk::kv_heads_of(config) == config.heads && fk::keys_of(config) == config.seqlen &&
                      config.key_lengths.empty() && config.block_mask.empty();
  const fk::HostOutputs base = square ? flashio::test::run_config(standard, pass, seed) : fk::HostOutputs{};
  const double group = static_cast<double>(config.heads / fk::kv_heads_of(config));
  const std::vector<AttentionErrors> e = flashio::test::compare_with_reference(config, in, {got, base}, dropout_seed);
  INFO(label(config, "config") << " seed " << seed);
  // One line per configuration on stdout: the figures docs/kernels.md quotes.
  std::printf("%s | O max %.2e mean %.2e (std %.2e) | lse max %.2e", label(config, "errors").c_str(), e[0].o.max_abs,
              e[0].o.mean_abs(), e[1].o.max_abs, e[0].lse.max_abs);
  if (backward)
    std::printf(" | dQ %.2e/%.2e (std %.2e) dK %.2e/%.2e (std %.2e) dV %.2e/%.2e (std %.2e)", e[0].dq.max_abs,
                e[0].dq.mean_abs(), e[1].dq.max_abs, e[0].dk.max_abs, e[0].dk.mean_abs(), e[1].dk.max_abs,
                e[0].dv.max_abs, e[0].dv.mean_abs(), e[1].dv.max_abs);
  std::printf("\n");
  INFO("O   " << describe(e[0].o) << " | standard " << describe(e[1].o));
  INFO("LSE " << describe(e[0].lse));
  CHECK(within_tolerance(e[0].o, e[1].o, config.dtype));
  CHECK(e[0].lse.count == config.batch * config.heads * config.seqlen);
  CHECK(within_tolerance(e[0].lse, ErrorStats{}, config.dtype));
  if (backward) {
    INFO("dQ  " << describe(e[0].dq) << " | standard " << describe(e[1].dq));
    INFO("dK  " << describe(e[0].dk) << " | standard " << describe(e[1].dk));
    INFO("dV  " << describe(e[0].dv) << " | standard " << describe(e[1].dv));
    CHECK(within_tolerance(e[0].dq, e[1].dq, config.dtype));
    CHECK(within_tolerance(e[0].dk, e[1].dk, config.dtype, group));  // sums over the group
    CHECK(within_tolerance(e[0].dv, e[1].dv, config.dtype, group));
  }
}

fk::AttentionConfig make(fk::Algo algo, int64_t b, int64_t h, int64_t n, int64_t d, bool causal,
                         fk::DType dtype = fk::DType::fp16) {
  fk::AttentionConfig c;
  c.algo = algo, c.batch = b, c.heads = h, c.seqlen = n, c.headdim = d, c.causal = causal, c.dtype = dtype;
  return c;
}

// Runs entry e in its pass (the forward's tiling and kernel family, or the backward's).
void use_tiling(fk::AttentionConfig& c, const fk::KernelEntry& e) {
  if (e.pass == fk::Pass::fwd) c.block_r = e.block_r, c.block_c = e.block_c, c.kernel = e.mma;
  else c.bwd_block_r = e.block_r, c.bwd_block_c = e.block_c, c.bwd_kernel = e.mma;
}

fk::AttentionConfig with_dropout(fk::AttentionConfig c, double p) {
  c.dropout = p;
  return c;
}

}  // namespace

TEST_CASE("every registered forward tiling matches the reference at N = 1, 17, 97, 200, causal and not", "[gpu]") {
  for (const fk::KernelEntry& e : fk::registry()) {
    if (e.pass != fk::Pass::fwd) continue;
    for (int64_t n : {1, 17, 97, 200})
      for (bool causal : {false, true}) {
        fk::AttentionConfig c = make(e.algo, 2, 3, n, e.headdim, causal, e.dtype);
        use_tiling(c, e);
        check_against_reference(c, false);
      }
  }
}

TEST_CASE("every registered backward tiling matches the reference at N = 1, 17, 97, 200, causal and not", "[gpu]") {
  for (const fk::KernelEntry& e : fk::registry()) {
    if (e.pass != fk::Pass::bwd) continue;
    for (int64_t n : {1, 17, 97, 200})
      for (bool causal : {false, true}) {
        fk::AttentionConfig c = make(e.algo, 2, 3, n, e.headdim, causal, e.dtype);
        use_tiling(c, e);  // forward: the default kernel
        check_against_reference(c, true);
      }
  }
}

TEST_CASE("flash1 and flash2 forward and backward match the reference at N = 1025 and 4096 (fp16, d = 64, 128)",
          "[gpu][large]") {
  for (fk::Algo algo : {fk::Algo::flash2, fk::Algo::flash1})
    for (int64_t d : {64, 128})
      for (bool causal : {false, true}) {
        check_against_reference(make(algo, 1, 2, 1025, d, causal), true);
        check_against_reference(make(algo, 1, 1, 4096, d, causal), true);
      }
}

TEST_CASE("the wgmma forward tilings (d = 128: 128x128, d = 64: 128x64) match the reference at N = 1025 and 4096, "
          "causal and not",
          "[gpu][wgmma]") {
  // At N = 200 (the registry test above) a 128-key tile pipeline has only two tiles and never
  // prefetches inside the loop; these shapes run the double-buffered loop many times.
  for (const auto& [d, block_c] : {std::pair<int64_t, int>{128, 128}, std::pair<int64_t, int>{64, 64}})
    for (bool causal : {false, true})
      for (int64_t n : {1025, 4096}) {
        fk::AttentionConfig c = make(fk::Algo::flash2, 1, 2, n, d, causal);
        c.block_r = 128, c.block_c = block_c;
        check_against_reference(c, false);
      }
}

TEST_CASE("a non-default tiling in both passes at N = 1025: 64x64 forward and backward, 32x128 backward", "[gpu]") {
  for (fk::Algo algo : {fk::Algo::flash2, fk::Algo::flash1})
    for (int64_t d : {64, 128}) {
      fk::AttentionConfig c = make(algo, 2, 2, 1025, d, true);
      c.block_r = 64, c.block_c = 64;
      check_against_reference(c, true);
      c.bwd_block_r = 32, c.bwd_block_c = 128;
      c.causal = false;
      check_against_reference(c, true);
    }
}

TEST_CASE("bf16 flash1 and flash2 (default tilings) match the reference at N = 1025, causal and not", "[gpu]") {
  for (fk::Algo algo : {fk::Algo::flash2, fk::Algo::flash1})
    for (int64_t d : {64, 128})
      for (bool causal : {false, true}) check_against_reference(make(algo, 1, 2, 1025, d, causal, fk::DType::bf16), true);
}

namespace {

// Grouped-query attention and Nq != Nk (docs/shapes.md): B, H, Hkv, Nq, Nk.
struct Shape {
  int64_t batch, heads, kv_heads, nq, nk;
};
fk::AttentionConfig make_shape(const Shape& s, int64_t d, bool causal, bool pack, fk::DType dtype = fk::DType::fp16) {
  fk::AttentionConfig c = make(fk::Algo::flash2, s.batch, s.heads, s.nq, d, causal, dtype);
  c.kv_heads = s.kv_heads, c.seqlen_k = s.nk, c.gqa_pack = pack;
  return c;
}
// Nq = 1, 3, 97 (decoding, a few queries, an odd prefill); Nk = 1, 1000, 32769; H/Hkv = 1, 4, 8;
// Nq > Nk (non-causal only: causal needs Nk ≥ Nq). Stacked rows cross heads inside a tile
// whenever g·Nq is not a multiple of Br.
const Shape kShapes[] = {
    {2, 8, 1, 1, 1},      // MQA, one query, one key
    {2, 8, 2, 3, 1000},   // g = 4, a few queries
    {1, 8, 2, 97, 1000},  // g = 4, odd prefill onto a cache
    {1, 4, 4, 97, 1000},  // g = 1, Nq != Nk alone
    {2, 16, 2, 1, 32769}, // g = 8 decoding over a long cache
    {1, 4, 1, 200, 97},   // MQA, more queries than keys
};

}  // namespace

TEST_CASE("flash2 with grouped-query attention and Nq != Nk matches the reference (default tilings, d = 64 and 128, "
          "fp16 and bf16, causal bottom-right and not, packed and not)",
          "[gpu][shapes]") {
  for (const Shape& s : kShapes)
    for (int64_t d : {64, 128})
      for (bool causal : {false, true}) {
        if (causal && s.nk < s.nq) continue;
        for (bool pack : {true, false}) check_against_reference(make_shape(s, d, causal, pack), false);
        // The backward always takes a group's rows; its forward runs packed.
        check_against_reference(make_shape(s, d, causal, true), s.nk <= 1000);
        check_against_reference(make_shape(s, d, causal, true, fk::DType::bf16), s.nk <= 1000);
      }
}

TEST_CASE("every registered flash2 tiling handles stacked rows crossing heads: H 8, Hkv 2, Nq 97, Nk 1000 (forward) "
          "and Nk 200 (backward), causal and not",
          "[gpu][shapes]") {
  for (const fk::KernelEntry& e : fk::registry()) {
    if (e.algo != fk::Algo::flash2) continue;
    for (bool causal : {false, true}) {
      fk::AttentionConfig c = make_shape({1, 8, 2, 97, e.pass == fk::Pass::fwd ? 1000 : 200}, e.headdim, causal, true,
                                         e.dtype);
      use_tiling(c, e);
      check_against_reference(c, e.pass == fk::Pass::bwd);
    }
  }
}

TEST_CASE("the warp-specialised forward (wgmma_ws) matches the reference at N = 1, 97, 1025, 4096, causal and not, "
          "fp16 and bf16, one head's rows and a group's stacked rows with Nq != Nk",
          "[gpu][wgmma_ws]") {
  // N = 4096 runs the TMA pipeline's buffers through many rounds (32 key tiles); N = 1 and 97
  // leave whole consumer warpgroups past the matrix; causal runs the row tiles last-first.
  for (const fk::KernelEntry& e : fk::registry()) {
    if (e.mma != fk::MmaKind::wgmma_ws) continue;
    for (bool causal : {false, true}) {
      for (int64_t n : {1, 97, 1025, 4096}) {
        fk::AttentionConfig c = make(fk::Algo::flash2, 1, n > 1025 ? 2 : 3, n, e.headdim, causal, e.dtype);
        use_tiling(c, e);
        check_against_reference(c, false);
      }
      for (bool pack : {true, false}) {
        fk::AttentionConfig c = make_shape({2, 8, 2, 97, 1000}, e.headdim, causal, pack, e.dtype);
        use_tiling(c, e);
        check_against_reference(c, false);
      }
    }
  }
}

TEST_CASE("the wgmma backward matches the reference at N = 1, 97, 1025, 4096, causal and not, fp16 and bf16, one "
          "head's rows and a group's stacked rows with Nq != Nk",
          "[gpu][wgmma_bwd]") {
  // N = 4096 runs the row tiles' two stages through many rounds; N = 1 and 97 leave most of a
  // tile's rows (and, at N = 1, a whole warpgroup's keys) past the matrix; causal skips row tiles
  // above the diagonal and masks the diagonal's.
  for (const fk::KernelEntry& e : fk::registry()) {
    if (e.pass != fk::Pass::bwd || e.mma != fk::MmaKind::wgmma) continue;
    for (bool causal : {false, true}) {
      for (int64_t n : {1, 97, 1025, 4096}) {
        fk::AttentionConfig c = make(fk::Algo::flash2, 1, n > 1025 ? 2 : 3, n, e.headdim, causal, e.dtype);
        use_tiling(c, e);
        check_against_reference(c, true);
      }
      for (bool pack : {true, false}) {  // H 8, Hkv 2: stacked rows crossing heads inside a tile
        fk::AttentionConfig c = make_shape({2, 8, 2, 97, 1000}, e.headdim, causal, pack, e.dtype);
        use_tiling(c, e);
        check_against_reference(c, true);
      }
    }
  }
}

TEST_CASE("flash2 backward with grouped-query attention over a long cache: H 16, Hkv 2, Nq 97, Nk 32769, causal",
          "[gpu][shapes][large]") {
  check_against_reference(make_shape({1, 16, 2, 97, 32769}, 128, true, true), true);
  check_against_reference(make_shape({1, 16, 2, 97, 32769}, 64, false, true), true);
}

namespace {

// Split-KV (docs/kernels.md, "Split-KV"): a shape, its key splits S, and the forward tiling (0 × 0:
// the default, 128 × 64 at d = 64 and 128 × 128 at d = 128, so Tc = ⌈Nk / Bc⌉ is 16 or 8 at
// Nk = 1000 and 513 or 257 at Nk = 32769).
struct SplitShape {
  Shape shape;
  int64_t splits;
  int block_r = 0, block_c = 0;
};
fk::AttentionConfig make_split(const SplitShape& s, int64_t d, bool causal, bool pack, fk::DType dtype = fk::DType::fp16) {
  fk::AttentionConfig c = make_shape(s.shape, d, causal, pack, dtype);
  c.splits = s.splits, c.block_r = s.block_r, c.block_c = s.block_c;
  return c;
}
// Every S valid for both head dimensions' default tilings (S ≤ Tc).
const SplitShape kSplitShapes[] = {
    {{2, 8, 1, 1, 1000}, 3},      // MQA decoding (g = 8): 6, 6, 4 tiles (d64); 3, 3, 2 (d128)
    // g = 4, a few queries; S = 7 leaves ranges empty without causal: d64 chunk ⌈16 / 7⌉ = 3,
    // split 6 starts at tile 18 > Tc; d128 chunk ⌈8 / 7⌉ = 2, splits 4-6 start at tile ≥ 8.
    {{2, 8, 2, 3, 1000}, 7},
    {{1, 4, 4, 97, 1000}, 1},     // S = 1: the single forward kernel, no combine
    {{1, 8, 2, 97, 1000}, 5},     // g = 4 prefill onto a cache, stacked rows crossing heads
    {{2, 16, 2, 1, 32769}, 16},   // g = 8 decoding over a long cache: 33 (d64) / 17 (d128) tiles a split
    {{1, 4, 1, 3, 32769}, 8},     // MQA (g = 4), three queries over the long cache
};

}  // namespace

TEST_CASE("flash2 with split-KV matches the reference (default tilings, d = 64 and 128, fp16 and bf16, causal and "
          "not, packed and not: Nq 1, 3, 97, Nk 1000, 32769, H/Hkv 1, 4, 8, S 1, 3, 5, 7, 8, 16)",
          "[gpu][shapes][splits]") {
  for (const SplitShape& s : kSplitShapes)
    for (int64_t d : {64, 128})
      for (bool causal : {false, true}) {
        for (bool pack : {true, false}) check_against_reference(make_split(s, d, causal, pack), false);
        // bf16, and the backward on the combine's O and lse (where the reference's backward is cheap).
        check_against_reference(make_split(s, d, causal, true, fk::DType::bf16), false);
        check_against_reference(make_split(s, d, causal, true), s.shape.nk <= 1000);
      }
}

TEST_CASE("flash2 split-KV decoding in full: Nq 1, Nk 32769, H/Hkv 8, S 3 (d = 64 and 128, fp16 and bf16, causal "
          "and not, packed and not)",
          "[gpu][shapes][splits]") {
  for (int64_t d : {64, 128})
    for (fk::DType dtype : {fk::DType::fp16, fk::DType::bf16})
      for (bool causal : {false, true})
        for (bool pack : {true, false})
          check_against_reference(make_split({{2, 32, 4, 1, 32769}, 3}, d, causal, pack, dtype), false);
}

TEST_CASE("flash2 split-KV with splits wholly above the causal diagonal for a row tile (empty: o 0, lse -inf, read by "
          "the combine), and every registered forward tiling with splits",
          "[gpu][shapes][splits]") {
  // Causal, Nq 97, Nk 1000, forward tiling 64 × 32 (Br = 64: two row tiles of one head; Bc = 32:
  // Tc = 32), S = 32 (chunk 1: split s is key tile s). Bottom-right, query q sees keys
  // ≤ q + 903, so row tile 0 (queries 0..63) sees keys ≤ 966: its j_last is tile 30, and split 31
  // (keys 992..999) lies wholly above its diagonal — that block visits nothing and writes o 0
  // and lse −inf. Row tile 1 (queries 64..96) sees every key, so the combine of row tile 0's rows
  // merges a −inf split. Inside split 29 (keys 928..959), rows 0..24 see no key (ℓ_s = 0): the
  // same −inf from a visited tile. Packed (g = 4) the group's first tile is queries 0..63 of head 0
  // again, the tiles crossing heads see every key.
  for (int64_t d : {64, 128})
    for (bool pack : {true, false}) check_against_reference(make_split({{1, 8, 2, 97, 1000}, 32, 64, 32}, d, true, pack), false);
  // Square, Nq = Nk = 97, 64 × 64: Tc = 2, S = 2; row tile 0 (queries 0..63) sees keys ≤ 63, so
  // split 1 (keys 64..96) is empty for it. Square, so also held against the standard path.
  for (int64_t d : {64, 128}) check_against_reference(make_split({{2, 3, 3, 97, 97}, 2, 64, 64}, d, true, false), true);
  // Each tiling's split instances, one head's rows and stacked (H 8, Hkv 2), causal and not.
  for (const fk::KernelEntry& e : fk::registry()) {
    if (e.dense_only) continue;  // its variant's kernels are the other families'
    if (e.algo != fk::Algo::flash2 || e.pass != fk::Pass::fwd) continue;
    for (bool causal : {false, true})
      for (bool pack : {true, false}) {
        fk::AttentionConfig c = make_split({{1, 8, 2, 97, 1000}, 3, e.block_r, e.block_c}, e.headdim, causal, pack, e.dtype);
        check_against_reference(c, false);
      }
  }
}

namespace {

// A paged KV cache (docs/kernels.md, "Paged KV cache"): a split shape read from pages of P tokens.
fk::AttentionConfig make_paged(const SplitShape& s, int64_t page, int64_t d, bool causal, bool pack,
                               fk::DType dtype = fk::DType::fp16) {
  fk::AttentionConfig c = make_split(s, d, causal, pack, dtype);
  c.page_size = page;
  return c;
}

}  // namespace

TEST_CASE("flash2 over a paged KV cache matches the reference: pages of 16 and 256 tokens (smaller and larger than a "
          "tile), Nq 1, 3, 97, Nk 1, 1000, 32769, H/Hkv 1, 4, 8, S 1, 3, 16, d 64 and 128, fp16 and bf16, causal and "
          "not, packed and not",
          "[gpu][shapes][paged]") {
  struct PagedShape {
    SplitShape split;
    int64_t page;
  };
  const PagedShape shapes[] = {
      {{{2, 8, 1, 1, 1}, 1}, 16},        // one key: one page, mostly empty
      {{{2, 8, 2, 3, 1000}, 3}, 256},    // a page holds 2-4 tiles; the last page partial
      {{{1, 4, 4, 97, 1000}, 1}, 16},    // H/Hkv 1, prefill onto a paged cache, a tile gathers 4-8 pages
      {{{2, 16, 2, 1, 32769}, 16}, 16},  // g = 8 decoding, 2049 pages a sequence
      {{{1, 4, 1, 3, 32769}, 3}, 256},   // MQA, three queries
  };
  for (const PagedShape& s : shapes)
    for (int64_t d : {64, 128})
      for (bool causal : {false, true}) {
        for (bool pack : {true, false}) check_against_reference(make_paged(s.split, s.page, d, causal, pack), false);
        check_against_reference(make_paged(s.split, s.page, d, causal, true, fk::DType::bf16), false);
      }
}

TEST_CASE("flash2 over a paged KV cache in full: (Nq 1, Nk 32769, H/Hkv 8, page 256, S 3) and (Nq 97, Nk 1000, "
          "H/Hkv 4, page 16, S 1), d 64 and 128, fp16 and bf16, causal and not, packed and not",
          "[gpu][shapes][paged]") {
  for (int64_t d : {64, 128})
    for (fk::DType dtype : {fk::DType::fp16, fk::DType::bf16})
      for (bool causal : {false, true})
        for (bool pack : {true, false}) {
          check_against_reference(make_paged({{2, 32, 4, 1, 32769}, 3}, 256, d, causal, pack, dtype), false);
          check_against_reference(make_paged({{2, 16, 4, 97, 1000}, 1}, 16, d, causal, pack, dtype), false);
        }
}

TEST_CASE("every registered flash2 forward tiling reads a paged KV cache, with and without splits (pages of 16 and "
          "48 tokens: a page boundary inside a tile)",
          "[gpu][shapes][paged]") {
  for (const fk::KernelEntry& e : fk::registry()) {
    if (e.dense_only) continue;  // its variant's kernels are the other families'
    if (e.algo != fk::Algo::flash2 || e.pass != fk::Pass::fwd) continue;
    for (bool causal : {false, true})
      for (int64_t page : {16, 48})
        for (int64_t splits : {1, 3}) {
          fk::AttentionConfig c =
              make_paged({{1, 8, 2, 97, 1000}, splits, e.block_r, e.block_c}, page, e.headdim, causal, true, e.dtype);
          check_against_reference(c, false);
        }
  }
}

TEST_CASE("flash2 over sequences of their own key lengths matches the reference over each one's keys: ragged lengths "
          "with a one-key sequence, contiguous and paged, S 1 and 3, Nq 1 and 97, d 64 and 128, fp16 and bf16, causal "
          "and not, packed and not",
          "[gpu][shapes][lengths]") {
  struct LengthsShape {
    SplitShape split;
    std::vector<int64_t> lengths;
    int64_t page;
  };
  const LengthsShape shapes[] = {
      {{{4, 16, 2, 1, 32769}, 1}, {32769, 1, 5000, 16}, 0},   // decoding, contiguous
      {{{4, 16, 2, 1, 32769}, 3}, {7, 32769, 32769, 129}, 256},  // splits over each sequence's own tiles, paged
      {{{3, 8, 2, 97, 1000}, 1}, {1000, 97, 500}, 0},          // prefill onto caches of their own lengths
      {{{3, 8, 2, 97, 1000}, 3}, {97, 1000, 640}, 16},
  };
  for (const LengthsShape& s : shapes)
    for (int64_t d : {64, 128})
      for (bool causal : {false, true})
        for (bool pack : {true, false}) {
          fk::AttentionConfig c = make_paged(s.split, s.page, d, causal, pack);
          c.key_lengths = s.lengths;
          check_against_reference(c, false);
          if (pack) {
            c.dtype = fk::DType::bf16;
            check_against_reference(c, false);
          }
        }
}

TEST_CASE("per-sequence key lengths are refused naming key_lengths: another count, a length beyond Nk, standard, "
          "and flash's --mask with lengths of its own or causal naming mask",
          "[gpu]") {
  fk::AttentionConfig c = make(fk::Algo::flash2, 2, 4, 97, 64, false);
  c.key_lengths = {97};
  CHECK_THROWS_WITH(fk::AttentionRun(c), Catch::Matchers::StartsWith("key_lengths"));
  c.key_lengths = {97, 98};
  CHECK_THROWS_WITH(fk::AttentionRun(c), Catch::Matchers::StartsWith("key_lengths"));
  c.key_lengths = {97, 50};
  c.algo = fk::Algo::standard;
  CHECK_THROWS_WITH(fk::AttentionRun(c), Catch::Matchers::StartsWith("key_lengths"));
  c.algo = fk::Algo::flash1;
  c.mask = true;
  CHECK_THROWS_WITH(fk::AttentionRun(c), Catch::Matchers::StartsWith("mask"));
  c.key_lengths.clear();
  c.causal = true;
  CHECK_THROWS_WITH(fk::AttentionRun(c), Catch::Matchers::StartsWith("mask"));
}

TEST_CASE("a paged KV cache is refused naming page_size: not a multiple of 16, another algorithm, a backward", "[gpu]") {
  fk::AttentionConfig c = make(fk::Algo::flash2, 1, 4, 97, 64, false);
  c.page_size = 24;
  CHECK_THROWS_WITH(fk::AttentionRun(c), Catch::Matchers::StartsWith("page_size"));
  c.page_size = 16;
  c.algo = fk::Algo::flash1;
  CHECK_THROWS_WITH(fk::AttentionRun(c), Catch::Matchers::StartsWith("page_size"));
  c.algo = fk::Algo::flash2;
  fk::AttentionRun run(c);
  run.fill_inputs(3);
  CHECK_THROWS_WITH(run.enqueue(fk::Pass::fwdbwd), Catch::Matchers::StartsWith("page_size"));
}

TEST_CASE("kernels other than flash2 refuse grouped-query attention and Nq != Nk, naming the field", "[gpu]") {
  for (fk::Algo algo : {fk::Algo::flash1, fk::Algo::standard}) {
    fk::AttentionConfig c = make(algo, 1, 4, 97, 64, false);
    c.kv_heads = 2;
    CHECK_THROWS_WITH(fk::AttentionRun(c), Catch::Matchers::StartsWith("kv_heads"));
    c.kv_heads = 0, c.seqlen_k = 100;
    CHECK_THROWS_WITH(fk::AttentionRun(c), Catch::Matchers::StartsWith("kv_heads/seqlen_k"));
  }
  fk::AttentionConfig c = make(fk::Algo::flash2, 1, 4, 97, 64, false);
  c.kv_heads = 3;
  CHECK_THROWS_WITH(fk::AttentionRun(c), Catch::Matchers::StartsWith("kv_heads: must divide"));
  c.kv_heads = 0, c.seqlen_k = 50, c.causal = true;
  CHECK_THROWS_WITH(fk::AttentionRun(c), Catch::Matchers::StartsWith("seqlen_k: causal"));
}

TEST_CASE("repeated runs on the same inputs differ only by the order of dQ's fp32 atomics", "[gpu]") {
  // flash2's dQ is summed by atomics in a run-dependent order; O, dK, dV are deterministic.
  fk::AttentionConfig c = make(fk::Algo::flash2, 2, 2, 1025, 64, false);
  fk::AttentionRun run(c);
  run.fill_inputs(flashio::test::fresh_seed());
  run.enqueue(fk::Pass::fwdbwd);
  const fk::HostOutputs first = run.copy_outputs();
  run.poison_outputs(fk::Pass::fwdbwd);
  run.enqueue(fk::Pass::fwdbwd);
  const fk::HostOutputs second = run.copy_outputs();
  CHECK(first.o == second.o);
  CHECK(first.dk == second.dk);
  CHECK(first.dv == second.dv);
  double max_dq_diff = 0;
  for (size_t i = 0; i < first.dq.size(); ++i) max_dq_diff = std::max(max_dq_diff, double(std::abs(first.dq[i] - second.dq[i])));
  CHECK(max_dq_diff <= 1e-2);
}

TEST_CASE("enqueue launches exactly launch_sequence(), and a backward needs a forward first", "[gpu]") {
  // What the sequence is (docs/schedules.md's kernels, in order) is checked without a GPU against
  // the model's schedules (tests/profiler, test_kernel_bridge.cpp); here: that the launches are it.
  fk::AttentionConfig c = make(fk::Algo::flash2, 1, 1, 97, 64, false);
  fk::AttentionRun run(c);
  run.fill_inputs(1);
  CHECK_THROWS_AS(run.enqueue(fk::Pass::bwd), std::logic_error);
  CHECK(run.enqueue(fk::Pass::fwd) == fk::launch_sequence(c, fk::Pass::fwd));
  CHECK(run.enqueue(fk::Pass::bwd) == fk::launch_sequence(c, fk::Pass::bwd));
  fk::AttentionConfig split = c;
  split.splits = 2;  // N = 97: two key tiles of 64
  fk::AttentionRun run_split(split);
  run_split.fill_inputs(4);
  CHECK(run_split.enqueue(fk::Pass::fwdbwd) == fk::launch_sequence(split, fk::Pass::fwdbwd));
  c.algo = fk::Algo::flash1;
  fk::AttentionRun run1(c);
  run1.fill_inputs(2);
  CHECK(run1.enqueue(fk::Pass::fwdbwd) == fk::launch_sequence(c, fk::Pass::fwdbwd));
  c.algo = fk::Algo::standard;
  c.mask = true;
  c.dropout = 0.1;
  fk::AttentionRun run2(c);
  run2.fill_inputs(3);
  CHECK(run2.enqueue(fk::Pass::fwdbwd) == fk::launch_sequence(c, fk::Pass::fwdbwd));
}

// What AttentionRun says to a configuration: its refusal's message, or "accepted".
std::string refusal(const fk::AttentionConfig& c) {
  try {
    fk::AttentionRun run(c);
  } catch (const std::invalid_argument& e) {
    return std::string(e.what());
  }
  return std::string("accepted");
}

// Sliding windows (docs/shapes.md, "Causal and sliding windows"): (left, right), −1 none.
fk::AttentionConfig make_window(fk::Algo algo, int64_t n, int64_t d, int64_t left, int64_t right,
                                fk::DType dtype = fk::DType::fp16) {
  fk::AttentionConfig c = make(algo, 2, 3, n, d, false, dtype);
  c.window_left = left, c.window_right = right;
  return c;
}

TEST_CASE("flash2 with a sliding window matches the reference masked by the window: (0, 0), (16, 16), (127, none), "
          "(none, 0) at N = 97, 1025, 4096, d = 64 and 128, forward and backward (N = 4096: forward), bf16 at N = 1025",
          "[gpu][window]") {
  for (const auto& [left, right] : {std::pair<int64_t, int64_t>{0, 0}, {16, 16}, {127, -1}, {-1, 0}})
    for (int64_t n : {97, 1025, 4096})
      for (int64_t d : {64, 128}) {
        check_against_reference(make_window(fk::Algo::flash2, n, d, left, right), n <= 1025);
        if (n == 1025) check_against_reference(make_window(fk::Algo::flash2, n, d, left, right, fk::DType::bf16), true);
      }
}

TEST_CASE("every registered flash2 tiling runs a window, forward and backward (window (33, 5) at N = 200), and "
          "windows over grouped-query heads and Nq < Nk match the reference",
          "[gpu][window]") {
  for (const fk::KernelEntry& e : fk::registry()) {
    if (e.dense_only) continue;  // its variant's kernels are the other families'
    if (e.algo != fk::Algo::flash2) continue;
    fk::AttentionConfig c = make_window(fk::Algo::flash2, 200, e.headdim, 33, 5, e.dtype);
    use_tiling(c, e);
    check_against_reference(c, e.pass == fk::Pass::bwd);
  }
  for (int64_t d : {64, 128})
    for (const auto& [left, right] : {std::pair<int64_t, int64_t>{64, 0}, {100, -1}, {7, 300}})
      for (bool pack : {true, false}) {
        fk::AttentionConfig c = make_shape({1, 8, 2, 97, 1000}, d, false, pack);
        c.window_left = left, c.window_right = right;
        // Nq < Nk with a left side leaves the first key tiles unseen: their backward blocks run no loop.
        check_against_reference(c, pack);
      }
}

TEST_CASE("a window is refused by flash1's kernels and with causal's own right side, splits or a paged cache",
          "[gpu][window]") {
  CHECK_THAT(refusal(make_window(fk::Algo::flash1, 128, 64, 16, 0)), Catch::Contains("flash1 kernels take no window"));
  fk::AttentionConfig c = make_window(fk::Algo::flash2, 128, 64, 16, 0);
  c.causal = true;
  CHECK_THAT(refusal(c), Catch::Contains("causal is window_right = 0"));
  c = make_window(fk::Algo::flash2, 128, 64, 16, -1);
  c.splits = 2;
  CHECK_THAT(refusal(c), Catch::Contains("not built with splits"));
  c.splits = 1;
  CHECK(refusal(c) == "accepted");
}

// Block-sparse (docs/kernels.md, "Block-sparse kernels"): the bits of a block-mask spec
// (sim/block_mask.h) at N, as `flashio bench --algo blocksparse` gives them to the kernels
// (profiler::token_block_mask, which kernel_config calls).
fk::TokenBlockMask mask_bits(const std::string& spec, int64_t n, bool causal) {
  flashio::sim::Problem p;
  p.seqlen = n, p.causal = causal;
  flashio::sim::Config c = flashio::sim::make_config(flashio::sim::Algo::blocksparse, p,
                                                     flashio::sim::hardware_preset("h200"));
  c.block_mask = flashio::sim::BlockMaskSpec{spec};
  return flashio::profiler::token_block_mask(c);
}

fk::AttentionConfig make_sparse(const std::string& spec, int64_t n, int64_t d, bool causal,
                                fk::DType dtype = fk::DType::fp16) {
  fk::AttentionConfig c = make(fk::Algo::flash2, 2, 3, n, d, causal, dtype);
  c.block_mask = mask_bits(spec, n, causal);
  return c;
}

// A mask file of 3 × 3 blocks (N 257..384 at T = 128). "110 010 110": the last key block no query
// keeps, so the backward's blocks of those keys visit no row tile (dK = dV = 0 there). "100 000
// 001": also the middle query block keeps no key, so its forward row tiles visit no tile (O = 0,
// lse = −inf, dQ = 0).
std::string mask_file(const char* rows = "110\n010\n110\n") {
  const std::string path = "flashio_test_block_mask.txt";
  std::FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs(rows, f);
  std::fclose(f);
  return path;
}
constexpr const char* kZeroRowMask = "100\n000\n001\n";

TEST_CASE("flash2 block-sparse matches the reference masked by the blocks: banded, random (density 0.1, 0.5) and "
          "from a file, N = 97, 300, 1025, 4096, d = 64 and 128, causal and not, forward and backward (N = 4096: "
          "forward at d = 64), bf16 at N = 1025",
          "[gpu][blocksparse]") {
  for (const std::string spec : {"banded:1", "random:0.1:5", "random:0.5:9"})
    for (int64_t n : {97, 1025, 4096})
      for (int64_t d : {64, 128})
        for (bool causal : {false, true}) {
          if (n == 4096 && (causal || d == 128)) continue;  // N = 4096 once per mask: the reference is the cost
          check_against_reference(make_sparse(spec, n, d, causal), n <= 1025);
          if (n == 1025 && !causal) check_against_reference(make_sparse(spec, n, d, causal, fk::DType::bf16), true);
        }
  for (const char* rows : {"110\n010\n110\n", kZeroRowMask}) {
    const std::string file = mask_file(rows);
    for (int64_t d : {64, 128})
      for (bool causal : {false, true}) check_against_reference(make_sparse(file, 300, d, causal), true);
    std::remove(file.c_str());
  }
}

TEST_CASE("every registered flash2 tiling runs block-sparse, forward and backward (random:0.5 at N = 300)",
          "[gpu][blocksparse]") {
  for (const fk::KernelEntry& e : fk::registry()) {
    if (e.dense_only) continue;  // its variant's kernels are the other families'
    if (e.algo != fk::Algo::flash2) continue;
    fk::AttentionConfig c = make_sparse("random:0.5:4", 300, e.headdim, false, e.dtype);
    use_tiling(c, e);
    check_against_reference(c, e.pass == fk::Pass::bwd);
  }
}

TEST_CASE("a block mask is refused naming block_mask: blocks the tiling does not divide, another algorithm, GQA, a "
          "window or splits",
          "[gpu][blocksparse]") {
  fk::AttentionConfig c = make_sparse("banded:1@16", 300, 64, false);
  CHECK_THAT(refusal(c), Catch::StartsWith("block_mask") && Catch::Contains("T = 16"));
  c = make_sparse("banded:1", 300, 64, false);
  CHECK(refusal(c) == "accepted");
  c.algo = fk::Algo::flash1;
  CHECK_THAT(refusal(c), Catch::StartsWith("block_mask") && Catch::Contains("only the flash2 kernels"));
  c.algo = fk::Algo::flash2;
  c.kv_heads = 1;
  CHECK_THAT(refusal(c), Catch::StartsWith("block_mask") && Catch::Contains("kv_heads = heads"));
  c.kv_heads = 0;
  c.window_left = 16;
  CHECK_THAT(refusal(c), Catch::StartsWith("block_mask") && Catch::Contains("window"));
  c.window_left = -1;
  c.splits = 2;
  CHECK_THAT(refusal(c), Catch::StartsWith("block_mask"));
}

TEST_CASE("every kernel runs once on a small causal shape with every output written (sanitizer target)",
          "[gpu][sanitize]") {
  // Run under compute-sanitizer memcheck and racecheck: N = 97 gives edge tiles for every
  // tiling, causal gives diagonal and skipped tiles.
  for (const fk::KernelEntry& e : fk::registry()) {
    fk::AttentionConfig c = make(e.algo, 1, 2, 97, e.headdim, true, e.dtype);
    use_tiling(c, e);
    const fk::HostOutputs out = flashio::test::run_config(c, e.pass == fk::Pass::fwd ? fk::Pass::fwd : fk::Pass::fwdbwd, 5);
    const int nan = nan_count({&out.o, &out.lse, &out.dq, &out.dk, &out.dv});
    INFO(fk::to_string(e.algo) << " " << fk::to_string(e.pass) << " d" << e.headdim << " " << e.block_r << "x" << e.block_c);
    CHECK(nan == 0);
  }
  // Grouped-query attention with Nq != Nk: stacked rows crossing heads, packed and not.
  for (int64_t d : {64, 128})
    for (bool pack : {true, false}) {
      const fk::HostOutputs out =
          flashio::test::run_config(make_shape({1, 8, 2, 97, 200}, d, true, pack), fk::Pass::fwdbwd, 7);
      const int nan = nan_count({&out.o, &out.lse, &out.dq, &out.dk, &out.dv});
      INFO("flash2 GQA d" << d << (pack ? " packed" : " unpacked"));
      CHECK(nan == 0);
    }
  // Split-KV: causal, Nq 97, Nk 200, 64 × 32 (Tc = 7), S = 7: row tile 0 (queries 0..63) sees
  // keys ≤ 166, so split 6 (keys 192..199) is empty for it; and the default tiling with S = 2
  // (d = 128: Bc = 128, two key tiles).
  for (int64_t d : {64, 128})
    for (bool pack : {true, false})
      for (const SplitShape& s : {SplitShape{{1, 8, 2, 97, 200}, 7, 64, 32}, SplitShape{{1, 8, 2, 97, 200}, 2}}) {
        const fk::HostOutputs out = flashio::test::run_config(make_split(s, d, true, pack), fk::Pass::fwd, 8);
        const int nan = nan_count({&out.o, &out.lse});
        INFO("flash2 split-KV d" << d << (pack ? " packed" : " unpacked") << " splits " << s.splits);
        CHECK(nan == 0);
      }
  // A paged KV cache: pages of 16 (a tile gathers several) and 48 (page boundaries inside tiles,
  // a partial last page), with and without splits (S = 2: Nk 200 is two key tiles at d = 128).
  for (int64_t d : {64, 128})
    for (const int64_t page : {16, 48})
      for (const int64_t splits : {1, 2}) {
        const fk::HostOutputs out =
            flashio::test::run_config(make_paged({{1, 8, 2, 97, 200}, splits}, page, d, true, true), fk::Pass::fwd, 9);
        const int nan = nan_count({&out.o, &out.lse});
        INFO("flash2 paged d" << d << " page " << page << " splits " << splits);
        CHECK(nan == 0);
      }
  // Per-sequence key lengths, contiguous and paged, with and without splits.
  for (int64_t d : {64, 128})
    for (const int64_t page : {0, 16})
      for (const int64_t splits : {1, 2}) {
        fk::AttentionConfig c = make_paged({{2, 8, 2, 97, 200}, splits}, page, d, true, true);
        c.key_lengths = {200, 97};
        const fk::HostOutputs out = flashio::test::run_config(c, fk::Pass::fwd, 10);
        const int nan = nan_count({&out.o, &out.lse});
        INFO("flash2 key lengths d" << d << " page " << page << " splits " << splits);
        CHECK(nan == 0);
      }
  // Windows: both sides, forward and backward (the window instances), d 64 and 128, and standard's.
  for (int64_t d : {64, 128})
    for (const auto& [left, right] : {std::pair<int64_t, int64_t>{16, 16}, {40, -1}}) {
      const fk::HostOutputs out =
          flashio::test::run_config(make_window(fk::Algo::flash2, 97, d, left, right), fk::Pass::fwdbwd, 11);
      const int nan = nan_count({&out.o, &out.lse, &out.dq, &out.dk, &out.dv});
      INFO("flash2 window d" << d << " " << left << "," << right);
      CHECK(nan == 0);
    }
  // Nq < Nk with a left side over grouped-query heads: the first key tiles are seen by no row tile
  // (their backward blocks run no loop and must still wait for every thread's K/V copies).
  for (int64_t d : {64, 128}) {
    fk::AttentionConfig c = make_shape({1, 8, 2, 97, 200}, d, false, true);
    c.window_left = 20;
    const fk::HostOutputs out = flashio::test::run_config(c, fk::Pass::fwdbwd, 13);
    INFO("flash2 GQA window d" << d);
    CHECK(nan_count({&out.o, &out.lse, &out.dq, &out.dk, &out.dv}) == 0);
  }
  // Block-sparse (the sparse instances), d 64 and 128, causal and not, with a key block no query
  // keeps (its backward blocks run no loop) and a query block that keeps no key (its forward row
  // tiles run no loop: O = 0 exactly, lse = −inf).
  {
    const std::string file = mask_file(kZeroRowMask);
    for (int64_t d : {64, 128})
      for (bool causal : {false, true}) {
        const fk::HostOutputs out = flashio::test::run_config(make_sparse(file, 300, d, causal), fk::Pass::fwdbwd, 14);
        INFO("flash2 block-sparse d" << d << " causal " << causal);
        CHECK(nan_count({&out.o, &out.lse, &out.dq, &out.dk, &out.dv}) == 0);
        int unwritten = 0;  // rows 128..255 of every head: O = 0, dQ = 0, lse = −inf
        for (int64_t bh = 0; bh < 2 * 3; ++bh)
          for (int64_t r = 128; r < 256; ++r) {
            unwritten += !(std::isinf(out.lse[bh * 300 + r]) && out.lse[bh * 300 + r] < 0);
            for (int64_t x = 0; x < d; ++x)
              unwritten += out.o[(bh * 300 + r) * d + x] != 0.f || out.dq[(bh * 300 + r) * d + x] != 0.f;
          }
        CHECK(unwritten == 0);
      }
    std::remove(file.c_str());
  }
  {
    const fk::HostOutputs out = flashio::test::run_config(make_window(fk::Algo::standard, 97, 64, 16, 16), fk::Pass::fwdbwd, 12);
    CHECK(nan_count({&out.o, &out.dq, &out.dk, &out.dv}) == 0);
  }
  // Fused dropout (the dropout instances), flash1 and flash2, d 64 and 128, and over stacked rows.
  for (fk::Algo algo : {fk::Algo::flash1, fk::Algo::flash2})
    for (int64_t d : {64, 128}) {
      const fk::HostOutputs out =
          flashio::test::run_config(with_dropout(make(algo, 1, 2, 97, d, true), 0.2), fk::Pass::fwdbwd, 15);
      INFO(fk::to_string(algo) << " dropout d" << d);
      CHECK(nan_count({&out.o, &out.lse, &out.dq, &out.dk, &out.dv}) == 0);
    }
  for (int64_t d : {64, 128}) {
    const fk::HostOutputs out =
        flashio::test::run_config(with_dropout(make_shape({1, 8, 2, 97, 200}, d, true, true), 0.2), fk::Pass::fwdbwd, 16);
    INFO("flash2 GQA dropout d" << d);
    CHECK(nan_count({&out.o, &out.lse, &out.dq, &out.dk, &out.dv}) == 0);
  }
  // Key padding (the same instances), with and without dropout: a one-key sequence and one past a tile.
  for (fk::Algo algo : {fk::Algo::flash1, fk::Algo::flash2})
    for (int64_t d : {64, 128})
      for (double p : {0.0, 0.2}) {
        fk::AttentionConfig c = with_dropout(make(algo, 2, 2, 97, d, false), p);
        c.key_lengths = {1, 70};
        const fk::HostOutputs out = flashio::test::run_config(c, fk::Pass::fwdbwd, 17);
        INFO(fk::to_string(algo) << " padding d" << d << " dropout " << p);
        CHECK(nan_count({&out.o, &out.lse, &out.dq, &out.dk, &out.dv}) == 0);
      }
  fk::AttentionConfig c = make(fk::Algo::standard, 2, 2, 97, 64, true);
  c.mask = true;
  c.dropout = 0.1;
  const fk::HostOutputs out = flashio::test::run_config(c, fk::Pass::fwdbwd, 6);
  const int nan = nan_count({&out.o, &out.dq, &out.dk, &out.dv});
  CHECK(nan == 0);
}

// Fused dropout (docs/kernels.md, "Fused dropout"): the reference drops what the kernels drop,
// regenerated from the run's dropout seed by the model's rule (kernels/dropout_keep.h), so these
// compare element for element; standard, run on the same inputs and seed, drops the same elements.

TEST_CASE("flash1 and flash2 with fused dropout match the reference with the same keep decisions: p 0.1 and 0.5, "
          "N 97, 1025 and 4096 (forward), d 64 and 128, causal and not, bf16 at N 1025",
          "[gpu][dropout]") {
  for (fk::Algo algo : {fk::Algo::flash1, fk::Algo::flash2})
    for (double p : {0.1, 0.5})
      for (int64_t n : {97, 1025, 4096})
        for (int64_t d : {64, 128})
          for (bool causal : {false, true}) {
            if (n == 4096 && (algo == fk::Algo::flash1 || causal)) continue;  // flash1 is one block a head: slow
            check_against_reference(with_dropout(make(algo, 1, 2, n, d, causal), p), n <= 1025);
            if (n == 1025 && p == 0.1)
              check_against_reference(with_dropout(make(algo, 1, 2, n, d, causal, fk::DType::bf16), p), true);
          }
}

TEST_CASE("standard's dropout passes keep the reference's decisions (the same rule as the fused kernels)",
          "[gpu][dropout]") {
  for (double p : {0.1, 0.5})
    for (int64_t n : {97, 300})
      for (bool causal : {false, true}) {
        const fk::AttentionConfig c = with_dropout(make(fk::Algo::standard, 2, 2, n, 64, causal), p);
        fk::HostInputs in;
        uint64_t dropout_seed = 0;
        const fk::HostOutputs got = flashio::test::run_config(c, fk::Pass::fwdbwd, flashio::test::fresh_seed(), &in,
                                                              &dropout_seed);
        const AttentionErrors e = flashio::test::compare_with_reference(c, in, {got}, dropout_seed)[0];
        INFO(label(c, "config") << " | O " << describe(e.o) << " | dQ " << describe(e.dq) << " | dK "
                                << describe(e.dk) << " | dV " << describe(e.dv));
        // The absolute limits alone (no peer to be relative to): a wrong decision moves O by
        // about a probability, far above them.
        CHECK(within_tolerance(e.o, ErrorStats{}, c.dtype));
        CHECK(within_tolerance(e.dq, ErrorStats{}, c.dtype));
        CHECK(within_tolerance(e.dk, ErrorStats{}, c.dtype));
        CHECK(within_tolerance(e.dv, ErrorStats{}, c.dtype));
      }
}

TEST_CASE("every registered flash1 and flash2 tiling runs fused dropout, forward and backward (p 0.3 at N 200), "
          "and over grouped-query heads with Nq != Nk",
          "[gpu][dropout]") {
  for (const fk::KernelEntry& e : fk::registry()) {
    if (e.dense_only) continue;  // its variant's kernels are the other families'
    fk::AttentionConfig c = with_dropout(make(e.algo, 1, 3, 200, e.headdim, true, e.dtype), 0.3);
    use_tiling(c, e);
    check_against_reference(c, e.pass == fk::Pass::bwd);
  }
  for (int64_t d : {64, 128})
    for (bool pack : {true, false})
      for (bool causal : {false, true})
        check_against_reference(with_dropout(make_shape({1, 8, 2, 97, 1000}, d, causal, pack), 0.2), pack);
}

TEST_CASE("fused dropout is refused, naming dropout, with a window, splits or a paged cache, and taken with key "
          "lengths, and flash's mask is refused with causal naming mask",
          "[gpu][dropout]") {
  fk::AttentionConfig c = with_dropout(make(fk::Algo::flash2, 1, 2, 256, 64, false), 0.1);
  c.window_left = 16;
  CHECK_THAT(refusal(c), Catch::StartsWith("dropout"));
  c.window_left = -1;
  c.splits = 2;
  CHECK_THAT(refusal(c), Catch::StartsWith("dropout"));
  c.splits = 1;
  c.page_size = 16;
  CHECK_THAT(refusal(c), Catch::StartsWith("dropout"));
  c.page_size = 0;
  c.key_lengths = {200};
  CHECK(refusal(c) == "accepted");
  c.key_lengths.clear();
  c.algo = fk::Algo::flash1;
  c.mask = true;
  CHECK(refusal(c) == "accepted");
  c.causal = true;
  CHECK_THAT(refusal(c), Catch::StartsWith("mask"));
}

// Key padding (docs/kernels.md, "Fused dropout and key padding"): per-sequence key lengths and
// flash's --mask (the built-in lengths), forward and backward, with and without dropout.
TEST_CASE("flash1 and flash2 with key padding match the reference over each sequence's keys, forward and backward: "
          "ragged lengths with a one-key (forward) or two-key sequence and one of every key, --mask's built-in lengths, "
          "dropout 0 and 0.1, "
          "d 64 and 128, bf16",
          "[gpu][dropout][padding]") {
  for (fk::Algo algo : {fk::Algo::flash1, fk::Algo::flash2})
    for (int64_t d : {64, 128})
      for (double p : {0.0, 0.1}) {
        fk::AttentionConfig c = with_dropout(make(algo, 4, 2, 300, d, false), p);
        c.key_lengths = {300, 1, 129, 255};  // all, one, just past a 128-key tile, inside one
        check_against_reference(c, false);
        // The backward with two keys, not one: with one key dS = P ∘ (dP − D) is 0 exactly, and
        // the kernels' dK is then rounding noise of D's fp16 O and dO, ~1e-2 after 300 queries,
        // against an exact 0 (the sanitizer target runs the one-key backward for NaNs).
        c.key_lengths = {300, 2, 129, 255};
        check_against_reference(c, true);
        c.key_lengths.clear();
        c.mask = true;  // len_b = 300 − ⌊b·300 / 8⌋
        check_against_reference(c, true);
        c.dtype = fk::DType::bf16;
        check_against_reference(c, true);
      }
  // Causal with lengths ≥ Nq (flash2: Nq < Nk, each sequence bottom-right in its own keys), over
  // grouped-query heads, with dropout.
  for (int64_t d : {64, 128}) {
    fk::AttentionConfig c = with_dropout(make_shape({3, 8, 2, 97, 1000}, d, true, true), 0.1);
    c.key_lengths = {97, 1000, 640};
    check_against_reference(c, true);
  }
}

TEST_CASE("every registered flash1 and flash2 tiling runs key padding with dropout, forward and backward "
          "(lengths 200, 17, 100 at N 200)",
          "[gpu][dropout][padding]") {
  for (const fk::KernelEntry& e : fk::registry()) {
    if (e.dense_only) continue;  // its variant's kernels are the other families'
    fk::AttentionConfig c = with_dropout(make(e.algo, 3, 2, 200, e.headdim, false, e.dtype), 0.2);
    c.key_lengths = {200, 17, 100};
    use_tiling(c, e);
    check_against_reference(c, e.pass == fk::Pass::bwd);
  }
}

// Variable-length batches (docs/kernels.md, "Variable-length batches"): the packed sequences of
// AttentionConfig::varlen, each checked against the reference of that sequence alone. Sequence b's
// slice of the packed tensors (H·n_b rows of Q, O, dO, dQ from H·cu_b on; Hkv·n_b of K, V, dK, dV;
// H·n_b of lse) is exactly the (1, H, n_b, d) layout of a one-sequence problem, which the
// reference takes as it is.
namespace {

template <class T>
std::vector<T> slice(const std::vector<T>& v, int64_t first, int64_t count) {
  if (v.empty()) return {};
  REQUIRE(first + count <= static_cast<int64_t>(v.size()));
  return std::vector<T>(v.begin() + first, v.begin() + first + count);
}

void check_varlen(const fk::AttentionConfig& config, bool backward) {
  const uint64_t seed = flashio::test::fresh_seed();
  fk::HostInputs in;
  const fk::HostOutputs got =
      flashio::test::run_config(config, backward ? fk::Pass::fwdbwd : fk::Pass::fwd, seed, &in);
  const int64_t h = config.heads, hkv = fk::kv_heads_of(config), d = config.headdim;
  int64_t total = 0;
  for (const int64_t n : config.key_lengths) total += n;
  REQUIRE(static_cast<int64_t>(got.o.size()) == h * total * d);  // packed: no padding rows
  REQUIRE(static_cast<int64_t>(got.lse.size()) == h * total);
  REQUIRE(static_cast<int64_t>(in.k.size()) == hkv * total * d);
  if (backward) REQUIRE(static_cast<int64_t>(got.dk.size()) == hkv * total * d);
  int64_t first = 0;
  for (size_t b = 0; b < config.key_lengths.size(); ++b) {
    const int64_t n = config.key_lengths[b];
    fk::AttentionConfig one = config;
    one.varlen = false;
    one.key_lengths.clear();
    one.batch = 1, one.seqlen = n, one.seqlen_k = 0;
    const int64_t q0 = h * first * d, qn = h * n * d, k0 = hkv * first * d, kn = hkv * n * d;
    const fk::HostInputs in_b{slice(in.q, q0, qn), slice(in.k, k0, kn), slice(in.v, k0, kn), slice(in.dout, q0, qn)};
    const fk::HostOutputs out_b{slice(got.o, q0, qn), slice(got.lse, h * first, h * n), slice(got.dq, q0, qn),
                                slice(got.dk, k0, kn), slice(got.dv, k0, kn)};
    const std::vector<AttentionErrors> e = flashio::test::compare_with_reference(one, in_b, {out_b});
    INFO(label(config, "varlen") << " sequence " << b << " of " << n << " seed " << seed);
    INFO("O   " << describe(e[0].o));
    INFO("LSE " << describe(e[0].lse));
    std::printf("%s | sequence %zu (n %lld) | O max %.2e | lse max %.2e", label(config, "varlen").c_str(), b,
                static_cast<long long>(n), e[0].o.max_abs, e[0].lse.max_abs);
    if (backward)
      std::printf(" | dQ %.2e dK %.2e dV %.2e", e[0].dq.max_abs, e[0].dk.max_abs, e[0].dv.max_abs);
    std::printf("\n");
    CHECK(within_tolerance(e[0].o, ErrorStats{}, config.dtype));
    CHECK(e[0].lse.count == h * n);
    CHECK(within_tolerance(e[0].lse, ErrorStats{}, config.dtype));
    if (backward) {
      const double group = static_cast<double>(h / hkv);
      INFO("dQ  " << describe(e[0].dq));
      INFO("dK  " << describe(e[0].dk));
      INFO("dV  " << describe(e[0].dv));
      CHECK(within_tolerance(e[0].dq, ErrorStats{}, config.dtype));
      CHECK(within_tolerance(e[0].dk, ErrorStats{}, config.dtype, group));
      CHECK(within_tolerance(e[0].dv, ErrorStats{}, config.dtype, group));
    }
    first += n;
  }
}

fk::AttentionConfig make_varlen(std::vector<int64_t> lengths, int64_t heads, int64_t kv_heads, int64_t d, bool causal,
                                bool pack, fk::DType dtype = fk::DType::fp16) {
  int64_t longest = 1;
  for (const int64_t n : lengths) longest = std::max(longest, n);
  fk::AttentionConfig c = make(fk::Algo::flash2, static_cast<int64_t>(lengths.size()), heads, longest, d, causal, dtype);
  c.kv_heads = kv_heads, c.gqa_pack = pack;
  c.key_lengths = std::move(lengths);
  c.varlen = true;
  return c;
}

}  // namespace

TEST_CASE("flash2 over packed variable-length sequences matches each sequence's reference alone, forward and "
          "backward: lengths 1, 17, 1000 and ragged ones around the tiles, d 64 and 128, fp16 and bf16, causal and "
          "not, grouped-query heads packed and not",
          "[gpu][shapes][varlen]") {
  for (int64_t d : {64, 128})
    for (bool causal : {false, true}) {
      check_varlen(make_varlen({1, 17, 1000}, 4, 4, d, causal, true), true);
      check_varlen(make_varlen({1000, 17, 1}, 4, 4, d, causal, true, fk::DType::bf16), true);
      // Equal lengths (one run), then lengths around 64- and 128-row tiles, over a group of 4.
      for (bool pack : {true, false}) {
        check_varlen(make_varlen({130, 130, 97}, 8, 2, d, causal, pack), true);
        check_varlen(make_varlen({64, 65, 127, 128, 129, 2}, 8, 2, d, causal, pack), true);
      }
    }
}

TEST_CASE("every registered flash2 tiling runs packed variable-length sequences, forward and backward "
          "(lengths 200, 1, 97)",
          "[gpu][varlen]") {
  for (const fk::KernelEntry& e : fk::registry()) {
    if (e.dense_only) continue;  // its variant's kernels are the other families'
    if (e.algo != fk::Algo::flash2) continue;
    fk::AttentionConfig c = make_varlen({200, 1, 97}, 4, 2, e.headdim, false, true, e.dtype);
    use_tiling(c, e);
    check_varlen(c, e.pass == fk::Pass::bwd);
  }
}

TEST_CASE("packed variable-length sequences are refused naming varlen: another algorithm, no lengths, Nk != N, "
          "the padding mask, dropout, a window, splits, a paged cache",
          "[gpu]") {
  const fk::AttentionConfig ok = make_varlen({97, 40}, 2, 2, 64, true, true);
  CHECK(refusal(ok) == "accepted");
  fk::AttentionConfig c = ok;
  c.algo = fk::Algo::flash1;
  CHECK_THAT(refusal(c), Catch::StartsWith("varlen") && Catch::Contains("flash1"));
  c = ok, c.key_lengths.clear();
  CHECK_THAT(refusal(c), Catch::StartsWith("varlen"));
  c = ok, c.seqlen_k = 200;
  CHECK_THAT(refusal(c), Catch::StartsWith("varlen") && Catch::Contains("seqlen_k"));
  // The mask with lengths of its own is refused as such ("mask: … not both"); the mask alone
  // (its built-in lengths) reaches varlen's own refusal.
  c = ok, c.causal = false, c.key_lengths.clear(), c.mask = true;
  CHECK_THAT(refusal(c), Catch::StartsWith("varlen") && Catch::Contains("padding mask"));
  c = ok, c.dropout = 0.1;
  CHECK_THAT(refusal(c), Catch::StartsWith("varlen"));
  c = ok, c.causal = false, c.window_left = 16;
  CHECK_THAT(refusal(c), Catch::StartsWith("varlen") && Catch::Contains("window"));
  c = ok, c.splits = 2;
  CHECK_THAT(refusal(c), Catch::StartsWith("varlen"));
  c = ok, c.page_size = 16;
  CHECK_THAT(refusal(c), Catch::StartsWith("varlen"));
}

TEST_CASE("packed variable-length sequences run with every output written: lengths 97, 1, 200, GQA packed and not, "
          "causal, d 64 and 128 (sanitizer target)",
          "[gpu][sanitize][varlen]") {
  for (int64_t d : {64, 128})
    for (bool pack : {true, false}) {
      const fk::HostOutputs out =
          flashio::test::run_config(make_varlen({97, 1, 200}, 8, 2, d, true, pack), fk::Pass::fwdbwd, 11);
      const int nan = nan_count({&out.o, &out.lse, &out.dq, &out.dk, &out.dv});
      INFO("flash2 varlen d" << d << (pack ? " packed" : " unpacked"));
      CHECK(nan == 0);
    }
}
