#!/bin/bash
# Correctness on the GPU machine (docs/kernels.md, "Tests"): the GPU tests against the fp64
# reference, then compute-sanitizer memcheck and
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
timeout 90 "$SAN" --tool memcheck --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/memcheck.log" 2>&1
echo "memcheck rc=$?"
tail -4 "$OUT/memcheck.log"
timeout 150 "$SAN" --tool racecheck --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/racecheck.log" 2>&1
echo "racecheck rc=$?"
tail -4 "$OUT/racecheck.log"
