#!/bin/bash
# call 3: causal row-tile order (A: last-first, B: first-first), alternated, beside cuDNN
set -u
B=.gpu
for f in flashio_A flashio_B; do gunzip -kf $B/$f.gz; chmod +x $B/$f; done
OUT=$1
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$PWD/$B/lib
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.txt
peers() { timeout 100 python3 experiments/peers.py --backend cudnn --pass fwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim 64,128 --out $OUT/peers_$1.csv > $OUT/peers_$1.log 2>&1; echo "peers rc=$?"; }
bench() { timeout 100 $B/flashio_$1 bench --algo flash2 --pass fwd --causal=0,1 --batch 16 --heads 16 --seqlen 4096 --headdim $2 --block-r $3 --block-c 128 --format csv --out $OUT/bench_$1_$2_$4.csv > /dev/null 2>&1; echo "bench $1 $2 rc=$?"; }
peers 1
for round in 1 2; do for v in A B; do bench $v 64 192 $round; bench $v 128 128 $round; done; done
bench A 64 128 1
peers 2
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> $OUT/gpu.txt
cd $OUT && tar czf logs.tgz *.log && rm -f *.log
