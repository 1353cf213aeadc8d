#!/bin/bash
# call 4: the persistent warp-specialised forward (C) against the one-block-per-row-tile one (A)
set -u
B=.gpu
for f in flashio_A flashio_C test_kernels_gpu; do gunzip -kf $B/$f.gz; chmod +x $B/$f; done
OUT=$1
mkdir -p $OUT/r
R=$OUT/r
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$PWD/$B/lib
export PYTHONUNBUFFERED=1
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt
timeout 200 $B/test_kernels_gpu "[wgmma_ws]" > $R/tests_ws.log 2>&1; echo "ws tests rc=$?"
grep -E "^(test cases|All tests)|FAILED" $R/tests_ws.log | head -5
timeout 100 $SAN --tool memcheck --error-exitcode 9 $B/test_kernels_gpu "[sanitize]" > $R/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -2 $R/memcheck.log
peers() { timeout 100 python3 experiments/peers.py --backend cudnn --pass fwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128 --out $R/peers_$1.csv > $R/peers_$1.log 2>&1; echo "peers rc=$?"; }
bench() { timeout 100 $B/flashio_$1 bench --algo flash2 --pass fwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim $2 --block-r $3 --block-c 128 --format csv --out $R/bench_$1_$2_$3_$4.csv > /dev/null 2>&1; echo "bench $1 $2 $3 rc=$?"; }
peers 1
for round in 1 2; do for v in A C; do bench $v 64 192 $round; bench $v 64 128 $round; bench $v 128 128 $round; done; done
peers 2
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> $R/gpu.txt
cd $OUT && tar czf call4.tgz r && rm -rf r
