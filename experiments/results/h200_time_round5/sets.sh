# The four sets of the fifth held-out time round (docs/time_model.md, "Fifth round"): sourced by
# experiments/results/measure_time_round.sh (SETS names them); the predictions were made with `flashio simulate $F --format csv` and
# --count cache --kernels (pred_F*.csv), --count formula (formula_F*.csv), --count formula --time
# roofline (roof_F*.csv), by the binaries of commit 5963251 (the model frozen there).
F1="--algo flash1,flash2 --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 3 --heads 11 --seqlen 2048 --dtype fp16 --block-r 32,64,128 --block-c 32,64,128"
F2="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 9 --heads 7 --seqlen 1500,3003 --dtype fp16,bf16 --tiling kernel"
F3="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 14 --heads 6 --seqlen 1024 --dtype fp16 --tiling kernel"
F4="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 1 --heads 40 --seqlen 6144 --dtype bf16 --tiling kernel"
SETS="F1 F2 F3 F4"
