#!/bin/bash
# GPU calls for the masks users ask for (docs/shapes.md, "Causal and sliding windows"): the window
# kernels checked against the reference and under compute-sanitizer, their speed beside dense
# flash2 at N = 16384, and `flashio validate` rows of windows for h200_masks.csv.
# Usage, from the repository root on the GPU machine, BIN holding flashio and test_kernels_gpu
# (and lib/ with libgomp.so.1), OUT an existing folder:
#   experiments/results/h200_masks/measure.sh BIN OUT PART
# PART: tests (GPU tests, memcheck, racecheck, the speed benchmark) or validate (the rows) for
# windows; blocksparse and validate-blocksparse the same for block-sparse masks (PASSES=fwd or bwd
# in the environment: validate one pass); dropout and validate-dropout the same for fused dropout,
# validate-padding for key padding; fig2 the paper's Figure 2, left (experiments/fig2_left.cfg);
# varlen the padded and packed layouts of variable-length batches (validate, bench, simulate);
# window-tilings the window (256, 0) over every built tiling.
set -u
if [ $# -lt 3 ] || [ ! -x "$1/flashio" ] || [ ! -d "$2" ]; then
  echo "usage: $0 BIN OUT tests|validate|blocksparse|validate-blocksparse|dropout|validate-dropout|validate-padding|fig2|varlen|window-tilings (BIN holding flashio, OUT an existing folder)" >&2
  exit 2
fi
BIN=$1
OUT=$2
PART=$3
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$BIN/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$OUT/gpu.txt"
date -u > "$OUT/started"
step() { echo "$(date -u +%T) $*" >> "$OUT/steps.log"; }
# compute-sanitizer memcheck and racecheck of [sanitize] (every kernel once on a small shape).
sanitize() {
  local san tool
  san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  for tool in memcheck racecheck; do
    step "$tool"
    (timeout 100 "$san" --tool $tool --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/$tool.log" 2>&1; echo "rc=$?" >> "$OUT/$tool.log")
  done
}
if [ "$PART" = tests ]; then
  step tests
  (timeout 240 stdbuf -oL "$BIN/test_kernels_gpu" "[window]" > "$OUT/tests_window.log" 2>&1; echo "rc=$?" >> "$OUT/tests_window.log")
  sanitize
  # Speed: window (256, 0) and its one-sided parts against dense flash2, B 4, H 16, N 16384.
  step bench
  timeout 150 "$BIN/flashio" bench --algo flash2 --batch 4 --heads 16 --seqlen 16384 --headdim 64,128 --pass fwd,bwd \
    --window-left 256,none --window-right 0,none --repeats 10 --format csv --out "$OUT/bench_window.csv" > "$OUT/bench.log" 2>&1
  echo "rc=$?" >> "$OUT/bench.log"
  timeout 60 "$BIN/flashio" simulate --algo flash2 --batch 4 --heads 16 --seqlen 16384 --headdim 64,128 --pass fwd,bwd \
    --window-left 256,none --window-right 0,none --tiling kernel --format csv > "$OUT/simulate_window.csv" 2>> "$OUT/bench.log"
  step done
  exit 0
fi
if [ "$PART" = validate ]; then
  # Windows (0, 0), (16, 16), (127, none), (none, 0), (256, 0), (100, 300) at N = 1000 and 4096,
  # d 64 and 128: 48 kernel=total rows, forward and backward in one call each.
  for pass in fwd bwd; do
    step "validate $pass"
    for w in "0 0" "16 16" "127 none" "none 0" "256 0" "100 300"; do
      set -- $w
      timeout 100 "$BIN/flashio" validate --algo flash2 --batch 2 --heads 16 --seqlen 1000,4096 --headdim 64,128 --pass $pass \
        --window-left "$1" --window-right "$2" --format csv \
        --measured-out "$OUT/validate_${pass}_$1_$2_measured.csv" --predicted-out "$OUT/validate_${pass}_$1_$2_predicted.csv" \
        > "$OUT/validate_${pass}_$1_$2.csv" 2> "$OUT/validate_${pass}_$1_$2.err"
      echo "rc=$?" >> "$OUT/validate_${pass}_$1_$2.err"
    done
  done
  step done
  exit 0
fi
if [ "$PART" = blocksparse ]; then
  # Block-sparse kernels (docs/kernels.md, "Block-sparse kernels"): the GPU tests, compute-sanitizer
  # of [sanitize] (which runs the block-sparse instances too), the speed at density 0.25 beside
  # dense flash2 (B 16, H 16, N 8192, d 64 and 128), and the model's predictions of those rows.
  step tests
  (timeout 200 stdbuf -oL "$BIN/test_kernels_gpu" "[blocksparse]" > "$OUT/tests_blocksparse.log" 2>&1; echo "rc=$?" >> "$OUT/tests_blocksparse.log")
  sanitize
  step bench
  timeout 150 "$BIN/flashio" bench --algo flash2,blocksparse --block-mask random:0.25:1 --batch 16 --heads 16 --seqlen 8192 \
    --headdim 64,128 --pass fwd,bwd --repeats 10 --format csv --out "$OUT/bench_blocksparse.csv" > "$OUT/bench.log" 2>&1
  echo "rc=$?" >> "$OUT/bench.log"
  timeout 100 "$BIN/flashio" simulate --algo flash2,blocksparse --block-mask random:0.25:1 --batch 16 --heads 16 --seqlen 8192 \
    --headdim 64,128 --pass fwd,bwd --tiling kernel --format csv > "$OUT/simulate_blocksparse.csv" 2>> "$OUT/bench.log"
  step done
  exit 0
fi
if [ "$PART" = validate-blocksparse ]; then
  # Block masks banded:1, random 0.25, 0.1 and 0.5 at N = 1000 and 4096, d 64 and 128, causal and
  # not: 64 kernel=total rows; the passes PASSES (default "fwd bwd").
  for pass in ${PASSES:-fwd bwd}; do
    for m in banded:1 random:0.25:1 random:0.1:3 random:0.5:2; do
      step "validate $pass $m"
      name=${m//:/_}
      timeout 100 "$BIN/flashio" validate --algo blocksparse --block-mask "$m" --batch 2 --heads 16 --seqlen 1000,4096 \
        --headdim 64,128 --causal 0,1 --pass $pass --format csv \
        --measured-out "$OUT/validate_${pass}_${name}_measured.csv" --predicted-out "$OUT/validate_${pass}_${name}_predicted.csv" \
        > "$OUT/validate_${pass}_${name}.csv" 2> "$OUT/validate_${pass}_${name}.err"
      echo "rc=$?" >> "$OUT/validate_${pass}_${name}.err"
    done
  done
  step done
  exit 0
fi
if [ "$PART" = dropout ]; then
  # Fused dropout (docs/kernels.md, "Fused dropout"): the GPU tests, compute-sanitizer of
  # [sanitize] (which runs the dropout instances too), and the speed with dropout 0.1 beside the
  # same kernels without (B 16, H 16, N 4096, fp16, d 64 and 128, forward+backward), with the
  # model's predictions of those rows.
  step tests
  (timeout 300 stdbuf -oL "$BIN/test_kernels_gpu" "[dropout]" > "$OUT/tests_dropout.log" 2>&1; echo "rc=$?" >> "$OUT/tests_dropout.log")
  sanitize
  step bench
  timeout 200 "$BIN/flashio" bench --algo flash1,flash2 --dropout 0,0.1 --batch 16 --heads 16 --seqlen 4096 \
    --headdim 64,128 --pass fwd,bwd,fwdbwd --repeats 10 --format csv --out "$OUT/bench_dropout.csv" > "$OUT/bench.log" 2>&1
  echo "rc=$?" >> "$OUT/bench.log"
  timeout 100 "$BIN/flashio" simulate --algo flash1,flash2 --dropout 0,0.1 --batch 16 --heads 16 --seqlen 4096 \
    --headdim 64,128 --pass fwd,bwd,fwdbwd --tiling kernel --format csv > "$OUT/simulate_dropout.csv" 2>> "$OUT/bench.log"
  step done
  exit 0
fi
if [ "$PART" = validate-dropout ]; then
  # Dropout 0.1, flash1 and flash2, N = 1000 and 4096, d 64 and 128, causal and not: 32
  # kernel=total rows; the passes PASSES (default "fwd bwd").
  for pass in ${PASSES:-fwd bwd}; do
    for algo in flash1 flash2; do
      step "validate $pass $algo"
      timeout 150 "$BIN/flashio" validate --algo $algo --dropout 0.1 --batch 2 --heads 16 --seqlen 1000,4096 \
        --headdim 64,128 --causal 0,1 --pass $pass --format csv \
        --measured-out "$OUT/validate_${pass}_${algo}_dropout_measured.csv" \
        --predicted-out "$OUT/validate_${pass}_${algo}_dropout_predicted.csv" \
        > "$OUT/validate_${pass}_${algo}_dropout.csv" 2> "$OUT/validate_${pass}_${algo}_dropout.err"
      echo "rc=$?" >> "$OUT/validate_${pass}_${algo}_dropout.err"
    done
  done
  step done
  exit 0
fi
if [ "$PART" = validate-padding ]; then
  # Key padding (--mask: the built-in lengths) with and without dropout 0.1, flash1 and flash2,
  # B 4, N = 1000 and 4096, d 64 and 128: 32 kernel=total rows; then flash1 without dropout at
  # validate-dropout's shapes (is a dram miss there dropout's?).
  for pass in ${PASSES:-fwd bwd}; do
    for algo in flash1 flash2; do
      step "validate $pass $algo mask"
      timeout 150 "$BIN/flashio" validate --algo $algo --mask --dropout 0,0.1 --batch 4 --heads 16 --seqlen 1000,4096 \
        --headdim 64,128 --pass $pass --format csv \
        --measured-out "$OUT/validate_${pass}_${algo}_mask_measured.csv" \
        --predicted-out "$OUT/validate_${pass}_${algo}_mask_predicted.csv" \
        > "$OUT/validate_${pass}_${algo}_mask.csv" 2> "$OUT/validate_${pass}_${algo}_mask.err"
      echo "rc=$?" >> "$OUT/validate_${pass}_${algo}_mask.err"
    done
    step "validate $pass flash1 no dropout"
    timeout 150 "$BIN/flashio" validate --algo flash1 --batch 2 --heads 16 --seqlen 1000,4096 --headdim 64,128 \
      --causal 0,1 --pass $pass --format csv > "$OUT/validate_${pass}_flash1_plain.csv" 2> "$OUT/validate_${pass}_flash1_plain.err"
    echo "rc=$?" >> "$OUT/validate_${pass}_flash1_plain.err"
  done
  step done
  exit 0
fi
if [ "$PART" = fig2 ]; then
  # The paper's Figure 2, left (experiments/fig2_left.cfg) on the H200: time (bench) and HBM bytes
  # (profile's dram counters), standard, flash1 and flash2, dropout 0.1 and the key-padding mask.
  step "fig2 bench"
  timeout 200 "$BIN/flashio" bench --config experiments/fig2_left.cfg --hw h200 --repeats 10 --format csv \
    --out "$OUT/fig2_bench.csv" > "$OUT/fig2.log" 2>&1
  echo "rc=$?" >> "$OUT/fig2.log"
  step "fig2 profile"
  timeout 200 "$BIN/flashio" profile --config experiments/fig2_left.cfg --hw h200 --repeats 10 --format csv \
    --out "$OUT/fig2_profile.csv" >> "$OUT/fig2.log" 2>&1
  echo "rc=$?" >> "$OUT/fig2.log"
  step done
  exit 0
fi
if [ "$PART" = varlen ]; then
  # Variable-length batches (docs/kernels.md, "Variable-length batches"): the padded layout with
  # the lengths as key padding (--varlen 0) beside the packed sequences (--varlen 1): the counters
  # against the model (validate: B 8 and B 16 lengths files, d 64 and 128, causal and not, forward
  # and backward: 24 kernel=total rows, 16 packed), then the time of each (bench) and the model's
  # prediction of it (simulate), B 16, H 16.
  L8=experiments/results/h200_masks/lengths_varlen_b8.txt
  L16=experiments/results/h200_masks/lengths_varlen_b16.txt
  # Causal runs packed only: the padded layout's causal aligns each sequence's last query with its
  # last key, so it refuses key lengths below N.
  for pass in ${PASSES:-fwd bwd}; do
    for f in b8 b16; do
      for run in "0,1 0" "1 1"; do
        set -- $run
        step "validate $pass varlen $f varlen=$1 causal=$2"
        name="${pass}_varlen_${f}_${1/,/}_causal$2"
        timeout 150 "$BIN/flashio" validate --algo flash2 --batch "${f#b}" --heads 16 --seqlen 4096 --headdim 64,128 \
          --lengths "experiments/results/h200_masks/lengths_varlen_$f.txt" --varlen="$1" --causal "$2" --pass $pass \
          --format csv --measured-out "$OUT/validate_${name}_measured.csv" --predicted-out "$OUT/validate_${name}_predicted.csv" \
          > "$OUT/validate_${name}.csv" 2> "$OUT/validate_${name}.err"
        echo "rc=$?" >> "$OUT/validate_${name}.err"
      done
    done
  done
  step "bench varlen"
  timeout 150 "$BIN/flashio" bench --algo flash2 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128 --lengths "$L16" \
    --varlen=0,1 --pass fwd,bwd,fwdbwd --repeats 10 --format csv --out "$OUT/bench_varlen.csv" > "$OUT/bench.log" 2>&1
  echo "rc=$?" >> "$OUT/bench.log"
  timeout 100 "$BIN/flashio" simulate --algo flash2 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128 --lengths "$L16" \
    --varlen=0,1 --pass fwd,bwd,fwdbwd --tiling kernel --format csv > "$OUT/simulate_varlen.csv" 2>> "$OUT/bench.log"
  step done
  exit 0
fi
if [ "$PART" = window-tilings ]; then
  # The window (256, 0) at N = 16384 over every built flash2 tiling (the speed target is
  # against dense flash2 at its default tiling), beside dense at the default and the model's pick.
  step "bench window tilings"
  for t in "fwd 64 64x32 64x64 64x128 128x32 128x64 128x128" "fwd 128 64x32 64x64 64x128 128x32 128x64 128x128" \
           "bwd 64 32x64 32x128 64x64 64x128 128x64 128x128" "bwd 128 32x32 32x64 32x128 64x32 64x64 64x128"; do
    set -- $t
    pass=$1 d=$2
    shift 2
    for tiling in "$@"; do
      timeout 60 "$BIN/flashio" bench --algo flash2 --batch 4 --heads 16 --seqlen 16384 --headdim $d --pass $pass \
        --window-left 256 --window-right 0 --block-r ${tiling%x*} --block-c ${tiling#*x} --repeats 10 --format csv \
        --out "$OUT/bench_window_${pass}_d${d}_${tiling}.csv" >> "$OUT/bench.log" 2>&1
      echo "rc=$? $pass $d $tiling" >> "$OUT/bench.log"
    done
  done
  timeout 200 "$BIN/flashio" bench --algo flash2 --batch 4 --heads 16 --seqlen 16384 --headdim 64,128 --pass fwd,bwd \
    --window-left 256,none --window-right 0,none --tiling kernel --repeats 10 --format csv \
    --out "$OUT/bench_window_default.csv" >> "$OUT/bench.log" 2>&1
  echo "rc=$? default" >> "$OUT/bench.log"
  timeout 100 "$BIN/flashio" tune --algo flash2 --batch 4 --heads 16 --seqlen 16384 --headdim 64,128 --pass fwd,bwd \
    --window-left 256 --window-right 0 --format csv > "$OUT/tune_window.csv" 2>> "$OUT/bench.log"
  step done
  exit 0
fi
echo "unknown PART '$PART'; allowed: tests, validate, blocksparse, validate-blocksparse, dropout, validate-dropout, validate-padding, fig2, varlen, window-tilings" >&2
exit 2
