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
BIN=$1
OUT=$2
PART=$3
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$BIN/lib
export PYTHONUNBUFFERED=1
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt"
pack() { tar czf "${PACK:-$OUT.tgz}" -C "$(dirname "$OUT")" "$(basename "$OUT")"; }
bench() {  # name, then flashio bench options
  local name=$1; shift
  timeout 150 "$BIN/flashio" bench --format csv --out "$OUT/$name.csv" "$@" >> "$OUT/bench.log" 2>&1
  echo "bench $name rc=$?" | tee -a "$OUT/bench.log"
  pack
}
peers() {  # name, then experiments/peers.py options
  local name=$1; shift
  timeout 200 python3 experiments/peers.py --backend flash,cudnn --out "$OUT/$name.csv" "$@" >> "$OUT/peers.log" 2>&1
  echo "peers $name rc=$?" | tee -a "$OUT/peers.log"
  pack
}
validate() {  # name, then flashio validate options
  local name=$1; shift
  timeout 150 "$BIN/flashio" validate --format csv --measured-out "$OUT/validate_${name}_measured.csv" \
    --predicted-out "$OUT/validate_${name}_predicted.csv" "$@" > "$OUT/validate_$name.csv" 2> "$OUT/validate_$name.err"
  echo "validate $name rc=$?" | tee -a "$OUT/validate_$name.err"
  pack
}
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
    timeout 150 "$SAN" --tool $tool --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/$tool.log" 2>&1
    echo "$tool rc=$?"; tail -2 "$OUT/$tool.log"
    pack
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
  timeout 120 "$SAN" --tool racecheck --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/racecheck.log" 2>&1
  echo "racecheck rc=$?"; tail -2 "$OUT/racecheck.log"
  pack
  timeout 120 "$SAN" --tool memcheck --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/memcheck.log" 2>&1
  echo "memcheck rc=$?"; tail -2 "$OUT/memcheck.log"
  pack
  peers peers_n4096 --pass fwd,bwd,fwdbwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128
  peers peers_n1024 --pass fwd,bwd,fwdbwd --causal=0,1 --batch 64 --heads 16 --seqlen 1024 --headdim 64
  bench flash2_n4096 --algo flash2 --pass fwd,bwd,fwdbwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128
  bench flash2_n1024 --algo flash2 --pass fwd,bwd,fwdbwd --causal=0,1 --batch 64 --heads 16 --seqlen 1024 --headdim 64
  bench mma_sync_bwd_d128 --algo flash2 --pass bwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 128 --block-r 64 --block-c 128
  exit 0
fi
if [ "$PART" = final ]; then  # the last call of a session's budget: the checks first, the sweep last
  timeout 120 "$SAN" --tool racecheck --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/racecheck.log" 2>&1
  echo "racecheck rc=$?"; tail -2 "$OUT/racecheck.log"
  pack
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
