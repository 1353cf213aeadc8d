#!/usr/bin/env python3
"""Tests of experiments/peers.py that need neither a GPU nor torch: its rows are flashio's row
schema (the header of `flashio simulate --format csv`, read back by `flashio compare`), its FLOPs
are flashio's convention, its lists follow flashio's syntax, and bad input gets one line on
stderr, exit status 2 and no file. CTest runs it as
  python3 tests/scripts/test_peers.py --flashio PATH/TO/flashio
"""
import argparse
import csv
import importlib.util
import io
import os
import stat
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "experiments", "peers.py")
FLASHIO = ""  # set from --flashio


def load_peers():
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    spec = importlib.util.spec_from_file_location("peers", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


peers = load_peers()


def flashio(*args):
    r = subprocess.run([FLASHIO, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"flashio {' '.join(args)} exited {r.returncode}: {r.stderr}")
    return r.stdout


def csv_rows(text):
    return list(csv.DictReader(io.StringIO("\n".join(l for l in text.splitlines()
                                                     if not l.startswith("#")))))


def run_peers(args, env=None):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, env=env)


def config(backend="flash", pass_="fwd", batch=3, heads=5, kv_heads=None, seqlen=97, seqlen_k=None,
           headdim=40, dtype="fp16", causal=1):
    return dict(backend=backend, pass_=pass_, batch=batch, heads=heads,
                kv_heads=heads if kv_heads is None else kv_heads, seqlen=seqlen,
                seqlen_k=seqlen if seqlen_k is None else seqlen_k, headdim=headdim, dtype=dtype,
                causal=causal)


class Schema(unittest.TestCase):
    def test_median_is_flashios_the_mean_of_the_middle_two_for_an_even_count(self):
        self.assertEqual(peers.summarize([1.0, 2.0, 4.0, 10.0]), (3.0, 1.0, 10.0))
        self.assertEqual(peers.summarize([1.0, 2.0, 7.0]), (2.0, 1.0, 7.0))

    def test_header_is_flashios_column_list(self):
        simulate = flashio("simulate", "--algo", "flash2", "--seqlen", "97", "--headdim", "40",
                           "--format", "csv")
        flashio_header = simulate.splitlines()[0]
        self.assertEqual(",".join(peers.COLUMNS), flashio_header)
        text = peers.csv_text("provenance", [peers.peer_row(config(), 0.25, "h200")])
        self.assertTrue(text.startswith("# provenance\n"))
        self.assertEqual(text.splitlines()[1], flashio_header)

    def test_rows_round_trip_through_flashio_compare(self):
        # compare joins rows of source=peer on both sides, so a peers file compared with itself
        # must give every row back with its key cells, its time, and zero error; it also proves
        # that flashio's reader skips the leading '#' line.
        given = [(config("flash", "fwd", 3, 5, seqlen=97, headdim=40, causal=1), 0.123456789),
                 (config("cudnn", "bwd", 16, 16, seqlen=1024, headdim=64, causal=0), 1.5),
                 (config("math", "fwdbwd", 1, 2, seqlen=1025, headdim=72, dtype="bf16"), 12.0),
                 (config("efficient", "fwd", 2, 3, seqlen=97, headdim=40), 0.5)]
        # Every backend: flashio's reader refuses an algo it has no spelling for (sim::RowAlgo).
        self.assertEqual(sorted(c["backend"] for c, _ in given), sorted(peers.BACKENDS))
        rows = [peers.peer_row(c, t, "h200") for c, t in given]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "peers.csv")
            peers.write_output(path, peers.csv_text("peers.py test", rows))
            with open(path) as f:
                self.assertTrue(f.readline().startswith("# "))
            joined = csv_rows(flashio("compare", path, path, "--format", "csv"))
        self.assertEqual(len(joined), len(given))
        for (c, t), j in zip(given, joined):
            self.assertEqual(j["algo"], "torch_" + c["backend"])
            self.assertEqual(j["pass"], c["pass_"])
            self.assertEqual(j["kernel"], "total")
            for col in ("batch", "heads", "seqlen", "headdim"):
                self.assertEqual(int(j[col]), c[col])
            self.assertEqual(j["dtype"], c["dtype"])
            self.assertEqual(int(j["causal"]), c["causal"])
            self.assertEqual((j["sram_bytes"], j["block_r"], j["block_c"]), ("", "", ""))
            self.assertEqual(j["hw"], "h200")
            self.assertEqual(j["predicted_source"], "peer")
            self.assertAlmostEqual(float(j["time_measured"]), t, delta=1e-9 * t)
            self.assertEqual(j["time_predicted"], j["time_measured"])
            self.assertEqual(float(j["rel_err_time"]), 0.0)
            self.assertEqual(j["io_measured"], "")  # a peer knows no io: empty, never 0

    def test_flops_are_flashios_convention(self):
        # Awkward and round shapes, every pass, causal and not: the cell peers writes equals
        # the one flashio writes for the same problem.
        for b, h, n, d in ((3, 5, 97, 40), (16, 16, 4096, 128)):
            out = flashio("simulate", "--algo", "flash2", "--batch", str(b), "--heads", str(h),
                          "--seqlen", str(n), "--headdim", str(d), "--pass", "fwd,bwd,fwdbwd",
                          "--causal=0,1", "--format", "csv")
            totals = [r for r in csv_rows(out) if r["kernel"] == "total"]
            self.assertEqual(len(totals), 6)
            for r in totals:
                c = config(pass_=r["pass"], batch=b, heads=h, seqlen=n, headdim=d,
                           causal=int(r["causal"]))
                mine = peers.peer_row(c, 1.0, "h200")
                self.assertEqual(mine["flops"], r["flops"], (b, h, n, d, r["pass"], r["causal"]))
        # Nq != Nk: 4·B·H·Nq·Nk·d, so swapping the lengths keeps the FLOPs.
        self.assertEqual(peers.convention_flops(2, 4, 97, 64, "fwd", 0, 200),
                         4.0 * 2 * 4 * 97 * 200 * 64)

    def test_gqa_and_unequal_lengths_are_key_columns_flashio_joins(self):
        gqa_row = peers.peer_row(config(heads=8, kv_heads=2, seqlen_k=200), 1.0, "h200")
        gqa = peers.csv_text("p", [gqa_row])
        self.assertEqual(gqa.splitlines()[1].split(","), peers.COLUMNS)
        line = dict(zip(peers.COLUMNS, gqa.splitlines()[2].split(",")))
        self.assertEqual((line["kv_heads"], line["seqlen_k"]), ("2", "200"))
        # Causal, bottom-right aligned: Nq·Nk − Nq²/2 of the scores.
        self.assertEqual(peers.convention_flops(1, 1, 100, 64, "fwd", 1, 400),
                         4.0 * 100 * 400 * 64 * (1 - 100 / 800))
        with tempfile.TemporaryDirectory() as d:  # flashio reads the columns back
            path = os.path.join(d, "gqa.csv")
            peers.write_output(path, gqa)
            rows = csv_rows(flashio("compare", path, path, "--format", "csv"))
            self.assertEqual(len(rows), 1)
            self.assertEqual((rows[0]["kv_heads"], rows[0]["seqlen_k"]), ("2", "200"))


class Options(unittest.TestCase):
    def test_lists_follow_flashios_syntax(self):
        p = peers.parse_int_list
        self.assertEqual(p("seqlen", "97,128:1024:x2,1025"), [97, 128, 256, 512, 1024, 1025])
        self.assertEqual(p("seqlen", "1000:4000:1000"), [1000, 2000, 3000, 4000])
        self.assertEqual(p("seqlen", "97:300:100"), [97, 197, 297])
        self.assertEqual(p("batch", "1:4"), [1, 2, 3, 4])
        self.assertEqual(p("headdim", "64,64,40"), [64, 40])
        for bad in ("a", "10:1", "0:64:x2", "1:8:x1", "1:8:0", "1:2:3:4", ""):
            with self.assertRaises(peers.UsageError, msg=bad):
                p("seqlen", bad)

    def test_every_combination_with_the_backend_innermost(self):
        o = peers.read_options(["--backend", "flash,cudnn", "--seqlen", "97,128", "--causal=0,1"])
        cs = list(peers.configurations(o))
        self.assertEqual(len(cs), 8)
        self.assertEqual([c["backend"] for c in cs[:2]], ["flash", "cudnn"])
        self.assertEqual({k: v for k, v in cs[0].items() if k != "backend"},
                         {k: v for k, v in cs[1].items() if k != "backend"})
        self.assertEqual([c["causal"] for c in cs[:4]], [0, 0, 1, 1])
        defaults = peers.read_options([])
        self.assertEqual(defaults.repeats, 20)
        self.assertEqual(defaults.backends, ["flash", "cudnn"])
        self.assertEqual(peers.read_options(["--causal"]).causals, [1])

    def test_bad_arguments_one_line_exit_2_no_file(self):
        cases = [["--seqlen", "0"], ["--seqlen", "1:x"], ["--dtype", "fp32"],
                 ["--backend", "flash,foo"], ["--pass", "both"], ["--repeats", "9"],
                 ["--warmup", "-1"], ["--heads", "16", "--kv-heads", "3"], ["--causal", "2"],
                 ["--bogus"], ["--warmup", "x"], ["--rep", "20"]]
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "rows.csv")
            for args in cases:
                r = run_peers(args + ["--out", out])
                self.assertEqual(r.returncode, 2, (args, r.stderr))
                self.assertEqual(r.stdout, "", args)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, (args, r.stderr))
                self.assertTrue(r.stderr.startswith("peers.py: "), (args, r.stderr))
                self.assertEqual(os.listdir(d), [], args)
            r = run_peers(["--out", os.path.join(d, "missing", "rows.csv")])
            self.assertEqual(r.returncode, 2)
            self.assertIn("--out", r.stderr)

    def test_without_torch_help_works_and_a_run_says_what_is_missing(self):
        # A package named torch that fails to import shadows any installed one, so this holds
        # on machines with torch too: --help and argument checks never import it.
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "torch"))
            with open(os.path.join(d, "torch", "__init__.py"), "w") as f:
                f.write("raise ImportError('torch is not installed here (test)')\n")
            env = dict(os.environ, PYTHONPATH=d)
            r = run_peers(["--help"], env)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("--backend", r.stdout)
            out = os.path.join(d, "rows.csv")
            r = run_peers(["--seqlen", "97", "--headdim", "40", "--out", out], env)
            self.assertEqual(r.returncode, 2)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn("PyTorch", r.stderr)
            self.assertFalse(os.path.exists(out))

    def test_a_failed_write_leaves_no_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "rows.csv")
            with open(path, "w") as f:
                f.write("old\n")
            with self.assertRaises(TypeError):
                peers.write_output(path, None)  # fails inside the write
            self.assertEqual(os.listdir(d), ["rows.csv"])
            with open(path) as f:
                self.assertEqual(f.read(), "old\n")  # an existing file is left as it was


class OutputRules(unittest.TestCase):
    """--out follows flashio's --out rules (experiments/output.h)."""

    def test_a_symlink_is_followed_and_stays_a_link(self):
        with tempfile.TemporaryDirectory() as d:
            target, link = os.path.join(d, "rows.csv"), os.path.join(d, "link.csv")
            with open(target, "w") as f:
                f.write("old\n")
            os.symlink(target, link)
            peers.write_output(link, "new\n")
            self.assertTrue(os.path.islink(link))
            with open(target) as f:
                self.assertEqual(f.read(), "new\n")
            self.assertEqual(sorted(os.listdir(d)), ["link.csv", "rows.csv"])

    def test_a_replaced_file_keeps_its_mode(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "rows.csv")
            with open(path, "w") as f:
                f.write("old\n")
            os.chmod(path, 0o600)
            peers.write_output(path, "new\n")
            self.assertEqual(os.stat(path).st_mode & 0o7777, 0o600)

    def test_a_file_nobody_may_write_is_refused_before_any_run_and_left_untouched(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "rows.csv")
            with open(path, "w") as f:
                f.write("old\n")
            os.chmod(path, 0o444)
            r = run_peers(["--seqlen", "97", "--out", path])
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn("is not writable (mode 0444)", r.stderr)
            with open(path) as f:
                self.assertEqual(f.read(), "old\n")

    def test_a_fifo_nobody_reads_is_refused_at_once_and_stays_a_fifo(self):
        with tempfile.TemporaryDirectory() as d:
            fifo = os.path.join(d, "rows.fifo")
            os.mkfifo(fifo)
            with self.assertRaises(peers.UsageError) as e:
                peers.write_output(fifo, "rows\n")
            self.assertIn("FIFO that no process reads", str(e.exception))
            self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))

    def test_a_device_is_written_through_not_replaced(self):
        peers.write_output("/dev/null", "rows\n")
        self.assertTrue(stat.S_ISCHR(os.stat("/dev/null").st_mode))
        if os.path.exists("/dev/full"):
            with self.assertRaises(peers.UsageError) as e:
                peers.write_output("/dev/full", "rows\n" * 10000)
            self.assertIn("the write failed", str(e.exception))

    def test_a_directory_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(peers.UsageError) as e:
                peers.output_kind(d)
            self.assertIn("is a directory", str(e.exception))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--flashio", required=True, help="the built flashio binary")
    known, rest = ap.parse_known_args()
    FLASHIO = known.flashio
    if not os.access(FLASHIO, os.X_OK):
        sys.exit(f"--flashio {FLASHIO}: not an executable")
    unittest.main(argv=[sys.argv[0]] + rest)
