// flash2 fwd, warp-specialised (kernels/flash2_fwd_ws.cuh; docs/kernels.md, "Warp-specialised
// forward"): the tilings built, fp16 and bf16, d = 64 and 128. Two buffers of K and of V: on the
// H200 three ran no faster (experiments/results/h200_ws/, call 2). 192 × 128 (three consumer
// warpgroups, 128 registers a thread at 512 threads: 16 bytes spilled) ran d = 64 1.18× faster
// than 128 × 128 (two) in the same call.
#include "kernels/flash2_fwd_ws.cuh"

namespace flashio::kernels {

void append_flash2_fwd_ws(std::vector<FlashImpl>& out) {
  out.push_back(flash2_fwd_ws_impl<__half, 64, 128, 128, 2>(DType::fp16));
  out.push_back(flash2_fwd_ws_impl<__nv_bfloat16, 64, 128, 128, 2>(DType::bf16));
  out.push_back(flash2_fwd_ws_impl<__half, 64, 192, 128, 2>(DType::fp16));
  out.push_back(flash2_fwd_ws_impl<__nv_bfloat16, 64, 192, 128, 2>(DType::bf16));
  out.push_back(flash2_fwd_ws_impl<__half, 128, 128, 128, 2>(DType::fp16));
  out.push_back(flash2_fwd_ws_impl<__nv_bfloat16, 128, 128, 128, 2>(DType::bf16));
}

}  // namespace flashio::kernels
