#!/bin/bash
# Correctness on the GPU machine (docs/kernels.md, "Tests"): the GPU tests against the fp64
# reference, a first timing sweep of every flash2 tiling, then compute-sanitizer memcheck and
# racecheck on the small-shape test that launches every kernel.
# Usage, from the repository root on the GPU machine: kernels/tools/h200_check.sh BIN_DIR OUT_DIR
set -u
BIN=$1
OUT=$2
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$BIN/lib
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
timeout 280 "$BIN/test_kernels_gpu" --durations yes > "$OUT/tests.log" 2>&1
echo "tests rc=$?"
grep -E "^(test cases|All tests)|FAILED|with expansion" "$OUT/tests.log" | head -40
timeout 120 "$BIN/flashio_kernel_bench" --algo flash2 --pass fwd,bwd --tiling all --repeats 10 \
  --shapes "16,16,4096,64;16,16,4096,128;64,16,1024,64" --csv "$OUT/sweep.csv" > "$OUT/sweep.log" 2>&1
echo "sweep rc=$?"
cat "$OUT/sweep.log"
timeout 60 "$BIN/flashio_kernel_bench" --algo flash1,standard --pass fwd,fwdbwd --shapes "4,16,4096,64" \
  --repeats 10 2>&1 | tail -6
timeout 90 "$SAN" --tool memcheck --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/memcheck.log" 2>&1
echo "memcheck rc=$?"
tail -4 "$OUT/memcheck.log"
timeout 150 "$SAN" --tool racecheck --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/racecheck.log" 2>&1
echo "racecheck rc=$?"
tail -4 "$OUT/racecheck.log"
