#!/usr/bin/env python3
"""The copy bandwidth the decode target is measured against (docs/shapes.md, "Split-KV"): a
device-to-device copy of SIZE bytes (torch's Tensor.copy_ between contiguous CUDA buffers of one
dtype, which is a cudaMemcpyAsync), timed with CUDA events: 3 untimed copies, then the median of
20; bandwidth = 2·SIZE (read and write) / time. Usage: memcpy.py [SIZE_GIB] (default 2)."""
import statistics
import sys

import torch


def main():
    size = int(float(sys.argv[1]) * (1 << 30)) if len(sys.argv) > 1 else 2 << 30
    src = torch.empty(size, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    times = []
    for _ in range(20):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        dst.copy_(src)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    ms = statistics.median(times)
    print(f"memcpy d2d {size} B: median {ms:.4f} ms of 20, {2 * size / (ms * 1e-3) / 1e12:.3f} TB/s "
          f"(read + write; min {min(times):.4f} ms, max {max(times):.4f} ms; {torch.cuda.get_device_name()})")


if __name__ == "__main__":
    main()
