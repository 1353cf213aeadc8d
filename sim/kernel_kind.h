// KernelKind: every kernel the model knows, as one typed identity with one spelling table
// (kernel_kind.cpp). The schedules, the closed forms, execute, the L2 model's occupancy data,
// the profiler's bridge from the CUDA launches and the rows' `kernel` column all use it; a
// string appears only at the edges (csv, json, tables, labels). Adding a kind without handling
// it is a compile error: every switch over it lists each kind (sim builds with -Werror=switch).
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sim/types.h"

namespace flashio::sim {

enum class KernelKind {
  // standard attention, forward (docs/schedules.md, "standard")
  gemm_qk,
  mask,
  softmax,
  dropout,
  gemm_pv,
  // standard attention, backward
  gemm_dv,
  gemm_dp,
  dropout_bwd,
  rowsum_do_o,
  softmax_bwd,
  gemm_dq,
  gemm_dk,
  // FlashAttention-1 (paper Algorithms 1 and 4)
  flash1_fwd,
  flash1_bwd,
  // FlashAttention-2's order, and block-sparse over it (the same kernels over a mask's tiles)
  flash2_fwd,
  flash2_fwd_combine,  // split-KV (Config::splits > 1): merges the splits' partial O and lse
  flash2_bwd_preprocess,
  flash2_bwd,
  flash2_bwd_convert_dq,
  blocksparse_fwd,
  blocksparse_bwd_preprocess,
  blocksparse_bwd,
  blocksparse_bwd_convert_dq,
};

// The spelling in rows, tables and files ("flash2_bwd_convert_dq").
std::string to_string(KernelKind kind);
std::optional<KernelKind> parse_kernel_kind(std::string_view text);
// Every kind, in declaration order.
std::span<const KernelKind> all_kernel_kinds();

// The algorithm whose schedule launches the kind.
Algo algo_of(KernelKind kind);
// fwd for the forward's kernels, bwd for the backward's.
Pass pass_of(KernelKind kind);

// What a FlashAttention-2-order kernel does, whichever algorithm launches it: block-sparse runs
// flash2's four kernels over the tiles that meet its mask's nonzero blocks, so the two share one closed form.
enum class Flash2Role { fwd, bwd_preprocess, bwd, bwd_convert_dq };
// The kind of flash2 or blocksparse (algo) that plays the role.
KernelKind flash2_kind(Algo algo, Flash2Role role);

}  // namespace flashio::sim
