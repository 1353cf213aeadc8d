#!/bin/bash
# What every measuring script of a GPU call shares (experiments/results/*/measure.sh), sourced as
#   source kernels/tools/gpu_call.sh BIN OUT
# from the repository root on the GPU machine: the library path (docs/gpu.md), the GPU's name,
# driver and clocks into OUT/gpu.txt, and the steps, each writing under OUT and then packing OUT
# into PACK (default OUT.tgz), so that a call cut short still returns what it measured:
#   bench NAME OPTS...     flashio bench --format csv into OUT/NAME.csv (log: OUT/bench.log)
#   peers NAME OPTS...     experiments/peers.py --backend flash,cudnn into OUT/NAME.csv (OUT/peers.log)
#   validate NAME OPTS...  flashio validate into OUT/validate_NAME{,_measured,_predicted}.csv
#   sanitize TOOL SECONDS  compute-sanitizer --tool TOOL of test_kernels_gpu's [sanitize] (every
#                          kernel once, a small causal shape) into OUT/TOOL.log, its summary printed
# SAN is compute-sanitizer. BIN holds flashio, test_kernels_gpu and lib/libgomp.so.1.
BIN=$1
OUT=$2
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$BIN/lib
export PYTHONUNBUFFERED=1
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt"
pack() { tar czf "${PACK:-$OUT.tgz}" -C "$(dirname "$OUT")" "$(basename "$OUT")"; }
bench() {
  local name=$1; shift
  timeout 150 "$BIN/flashio" bench --format csv --out "$OUT/$name.csv" "$@" >> "$OUT/bench.log" 2>&1
  echo "bench $name rc=$?" | tee -a "$OUT/bench.log"
  pack
}
peers() {
  local name=$1; shift
  timeout 200 python3 experiments/peers.py --backend flash,cudnn --out "$OUT/$name.csv" "$@" >> "$OUT/peers.log" 2>&1
  echo "peers $name rc=$?" | tee -a "$OUT/peers.log"
  pack
}
validate() {
  local name=$1; shift
  timeout 150 "$BIN/flashio" validate --format csv --measured-out "$OUT/validate_${name}_measured.csv" \
    --predicted-out "$OUT/validate_${name}_predicted.csv" "$@" > "$OUT/validate_$name.csv" 2> "$OUT/validate_$name.err"
  echo "validate $name rc=$?" | tee -a "$OUT/validate_$name.err"
  pack
}
sanitize() {
  local tool=$1 seconds=$2
  timeout "$seconds" "$SAN" --tool "$tool" --error-exitcode 9 "$BIN/test_kernels_gpu" "[sanitize]" > "$OUT/$tool.log" 2>&1
  echo "$tool rc=$?"; tail -2 "$OUT/$tool.log"
  pack
}
