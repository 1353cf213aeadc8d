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

USAGE = "usage: step_issue.py SASS_CSV[.gz] CUOBJDUMP_SASS WARP_STEPS (WARP_STEPS a positive number)"


def opcode(text):
    """An instruction's mnemonic without its predicate and modifiers ("@!P0 BRA 0x10" -> "BRA")."""
    words = text.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else ""


def fail(message):
    print(f"step_issue.py: {message}", file=sys.stderr)
    sys.exit(2)


if len(sys.argv) != 4:
    fail(USAGE)
try:
    steps = float(sys.argv[3])
except ValueError:
    steps = 0
if not steps > 0:
    fail(f"WARP_STEPS must be a positive number, not {sys.argv[3]!r}")
try:
    opener = gzip.open if sys.argv[1].endswith(".gz") else open
    rows = list(csv.reader(opener(sys.argv[1], "rt")))
    header, data = rows[1], [r for r in rows[2:] if r and r[0].startswith("0x")]
    at_address, at_count = header.index("Address"), header.index("Instructions Executed")
    at_source = header.index("Source")
    base = int(data[0][at_address], 16)
    executed = {int(r[at_address], 16) - base: int(r[at_count]) for r in data}
    ncu_opcode = {int(r[at_address], 16) - base: opcode(r[at_source]) for r in data}
    lines = open(sys.argv[2]).read().split("\n")
except (OSError, IndexError, ValueError) as e:
    fail(f"cannot read the ncu source page {sys.argv[1]} (csv with Address and Instructions Executed columns) "
         f"or the SASS {sys.argv[2]}: {e}")

instruction = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?);\s*/\* (0x[0-9a-f]{16}) \*/")
word = re.compile(r"/\* (0x[0-9a-f]{16}) \*/")
stall, sass_opcode = {}, {}
for i, line in enumerate(lines[:-1]):
    m = instruction.search(line)
    if m:
        stall[int(m.group(1), 16)] = (int(word.search(lines[i + 1]).group(1), 16) >> 41) & 0xF
        sass_opcode[int(m.group(1), 16)] = opcode(m.group(2))
if not stall or set(executed) - set(stall) or any(ncu_opcode[a] != sass_opcode[a] for a in executed):
    fail("the ncu source page and the cuobjdump SASS are not the same kernel (their addresses or instructions differ)")

most = max(executed.values())
loop = [a for a, n in executed.items() if n >= most / 2]
lo, hi = min(loop), max(loop)
issued = sum(n for a, n in executed.items() if lo <= a <= hi)
fixed = sum(n * stall[a] for a, n in executed.items() if lo <= a <= hi)
print(f"loop {lo:#x}-{hi:#x}: {issued / steps:.0f} instructions and {fixed / steps:.0f} fixed stall cycles a warp per step")
