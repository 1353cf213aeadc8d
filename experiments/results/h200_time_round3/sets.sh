# The four sets of the third held-out time round (docs/time_model.md, "Third round"): sourced by
# experiments/results/measure_time_round.sh (SETS names them); the predictions were made with `flashio simulate $R --format csv` and
# --count cache --kernels (pred_R*.csv), --count formula (formula_R*.csv), --count formula --time
# roofline (roof_R*.csv), by the binaries of commit 671fd36.
R1="--algo flash1,flash2 --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 3 --heads 14 --seqlen 2560 --dtype fp16 --block-r 32,64,128 --block-c 32,64,128"
R2="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 8 --heads 28 --seqlen 1536 --dtype fp16,bf16 --tiling kernel"
R3="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 5 --heads 18 --seqlen 1333,1800 --dtype bf16 --tiling kernel"
R4="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 1 --heads 22 --seqlen 12288 --dtype fp16 --tiling kernel"
SETS="R1 R2 R3 R4"
