// The registry of compiled tiled kernels (docs/kernels.md, "Registry"). sim/kernel_catalog.cpp
// holds the same entries as plain C++ for builds without CUDA; tests/kernels checks they agree.
#include <algorithm>
#include <tuple>
#include <map>
#include <sstream>
#include <stdexcept>

#include "kernels/launch.h"

namespace flashio::kernels {

const std::vector<FlashImpl>& flash_impls() {
  static const std::vector<FlashImpl> impls = [] {
    std::vector<FlashImpl> out;
    append_flash1_fwd_d64(out);
    append_flash1_fwd_d128(out);
    append_flash1_bwd_d64(out);
    append_flash1_bwd_d128(out);
    append_flash2_fwd_d64(out);
    append_flash2_fwd_d128(out);
    append_flash2_fwd_ws(out);
    append_flash2_bwd_d64(out);
    append_flash2_bwd_d128(out);
    append_flash2_bwd_wgmma(out);
    return out;
  }();
  return impls;
}

const std::vector<KernelEntry>& registry() {
  static const std::vector<KernelEntry> entries = [] {
    std::vector<KernelEntry> out;
    for (const FlashImpl& impl : flash_impls()) out.push_back(impl.entry);
    return out;
  }();
  return entries;
}

std::string supported_tilings(Algo algo, Pass pass) {
  // "d=64 fp16: 64x32 64x64 ...; d=64 bf16: 128x128; ..."
  std::map<std::pair<int, std::string>, std::string> groups;
  for (const KernelEntry& e : registry()) {
    if (e.algo != algo || e.pass != pass) continue;
    // Appended piece by piece: `const char* + std::string&&` made GCC 12 warn (-Wrestrict, a
    // false positive in std::string's insert).
    std::string& list = groups[{e.headdim, to_string(e.dtype)}];
    if (!list.empty()) list += ' ';
    list += std::to_string(e.block_r);
    list += 'x';
    list += std::to_string(e.block_c);
    if (e.mma != MmaKind::mma_sync) {
      list += '(';
      list += to_string(e.mma);
      list += ')';
    }
  }
  std::string text;
  for (const auto& [key, list] : groups) {
    if (!text.empty()) text += "; ";
    text += "d=";
    text += std::to_string(key.first);
    text += ' ';
    text += key.second;
    text += ": ";
    text += list;
  }
  return text.empty() ? "none" : text;
}

// Default kernels, in order of preference: the fastest measured on the H200 at B16 H16 N4096 and
// B64 H16 N1024, fp16, non-causal (docs/kernels.md, "Speed"; experiments/results/h200_speed.csv);
// a problem runs the first whose kernel is built for its dtype and runs it (a dense_only kernel
// only a dense problem). flash2's forward: the warp-specialised kernels (192 × 128 at d = 64,
// 128 × 128 at d = 128), then, for the variants those lack, the wgmma ones (128 × 64, 128 × 128).
// sim/kernel_catalog.cpp marks the same entries is_default.
struct DefaultChoice {
  int block_r, block_c;
  MmaKind mma;
};
static std::vector<DefaultChoice> default_choices(Algo algo, Pass pass, int headdim) {
  if (pass == Pass::fwd && algo == Algo::flash2)
    return headdim == 64 ? std::vector<DefaultChoice>{{192, 128, MmaKind::wgmma_ws}, {128, 64, MmaKind::wgmma}}
                         : std::vector<DefaultChoice>{{128, 128, MmaKind::wgmma_ws}, {128, 128, MmaKind::wgmma}};
  if (pass == Pass::fwd) return {headdim == 64 ? DefaultChoice{128, 128, MmaKind::mma_sync} : DefaultChoice{128, 64, MmaKind::mma_sync}};
  if (algo == Algo::flash2) {  // the wgmma backward (dense), then mma_sync's at the same tiling
    const int block_r = headdim == 64 ? 128 : 64;
    return {{block_r, 128, MmaKind::wgmma}, {block_r, 128, MmaKind::mma_sync}};
  }
  return {headdim == 64 ? DefaultChoice{128, 128, MmaKind::mma_sync} : DefaultChoice{64, 128, MmaKind::mma_sync}};
}

bool runs_only_dense(const AttentionConfig& c) {
  return !c.mask && c.dropout == 0.0 && c.window_left < 0 && c.splits == 1 && c.page_size == 0 &&
         c.key_lengths.empty() && !c.varlen && c.block_mask.empty();
}

const FlashImpl& find_impl(Algo algo, Pass pass, int headdim, DType dtype, int block_r, int block_c,
                           std::optional<MmaKind> family, bool dense) {
  const auto matches = [&](const KernelEntry& e, int br, int bc, std::optional<MmaKind> f) {
    return e.algo == algo && e.pass == pass && e.headdim == headdim && e.dtype == dtype && e.block_r == br &&
           e.block_c == bc && (!f || e.mma == *f);
  };
  const FlashImpl* lacking = nullptr;  // a kernel asked for that lacks one of the problem's variants
  if (block_r == 0 && block_c == 0) {
    for (const DefaultChoice& choice : default_choices(algo, pass, headdim)) {
      if (family && choice.mma != *family) continue;
      for (const FlashImpl& impl : flash_impls())
        if (matches(impl.entry, choice.block_r, choice.block_c, choice.mma)) {
          if (dense || !impl.entry.dense_only) return impl;
          if (family && lacking == nullptr) lacking = &impl;
        }
    }
  } else {
    for (const FlashImpl& impl : flash_impls())
      if (matches(impl.entry, block_r, block_c, family)) {
        if (dense || !impl.entry.dense_only) return impl;
        if (lacking == nullptr) lacking = &impl;
      }
  }
  std::ostringstream msg;
  if (lacking != nullptr) {
    msg << "kernel: " << to_string(lacking->entry.mma) << " runs dense attention only (causal or not, grouped-query "
        << "heads, Nq != Nk); not a padding mask, dropout, a window's left side, splits, a paged cache, key lengths, "
        << "varlen or a block mask";
    throw std::invalid_argument(msg.str());
  }
  if (block_r == 0 && block_c == 0) {
    msg << "kernel: no default " << to_string(algo) << " " << to_string(pass) << " kernel for d=" << headdim << " "
        << to_string(dtype);
    if (family) msg << " on " << to_string(*family) << "; give its tiling";
    msg << " (built: " << supported_tilings(algo, pass) << ")";
    throw std::invalid_argument(msg.str());
  }
  msg << "tiling: no " << to_string(algo) << " " << to_string(pass) << " kernel for d=" << headdim << " "
      << to_string(dtype) << " " << block_r << "x" << block_c;
  if (family) msg << " on " << to_string(*family);
  msg << " (built: " << supported_tilings(algo, pass) << ")";
  throw std::invalid_argument(msg.str());
}

const KernelEntry& default_entry(Algo algo, Pass pass, int headdim, DType dtype) {
  if (algo == Algo::standard) throw std::invalid_argument("algo: standard has no tiled kernels");
  if (pass == Pass::fwdbwd) throw std::invalid_argument("pass: registry entries are fwd or bwd");
  return find_impl(algo, pass, headdim, dtype, 0, 0).entry;
}

}  // namespace flashio::kernels
