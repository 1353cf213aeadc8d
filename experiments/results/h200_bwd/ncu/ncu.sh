#!/bin/bash
# ncu of the committed wgmma backward (d 64 and 128), B16 H16 N4096 fp16 non-causal, run from the
# repository root on the GPU machine: ncu.sh BIN OUT (BIN holds flashio and lib/; OUT/ncu/ gets
# ncu_bwd_d{128,64}.txt). The call that made the files here ran it with BIN=.gpu/bin.
set -u
BIN=$1
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$BIN/lib
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
O=$2/ncu; mkdir -p "$O"
for d in 128 64; do
  timeout 140 "$NCU" --clock-control none -k "regex:flash2_bwd_wgmma_kernel" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section Occupancy \
    --section SchedulerStats --section MemoryWorkloadAnalysis \
    "$BIN/flashio" bench --algo flash2 --pass bwd --batch 16 --heads 16 --seqlen 4096 --headdim $d --repeats 10 \
    > "$O/ncu_bwd_d$d.txt" 2>&1
  echo "ncu d$d rc=$?"
done
