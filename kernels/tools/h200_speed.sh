#!/bin/bash
# Speed on the H200 (docs/kernels.md, "Speed"): PyTorch's attention backends
# (experiments/peers.py) and our kernels (`flashio bench`) in the same call, on the speed
# shapes, fp16, causal and not, forward, backward and both, then a sweep of flash2 tilings.
# Optional: NCU=1 adds an ncu look at the two flash2 d = 128 kernels.
# Usage, from the repository root on the GPU machine: kernels/tools/h200_speed.sh BIN_DIR OUT_DIR
# (BIN_DIR holds flashio; python3 there has torch; docs/gpu.md, "How a GPU run is done"). Merge
# the rows with kernels/tools/merge_speed_csv.py, which keeps the peers' `#` provenance lines.
set -u
BIN=$1
OUT=$2
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$BIN/lib
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee -a "$OUT/gpu.txt"
# The speed shapes (docs/kernels.md, "Speed"): B16 H16 N4096 d64 and d128, B64 H16 N1024 d64 (two
# sweeps: the product of the lists would add B64 N4096 and B16 N1024).
peers() {  # name, then experiments/peers.py options
  local name=$1; shift
  timeout 200 python3 experiments/peers.py --backend flash,cudnn --pass fwd,bwd,fwdbwd --causal=0,1 \
    --out "$OUT/$name.csv" "$@" 2>&1 | tee -a "$OUT/peers.log"
  echo "peers $name rc=${PIPESTATUS[0]}" | tee -a "$OUT/peers.log"
}
peers peers_n4096 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128
peers peers_n1024 --batch 64 --heads 16 --seqlen 1024 --headdim 64
bench() {  # name, then flashio bench options
  local name=$1; shift
  timeout 150 "$BIN/flashio" bench --format csv --out "$OUT/$name.csv" "$@" 2>&1 | tee -a "$OUT/bench.log"
  echo "bench $name rc=${PIPESTATUS[0]}" | tee -a "$OUT/bench.log"
}
bench flash2_n4096 --algo flash2 --pass fwd,bwd,fwdbwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128
bench flash2_n1024 --algo flash2 --pass fwd,bwd,fwdbwd --causal=0,1 --batch 64 --heads 16 --seqlen 1024 --headdim 64
# The mma_sync backward at the default backward tilings (an explicit tiling runs the tiling's first
# registered kernel, mma_sync; the default is the wgmma backward): what wgmma gained.
bench mma_sync_bwd_n4096_d64 --algo flash2 --pass bwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64 \
  --block-r 128 --block-c 128
bench mma_sync_bwd_n4096_d128 --algo flash2 --pass bwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 128 \
  --block-r 64 --block-c 128
bench others_n4096 --algo flash1,standard --pass fwd,fwdbwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128
bench others_n1024 --algo flash1,standard --pass fwd,fwdbwd --causal=0,1 --batch 64 --heads 16 --seqlen 1024 --headdim 64
# Every built flash2 tiling from {32, 64, 128}² (the ones not built are skipped and counted).
bench sweep_n4096 --algo flash2 --pass fwd,bwd --batch 16 --heads 16 --seqlen 4096 --headdim 64,128 \
  --block-r 32,64,128 --block-c 32,64,128 --repeats 10
if [ "${NCU:-0}" = 1 ]; then
  NCU_BIN=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  for k in flash2_fwd flash2_bwd_kernel; do
    timeout 90 "$NCU_BIN" --clock-control none -k "regex:$k" --launch-skip 3 --launch-count 1 \
      --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section Occupancy \
      "$BIN/flashio" bench --algo flash2 --pass fwd,bwd --batch 16 --heads 16 --seqlen 4096 --headdim 128 \
      --repeats 10 > "$OUT/ncu_$k.txt" 2>&1
    echo "ncu $k rc=$?"
  done
fi
