# The four sets of the eighth held-out time round (docs/time_model.md, "Eighth round"): sourced by
# experiments/results/measure_time_round.sh (SETS names them); the predictions were made with `flashio simulate $G --format csv` and
# --count cache --kernels (pred_G*.csv), --count formula (formula_G*.csv), --count formula --time
# roofline (roof_G*.csv), by the binaries of commit 5a56198 (the model frozen there).
G1="--algo flash1,flash2 --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 12 --heads 6 --seqlen 1664 --dtype fp16 --block-r 32,64,128 --block-c 32,64,128"
G2="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 8 --heads 20 --seqlen 1280,3100 --dtype fp16,bf16 --tiling kernel"
G3="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 24 --heads 5 --seqlen 1536 --dtype bf16 --tiling kernel"
G4="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 2 --heads 14 --seqlen 12288 --dtype fp16 --tiling kernel"
SETS="G1 G2 G3 G4"
