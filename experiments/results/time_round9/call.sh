#!/bin/bash
# The next GPU call for the time model (docs/time_model.md, "Ninth round"), in the order it matters:
#   1. round 9's bench: the four held-out sets whose predictions are committed here (sets.sh),
#      with the binaries of a commit whose sim/ and kernels/ are those of b43ec39;
#   2. on an H200 only: `flashio calibrate` and its GPU test (kernels/tools/h200_calibrate.sh): the
#      three figures the committed H200 calibration lacks (docs/calibration.md);
#   3. ncu of the defaults the model under-predicts, each with its SASS source page (stall reasons
#      and executed counts by instruction, experiments/results/h200_step_issue/README.md's method):
#      the warp-specialised forward at d 64 and 128 (B16 H16 N4096) and at d 64 B64 H16 N1024 causal
#      and not (causal ran no faster there), and the wgmma backward at d 128.
# Usage, from the repository root on the GPU machine, BIN holding flashio, test_calibrate_gpu and
# lib/libgomp.so.1 (docs/gpu.md, "How a GPU run is done"):
#   DEADLINE=540 PACK=$OUT/r9.tgz experiments/results/time_round9/call.sh BIN /tmp/r9
# OUT_DIR (outside the call's $OUT) is packed into PACK (default OUT_DIR.tgz) after every step.
# BIN is made here: build (README), then mkdir -p .gpu/bin/lib; cp build/experiments/flashio
# build/tests/kernels/test_calibrate_gpu .gpu/bin; cp /usr/lib/x86_64-linux-gnu/libgomp.so.1
# .gpu/bin/lib (about 45 MB, under the 64 MiB a call carries), and the call carries .gpu.
# The round's two sets of predictions (../pred_*, b43ec39's model; issue/, the model with issue
# slots) are valid while kernels/ is unchanged since they were made.
# Then here: experiments/results/join_time_round.py (docs/time_model.md, "Ninth round").
set -u
if [ $# -ne 2 ] || [ ! -x "$1/flashio" ]; then
  echo "usage: $0 BIN OUT_DIR (BIN holding flashio, test_calibrate_gpu and lib/)" >&2
  exit 2
fi
mkdir -p "$2/round9" "$2/calibration" "$2/ncu"
source kernels/tools/gpu_call.sh "$1" "$2"  # BIN, OUT, LD_LIBRARY_PATH, gpu.txt; limited, pack
limited 200 "round 9" env SKIP_CHECKS=1 experiments/results/measure_time_round.sh experiments/results/time_round9 "$BIN" "$OUT/round9"
echo "round 9 rc=$? at ${SECONDS} s"
pack
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  limited 420 calibrate kernels/tools/h200_calibrate.sh "$BIN" "$OUT/calibration" > "$OUT/calibration/call.log" 2>&1
  echo "calibrate rc=$? at ${SECONDS} s"
  pack
fi
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
ncu_step() {  # NAME KERNEL_REGEX then flashio bench's options
  local name=$1 kernel=$2
  shift 2
  limited 120 "ncu $name" "$NCU" --set full --import-source no -k "regex:$kernel" --launch-skip 3 -c 1 -o "$OUT/ncu/$name" \
    "$BIN/flashio" bench --algo flash2 --dtype fp16 --repeats 10 "$@" > "$OUT/ncu/$name.log" 2>&1
  echo "ncu $name rc=$? at ${SECONDS} s"
  if [ -f "$OUT/ncu/$name.ncu-rep" ]; then
    "$NCU" -i "$OUT/ncu/$name.ncu-rep" --page source --csv --print-source sass 2>&1 | gzip > "$OUT/ncu/${name}_sass.csv.gz"
    "$NCU" -i "$OUT/ncu/$name.ncu-rep" --page details --csv > "$OUT/ncu/${name}_details.csv" 2>&1
    rm -f "$OUT/ncu/$name.ncu-rep"
  fi
  pack
}
ncu_step ws_fwd_d64 flash2_fwd_ws_kernel --pass fwd --batch 16 --heads 16 --seqlen 4096 --headdim 64 --causal=0
ncu_step ws_fwd_d64_n1024_causal flash2_fwd_ws_kernel --pass fwd --batch 64 --heads 16 --seqlen 1024 --headdim 64 --causal=1
ncu_step ws_fwd_d64_n1024 flash2_fwd_ws_kernel --pass fwd --batch 64 --heads 16 --seqlen 1024 --headdim 64 --causal=0
ncu_step ws_fwd_d128 flash2_fwd_ws_kernel --pass fwd --batch 16 --heads 16 --seqlen 4096 --headdim 128 --causal=0
ncu_step wgmma_bwd_d128 flash2_bwd_wgmma_kernel --pass bwd --batch 16 --heads 16 --seqlen 4096 --headdim 128 --causal=0
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$OUT/gpu.txt"
pack
