"""Feeds hk-opt and hk-translate mutated versions of the lit suite's inputs.

Malformed IR must end in a diagnostic (exit status 1), never in a crash: a run that dies on a
signal, exits with another status, prints LLVM's crash banner or hangs is a crash, and its input
and command are saved for reproduction.

    bazel run //mlir/test:fuzz -- --count=5000 --seed=7 --out=/path/to/crashes

`fuzz_test` runs a few hundred with a fixed seed as a regression guard.
"""

import collections
import concurrent.futures
import glob
import os
import random
import re
import subprocess
import sys
import tempfile

from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_string("hk_opt", None, "the hk-opt binary", required=True)
flags.DEFINE_string("hk_translate", None, "the hk-translate binary", required=True)
flags.DEFINE_integer("count", 3000, "tool runs")
flags.DEFINE_integer("seed", 1, "random seed; the same seed replays the same inputs")
flags.DEFINE_integer("jobs", 2, "parallel runs")
flags.DEFINE_string("out", None, "directory for crashing inputs (default: a new temporary one)")
flags.DEFINE_float("timeout", 20.0, "seconds before a run counts as a hang")

ARCHS = ["gfx1100", "gfx1201", "gfx942", "gfx950"]
INTERESTING = ["0", "-1", "1", "3", "7", "17", "64", "65536", "2147483648", "-2147483649",
               "9223372036854775807", "-9223372036854775808", "99999999999999999999", "1.5", "0x7f"]
PUNCTUATION = list("<>{}[](),:=%!#@\"x-") + ["->", "::", "<<", ">>", "\n", "\"\\"]
CRASH_BANNERS = ("PLEASE submit a bug report", "Stack dump:", "LLVM ERROR", "Assertion `")

SSA = re.compile(r"%[A-Za-z0-9_]+")
NUMBER = re.compile(r"(?<![A-Za-z_%#])-?\d+(\.\d+)?")
TYPE = re.compile(r"!hk\.[a-z]+(<[^<>]*>)?|\b(index|f32|f16|bf16|i1|i8|i32|i64)\b")
OP = re.compile(r"\b(hk|arith|scf|func)\.[a-z_]+\b")
ARCH = re.compile(r"gfx\d+")


def corpus(directory):
    """Every case of every .mlir file under `directory`, split where lit splits them."""
    cases = []
    for path in sorted(glob.glob(os.path.join(directory, "**", "*.mlir"), recursive=True)):
        with open(path) as f:
            text = f.read()
        for case in text.split("// -----"):
            lines = [l for l in case.splitlines() if not l.lstrip().startswith("// RUN")]
            if any(l.strip() and not l.lstrip().startswith("//") for l in lines):
                cases.append("\n".join(lines) + "\n")
    return cases


class Mutator:
    def __init__(self, rng, cases):
        self.rng = rng
        joined = "\n".join(cases)
        self.types = sorted({m.group(0) for m in TYPE.finditer(joined)})
        self.ops = sorted({m.group(0) for m in OP.finditer(joined)})

    def _replace_match(self, text, pattern, choices):
        matches = list(pattern.finditer(text))
        if not matches or not choices:
            return text
        m = self.rng.choice(matches)
        return text[:m.start()] + self.rng.choice(choices) + text[m.end():]

    def _lines(self, text, edit):
        lines = text.splitlines()
        if len(lines) < 2:
            return text
        edit(lines)
        return "\n".join(lines) + "\n"

    def mutate(self, text):
        rng = self.rng
        kind = rng.randrange(12)
        if kind == 0:
            return self._lines(text, lambda ls: ls.pop(rng.randrange(len(ls))))
        if kind == 1:
            return self._lines(text, lambda ls: ls.insert(rng.randrange(len(ls)), rng.choice(ls)))
        if kind == 2:
            def swap(ls):
                i, j = rng.randrange(len(ls)), rng.randrange(len(ls))
                ls[i], ls[j] = ls[j], ls[i]
            return self._lines(text, swap)
        if kind == 3:
            return self._replace_match(text, NUMBER, INTERESTING)
        if kind == 4:
            return self._replace_match(text, TYPE, self.types)
        if kind == 5:
            return self._replace_match(text, SSA, sorted(set(SSA.findall(text))) or ["%x"])
        if kind == 6:
            return self._replace_match(text, OP, self.ops)
        if kind == 7:
            return self._replace_match(text, ARCH, ["gfx90a", "gfx1100", "gfx950", "gfx9999", ""])
        if kind == 8:
            return text[:rng.randrange(len(text) + 1)]
        if kind == 9:
            i = rng.randrange(len(text) + 1)
            return text[:i] + text[i + rng.randrange(1, 24):]
        if kind == 10:
            i = rng.randrange(len(text) + 1)
            return text[:i] + rng.choice(PUNCTUATION) + text[i:]
        # A line moved into another op's region (or out of it).
        return self._lines(text, lambda ls: ls.insert(rng.randrange(len(ls)), ls.pop(rng.randrange(len(ls)))))


def commands(rng):
    """Two of the tools' modes, the first the full pipeline or the translation."""
    arch = rng.choice(ARCHS)
    deepest = [
        [FLAGS.hk_opt, "--hk-kernel-pipeline=arch=%s" % arch],
        [FLAGS.hk_translate, "--hk-to-cpp", "--hk-arch=%s" % arch],
    ]
    others = [
        [FLAGS.hk_opt],
        [FLAGS.hk_opt, "--hk-structure=arch=%s" % arch, "--hk-fragments=arch=%s" % arch],
        [FLAGS.hk_opt, "--hk-lds-allocation=arch=%s" % arch, "--hk-waits=arch=%s derive=false" % arch],
        [FLAGS.hk_opt, "--hk-budgets=arch=%s" % arch, "--mlir-print-op-generic"],
    ]
    return [rng.choice(deepest), rng.choice(deepest + others)]


def run(cmd, text):
    """'ok', 'diagnosed' or a description of the crash."""
    try:
        r = subprocess.run(cmd, input=text, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True, timeout=FLAGS.timeout)
    except subprocess.TimeoutExpired:
        return "hang"
    banner = next((b for b in CRASH_BANNERS if b in r.stderr), None)
    if r.returncode < 0:
        return "signal %d" % -r.returncode
    if banner:
        return "crash banner %r" % banner
    if r.returncode not in (0, 1):
        return "exit status %d" % r.returncode
    return "ok" if r.returncode == 0 else "diagnosed"


def main(argv):
    del argv
    suite = os.path.dirname(os.path.abspath(__file__))
    cases = corpus(suite)
    rng = random.Random(FLAGS.seed)
    mutator = Mutator(rng, cases)
    work = []
    while len(work) < FLAGS.count:
        text = rng.choice(cases)
        for _ in range(rng.randint(1, 3)):
            text = mutator.mutate(text)
        for cmd in commands(rng):
            work.append((cmd, text))
    work = work[:FLAGS.count]

    outcomes = collections.Counter()
    crashes = []
    with concurrent.futures.ThreadPoolExecutor(FLAGS.jobs) as pool:
        for (cmd, text), outcome in zip(work, pool.map(lambda w: run(*w), work)):
            if outcome in ("ok", "diagnosed"):
                outcomes[outcome] += 1
            else:
                outcomes["crash"] += 1
                crashes.append((cmd, text, outcome))

    print("%d runs on %d mutated inputs from %d cases (seed %d): %d accepted, %d diagnosed, %d crashed"
          % (len(work), len({t for _, t in work}), len(cases), FLAGS.seed, outcomes["ok"],
             outcomes["diagnosed"], outcomes["crash"]))
    if not crashes:
        return 0
    out = FLAGS.out or tempfile.mkdtemp(prefix="hk-fuzz-")
    os.makedirs(out, exist_ok=True)
    for i, (cmd, text, outcome) in enumerate(crashes):
        path = os.path.join(out, "crash-%d.mlir" % i)
        with open(path, "w") as f:
            f.write("// %s\n// %s < this file\n%s" % (outcome, " ".join(
                [os.path.basename(cmd[0])] + cmd[1:]), text))
        print("%s: %s" % (outcome, path), file=sys.stderr)
    return 1


if __name__ == "__main__":
    app.run(main)
