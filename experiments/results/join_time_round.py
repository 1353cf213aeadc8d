#!/usr/bin/env python3
"""Join a held-out time round's predictions with its measured rows (docs/time_model.md, "Validation").

    join_time_round.py FLASHIO ROUND MEASURED HW OUT.csv

ROUND holds sets.sh (SETS, and each set's options) and, per set S, the predictions pred_HW_S.csv
(--count cache), formula_HW_S.csv (--count formula) and roof_HW_S.csv (--count formula --time
roofline); MEASURED holds bench_S.csv. Each prediction file is joined with `FLASHIO compare`
(its key columns); OUT gets the kernel=total rows with the model's time and error and, beside
them, the formula's and the roofline's, and `#` lines with compare's summary of each. The tiling
sweeps (sets run with --block-r/--block-c) are judged too: in each (algo, pass, shape, d, causal),
whether the model's fastest measured tiling ran within 5 % of the measured fastest.
"""
import csv
import io
import re
import subprocess
import sys

flashio, round_dir, measured_dir, hw, out_path = sys.argv[1:6]
sets_text = open(f"{round_dir}/sets.sh").read()
sets = re.search(r'^SETS="([^"]*)"', sets_text, re.M).group(1).split()
options = {name: re.search(rf'^{name}="([^"]*)"', sets_text, re.M).group(1) for name in sets}


def compare(kind):
    """The compare rows of every set for one prediction kind, and compare's summary lines."""
    rows, summary = [], []
    for name in sets:
        result = subprocess.run([flashio, "compare", "--predicted", f"{round_dir}/{kind}_{hw}_{name}.csv",
                                 "--measured", f"{measured_dir}/bench_{name}.csv", "--format", "csv"],
                                capture_output=True, text=True, check=True)
        rows += [r for r in csv.DictReader(l for l in io.StringIO(result.stdout) if not l.startswith("#"))
                 if r["kernel"] == "total" and r["rel_err_time"]]
    return rows


KEY = ("algo", "pass", "batch", "heads", "seqlen", "headdim", "dtype", "causal", "block_r", "block_c")
model, formula, roof = compare("pred"), compare("formula"), compare("roof")
by_key = lambda rows: {tuple(r[k] for k in KEY): r for r in rows}
formula_by, roof_by = by_key(formula), by_key(roof)


def stats(errors):
    e = sorted(abs(x) for x in errors)
    median = e[len(e) // 2]  # as flashio compare takes it (experiments/comparison.cpp)
    return f"{len(e)} rows, median |err| {100 * median:.2f}%, max |err| {100 * e[-1]:.2f}%, within ±25%: {sum(x <= 0.25 for x in e)}"


lines = [f"# model (cache):   {stats(float(r['rel_err_time']) for r in model)}",
         f"# model (formula): {stats(float(r['rel_err_time']) for r in formula)}",
         f"# roofline:        {stats(float(r['rel_err_time']) for r in roof)}"]
per = {}
for r in model:
    per.setdefault((r["algo"], r["pass"]), []).append(float(r["rel_err_time"]))
for (algo, pass_), errors in sorted(per.items()):
    lines.append(f"#   {algo} {pass_}: {stats(errors)}")
# The sweeps: sets with --block-r; one sweep per (algo, pass, shape, d, causal, dtype).
sweep_sets = [n for n in sets if "--block-r" in options[n]]
picks = []
if sweep_sets:
    sweep_keys = set()
    for name in sweep_sets:
        for r in csv.DictReader(l for l in open(f"{measured_dir}/bench_{name}.csv") if not l.startswith("#")):
            if r["kernel"] == "total":
                sweep_keys.add(tuple(r[k] for k in KEY))
    sweeps = {}
    for r in model:
        k = tuple(r[x] for x in KEY)
        if k in sweep_keys:
            sweeps.setdefault(k[:8], []).append(r)
    for k, rows in sorted(sweeps.items()):
        if len(rows) < 2:
            continue
        pick = min(rows, key=lambda r: float(r["time_predicted"]))
        best = min(rows, key=lambda r: float(r["time_measured"]))
        ratio = float(pick["time_measured"]) / float(best["time_measured"])
        picks.append(ratio <= 1.05)
        lines.append(f"#   sweep {' '.join(k)}: model picks {pick['block_r']}x{pick['block_c']}, fastest "
                     f"{best['block_r']}x{best['block_c']}, pick runs {ratio:.3f}x the fastest")
    lines.append(f"# tiling sweeps: the model's pick within 5 % of the measured fastest in {sum(picks)} of {len(picks)}")
columns = list(model[0].keys()) + ["time_formula_predicted", "rel_err_time_formula", "time_roofline_predicted",
                                   "rel_err_time_roofline"]
with open(out_path, "w", newline="") as f:
    f.write("\n".join(lines) + "\n")
    w = csv.DictWriter(f, columns)
    w.writeheader()
    for r in model:
        k = tuple(r[x] for x in KEY)
        fr, rr = formula_by.get(k, {}), roof_by.get(k, {})
        w.writerow({**r, "time_formula_predicted": fr.get("time_predicted", ""),
                    "rel_err_time_formula": fr.get("rel_err_time", ""),
                    "time_roofline_predicted": rr.get("time_predicted", ""),
                    "rel_err_time_roofline": rr.get("rel_err_time", "")})
print("\n".join(lines))
