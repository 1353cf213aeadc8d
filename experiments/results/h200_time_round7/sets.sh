# The four sets of the seventh held-out time round (docs/time_model.md, "Seventh round"): sourced by
# experiments/results/measure_time_round.sh (SETS names them); the predictions were made with `flashio simulate $G --format csv` and
# --count cache --kernels (pred_G*.csv), --count formula (formula_G*.csv), --count formula --time
# roofline (roof_G*.csv), by the binaries of the commit that added this folder's predictions (the model frozen there).
G1="--algo flash1,flash2 --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 3 --heads 12 --seqlen 1920 --dtype fp16 --block-r 32,64,128 --block-c 32,64,128"
G2="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 4 --heads 24 --seqlen 1536,2900 --dtype fp16,bf16 --tiling kernel"
G3="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 16 --heads 12 --seqlen 1024 --dtype fp16 --tiling kernel"
G4="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 1 --heads 12 --seqlen 16384 --dtype bf16 --tiling kernel"
SETS="G1 G2 G3 G4"
