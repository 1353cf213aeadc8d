#!/bin/bash
# The held-out check of the whole-box count and the backward's tests after its launch refactor, as
# run on the H200 from the repository root: call.sh BIN OUT (BIN holds flashio, test_kernels_gpu and
# lib/; the call ran it with the binaries of d365318 in .gpu/bin). The predictions it is compared
# with were committed first (predicted_*.csv: `flashio simulate` with the validate lines' options
# and --count cache --format csv).
set -u
source kernels/tools/gpu_call.sh "$1" "$2"  # BIN, OUT; validate, pack
validate a --algo flash2 --pass fwd --kernel wgmma_ws --tiling kernel --causal=0,1 --batch 3 --heads 4 \
  --seqlen 777,2049 --headdim 64,128
validate b --algo flash2 --pass fwd --kernel wgmma_ws --tiling kernel --causal=0,1 --batch 1 --heads 8 --kv-heads 2 \
  --seqlen 1500 --headdim 64,128
timeout 200 "$BIN/test_kernels_gpu" "[wgmma_bwd],every registered backward tiling matches the reference at N = 1\, 17\, 97\, 200\, causal and not,enqueue launches exactly launch_sequence()\, and a backward needs a forward first" \
  > "$OUT/tests.log" 2>&1
echo "tests rc=$?"; grep -E "^(test cases|All tests)|FAILED" "$OUT/tests.log" | head
