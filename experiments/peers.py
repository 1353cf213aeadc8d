#!/usr/bin/env python3
"""Time PyTorch's own attention (the backends of torch.nn.functional.scaled_dot_product_attention)
on flashio's shapes, the way `flashio bench` times flashio's kernels, and write the results as
rows of flashio's row schema (source=peer), so the two can be compared row by row.

Usage (on the GPU machine, where python3 has torch; experiments/README.md, "Peers"):
  python3 experiments/peers.py [--backend flash,cudnn] [--batch B] [--heads H] [--seqlen N]
      [--headdim D] [--dtype fp16,bf16] [--causal[=0,1]] [--pass fwd,bwd,fwdbwd]
      [--kv-heads HK] [--seqlen-k NK] [--warmup W] [--repeats R] [--hw NAME] [--out FILE]

Problem options take lists and inclusive ranges as flashio's do (`97,128:1024:x2`,
`1000:4000:1000`); the script times every combination, the backend innermost.

Timing (the method of flashio's one timer, profiler/pass_timer.h; docs/architecture.md,
"Measurement"): CUDA events around each run; `--warmup` untimed runs, then `--repeats` (>= 10)
timed runs, each preceded by a read of a buffer of four times the L2 (at least 256 MiB), so that
no run finds its inputs there; the median is reported (the mean of the two middle times for an
even count; min and max on stderr). Passes: fwd is the forward alone, without autograd; bwd is
the backward alone, timed after one untimed forward whose graph is kept; fwdbwd both.

Rows: flashio's columns in flashio's order (sim/row.h; docs/rows.md), source=peer,
algo=torch_<backend>, kernel=total, the tiling columns empty, flops by the field's convention
(4·B·H·N²·d, ×2.5 bwd, ×3.5 fwdbwd, ×0.5 causal: docs/paper.md, "FLOP convention"), time_ms and
tflops. A `#` line first records the command, torch's version, the GPU and the date (flashio's
reader skips it). A backend that cannot run a combination is reported as skipped on stderr.
Bad arguments: one line on stderr, exit status 2, no output.
"""
import argparse
import datetime
import errno
import os
import signal
import stat
import sys
import tempfile

# flashio's row schema, in flashio's order (sim/row.cpp: key_columns() then the value fields).
# tests/scripts/test_peers.py checks it against `flashio simulate --format csv`.
KEY_COLUMNS = ["source", "algo", "pass", "kernel", "batch", "heads", "seqlen", "headdim", "dtype",
               "causal", "sram_bytes", "block_r", "block_c", "hw", "mask", "dropout", "block_mask",
               "kv_heads", "seqlen_k", "gqa_pack", "splits", "page_size", "lengths", "varlen",
               "window_left", "window_right", "kernel_impl"]
VALUE_COLUMNS = ["flops", "flops_tensor", "flops_exp", "flops_other", "io_read_bytes",
                 "io_write_bytes", "dram_read_bytes", "dram_write_bytes", "extra_memory_bytes",
                 "time_ms", "tflops"]
COLUMNS = KEY_COLUMNS + VALUE_COLUMNS

BACKENDS = ["flash", "cudnn", "efficient", "math"]
BACKEND_ENUM = {"flash": "FLASH_ATTENTION", "cudnn": "CUDNN_ATTENTION",
                "efficient": "EFFICIENT_ATTENTION", "math": "MATH"}
DTYPES = ["fp16", "bf16"]
PASSES = ["fwd", "bwd", "fwdbwd"]
MAX_LIST_VALUES = 1_000_000  # as flashio's kMaxListValues: a guard against typos like 1:1e9
MIN_FLUSH_BYTES = 256 << 20  # as profiler/l2_flush.h when the L2 size is unknown or small
PROGRAM = "peers.py"


class UsageError(Exception):
    """Bad input: main() prints it as one line and exits with status 2."""


# ---- option values --------------------------------------------------------------------------

def parse_int_list(option, text):
    """flashio's list syntax (experiments/README.md, "Lists and ranges"): comma-separated items,
    each a value or an inclusive range lo:hi:xK (multiply), lo:hi:S or lo:hi (add); repeats
    dropped, first-seen order kept."""
    syntax = "a list like 512,1024 or ranges lo:hi:xK, lo:hi:S, lo:hi of integers"
    values = []
    for item in text.split(","):
        item = item.strip()
        parts = item.split(":")
        try:
            if len(parts) == 1:
                items = [int(parts[0])]
            elif len(parts) in (2, 3):
                lo, hi = int(parts[0]), int(parts[1])
                step = parts[2] if len(parts) == 3 else "1"
                if hi < lo:
                    raise UsageError(f"--{option} '{item}': the range ends below its start")
                items = []
                if step.startswith("x"):
                    k = int(step[1:])
                    if k < 2 or lo <= 0:
                        raise UsageError(f"--{option} '{item}': a multiplying range needs lo > 0 "
                                         "and xK with K >= 2")
                    v = lo
                    while v <= hi and len(items) <= MAX_LIST_VALUES:
                        items.append(v)
                        v *= k
                else:
                    s = int(step[1:] if step.startswith("+") else step)
                    if s <= 0:
                        raise UsageError(f"--{option} '{item}': the step must be > 0")
                    if (hi - lo) // s + 1 > MAX_LIST_VALUES:
                        raise UsageError(f"--{option} '{item}': more than {MAX_LIST_VALUES} values")
                    items = list(range(lo, hi + 1, s))
            else:
                raise ValueError
        except ValueError:
            raise UsageError(f"--{option} '{text}': expected {syntax}") from None
        for v in items:
            if v not in values:
                values.append(v)
    if len(values) > MAX_LIST_VALUES:
        raise UsageError(f"--{option}: more than {MAX_LIST_VALUES} values")
    return values


def positive_ints(option, text):
    values = parse_int_list(option, text)
    for v in values:
        if v <= 0:
            raise UsageError(f"--{option} must be positive integers (got {v})")
    return values


def names(option, text, allowed):
    values = []
    for item in text.split(","):
        item = item.strip()
        if item not in allowed:
            raise UsageError(f"--{option} '{item}' is unknown; allowed: {', '.join(allowed)}")
        if item not in values:
            values.append(item)
    return values


def switches(option, text):
    spellings = {"1": 1, "true": 1, "yes": 1, "on": 1, "0": 0, "false": 0, "no": 0, "off": 0}
    values = []
    for item in text.split(","):
        v = spellings.get(item.strip().lower())
        if v is None:
            raise UsageError(f"--{option} '{item}': allowed 0, 1 or 0,1 (a switch)")
        if v not in values:
            values.append(v)
    return values


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line on stderr and exit status 2 (flashio's rule)."""

    def error(self, message):
        raise UsageError(f"{message}; see {PROGRAM} --help")


def make_parser():
    p = OneLineParser(prog=PROGRAM, description=__doc__.split("\n\n")[0], allow_abbrev=False,
                      formatter_class=argparse.RawDescriptionHelpFormatter,
                      epilog="Lists and ranges as flashio's (experiments/README.md). Rows: "
                             "docs/rows.md.")
    p.add_argument("--backend", default="flash,cudnn",
                   help="SDPA backends: flash, cudnn, efficient, math (list) [flash,cudnn]")
    p.add_argument("--batch", default="16", help="B (list or range) [16]")
    p.add_argument("--heads", default="16", help="H, query heads (list or range) [16]")
    p.add_argument("--seqlen", default="4096", help="N, query length (list or range) [4096]")
    p.add_argument("--headdim", default="64", help="d (list or range) [64]")
    p.add_argument("--dtype", default="fp16", help="fp16, bf16 (list) [fp16]")
    p.add_argument("--causal", nargs="?", const="1", default="0",
                   help="causal mask (a switch; --causal=0,1 times both) [0]")
    p.add_argument("--pass", dest="passes", default="fwd", help="fwd, bwd, fwdbwd (list) [fwd]")
    p.add_argument("--kv-heads", default="",
                   help="K/V heads for grouped-query attention, each dividing H (list) [H]")
    p.add_argument("--seqlen-k", default="", help="key length when it differs from N (list) [N]")
    p.add_argument("--warmup", type=int, default=3, help="untimed runs first [3]")
    p.add_argument("--repeats", type=int, default=20,
                   help="timed runs per row, the median reported (>= 10) [20]")
    p.add_argument("--hw", default="h200", help="the rows' hw column [h200]")
    p.add_argument("--out", default="", help="write the rows to FILE (flashio's --out rules: replaced only on success, a device or FIFO written through) "
                                             "[standard output]")
    return p


def read_options(argv):
    """Parses and checks every option; raises UsageError. Needs no torch."""
    a = make_parser().parse_args(argv)
    o = argparse.Namespace()
    o.backends = names("backend", a.backend, BACKENDS)
    o.batches = positive_ints("batch", a.batch)
    o.heads = positive_ints("heads", a.heads)
    o.seqlens = positive_ints("seqlen", a.seqlen)
    o.headdims = positive_ints("headdim", a.headdim)
    o.dtypes = names("dtype", a.dtype, DTYPES)
    o.causals = switches("causal", a.causal)
    o.passes = names("pass", a.passes, PASSES)
    o.kv_heads = positive_ints("kv-heads", a.kv_heads) if a.kv_heads else []
    o.seqlens_k = positive_ints("seqlen-k", a.seqlen_k) if a.seqlen_k else []
    for hk in o.kv_heads:
        for h in o.heads:
            if h % hk:
                raise UsageError(f"--kv-heads {hk} does not divide --heads {h}; each query head "
                                 "group shares one K/V head")
    if a.repeats < 10:
        raise UsageError(f"--repeats must be at least 10 (got {a.repeats})")
    if a.warmup < 0:
        raise UsageError(f"--warmup must be >= 0 (got {a.warmup})")
    if not a.hw or "," in a.hw:
        raise UsageError(f"--hw '{a.hw}': one name, no commas")
    o.warmup, o.repeats, o.hw, o.out = a.warmup, a.repeats, a.hw, a.out
    if o.out:
        output_kind(o.out)  # refused before any timing run
    return o


def configurations(o):
    """Every combination, in flashio's manner: the backend turns fastest."""
    for pass_ in o.passes:
        for dtype in o.dtypes:
            for b in o.batches:
                for h in o.heads:
                    for hk in (o.kv_heads or [h]):
                        for d in o.headdims:
                            for n in o.seqlens:
                                for nk in (o.seqlens_k or [n]):
                                    for causal in o.causals:
                                        for backend in o.backends:
                                            yield dict(pass_=pass_, dtype=dtype, batch=b, heads=h,
                                                       kv_heads=hk, headdim=d, seqlen=n,
                                                       seqlen_k=nk, causal=causal,
                                                       backend=backend)


# ---- rows ----------------------------------------------------------------------------------

def convention_flops(batch, heads, seqlen, headdim, pass_, causal, seqlen_k=None):
    """The field's FLOP convention, as sim::convention_flops: 4·B·H·Nq·Nk·d forward, 2.5× that
    backward (five matrix products, S recomputed), 3.5× both; causal (bottom-right aligned)
    keeps Nq·Nk − Nq²/2 of the scores, half when Nq = Nk."""
    nk = seqlen if seqlen_k is None else seqlen_k
    forward = 4.0 * batch * heads * seqlen * nk * headdim
    factor = {"fwd": 1.0, "bwd": 2.5, "fwdbwd": 3.5}[pass_]
    return forward * factor * (1.0 - seqlen / (2.0 * nk) if causal else 1.0)


def number(v):
    """A cell as flashio writes it (sim/row.cpp): whole numbers as integers, others %.9g."""
    v = float(v)
    if v == int(v) and abs(v) < 9.0e15:
        return str(int(v))
    return format(v, ".9g")


def peer_row(config, time_ms, hw):
    """The row of one timed configuration, every schema column present ('' = not known)."""
    c = config
    flops = convention_flops(c["batch"], c["heads"], c["seqlen"], c["headdim"], c["pass_"],
                             c["causal"], c["seqlen_k"])
    row = {col: "" for col in COLUMNS}
    row.update(source="peer", algo="torch_" + c["backend"], kernel="total",
               batch=str(c["batch"]), heads=str(c["heads"]), seqlen=str(c["seqlen"]),
               headdim=str(c["headdim"]), dtype=c["dtype"], causal=str(int(c["causal"])), hw=hw,
               mask="0", dropout="0", varlen="0", flops=number(flops), time_ms=number(time_ms),
               tflops=number(flops / (time_ms * 1e-3) / 1e12))
    row["pass"] = c["pass_"]
    row["kv_heads"] = str(c["kv_heads"])
    row["seqlen_k"] = str(c["seqlen_k"])
    return row


def csv_text(provenance, rows):
    """The output: the `#` provenance line, the header, one line per row. No cell holds a comma
    (names, numbers), so no quoting is needed, as in flashio's own csv."""
    columns = COLUMNS
    lines = ["# " + provenance.replace("\n", " "), ",".join(columns)]
    lines += [",".join(r.get(col, "") for col in columns) for r in rows]
    return "\n".join(lines) + "\n"


def output_kind(path):
    """How --out is written, as flashio's --out is (experiments/output.h, OutputTarget): "replace"
    for an absent or regular file (a symlink's target, not the link: the resolved path), "straight"
    for a device or a FIFO (written through, never replaced). Raises UsageError for anything else:
    a directory, a socket, a file nobody may write (root included), a missing directory."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise UsageError(f"--out '{path}': {e.strerror}; give a file in an existing, writable "
                         "directory") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise UsageError(f"--out '{path}' is a directory; give a file name")
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
            return "straight"
        raise UsageError(f"--out '{path}' is not a file, a device or a FIFO")
    final = os.path.realpath(path)
    if st is not None and ((st.st_mode & 0o222) == 0 or not os.access(final, os.W_OK)):
        raise UsageError(f"--out '{path}' is not writable (mode {st.st_mode & 0o7777:04o}); make it "
                         "writable (chmod u+w) or give another file")
    directory = os.path.dirname(final)
    if not os.path.isdir(directory) or not os.access(directory, os.W_OK):
        raise UsageError(f"--out '{path}': cannot write in '{directory}'; give a file in an "
                         "existing, writable directory")
    return "replace"


def write_output(path, text):
    """Standard output, or --out by output_kind's rules: a file through a short-named temporary
    file in its directory, given the replaced file's mode (a new file the umask's) and renamed over
    it, so a run that fails, or SIGINT, SIGTERM or SIGHUP, leaves no file and an existing one
    untouched; a device or FIFO written straight through (a FIFO nobody reads: UsageError)."""
    if not path:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    if output_kind(path) == "straight":
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
        except OSError as e:
            if e.errno == errno.ENXIO:
                raise UsageError(f"--out '{path}' is a FIFO that no process reads; start its "
                                 "reader first, or give a file") from None
            raise UsageError(f"--out '{path}': cannot open it for writing ({e.strerror})") from None
        os.set_blocking(fd, True)
        try:
            with os.fdopen(fd, "w", newline="") as f:
                f.write(text)
        except OSError as e:
            raise UsageError(f"--out '{path}': the write failed ({e.strerror})") from None
        return
    final = os.path.realpath(path)
    existing = os.stat(final) if os.path.exists(final) else None
    # Signals end the run through the cleanup below rather than leave the temporary file.
    def stop(signum, _frame):
        raise SystemExit(128 + signum)
    held = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    temp = None
    try:
        fd, temp = tempfile.mkstemp(prefix=".peers-", dir=os.path.dirname(final))
        if existing is not None:
            try:
                os.fchown(fd, existing.st_uid, existing.st_gid)
            except OSError:
                pass  # only root may give a file away; the owner stays the user
            os.fchmod(fd, existing.st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "w", newline="") as f:
            f.write(text)
        os.replace(temp, final)
        temp = None
    except OSError as e:
        raise UsageError(f"--out '{path}': the write failed ({e.strerror})") from None
    finally:
        if temp is not None and os.path.exists(temp):
            os.remove(temp)
        for sig, handler in held.items():
            signal.signal(sig, handler)


def describe(c):
    shape = f"B{c['batch']} H{c['heads']}"
    if c["kv_heads"] != c["heads"]:
        shape += f" Hkv{c['kv_heads']}"
    shape += f" N{c['seqlen']}"
    if c["seqlen_k"] != c["seqlen"]:
        shape += f" Nk{c['seqlen_k']}"
    return (f"torch_{c['backend']} {c['pass_']} {shape} d{c['headdim']} {c['dtype']} "
            f"causal={int(c['causal'])}")


# ---- timing (needs torch and a CUDA GPU) ---------------------------------------------------

class Skip(Exception):
    """This backend cannot run this configuration (or the GPU has no memory for it)."""


class Timer:
    """CUDA events, warm-up, then timed runs each after an L2-clearing read; the median."""

    def __init__(self, torch, warmup, repeats):
        self.torch = torch
        self.warmup, self.repeats = warmup, repeats
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        l2_bytes = int(getattr(props, "L2_cache_size", 0) or 0)
        self.flush_bytes = max(4 * l2_bytes, MIN_FLUSH_BYTES)
        # int32 elements, read whole by a reduction: reads leave clean lines, as flashio's flush.
        self.flush = torch.zeros(self.flush_bytes // 4, dtype=torch.int32, device="cuda")

    def time(self, run):
        torch = self.torch
        for _ in range(self.warmup):
            run()
        events = []
        for _ in range(self.repeats):
            self.flush.max()  # a read of >= 4× the L2, before the start event: not timed
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            run()
            stop.record()
            events.append((start, stop))
        torch.cuda.synchronize()
        return summarize(sorted(s.elapsed_time(e) for s, e in events))


def summarize(sorted_ms):
    """The median (the mean of the two middle values for an even count, as flashio's timer
    takes it), the minimum and the maximum of sorted times."""
    n = len(sorted_ms)
    mid = sorted_ms[n // 2] if n % 2 else (sorted_ms[n // 2 - 1] + sorted_ms[n // 2]) / 2
    return mid, sorted_ms[0], sorted_ms[-1]


def first_line(text):
    line = str(text).strip().splitlines()[0] if str(text).strip() else "no reason given"
    return line[:160]


def time_configuration(torch, timer, c, inputs):
    """Median, min, max in ms for one configuration; raises Skip when it cannot run."""
    import warnings
    F = torch.nn.functional
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backend = getattr(SDPBackend, BACKEND_ENUM[c["backend"]], None)
    if backend is None:
        raise Skip(f"this torch ({torch.__version__}) has no SDPBackend.{BACKEND_ENUM[c['backend']]}")
    q, k, v, do = inputs
    kwargs = {"is_causal": bool(c["causal"])}
    if c["causal"] and c["seqlen_k"] != c["seqlen"]:
        # is_causal aligns top-left; flashio's causal for Nq != Nk is bottom-right aligned (query
        # i sees keys <= i + Nk - Nq, as FlashAttention does): torch's lower-right causal bias.
        try:
            from torch.nn.attention.bias import causal_lower_right
        except ImportError:
            raise Skip(f"this torch ({torch.__version__}) has no torch.nn.attention.bias.causal_lower_right, "
                       "needed for bottom-right causal with Nq != Nk") from None
        kwargs = {"attn_mask": causal_lower_right(c["seqlen"], c["seqlen_k"])}
    if c["kv_heads"] != c["heads"]:
        kwargs["enable_gqa"] = True

    def sdpa():
        return F.scaled_dot_product_attention(q, k, v, **kwargs)

    def fwd():
        with torch.no_grad():
            sdpa()

    def fwdbwd():
        o = sdpa()
        torch.autograd.grad(o, (q, k, v), do)  # returns the gradients: no accumulation kernel

    try:
        with sdpa_kernel(backend), warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                if c["pass_"] == "fwd":
                    return timer.time(fwd)
                if c["pass_"] == "fwdbwd":
                    return timer.time(fwdbwd)
                o = sdpa()  # the untimed forward; its graph is kept for every timed backward
                return timer.time(lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True))
            except TypeError as e:  # enable_gqa is newer than some torch versions
                raise Skip(f"this torch ({torch.__version__}) cannot: {first_line(e)}") from None
            except torch.cuda.OutOfMemoryError:
                torch.cuda.empty_cache()
                raise Skip("out of GPU memory") from None
            except RuntimeError as e:
                # "No available kernel": PyTorch's warnings say why the backend refused.
                why = "; ".join(first_line(w.message) for w in seen)
                raise Skip(first_line(e) + (f" ({why[:300]})" if why else "")) from None
    finally:
        torch.cuda.synchronize()


def make_inputs(torch, c):
    dt = {"fp16": torch.float16, "bf16": torch.bfloat16}[c["dtype"]]
    grad = c["pass_"] != "fwd"
    b, h, hk, n, nk, d = (c["batch"], c["heads"], c["kv_heads"], c["seqlen"], c["seqlen_k"],
                          c["headdim"])
    g = torch.Generator(device="cuda").manual_seed(1)
    q = torch.randn(b, h, n, d, device="cuda", dtype=dt, generator=g, requires_grad=grad)
    k = torch.randn(b, hk, nk, d, device="cuda", dtype=dt, generator=g, requires_grad=grad)
    v = torch.randn(b, hk, nk, d, device="cuda", dtype=dt, generator=g, requires_grad=grad)
    do = torch.randn(b, h, n, d, device="cuda", dtype=dt, generator=g)
    return q, k, v, do


def run(o, argv):
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any failure to import means no torch here
        raise UsageError(f"PyTorch is needed to time the peers (import torch failed: "
                         f"{first_line(e)}); run this on the GPU machine") from None
    if not torch.cuda.is_available():
        raise UsageError("no usable CUDA GPU found; peers.py needs one (run it on the GPU machine)")
    gpu = torch.cuda.get_device_name(torch.cuda.current_device())
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    timer = Timer(torch, o.warmup, o.repeats)
    provenance = (f"{PROGRAM} {' '.join(argv)}; torch {torch.__version__} (CUDA "
                  f"{torch.version.cuda}); {gpu}; {date}; median of {o.repeats} CUDA-event "
                  f"timings after {o.warmup} warm-up runs, {timer.flush_bytes} B read before "
                  "each; rows in flashio's schema (docs/rows.md)")
    rows, skipped = [], 0
    cache_key, inputs = None, None
    for c in configurations(o):
        key = (c["pass_"] != "fwd", c["dtype"], c["batch"], c["heads"], c["kv_heads"],
               c["headdim"], c["seqlen"], c["seqlen_k"])
        try:
            if key != cache_key:
                inputs, cache_key = None, None
                torch.cuda.empty_cache()
                inputs, cache_key = make_inputs(torch, c), key
            median, low, high = time_configuration(torch, timer, c, inputs)
        except Skip as why:
            skipped += 1
            print(f"{PROGRAM}: skipped {describe(c)}: {why}", file=sys.stderr)
            continue
        except torch.cuda.OutOfMemoryError:
            skipped += 1
            inputs, cache_key = None, None
            torch.cuda.empty_cache()
            print(f"{PROGRAM}: skipped {describe(c)}: out of GPU memory for the inputs",
                  file=sys.stderr)
            continue
        row = peer_row(c, median, o.hw)
        rows.append(row)
        print(f"{describe(c)}: {median:.4f} ms (min {low:.4f}, max {high:.4f}), "
              f"{float(row['tflops']):.1f} TFLOP/s", file=sys.stderr)
    if not rows:
        print(f"{PROGRAM}: no configuration ran ({skipped} skipped); no rows written",
              file=sys.stderr)
        return 1
    write_output(o.out, csv_text(provenance, rows))
    if skipped:
        print(f"{PROGRAM}: {len(rows)} rows written, {skipped} skipped", file=sys.stderr)
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        return run(read_options(argv), argv)
    except UsageError as e:
        print(f"{PROGRAM}: {' '.join(str(e).split())}", file=sys.stderr)  # one line
        return 2


if __name__ == "__main__":
    sys.exit(main())
