#!/bin/bash
# One GPU call for the shapes people serve (docs/shapes.md): the flash2 kernels with grouped-query
# attention and Nq != Nk checked against the reference (and compute-sanitizer), their speed beside
# PyTorch's backends, the square speed shapes again (the kernels changed), and `flashio validate`
# rows of GQA, MQA, Nq != Nk and decoding (no split-KV yet) for h200_inference.csv.
# Usage, from the repository root on the GPU machine, BIN holding flashio and test_kernels_gpu
# (and lib/ with libgomp.so.1), OUT an existing folder:
#   experiments/results/h200_inference/measure.sh BIN OUT [PART]
# PART: tests, speed, splits, paged, lengths or all (default); the device tool's 10-minute call takes one part at
# a time. splits: split-KV's GPU tests and sanitizer runs, the copy bandwidth, decoding with
# splits, GQA prefill again, and validate rows of decoding with splits. paged: the paged KV
# cache's GPU tests, memcheck and racecheck (the sanitizer shape, and the two shapes in full
# under memcheck), the copy bandwidth, decoding over pages of 16 and 256 tokens, and validate
# rows of decoding and prefill over a paged cache. lengths: per-sequence key lengths' GPU tests
# (and the paged and split ones again: the KV-cache instances changed), memcheck and racecheck,
# decoding with lengths_b8.txt contiguous and paged, and validate rows of it and of prefill
# with lengths_b2.txt.
set -u
if [ $# -lt 2 ] || [ ! -x "$1/flashio" ] || [ ! -d "$2" ]; then
  echo "usage: $0 BIN OUT [tests|speed|all] (BIN holding flashio, OUT an existing folder)" >&2
  exit 2
fi
BIN=$1
OUT=$2
PART=${3:-all}
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$BIN/lib
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$OUT/gpu.txt"
date -u > "$OUT/started"
step() { echo "$(date -u +%T) $*" >> "$OUT/steps.log"; }

# Correctness first: the new shapes, then the square flash2 tests (the kernels changed), memcheck
# and racecheck of the sanitizer shape (every kernel, and the GQA shape packed and not).
bench() {  # name, then flashio bench options
  local name=$1; shift
  step "bench $name"
  timeout 120 "$BIN/flashio" bench --format csv --out "$OUT/bench_$name.csv" "$@" >> "$OUT/bench.log" 2>&1
  echo "bench $name rc=$?" >> "$OUT/bench.log"
}
if [ "$PART" = splits ]; then
  step tests
  (timeout 240 "$BIN/test_kernels_gpu" "[splits]" > "$OUT/tests_splits.log" 2>&1; echo "rc=$?" >> "$OUT/tests_splits.log")
  (timeout 60 "$BIN/test_kernels_gpu" "[shapes]~[large]~[splits]" > "$OUT/tests_shapes.log" 2>&1; echo "rc=$?" >> "$OUT/tests_shapes.log")
  SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  (timeout 90 "$SAN" --tool memcheck --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/memcheck.log" 2>&1; echo "rc=$?" >> "$OUT/memcheck.log")
  (timeout 90 "$SAN" --tool racecheck --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/racecheck.log" 2>&1; echo "rc=$?" >> "$OUT/racecheck.log")
  step memcpy
  timeout 60 python3 experiments/results/h200_inference/memcpy.py 2 > "$OUT/memcpy.txt" 2>&1
  DECODE="--algo flash2 --batch 8 --heads 32 --kv-heads 8 --seqlen 1 --seqlen-k 32768,131072 --headdim 128"
  bench decode_splits $DECODE --splits 1,auto,2,4,8,16
  bench prefill --algo flash2 --batch 4 --heads 32 --kv-heads 8,32 --seqlen 4096 --headdim 128 --pass fwd,bwd --causal=0,1
  step validate
  timeout 200 "$BIN/flashio" validate --algo flash2 --batch 8 --heads 32 --kv-heads 8 --seqlen 1,4 \
    --seqlen-k 4096,32768 --headdim 128 --pass fwd --splits 1,2,4,8 --causal=0,1 --format csv \
    --measured-out "$OUT/validate_splits_measured.csv" --predicted-out "$OUT/validate_splits_predicted.csv" \
    > "$OUT/validate_splits.csv" 2> "$OUT/validate_splits.err"
  echo "rc=$?" >> "$OUT/validate_splits.err"
  step done
  exit 0
fi
if [ "$PART" = lengths ]; then
  L=experiments/results/h200_inference
  step tests
  (timeout 200 "$BIN/test_kernels_gpu" "[lengths]" > "$OUT/tests_lengths.log" 2>&1; echo "rc=$?" >> "$OUT/tests_lengths.log")
  (timeout 150 "$BIN/test_kernels_gpu" "[paged],[splits]" > "$OUT/tests_paged.log" 2>&1; echo "rc=$?" >> "$OUT/tests_paged.log")
  SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  step sanitize
  (timeout 100 "$SAN" --tool memcheck --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/memcheck.log" 2>&1; echo "rc=$?" >> "$OUT/memcheck.log")
  (timeout 100 "$SAN" --tool racecheck --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/racecheck.log" 2>&1; echo "rc=$?" >> "$OUT/racecheck.log")
  step memcpy
  timeout 60 python3 experiments/results/h200_inference/memcpy.py 2 > "$OUT/memcpy.txt" 2>&1
  bench decode_lengths --algo flash2 --batch 8 --heads 32 --kv-heads 8 --seqlen 1 --seqlen-k 32768 --headdim 128 \
    --splits 1,auto --page-size 0,256 --lengths $L/lengths_b8.txt
  step validate
  timeout 150 "$BIN/flashio" validate --algo flash2 --batch 8 --heads 32 --kv-heads 8 --seqlen 1,4 \
    --seqlen-k 32768 --headdim 128 --pass fwd --splits 1,4 --page-size 0,16 --causal=0,1 --lengths $L/lengths_b8.txt \
    --format csv --measured-out "$OUT/validate_lengths_measured.csv" --predicted-out "$OUT/validate_lengths_predicted.csv" \
    > "$OUT/validate_lengths.csv" 2> "$OUT/validate_lengths.err"
  echo "rc=$?" >> "$OUT/validate_lengths.err"
  timeout 80 "$BIN/flashio" validate --algo flash2 --batch 2 --heads 32 --kv-heads 8 --seqlen 97 \
    --seqlen-k 4096 --headdim 64,128 --pass fwd --causal=0,1 --lengths $L/lengths_b2.txt --format csv \
    --measured-out "$OUT/validate_lengths_prefill_measured.csv" --predicted-out "$OUT/validate_lengths_prefill_predicted.csv" \
    > "$OUT/validate_lengths_prefill.csv" 2> "$OUT/validate_lengths_prefill.err"
  echo "rc=$?" >> "$OUT/validate_lengths_prefill.err"
  step "racecheck full, large"
  (timeout 120 "$SAN" --tool racecheck --error-exitcode 9 "$BIN/test_kernels_gpu" "flash2 over a paged KV cache in full*" > "$OUT/racecheck_full.log" 2>&1; echo "rc=$?" >> "$OUT/racecheck_full.log")
  (timeout 120 "$BIN/test_kernels_gpu" "[large]" > "$OUT/tests_large.log" 2>&1; echo "rc=$?" >> "$OUT/tests_large.log")
  step done
  exit 0
fi
if [ "$PART" = paged ]; then
  step tests
  (timeout 200 "$BIN/test_kernels_gpu" "[paged]" > "$OUT/tests_paged.log" 2>&1; echo "rc=$?" >> "$OUT/tests_paged.log")
  (timeout 60 "$BIN/test_kernels_gpu" "[splits]" > "$OUT/tests_splits.log" 2>&1; echo "rc=$?" >> "$OUT/tests_splits.log")
  SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  step sanitize
  (timeout 90 "$SAN" --tool memcheck --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/memcheck.log" 2>&1; echo "rc=$?" >> "$OUT/memcheck.log")
  (timeout 90 "$SAN" --tool racecheck --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/racecheck.log" 2>&1; echo "rc=$?" >> "$OUT/racecheck.log")
  (timeout 150 "$SAN" --tool memcheck --error-exitcode 9 "$BIN/test_kernels_gpu" "flash2 over a paged KV cache in full*" > "$OUT/memcheck_full.log" 2>&1; echo "rc=$?" >> "$OUT/memcheck_full.log")
  step memcpy
  timeout 60 python3 experiments/results/h200_inference/memcpy.py 2 > "$OUT/memcpy.txt" 2>&1
  bench decode_paged --algo flash2 --batch 8 --heads 32 --kv-heads 8 --seqlen 1 --seqlen-k 32768,131072 --headdim 128 \
    --splits 1,auto --page-size 0,16,256
  step validate
  timeout 240 "$BIN/flashio" validate --algo flash2 --batch 8 --heads 32 --kv-heads 8 --seqlen 1,4 \
    --seqlen-k 4096,32768 --headdim 128 --pass fwd --splits 1,4 --page-size 16,256 --causal=0,1 --format csv \
    --measured-out "$OUT/validate_paged_measured.csv" --predicted-out "$OUT/validate_paged_predicted.csv" \
    > "$OUT/validate_paged.csv" 2> "$OUT/validate_paged.err"
  echo "rc=$?" >> "$OUT/validate_paged.err"
  timeout 100 "$BIN/flashio" validate --algo flash2 --batch 2 --heads 32 --kv-heads 8,32 --seqlen 97 \
    --seqlen-k 4096 --headdim 64,128 --pass fwd --page-size 16 --causal=0,1 --format csv \
    --measured-out "$OUT/validate_paged_prefill_measured.csv" --predicted-out "$OUT/validate_paged_prefill_predicted.csv" \
    > "$OUT/validate_paged_prefill.csv" 2> "$OUT/validate_paged_prefill.err"
  echo "rc=$?" >> "$OUT/validate_paged_prefill.err"
  step done
  exit 0
fi
if [ "$PART" != speed ]; then
step tests
(timeout 200 "$BIN/test_kernels_gpu" "[shapes]~[large]" > "$OUT/tests_shapes.log" 2>&1; echo "rc=$?" >> "$OUT/tests_shapes.log")
(timeout 100 "$BIN/test_kernels_gpu" "every registered*" > "$OUT/tests_square.log" 2>&1; echo "rc=$?" >> "$OUT/tests_square.log")
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
step memcheck
(timeout 120 "$SAN" --tool memcheck --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/memcheck.log" 2>&1; echo "rc=$?" >> "$OUT/memcheck.log")
step racecheck
(timeout 120 "$SAN" --tool racecheck --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/racecheck.log" 2>&1; echo "rc=$?" >> "$OUT/racecheck.log")
fi
[ "$PART" = tests ] && { step done; exit 0; }

peers() {  # name, then experiments/peers.py options
  local name=$1; shift
  step "peers $name"
  timeout 150 python3 experiments/peers.py --backend flash,cudnn --out "$OUT/peers_$name.csv" "$@" >> "$OUT/peers.log" 2>&1
  echo "peers $name rc=$?" >> "$OUT/peers.log"
}
# The square speed shapes (docs/kernels.md, "Speed").
SQUARE="--batch 16 --heads 16 --seqlen 4096 --headdim 64,128 --pass fwd,bwd --causal=0,1"
bench square --algo flash2 $SQUARE
peers square $SQUARE
# GQA prefill: B 4, H 32, Hkv 8 against Hkv 32, N 4096, d 128.
PREFILL="--batch 4 --heads 32 --kv-heads 8,32 --seqlen 4096 --headdim 128 --pass fwd,bwd --causal=0,1"
bench prefill --algo flash2 $PREFILL
peers prefill $PREFILL
# Decoding without split-KV: one query per sequence over a long cache, packed and not.
bench decode --algo flash2 --batch 8 --heads 32 --kv-heads 8 --seqlen 1 --seqlen-k 32768,131072 --headdim 128 --gqa-pack=0,1
peers decode --batch 8 --heads 32 --kv-heads 8 --seqlen 1 --seqlen-k 32768,131072 --headdim 128 --pass fwd

# Model against counters: GQA 8:1, 4:1, MQA and 1:1, Nq 1, 97, 1024 onto 4096 keys.
step validate
timeout 240 "$BIN/flashio" validate --algo flash2 --batch 2 --heads 32 --kv-heads 32,8,4,1 --seqlen 1,97,1024 \
  --seqlen-k 4096 --headdim 128 --pass fwd,bwd --causal=0,1 --format csv \
  --measured-out "$OUT/validate_measured.csv" --predicted-out "$OUT/validate_predicted.csv" \
  > "$OUT/validate.csv" 2> "$OUT/validate.err"
echo "rc=$?" >> "$OUT/validate.err"
step done
