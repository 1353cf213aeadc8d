// flash2 bwd on wgmma (kernels/flash2_bwd_wgmma.cuh; docs/kernels.md, "wgmma backward"): the
// tilings built, fp16 and bf16: 128 × 128 at d = 64, 64 × 128 at d = 128 (the mma_sync
// backward's defaults, so the schedule is the same).
#include "kernels/flash2_bwd_wgmma.cuh"

namespace flashio::kernels {

void append_flash2_bwd_wgmma(std::vector<FlashImpl>& out) {
  out.push_back(flash2_bwd_wgmma_impl<__half, 64, 128, 128>(DType::fp16));
  out.push_back(flash2_bwd_wgmma_impl<__nv_bfloat16, 64, 128, 128>(DType::bf16));
  out.push_back(flash2_bwd_wgmma_impl<__half, 128, 64, 128>(DType::fp16));
  out.push_back(flash2_bwd_wgmma_impl<__nv_bfloat16, 128, 64, 128>(DType::bf16));
}

}  // namespace flashio::kernels
