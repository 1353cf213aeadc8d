#!/bin/bash
# Speed on the H200 (docs/kernels.md, "Speed"): PyTorch's attention backends (peers.py) and
# our kernels (flashio_kernel_bench) in the same call, on issue 3's shapes, fp16, causal and
# not; then a sweep of every flash2 tiling and an ncu look at the two flash2 d = 128 kernels.
# Usage, from the repository root on the GPU machine: kernels/tools/h200_speed.sh BIN_DIR OUT_DIR
set -u
BIN=$1
OUT=$2
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$BIN/lib
export PYTHONUNBUFFERED=1
SHAPES="16,16,4096,64;16,16,4096,128;64,16,1024,64"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee -a "$OUT/gpu.txt"
timeout 150 python3 "$BIN/peers.py" --impls flash,cudnn --csv "$OUT/peers.csv" 2>&1 | tee "$OUT/peers.log"
timeout 120 python3 "$BIN/peers.py" --impls flash,cudnn --causal --csv "$OUT/peers_causal.csv" 2>&1 | tee -a "$OUT/peers.log"
timeout 150 "$BIN/flashio_kernel_bench" --algo flash2 --pass fwd,bwd,fwdbwd --causal 0,1 --shapes "$SHAPES" \
  --csv "$OUT/flash2.csv" 2>&1 | tee "$OUT/bench.log"
timeout 120 "$BIN/flashio_kernel_bench" --algo flash1,standard --pass fwd,fwdbwd --causal 0,1 --shapes "$SHAPES" \
  --csv "$OUT/others.csv" 2>&1 | tee -a "$OUT/bench.log"
timeout 120 "$BIN/flashio_kernel_bench" --algo flash2 --pass fwd,bwd --tiling all --repeats 10 --shapes "$SHAPES" \
  --csv "$OUT/sweep.csv" > "$OUT/sweep.log" 2>&1
echo "sweep rc=$?"
cat "$OUT/sweep.log"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for k in flash2_fwd flash2_bwd_kernel; do
  timeout 90 "$NCU" --clock-control none -k "regex:$k" --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section Occupancy \
    "$BIN/flashio_kernel_bench" --algo flash2 --pass fwd,bwd --shapes "16,16,4096,128" --repeats 10 \
    > "$OUT/ncu_$k.txt" 2>&1
  echo "ncu $k rc=$?"
done
