# The four sets of the fourth held-out time round (docs/time_model.md, "Fourth round"): sourced by
# experiments/results/measure_time_round.sh (SETS names them); the predictions were made with `flashio simulate $Q --format csv` and
# --count cache --kernels (pred_Q*.csv), --count formula (formula_Q*.csv), --count formula --time
# roofline (roof_Q*.csv), by the binaries of commit a688a13 (the model frozen there).
Q1="--algo flash1,flash2 --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 4 --heads 10 --seqlen 3328 --dtype fp16 --block-r 32,64,128 --block-c 32,64,128"
Q2="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 7 --heads 9 --seqlen 1111,2333 --dtype fp16,bf16 --tiling kernel"
Q3="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 10 --heads 24 --seqlen 1024 --dtype bf16 --tiling kernel"
Q4="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 2 --heads 9 --seqlen 8191 --dtype fp16 --tiling kernel"
SETS="Q1 Q2 Q3 Q4"
