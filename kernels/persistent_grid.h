// What a persistent grid needs from the host (the warp-specialised forward, kernels/flash2_fwd_ws.cuh):
// the SMs it fills with one block each, and a work counter its blocks claim items from.
#pragma once

namespace flashio::kernels {

// The current device's SMs (cudaDevAttrMultiProcessorCount), asked once per device.
int sm_count();

// One int of the current device's memory that a persistent launch counts its claimed work items
// in: made at first use and kept for the process. The launcher sets it to 0 on its stream before
// the kernel, so launches on one stream each start from 0; launches on two streams at once
// would share it (flashio runs one stream).
int* ws_work_counter();

}  // namespace flashio::kernels
