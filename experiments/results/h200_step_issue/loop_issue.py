#!/usr/bin/env python3
"""Static instruction counts of each kernel's main loop, read off its SASS (development data for
the time model, docs/time_model.md, "The wgmma backward"; not an input of the model). The loop is
the longest span closed by a backward branch; its instructions are counted once each (a static
reading: branches inside the span are all counted, so a loop with special-case paths, flash1's,
counts more than a step executes), split into the matrix instructions (HGMMA, HMMA, LDSM and
wgmma's fences) and the rest.

usage: loop_issue.py CUOBJDUMP_SASS [NAME_SUBSTRING]
  CUOBJDUMP_SASS: `cuobjdump -sass OBJECT` output (cuobjdump needs nvdisasm on PATH)
Prints per kernel: loop instructions, matrix instructions, the rest, backward branches, name."""
import collections, re, subprocess, sys

MATRIX = {"HGMMA", "HMMA", "LDSM", "WARPGROUP"}


def fail(message):
    print(f"loop_issue.py: {message}", file=sys.stderr)
    sys.exit(2)


if len(sys.argv) not in (2, 3):
    fail("usage: loop_issue.py CUOBJDUMP_SASS [NAME_SUBSTRING]")
try:
    text = open(sys.argv[1]).read()
except OSError as e:
    fail(f"cannot read {sys.argv[1]}: {e}")
functions = re.split(r"\n\s*Function : ", text)[1:]
if not functions:
    fail(f"{sys.argv[1]} holds no 'Function :' sections (is it cuobjdump -sass output?)")
for f in functions:
    name = f.split("\n")[0].strip()
    if len(sys.argv) == 3 and sys.argv[2] not in name:
        continue
    instructions = [(int(a, 16), t.strip()) for a, t in re.findall(r"/\*([0-9a-f]{4,})\*/\s+(.*?);", f)]
    back = []
    for address, t in instructions:
        words = t.split()
        op = words[1] if words and words[0].startswith("@") and len(words) > 1 else (words[0] if words else "")
        target = re.search(r"0x([0-9a-f]+)", t)
        if op.startswith("BRA") and target and int(target.group(1), 16) < address:
            back.append((int(target.group(1), 16), address))
    if not back:
        continue
    lo, hi = max(back, key=lambda span: span[1] - span[0])
    ops = collections.Counter()
    for address, t in instructions:
        if lo <= address <= hi:
            words = t.split()
            ops[(words[1] if words[0].startswith("@") else words[0]).split(".")[0]] += 1
    total = sum(ops.values())
    matrix = sum(ops[o] for o in MATRIX)
    demangled = subprocess.run(["c++filt", name], capture_output=True, text=True).stdout.strip() or name
    print(f"{total:6d} {matrix:5d} {total - matrix:6d} {len(back):3d}  {demangled}")
