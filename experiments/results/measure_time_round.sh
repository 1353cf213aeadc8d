#!/bin/bash
# The measuring side of a held-out time round (docs/time_model.md, "Validation"): the predictions
# in ROUND (a folder h200_time_roundK/ with sets.sh, which names its sets in SETS) were committed
# before any of these rows was measured.
# Usage, from the repository root on the GPU machine, with the CUDA build's binaries in BIN
# (flashio, test_kernels_gpu; lib/ with libgomp.so.1) and OUT a directory for the results:
#   experiments/results/measure_time_round.sh experiments/results/h200_time_roundK BIN OUT
# Then here, for each set S: flashio compare --predicted ROUND/pred_S.csv (ROUND/pred_HW_S.csv where the
# round predicted for several presets) --measured OUT/bench_S.csv
# --format csv, and the same against ROUND/formula_S.csv and ROUND/roof_S.csv.
set -u
if [ $# -ne 3 ] || [ ! -f "$1/sets.sh" ] || [ ! -x "$2/flashio" ] || [ ! -d "$3" ]; then
  echo "usage: $0 ROUND BIN OUT (ROUND a folder with sets.sh, BIN holding flashio, OUT an existing folder)" >&2
  exit 2
fi
ROUND=$1
BIN=$2
OUT=$3
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$BIN/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt"
# The rows' hw column names the preset whose predictions they are compared with: the H200's, or on
# an H100 the h100-sxm preset's (each preset carries its own GPU's calibration, sim/hardware.cpp).
HW=h200
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100; then HW=h100-sxm; fi
echo "hw preset: $HW" >> "$OUT/gpu.txt"
date -u > "$OUT/started"
. "$ROUND/sets.sh"
for n in $SETS; do
  eval "\"$BIN/flashio\" bench \$$n --hw $HW --format csv --repeats 10" > "$OUT/bench_$n.csv" 2> "$OUT/bench_$n.err"
  # PACK=FILE: OUT packed after each set, so that a call cut short returns the sets it measured.
  if [ -n "${PACK:-}" ]; then tar czf "$PACK" -C "$(dirname "$OUT")" "$(basename "$OUT")"; fi
done
date -u > "$OUT/bench_ended"
# SKIP_CHECKS=1: the bench only (a call that has other work; the checks below ran on these kernels before).
if [ "${SKIP_CHECKS:-0}" = 1 ]; then exit 0; fi
# The standard path's GPU tests and memcheck of every kernel, on the kernels measured.
(timeout 200 "$BIN/test_kernels_gpu" "standard*" > "$OUT/tests_standard.log" 2>&1; echo "tests rc=$?" >> "$OUT/tests_standard.log")
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
(timeout 150 "$SAN" --tool memcheck --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/memcheck.log" 2>&1; echo "memcheck rc=$?" >> "$OUT/memcheck.log")
