# The four sets of the ninth held-out time round (docs/time_model.md, "Ninth round"): sourced by
# experiments/results/measure_time_round.sh (SETS names them). The first round over the defaults of
# today's kernels (the warp-specialised forward, the wgmma backward), predicted for both calibrated
# presets before the GPU call, since the lent machine may be an H200 or an H100: for each preset P
# (h200, h100-sxm) `flashio simulate $S --hw P --format csv` with --count cache --kernels
# (pred_P_S.csv), --count formula (formula_P_S.csv), --count formula --time roofline (roof_P_S.csv),
# by the binaries of commit b43ec39's code (the model frozen there; earlier sets of predictions, by
# 9a8ac9b's and 82eec56's models, were replaced before any row was measured). The call measures
# with `--hw` set to the preset of the GPU it finds (measure_time_round.sh), and the rows are
# compared with that preset's predictions only. issue/ holds the same sets predicted by the model
# with issue slots (docs/time_model.md, "Issue slots"), also before any row was measured.
H1="--algo flash1,flash2 --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 6 --heads 28 --seqlen 2304 --dtype fp16 --block-r 32,64,128,192 --block-c 32,64,128"
H2="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 5 --heads 36 --seqlen 1800,3584 --dtype fp16,bf16 --tiling kernel"
H3="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 40 --heads 8 --seqlen 1152 --dtype bf16 --tiling kernel"
H4="--algo flash1,flash2,standard --pass fwd,bwd --headdim 64,128 --causal=0,1 --batch 2 --heads 12 --seqlen 10000 --dtype fp16 --tiling kernel"
SETS="H1 H2 H3 H4"
