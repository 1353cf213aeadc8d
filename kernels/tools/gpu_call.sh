#!/bin/bash
# What every measuring script of a GPU call shares (experiments/results/*/measure.sh), sourced as
#   source kernels/tools/gpu_call.sh BIN OUT
# from the repository root on the GPU machine: the library path (docs/gpu.md), the GPU's name,
# driver and clocks into OUT/gpu.txt, and the steps, each writing under OUT and then packing OUT
# into PACK (default OUT.tgz), so that a call cut short still returns what it measured:
#   bench NAME OPTS...     flashio bench --format csv into OUT/NAME.csv (log: OUT/bench.log)
#   bench_from DIR NAME OPTS...  the same with DIR's flashio (a second build beside BIN's)
#   peers NAME OPTS...     experiments/peers.py --backend flash,cudnn into OUT/NAME.csv (OUT/peers.log)
#   validate NAME OPTS...  flashio validate into OUT/validate_NAME{,_measured,_predicted}.csv
#   tests NAME SECONDS FILTER  test_kernels_gpu FILTER, line-buffered with each case's duration,
#                          into OUT/NAME.log, its summary printed; its status in $rc (2 when FILTER
#                          matches no test: Catch2's --warn NoTests; a comma in a test's name is
#                          written \, since a bare comma separates filters)
#   sanitize TOOL SECONDS [FILTER [NAME]]  compute-sanitizer --tool TOOL of test_kernels_gpu's
#                          FILTER (default [sanitize]: every kernel once, a small causal shape) into
#                          OUT/NAME.log (default TOOL), its summary printed (status 2: no test matched)
# SAN is compute-sanitizer. BIN holds flashio, test_kernels_gpu and lib/libgomp.so.1.
# DEADLINE (seconds since the calling script started, bash's SECONDS; default 540): no step runs
# past it. `limited SECONDS LABEL COMMAND...` runs a step under `timeout`, its own limit cut to the
# time left; with under 15 s left it runs nothing, says "LABEL skipped: deadline" and returns 99.
# So a call whose steps' limits add up to more than the call's still returns every file it wrote
# (docs/gpu.md, "How a GPU run is done").
BIN=$1
OUT=$2
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$BIN/lib
export PYTHONUNBUFFERED=1
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt"
DEADLINE=${DEADLINE:-540}
limited() {
  local seconds=$1 label=$2 left=$(( DEADLINE - SECONDS - 5 ))
  shift 2
  if [ "$left" -lt 15 ]; then echo "$label skipped: deadline"; return 99; fi
  timeout "$(( seconds < left ? seconds : left ))" "$@"
}
pack() { tar czf "${PACK:-$OUT.tgz}" -C "$(dirname "$OUT")" "$(basename "$OUT")"; }
bench_from() {
  local dir=$1 name=$2; shift 2
  limited 150 "bench $name" "$dir/flashio" bench --format csv --out "$OUT/$name.csv" "$@" >> "$OUT/bench.log" 2>&1
  echo "bench $name rc=$?" | tee -a "$OUT/bench.log"
  pack
}
bench() { bench_from "$BIN" "$@"; }
peers() {
  local name=$1; shift
  limited 200 "peers $name" python3 experiments/peers.py --backend flash,cudnn --out "$OUT/$name.csv" "$@" \
    >> "$OUT/peers.log" 2>&1
  echo "peers $name rc=$?" | tee -a "$OUT/peers.log"
  pack
}
validate() {
  local name=$1; shift
  limited 150 "validate $name" "$BIN/flashio" validate --format csv --measured-out "$OUT/validate_${name}_measured.csv" \
    --predicted-out "$OUT/validate_${name}_predicted.csv" "$@" > "$OUT/validate_$name.csv" 2> "$OUT/validate_$name.err"
  echo "validate $name rc=$?" | tee -a "$OUT/validate_$name.err"
  pack
}
tests() {
  local name=$1 seconds=$2 filter=$3
  limited "$seconds" "tests $name" stdbuf -oL "$BIN/test_kernels_gpu" -d yes --warn NoTests "$filter" > "$OUT/$name.log" 2>&1
  rc=$?
  echo "tests $name rc=$rc"; grep -E "^(test cases|All tests)|FAILED|with expansion|skipped: deadline" "$OUT/$name.log" | head -20
  pack
}
sanitize() {
  local tool=$1 seconds=$2 filter=${3:-[sanitize]} name=${4:-$1}
  limited "$seconds" "$name" "$SAN" --tool "$tool" --error-exitcode 9 "$BIN/test_kernels_gpu" --warn NoTests "$filter" > "$OUT/$name.log" 2>&1
  echo "$name rc=$?"; tail -2 "$OUT/$name.log"
  pack
}
