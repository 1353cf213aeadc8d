#!/usr/bin/env python3
"""One warp's issue along the path a tile step executes (docs/time_model.md, "Why flash1's
forward is under-predicted"): joins ncu's per-instruction executed counts (the source page of
`ncu --set full`, SASS, as csv) with the control bits of the same kernel's SASS from
`cuobjdump -sass` (the stall count: bits 41-44 of an instruction's second 64-bit word, the
cycles the compiler makes the warp wait before its next instruction). The loop is the address
range of the instructions executed at least half as often as the most executed one.

usage: step_issue.py SASS_CSV[.gz] CUOBJDUMP_SASS WARP_STEPS
  WARP_STEPS: warps of the grid x tile steps of a block (what one execution of the loop body is)
Prints the instructions and fixed stall cycles a warp issues per step on the executed path."""
import csv, gzip, re, sys

if len(sys.argv) != 4:
    print("usage: step_issue.py SASS_CSV[.gz] CUOBJDUMP_SASS WARP_STEPS (WARP_STEPS a positive number)", file=sys.stderr)
    sys.exit(2)
opener = gzip.open if sys.argv[1].endswith(".gz") else open
rows = list(csv.reader(opener(sys.argv[1], "rt")))
header, data = rows[1], [r for r in rows[2:] if r and r[0].startswith("0x")]
at_address, at_count = header.index("Address"), header.index("Instructions Executed")
base = int(data[0][at_address], 16)
executed = {int(r[at_address], 16) - base: int(r[at_count]) for r in data}

lines = open(sys.argv[2]).read().split("\n")
instruction = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?);\s*/\* (0x[0-9a-f]{16}) \*/")
word = re.compile(r"/\* (0x[0-9a-f]{16}) \*/")
stall = {}
for i, line in enumerate(lines[:-1]):
    m = instruction.search(line)
    if m:
        stall[int(m.group(1), 16)] = (int(word.search(lines[i + 1]).group(1), 16) >> 41) & 0xF
if set(executed) - set(stall):
    sys.exit("the ncu source page and the cuobjdump SASS are not the same kernel (addresses differ)")

most = max(executed.values())
loop = [a for a, n in executed.items() if n >= most / 2]
lo, hi = min(loop), max(loop)
steps = float(sys.argv[3])
issued = sum(n for a, n in executed.items() if lo <= a <= hi)
fixed = sum(n * stall[a] for a, n in executed.items() if lo <= a <= hi)
print(f"loop {lo:#x}-{hi:#x}: {issued / steps:.0f} instructions and {fixed / steps:.0f} fixed stall cycles a warp per step")
