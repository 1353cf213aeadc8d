// What a persistent grid needs from the host (the warp-specialised forward, kernels/flash2_fwd_ws.cuh):
// the SMs it fills with one block each, and a work counter its blocks claim items from.
#pragma once

namespace flashio::kernels {

// The current device's SMs (cudaDevAttrMultiProcessorCount), asked once per device.
int sm_count();

// The blocks of a persistent launch of `items` work items: one per SM, at most one per item, and
// at most the cap a test set (cap_persistent_blocks).
int persistent_blocks(long long items);

// For tests: at most `blocks` blocks per persistent launch from now on (0: no cap), so that a
// small problem, quick under compute-sanitizer, still gives each block several work items.
void cap_persistent_blocks(int blocks);

// One int of the current device's memory that a persistent launch counts its claimed work items
// in: made at first use and kept for the process. The launcher sets it to 0 on its stream before
// the kernel, so launches on one stream each start from 0; launches on two streams at once
// would share it (flashio runs one stream).
int* ws_work_counter();

}  // namespace flashio::kernels
