#!/bin/bash
# Calibration on the GPU machine (docs/calibration.md): `flashio calibrate` writes the H200's
# measured rates as a hardware file, $OUT/h200_calibration.hw (read with --hw FILE), and its
# progress (one line per measured point) to $OUT/calibrate.log; then the GPU test of calibrate
# (test_calibrate_gpu: a --quick run, every figure within a Hopper GPU's physical range), when
# BIN_DIR holds it. Optional: SANITIZE=1 adds compute-sanitizer memcheck on that test (slow).
# Usage, from the repository root on the GPU machine: kernels/tools/h200_calibrate.sh BIN_DIR OUT_DIR
# (BIN_DIR holds flashio; docs/gpu.md, "How a GPU run is done").
set -u
BIN=$1
OUT=$2
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$BIN/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee -a "$OUT/gpu.txt"
timeout 300 "$BIN/flashio" calibrate --out "$OUT/h200_calibration.hw" 2>&1 | tee "$OUT/calibrate.log"
echo "calibrate rc=${PIPESTATUS[0]}" | tee -a "$OUT/calibrate.log"
cat "$OUT/h200_calibration.hw" 2>/dev/null
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv | tee -a "$OUT/gpu.txt"
if [ -x "$BIN/test_calibrate_gpu" ]; then
  timeout 200 "$BIN/test_calibrate_gpu" --durations yes > "$OUT/calibrate_test.log" 2>&1
  echo "test_calibrate_gpu rc=$?"
  grep -E "^(test cases|All tests)|FAILED|with expansion|flashio calibrate:" "$OUT/calibrate_test.log" | head -60
  if [ "${SANITIZE:-0}" = 1 ]; then
    SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    timeout 590 "$SAN" --tool memcheck --error-exitcode 9 "$BIN/test_calibrate_gpu" > "$OUT/calibrate_memcheck.log" 2>&1
    echo "memcheck rc=$?"
    tail -4 "$OUT/calibrate_memcheck.log"
  fi
fi
