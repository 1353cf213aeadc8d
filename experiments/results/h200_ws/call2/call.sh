#!/bin/bash
# call 2: stages and tile height of the warp-specialised forward, beside the peers
set -u
B=.gpu
for f in flashio_s2 flashio_s3; do gunzip -kf $B/$f.gz; chmod +x $B/$f; done
OUT=$1
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$PWD/$B/lib
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 150 python3 experiments/peers.py --backend flash,cudnn --pass fwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128 --out $OUT/peers.csv > $OUT/peers.log 2>&1; echo "peers rc=$?"
for bin in flashio_s2 flashio_s3; do
  timeout 100 $B/$bin bench --algo flash2 --pass fwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64 --block-r 128,192 --block-c 128 --format csv --out $OUT/bench_${bin}_d64.csv > $OUT/bench_${bin}_d64.log 2>&1; echo "bench $bin rc=$?"
  timeout 100 $B/$bin bench --algo flash2 --pass fwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 128 --block-r 128 --block-c 128 --format csv --out $OUT/bench_${bin}_d128.csv > $OUT/bench_${bin}_d128.log 2>&1; echo "bench $bin rc=$?"
done
timeout 100 $B/flashio_s2 bench --algo flash2 --pass fwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64 --block-r 128 --block-c 64 --format csv --out $OUT/bench_wgmma_d64.csv > /dev/null 2>&1; echo "bench wgmma rc=$?"
cd $OUT && cat *.log | tail -5; tar czf logs.tgz *.log && rm -f *.log
