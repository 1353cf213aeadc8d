#!/bin/bash
# The wgmma backward's checks and measurements on the H200 (experiments/results/h200_bwd/README.md),
# run from the repository root: measure.sh BIN OUT PART
#   check:  its GPU tests ([wgmma_bwd], every registered backward tiling), then PyTorch's
#           flash and cuDNN backward (experiments/peers.py) and ours in the same call: the default
#           (wgmma for dense problems) and the mma_sync kernel of the same tiling (an explicit
#           tiling runs the tiling's first kernel, mma_sync)
#   tests:  all GPU tests, compute-sanitizer memcheck, racecheck and synccheck of [sanitize]
#   speed:  the speed script (kernels/tools/h200_speed.sh), then `flashio validate` rows of the
#           new kernels against the counters (../h200_validation.csv)
#   final:  racecheck of [sanitize], the tests whose default backward is now wgmma, the speed
#           script's steps with the mma_sync backward beside the default and the validate rows
#           before the tiling sweep (so that a call cut short loses the sweep first)
#   final2: after the per-warp dQ reductions: [wgmma_bwd], racecheck and memcheck of [sanitize],
#           the peers, the default kernels' rows and the mma_sync backward at d=128
# BIN holds flashio, test_kernels_gpu and lib/libgomp.so.1. After each step OUT is packed into
# PACK (default OUT.tgz), so that a call cut short still returns what it measured.
set -u
PART=$3
source kernels/tools/gpu_call.sh "$1" "$2"  # BIN, OUT; bench, peers, validate, sanitize, pack
if [ "$PART" = check ]; then
  timeout 200 "$BIN/test_kernels_gpu" "[wgmma_bwd]" > "$OUT/wgmma_bwd.log" 2>&1
  echo "[wgmma_bwd] rc=$?"; grep -E "^(test cases|All tests)|FAILED|with expansion" "$OUT/wgmma_bwd.log" | head -20
  pack
  timeout 100 "$BIN/test_kernels_gpu" "every registered backward tiling matches the reference at N = 1\, 17\, 97\, 200\, causal and not" \
    > "$OUT/registered_bwd.log" 2>&1
  echo "registered bwd rc=$?"; grep -E "^(test cases|All tests)|FAILED" "$OUT/registered_bwd.log" | head
  pack
  peers peers_n4096 --pass bwd,fwdbwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128
  bench default_n4096 --algo flash2 --pass bwd,fwdbwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128
  bench mma_sync_d64 --algo flash2 --pass bwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64 --block-r 128 --block-c 128
  bench mma_sync_d128 --algo flash2 --pass bwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 128 --block-r 64 --block-c 128
  exit 0
fi
if [ "$PART" = tests ]; then
  timeout 330 "$BIN/test_kernels_gpu" --durations yes > "$OUT/tests.log" 2>&1
  echo "tests rc=$?"; grep -E "^(test cases|All tests)|FAILED" "$OUT/tests.log" | head -20
  pack
  for tool in memcheck racecheck synccheck; do
    sanitize $tool 150
  done
  exit 0
fi
if [ "$PART" = speed ]; then
  kernels/tools/h200_speed.sh "$BIN" "$OUT"
  pack
  validate bwd --algo flash2 --pass bwd --causal=0,1 --batch 2 --heads 16 --seqlen 1000,4096 --headdim 64,128
  validate bwd_gqa --algo flash2 --pass bwd --causal=0,1 --batch 2 --heads 16 --kv-heads 4 --seqlen 1000 --headdim 64,128
  exit 0
fi
if [ "$PART" = final2 ]; then  # after the per-warp dQ reductions: their checks and speed rows
  timeout 100 "$BIN/test_kernels_gpu" "[wgmma_bwd]" > "$OUT/wgmma_bwd.log" 2>&1
  echo "[wgmma_bwd] rc=$?"; grep -E "^(test cases|All tests)|FAILED" "$OUT/wgmma_bwd.log" | head
  pack
  sanitize racecheck 120
  sanitize memcheck 120
  peers peers_n4096 --pass fwd,bwd,fwdbwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128
  peers peers_n1024 --pass fwd,bwd,fwdbwd --causal=0,1 --batch 64 --heads 16 --seqlen 1024 --headdim 64
  bench flash2_n4096 --algo flash2 --pass fwd,bwd,fwdbwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128
  bench flash2_n1024 --algo flash2 --pass fwd,bwd,fwdbwd --causal=0,1 --batch 64 --heads 16 --seqlen 1024 --headdim 64
  bench mma_sync_bwd_d128 --algo flash2 --pass bwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 128 --block-r 64 --block-c 128
  exit 0
fi
if [ "$PART" = final ]; then  # the last call of a session's budget: the checks first, the sweep last
  sanitize racecheck 120
  timeout 90 "$BIN/test_kernels_gpu" "flash2 backward with grouped-query attention over a long cache*,flash2 with grouped-query attention and Nq != Nk*,bf16 flash1 and flash2 (default tilings)*" \
    > "$OUT/defaults.log" 2>&1
  echo "default-kernel tests rc=$?"; grep -E "^(test cases|All tests)|FAILED" "$OUT/defaults.log" | head
  pack
  # kernels/tools/h200_speed.sh's steps, the sweep last
  peers peers_n4096 --pass fwd,bwd,fwdbwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128
  peers peers_n1024 --pass fwd,bwd,fwdbwd --causal=0,1 --batch 64 --heads 16 --seqlen 1024 --headdim 64
  bench flash2_n4096 --algo flash2 --pass fwd,bwd,fwdbwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128
  bench flash2_n1024 --algo flash2 --pass fwd,bwd,fwdbwd --causal=0,1 --batch 64 --heads 16 --seqlen 1024 --headdim 64
  bench mma_sync_bwd_d64 --algo flash2 --pass bwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64 --block-r 128 --block-c 128
  bench mma_sync_bwd_d128 --algo flash2 --pass bwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 128 --block-r 64 --block-c 128
  validate bwd --algo flash2 --pass bwd --causal=0,1 --batch 2 --heads 16 --seqlen 1000,4096 --headdim 64,128
  validate bwd_gqa --algo flash2 --pass bwd --causal=0,1 --batch 2 --heads 16 --kv-heads 4 --seqlen 1000 --headdim 64,128
  bench others_n4096 --algo flash1,standard --pass fwd,fwdbwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128
  bench others_n1024 --algo flash1,standard --pass fwd,fwdbwd --causal=0,1 --batch 64 --heads 16 --seqlen 1024 --headdim 64
  bench sweep_n4096 --algo flash2 --pass fwd,bwd --batch 16 --heads 16 --seqlen 4096 --headdim 64,128 \
    --block-r 32,64,128 --block-c 32,64,128 --repeats 10
  exit 0
fi
echo "measure.sh: PART must be check, tests, speed, final or final2 (got '$PART')" >&2
exit 2
