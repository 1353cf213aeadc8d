#!/bin/bash
# The persistent warp-specialised forward's checks and measurements on the H200
# (experiments/results/h200_persistent/README.md), run from the repository root:
#   measure.sh BASE NEW OUT PART
# BASE and NEW hold flashio (NEW also test_kernels_gpu) and lib/libgomp.so.1: BASE built from the
# commit before the change (one block per row tile), NEW from the change (a persistent grid).
#   ab:     [wgmma_ws] GPU tests of NEW; then the forward's speed shapes with BASE and NEW
#           alternating, twice, and PyTorch's flash and cuDNN forward (experiments/peers.py), all
#           in the one call
#   ab2:    the same after warpgroups skip the key tiles past their own rows, with the d = 64 causal
#           forward at 128 × 128 beside it, then racecheck, synccheck and memcheck of [sanitize]
#   land:   the final binaries: the warp-specialised and every-tiling forward tests, `flashio validate`
#           rows of the kernel against the counters, and the peers beside our defaults, forward and
#           forward+backward, on the speed shapes
#   check:  the final binaries' correctness: [wgmma_ws], the every-tiling forward tests, then
#           racecheck, synccheck and memcheck of [sanitize]; ncu of the default forward and backward
#   speed:  the persistent blocks' tests (capped at two blocks first, the hang check, and under the
#           three sanitizers), BASE and NEW once on the speed shapes, NEW at 128 x 128 causal, the
#           peers and our defaults forward and forward+backward, `flashio validate` rows
# Every step's limit is cut to the call's DEADLINE (kernels/tools/gpu_call.sh).
# After each step OUT is packed into OUT.tgz, so that a call cut short still returns what it measured.
# Run ab2 and land in calls of their own: together their steps' limits exceed one call's
# (README.md, "Calls 2 and 3").
set -u
BASE=$1
PART=$4
source kernels/tools/gpu_call.sh "$2" "$3"  # BIN (= NEW), OUT; limited, bench(_from), peers, validate, tests, sanitize, pack
# The every-tiling forward tests, and the persistent blocks capped at two (each taking several row tiles).
EVERY_TILING="every registered forward tiling matches the reference at N = 1\, 17\, 97\, 200\, causal and not,every registered flash2 tiling handles stacked rows crossing heads*"
CAPPED="the warp-specialised forward's persistent blocks\, two*"
SHAPES4096="--algo flash2 --pass fwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128"
SHAPES1024="--algo flash2 --pass fwd --causal=0,1 --batch 64 --heads 16 --seqlen 1024 --headdim 64"
# [wgmma_ws] GPU tests of NEW, then the speed shapes with BASE and NEW alternating, twice.
tests_and_ab() {
  tests wgmma_ws 150 "[wgmma_ws]"
  for round in 1 2; do
    bench_from "$BASE" base_n4096_$round $SHAPES4096
    bench_from "$BIN" new_n4096_$round $SHAPES4096
    bench_from "$BASE" base_n1024_$round $SHAPES1024
    bench_from "$BIN" new_n1024_$round $SHAPES1024
  done
}
if [ "$PART" = ab ]; then
  tests_and_ab
  peers peers_n4096 --pass fwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128
  peers peers_n1024 --pass fwd --causal=0,1 --batch 64 --heads 16 --seqlen 1024 --headdim 64
  exit 0
fi
if [ "$PART" = ab2 ]; then  # after warpgroups skip the key tiles past their own rows
  tests_and_ab
  bench_from "$BIN" new_128x128_causal --algo flash2 --kernel wgmma_ws --pass fwd --causal=1 --batch 16,64 --heads 16 \
    --seqlen 4096,1024 --headdim 64 --block-r 128 --block-c 128
  peers peers_n4096 --pass fwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128
  peers peers_n1024 --pass fwd --causal=0,1 --batch 64 --heads 16 --seqlen 1024 --headdim 64
  sanitize racecheck 150
  sanitize synccheck 100
  sanitize memcheck 100
  exit 0
fi
if [ "$PART" = land ]; then  # the final binaries: their tests, the counters, the speed rows
  tests tests 120 "[wgmma_ws],$EVERY_TILING"
  validate ws --algo flash2 --kernel wgmma_ws --pass fwd --causal=0,1 --batch 2 --heads 16 --seqlen 1000,4096 --headdim 64,128
  validate ws_many --algo flash2 --kernel wgmma_ws --pass fwd --causal=0,1 --batch 8 --heads 12 --seqlen 1536 --headdim 64,128
  peers peers_n4096 --pass fwd,fwdbwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128
  peers peers_n1024 --pass fwd,fwdbwd --causal=0,1 --batch 64 --heads 16 --seqlen 1024 --headdim 64
  bench flash2_n4096 --algo flash2 --pass fwd,fwdbwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128
  bench flash2_n1024 --algo flash2 --pass fwd,fwdbwd --causal=0,1 --batch 64 --heads 16 --seqlen 1024 --headdim 64
  exit 0
fi
if [ "$PART" = check ]; then  # correctness of the final binaries: the tests, then the sanitizers
  tests wgmma_ws 150 "[wgmma_ws]"
  tests tests 120 "$EVERY_TILING"
  for tool in racecheck synccheck memcheck; do sanitize $tool 60 "$CAPPED" ${tool}_persistent; done
  sanitize racecheck 150
  sanitize synccheck 100
  sanitize memcheck 100
  # Where the default kernels' time goes, for the time model (docs/time_model.md): ncu of the
  # warp-specialised forward (d 64) and the wgmma backward (d 128), B16 H16 N4096 non-causal.
  NCU_BIN=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  for k in "flash2_fwd_ws_kernel fwd 64" "flash2_bwd_wgmma_kernel bwd 128"; do
    set -- $k
    limited 100 "ncu $1" "$NCU_BIN" --clock-control none -k "regex:$1" --launch-skip 3 --launch-count 1 \
      --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
      --section InstructionStats --section Occupancy --section SourceCounters --print-details all \
      "$BIN/flashio" bench --algo flash2 --pass "$2" --batch 16 --heads 16 --seqlen 4096 --headdim "$3" \
      --repeats 10 > "$OUT/ncu_$1.txt" 2>&1
    echo "ncu $1 rc=$?"
    pack
  done
  exit 0
fi
if [ "$PART" = speed ]; then  # BASE against NEW once, 128 x 128 causal, the peers, our defaults, the counters
  # First the persistent blocks capped at two (small, quick: a hang shows at once), line-buffered
  # and timed, then under the three sanitizers, then the persistent tests at full size.
  tests persistent_capped 40 "$CAPPED"
  if [ "$rc" = 124 ]; then  # cut short: which half hangs, without causal's skipped key tiles or with them
    for causal in 0 1; do
      limited 40 "hang bench" "$BIN/flashio" bench --algo flash2 --pass fwd --causal=$causal --batch 3 --heads 32 --seqlen 1025 \
        --headdim 64 --repeats 10 > "$OUT/hang_causal$causal.log" 2>&1
      echo "bench causal=$causal rc=$?"
    done
    pack
    exit 1
  fi
  for tool in racecheck synccheck memcheck; do sanitize $tool 60 "$CAPPED" ${tool}_persistent; done
  tests persistent_test 150 "the warp-specialised forward's persistent blocks take*"
  # In the order of what landing needs most, each step cut to the call's deadline: N 4096 (BASE,
  # NEW forward and forward+backward, the peers), the counters, then N 1024, then 128 x 128 causal.
  bench_from "$BASE" base_n4096 $SHAPES4096
  bench_from "$BIN" new_n4096 ${SHAPES4096/--pass fwd/--pass fwd,fwdbwd}
  peers peers_n4096 --pass fwd,fwdbwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128
  validate ws --algo flash2 --kernel wgmma_ws --pass fwd --causal=0,1 --batch 2 --heads 16 --seqlen 1000,4096 --headdim 64,128
  bench_from "$BASE" base_n1024 $SHAPES1024
  bench_from "$BIN" new_n1024 ${SHAPES1024/--pass fwd/--pass fwd,fwdbwd}
  peers peers_n1024 --pass fwd,fwdbwd --causal=0,1 --batch 64 --heads 16 --seqlen 1024 --headdim 64
  bench_from "$BIN" new_128x128_causal --algo flash2 --kernel wgmma_ws --pass fwd --causal=1 --batch 16,64 --heads 16 \
    --seqlen 4096,1024 --headdim 64 --block-r 128 --block-c 128
  validate ws_many --algo flash2 --kernel wgmma_ws --pass fwd --causal=0,1 --batch 8 --heads 12 --seqlen 1536 --headdim 64,128
  exit 0
fi
echo "measure.sh: PART must be ab, ab2, land, check or speed (got '$PART')" >&2
exit 2
