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
PART=$3
source kernels/tools/gpu_call.sh "$1" "$2"  # BIN, OUT; bench, validate, sanitize, pack
if [ "$PART" = tests ]; then
  timeout 330 "$BIN/test_kernels_gpu" --durations yes > "$OUT/tests.log" 2>&1
  echo "tests rc=$?"
  grep -E "^(test cases|All tests)|FAILED" "$OUT/tests.log" | head -20
  pack
  sanitize memcheck 100
  sanitize racecheck 150
  exit 0
fi
if [ "$PART" = speed ]; then
  kernels/tools/h200_speed.sh "$BIN" "$OUT"
  pack
  bench wgmma_n4096 --algo flash2 --kernel wgmma --pass fwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128
  bench ws_tilings_n4096 --algo flash2 --kernel wgmma_ws --pass fwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 \
    --headdim 64,128 --block-r 128,192 --block-c 128
  validate ws --algo flash2 --kernel wgmma_ws --pass fwd --causal=0,1 --batch 2 --heads 16 --seqlen 1000,4096 --headdim 64,128
  validate ws_gqa --algo flash2 --kernel wgmma_ws --pass fwd --causal=0,1 --batch 2 --heads 16 --kv-heads 4 --seqlen 1000 \
    --headdim 64,128 --block-r 128 --block-c 128
  sanitize synccheck 90
  exit 0
fi
echo "measure.sh: PART must be tests or speed (got '$PART')" >&2
exit 2
