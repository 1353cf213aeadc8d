// flash2 fwd, d = 128: the tilings built (docs/kernels.md, "Registry"). fp16 gets six
// tilings from {32, 64, 128}²; bf16 only the one used by default.
#include "kernels/flash2_fwd.cuh"
#include "kernels/flash2_fwd_wgmma.cuh"

namespace flashio::kernels {

void append_flash2_fwd_d128(std::vector<FlashImpl>& out) {
  out.push_back(flash2_fwd_impl<__half, 128, 64, 32>(DType::fp16));
  out.push_back(flash2_fwd_impl<__half, 128, 64, 64>(DType::fp16));
  out.push_back(flash2_fwd_impl<__half, 128, 64, 128>(DType::fp16));
  out.push_back(flash2_fwd_impl<__half, 128, 128, 32>(DType::fp16));
  out.push_back(flash2_fwd_impl<__half, 128, 128, 64>(DType::fp16));
  out.push_back(flash2_fwd_wgmma_impl<__half, 128, 128, 128>(DType::fp16));
  out.push_back(flash2_fwd_wgmma_impl<__nv_bfloat16, 128, 128, 128>(DType::bf16));
}

}  // namespace flashio::kernels
