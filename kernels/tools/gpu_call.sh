#!/bin/bash
# What every measuring script of a GPU call shares (experiments/results/*/measure.sh), sourced as
#   source kernels/tools/gpu_call.sh BIN OUT
# from the repository root on the GPU machine: the library path (docs/gpu.md), the GPU's name,
# driver and clocks into OUT/gpu.txt, and the steps, each writing under OUT and then packing OUT
# into PACK (default OUT.tgz), so that a call cut short still returns what it measured:
#   bench NAME OPTS...     flashio bench --format csv into OUT/NAME.csv (log: OUT/bench.log)
#   peers NAME OPTS...     experiments/peers.py --backend flash,cudnn into OUT/NAME.csv (OUT/peers.log)
#   validate NAME OPTS...  flashio validate into OUT/validate_NAME{,_measured,_predicted}.csv
#   sanitize TOOL SECONDS [FILTER [NAME]]  compute-sanitizer --tool TOOL of test_kernels_gpu's
#                          FILTER (default [sanitize]: every kernel once, a small causal shape) into
#                          OUT/NAME.log (default TOOL), its summary printed
# SAN is compute-sanitizer. BIN holds flashio, test_kernels_gpu and lib/libgomp.so.1.
# DEADLINE (seconds since the calling script started, bash's SECONDS; default 540): no step runs past it. Each step's own limit is
# cut to the time left (limit SECONDS below), and a step with under 15 s left is skipped and says
# so, so a call whose steps' limits add up to more than the call's still returns every file it
# wrote (docs/gpu.md, "Planning a call").
BIN=$1
OUT=$2
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$BIN/lib
export PYTHONUNBUFFERED=1
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt"
DEADLINE=${DEADLINE:-540}
limit() {  # the step's own limit in seconds, cut to what is left before DEADLINE (0: skip the step)
  local left=$(( DEADLINE - SECONDS - 5 ))
  if [ "$left" -lt 15 ]; then echo 0; elif [ "$1" -lt "$left" ]; then echo "$1"; else echo "$left"; fi
}
pack() { tar czf "${PACK:-$OUT.tgz}" -C "$(dirname "$OUT")" "$(basename "$OUT")"; }
bench() {
  local name=$1 t; shift
  t=$(limit 150); [ "$t" = 0 ] && { echo "bench $name skipped: deadline" | tee -a "$OUT/bench.log"; return; }
  timeout "$t" "$BIN/flashio" bench --format csv --out "$OUT/$name.csv" "$@" >> "$OUT/bench.log" 2>&1
  echo "bench $name rc=$?" | tee -a "$OUT/bench.log"
  pack
}
peers() {
  local name=$1 t; shift
  t=$(limit 200); [ "$t" = 0 ] && { echo "peers $name skipped: deadline" | tee -a "$OUT/peers.log"; return; }
  timeout "$t" python3 experiments/peers.py --backend flash,cudnn --out "$OUT/$name.csv" "$@" >> "$OUT/peers.log" 2>&1
  echo "peers $name rc=$?" | tee -a "$OUT/peers.log"
  pack
}
validate() {
  local name=$1 t; shift
  t=$(limit 150); [ "$t" = 0 ] && { echo "validate $name skipped: deadline"; return; }
  timeout "$t" "$BIN/flashio" validate --format csv --measured-out "$OUT/validate_${name}_measured.csv" \
    --predicted-out "$OUT/validate_${name}_predicted.csv" "$@" > "$OUT/validate_$name.csv" 2> "$OUT/validate_$name.err"
  echo "validate $name rc=$?" | tee -a "$OUT/validate_$name.err"
  pack
}
sanitize() {
  local tool=$1 seconds=$2 filter=${3:-[sanitize]} name=${4:-$1} t
  t=$(limit "$seconds"); [ "$t" = 0 ] && { echo "$name skipped: deadline"; return; }
  timeout "$t" "$SAN" --tool "$tool" --error-exitcode 9 "$BIN/test_kernels_gpu" "$filter" > "$OUT/$name.log" 2>&1
  echo "$name rc=$?"; tail -2 "$OUT/$name.log"
  pack
}
