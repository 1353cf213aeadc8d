#!/bin/bash
# The measuring side of the sixth held-out time set (docs/time_model.md, "Sixth round"): the
# predictions beside this script were committed before any of these rows was measured.
# Usage, from the repository root on the GPU machine, with the CUDA build's binaries in BIN
# (flashio, test_kernels_gpu; lib/ with libgomp.so.1) and OUT a directory for the results:
#   experiments/results/h200_time_round6/measure.sh BIN OUT
# Then here: flashio compare --predicted pred_G?.csv --measured OUT/bench_G?.csv --format csv,
# and the same against formula_G?.csv and roof_G?.csv.
set -u
BIN=$1
OUT=$2
HERE=$(dirname "$0")
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$BIN/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt"
date -u > "$OUT/started"
. "$HERE/sets.sh"
for n in G1 G2 G3 G4; do
  eval "\"$BIN/flashio\" bench \$$n --format csv --repeats 10" > "$OUT/bench_$n.csv" 2> "$OUT/bench_$n.err"
done
date -u > "$OUT/bench_ended"
# The standard path's GPU tests and memcheck of every kernel, on the kernels measured.
(timeout 200 "$BIN/test_kernels_gpu" "standard*" > "$OUT/tests_standard.log" 2>&1; echo "tests rc=$?" >> "$OUT/tests_standard.log")
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
(timeout 150 "$SAN" --tool memcheck --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/memcheck.log" 2>&1; echo "memcheck rc=$?" >> "$OUT/memcheck.log")
