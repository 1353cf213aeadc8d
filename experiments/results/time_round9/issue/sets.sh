# The ninth held-out round's four sets (the same as ../sets.sh, which the measuring call sources),
# predicted again by the model with issue slots (docs/time_model.md, "Issue slots"), before any
# row of the round was measured: for each preset P (h200, h100-sxm) `flashio simulate $S --hw P
# --format csv` with --count cache --kernels (pred_P_S.csv), --count formula (formula_P_S.csv),
# --count formula --time roofline (roof_P_S.csv). ../pred_* are b43ec39's model's; both are
# joined with the same measured rows (experiments/results/join_time_round.py).
H1="--algo flash1,flash2 --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 6 --heads 28 --seqlen 2304 --dtype fp16 --block-r 32,64,128,192 --block-c 32,64,128"
H2="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 5 --heads 36 --seqlen 1800,3584 --dtype fp16,bf16 --tiling kernel"
H3="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 40 --heads 8 --seqlen 1152 --dtype bf16 --tiling kernel"
H4="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 2 --heads 12 --seqlen 10000 --dtype fp16 --tiling kernel"
SETS="H1 H2 H3 H4"
