#!/usr/bin/env python3
"""Merge the measured rows of `flashio bench` and the peer rows of experiments/peers.py (one GPU
call) into one CSV in the row schema (sim/row.h), one row per key (the first kept), with '#' lines stating
how it was made (sim's read_rows_csv skips them): the --note lines, then the inputs' own '#' lines
(peers.py's provenance). Peers leave the tiling columns empty ("not known").

  merge_speed_csv.py OUT.csv --note "LINE" [--note "LINE" ...] IN.csv [IN.csv ...]
"""
import argparse
import csv

# The row schema (sim/row.h, row_columns()); merged files keep every column, empty where unknown.
KEY_COLUMNS = ["source", "algo", "pass", "kernel", "batch", "heads", "seqlen", "headdim", "dtype", "causal",
               "sram_bytes", "block_r", "block_c", "hw", "mask", "dropout", "block_mask", "kv_heads", "seqlen_k",
               "gqa_pack", "splits", "page_size", "lengths", "varlen", "window_left", "window_right", "kernel_impl"]
COLUMNS = KEY_COLUMNS + ["flops", "flops_tensor", "flops_exp", "flops_other", "io_read_bytes", "io_write_bytes",
                         "dram_read_bytes", "dram_write_bytes", "extra_memory_bytes", "time_ms", "tflops"]

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--note", action="append", default=[])
    a = ap.parse_args()
    rows, seen, carried = [], set(), []
    key_columns = KEY_COLUMNS  # source .. kernel_impl: the row key (sim/row.h)
    for path in a.inputs:
        with open(path, newline="") as f:
            lines = f.read().splitlines()
        carried += [l[1:].strip() for l in lines if l.startswith("#")]
        for r in csv.DictReader(l for l in lines if not l.startswith("#")):
            unknown = set(r) - set(COLUMNS)
            if unknown:
                raise SystemExit(f"{path}: columns outside the schema: {sorted(unknown)}")
            key = tuple(r.get(c, "") for c in key_columns)
            if key in seen:  # e.g. a sweep row repeating a default-tiling row: keep the first
                continue
            seen.add(key)
            rows.append(r)
    with open(a.out, "w", newline="") as f:
        for note in a.note + carried:
            f.write("# " + note + "\n")
        w = csv.DictWriter(f, fieldnames=COLUMNS, restval="", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)

if __name__ == "__main__":
    main()
