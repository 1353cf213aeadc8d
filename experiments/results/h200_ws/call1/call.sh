#!/bin/bash
# call 1: the warp-specialised forward's correctness, sanitizers, and a first speed look
set -u
B=.gpu
for f in flashio_a flashio_ws test_kernels_gpu; do gunzip -kf $B/$f.gz; done
OUT=$1
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$PWD/$B/lib
export PYTHONUNBUFFERED=1
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 200 $B/test_kernels_gpu "[wgmma_ws]" > $OUT/tests_ws.log 2>&1; echo "ws tests rc=$?"
grep -E "^(test cases|All tests)|FAILED|with expansion" $OUT/tests_ws.log | head -20
# the speed: peers and ours, same call
timeout 150 python3 experiments/peers.py --backend flash,cudnn --pass fwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128 --out $OUT/peers.csv > $OUT/peers.log 2>&1; echo "peers rc=$?"
for bin in flashio_a flashio_ws; do
  timeout 100 $B/$bin bench --algo flash2 --pass fwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128 --block-r 128 --block-c 64,128 --format csv --out $OUT/bench_$bin.csv > $OUT/bench_$bin.log 2>&1; echo "bench $bin rc=$?"
done
timeout 100 $SAN --tool memcheck --error-exitcode 9 $B/test_kernels_gpu "[sanitize]" > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -3 $OUT/memcheck.log
timeout 150 $SAN --tool racecheck --error-exitcode 9 $B/test_kernels_gpu "[sanitize]" > $OUT/racecheck.log 2>&1; echo "racecheck rc=$?"; tail -3 $OUT/racecheck.log
timeout 100 $SAN --tool synccheck --error-exitcode 9 $B/test_kernels_gpu "[sanitize]" > $OUT/synccheck.log 2>&1; echo "synccheck rc=$?"; tail -3 $OUT/synccheck.log
timeout 120 $B/test_kernels_gpu "every registered forward tiling matches the reference at N = 1, 17, 97, 200, causal and not" > $OUT/tests_fwd.log 2>&1; echo "fwd tiling tests rc=$?"; grep -E "^(test cases|All tests)" $OUT/tests_fwd.log
cd $OUT && tar czf logs.tgz *.log && rm -f *.log
