#!/usr/bin/env bash
# Writes the model's simulate csv over a fixed grid of configurations into OUTDIR, so that two
# builds can be compared byte for byte (a refactoring of sim/ must not change a number):
#
#   scripts/model_outputs.sh OLD/flashio /tmp/before
#   scripts/model_outputs.sh build/experiments/flashio /tmp/after
#   diff -r /tmp/before /tmp/after && echo identical
#
# Grid: every algorithm × pass × causal × d ∈ {64, 128} × N ∈ {97, 1024, 4096} ×
# M ∈ {64 KiB, 227 KiB}, counted by formula and by walk; the L2 model (cache) and execute on small
# shapes; standard's mask and dropout passes, a block-sparse mask, bf16 and an explicit tiling.
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 FLASHIO_BINARY OUTDIR" >&2
  exit 2
fi
bin=$1 out=$2
mkdir -p "$out"
grid=(--algo standard,flash1,flash2,blocksparse --pass fwd,bwd,fwdbwd --causal=0,1
      --headdim 64,128 --seqlen 97,1024,4096 --sram 64KiB,227KiB)
for count in formula walk; do
  "$bin" simulate "${grid[@]}" --count "$count" --format csv >"$out/grid_$count.csv"
done
"$bin" simulate --algo standard --pass fwd,bwd,fwdbwd --mask=0,1 --dropout 0,0.1 --seqlen 97,1024 \
  --format csv >"$out/standard_variants.csv"
"$bin" simulate --algo blocksparse --block-mask banded:2,random:0.3:7 --pass fwd,bwd,fwdbwd \
  --causal=0,1 --seqlen 97,1024 --format csv >"$out/blocksparse_masks.csv"
"$bin" simulate --algo flash1,flash2 --dtype bf16,fp32 --block-r 32,64,128 --block-c 64,128 \
  --pass fwdbwd --seqlen 1000 --headdim 64 --format csv >"$out/tilings.csv"
for count in formula walk; do
  "$bin" simulate --algo flash1,flash2,blocksparse --block-r 16:128:x2 --block-c 16,64 \
    --pass fwd,bwd,fwdbwd --causal=0,1 --seqlen 97,256,1000 --headdim 40,64 --sram 227KiB \
    --count "$count" --format csv >"$out/explicit_tilings_$count.csv"
done
"$bin" simulate --algo standard,flash1,flash2 --pass fwd,bwd,fwdbwd --causal=0,1 --batch 2 --heads 3 \
  --seqlen 97,256 --headdim 64 --sram 64KiB,227KiB --count cache --format csv >"$out/cache_small.csv"
"$bin" simulate --algo flash1,flash2 --pass fwdbwd --causal=0,1 --batch 1 --heads 1 --seqlen 97 \
  --headdim 16 --block-r 16 --block-c 32 --count execute --format csv >"$out/execute_small.csv"
echo "wrote $(ls "$out" | wc -l) files to $out"
