#!/bin/bash
# The warp-specialised forward's checks and measurements on the H200 (experiments/results/h200_ws/
# README.md), run from the repository root: measure.sh BIN OUT PART
#   tests:  all GPU tests (test_kernels_gpu, whose [wgmma_ws] cases and every-registered-tiling
#           cases run the new kernels), compute-sanitizer memcheck and racecheck of [sanitize]
#   speed:  the speed script (kernels/tools/h200_speed.sh: peers and our defaults, now the
#           warp-specialised forward for dense problems), the wgmma forward beside it (--kernel
#           wgmma) and the warp-specialised tilings, then `flashio validate` rows of the new kernels
#           against the counters (../h200_validation.csv) and synccheck of [sanitize]
# BIN holds flashio, test_kernels_gpu and lib/libgomp.so.1. After each step OUT is packed into
# OUT.tgz, so that a call cut short still returns what it measured.
set -u
BIN=$1
OUT=$2
PART=$3
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$BIN/lib
export PYTHONUNBUFFERED=1
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt"
pack() { tar czf "${PACK:-$OUT.tgz}" -C "$(dirname "$OUT")" "$(basename "$OUT")"; }  # PACK: where (default OUT.tgz)
if [ "$PART" = tests ]; then
  timeout 330 "$BIN/test_kernels_gpu" --durations yes > "$OUT/tests.log" 2>&1
  echo "tests rc=$?"
  grep -E "^(test cases|All tests)|FAILED" "$OUT/tests.log" | head -20
  pack
  timeout 100 "$SAN" --tool memcheck --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/memcheck.log" 2>&1
  echo "memcheck rc=$?"; tail -2 "$OUT/memcheck.log"
  pack
  timeout 150 "$SAN" --tool racecheck --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/racecheck.log" 2>&1
  echo "racecheck rc=$?"; tail -2 "$OUT/racecheck.log"
  pack
  exit 0
fi
if [ "$PART" = speed ]; then
  kernels/tools/h200_speed.sh "$BIN" "$OUT"
  pack
  bench() {  # name, then flashio bench options
    local name=$1; shift
    timeout 150 "$BIN/flashio" bench --format csv --out "$OUT/$name.csv" "$@" >> "$OUT/bench.log" 2>&1
    echo "bench $name rc=$?" | tee -a "$OUT/bench.log"
    pack
  }
  bench wgmma_n4096 --algo flash2 --kernel wgmma --pass fwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128
  bench ws_tilings_n4096 --algo flash2 --kernel wgmma_ws --pass fwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 \
    --headdim 64,128 --block-r 128,192 --block-c 128
  validate() {  # name, then flashio validate options
    local name=$1; shift
    timeout 150 "$BIN/flashio" validate --format csv --measured-out "$OUT/validate_${name}_measured.csv" \
      --predicted-out "$OUT/validate_${name}_predicted.csv" "$@" > "$OUT/validate_$name.csv" 2> "$OUT/validate_$name.err"
    echo "validate $name rc=$?" | tee -a "$OUT/validate_$name.err"
    pack
  }
  validate ws --algo flash2 --kernel wgmma_ws --pass fwd --causal=0,1 --batch 2 --heads 16 --seqlen 1000,4096 --headdim 64,128
  validate ws_gqa --algo flash2 --kernel wgmma_ws --pass fwd --causal=0,1 --batch 2 --heads 16 --kv-heads 4 --seqlen 1000 \
    --headdim 64,128 --block-r 128 --block-c 128
  timeout 90 "$SAN" --tool synccheck --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/synccheck.log" 2>&1
  echo "synccheck rc=$?"; tail -2 "$OUT/synccheck.log"
  pack
  exit 0
fi
echo "measure.sh: PART must be tests or speed (got '$PART')" >&2
exit 2
