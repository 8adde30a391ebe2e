"""Fuzzing the DSL: random valid programs must agree between the interpreter and the emulator,
random invalid ones must end in an hk error naming the generated file and the bad line.

    ./bazelw run //tests/fuzz:dsl_fuzz -- --count=4000 --seed=7 --archs=gfx1100,gfx950

Every program is a Python file (kept in --out); a finding prints its path, so it replays with
the same seed or by importing the file. Valid programs are compiled --batch at a time per
architecture (one clang run); invalid ones only trace and run on the interpreter.
`dsl_fuzz_test` runs a seeded few hundred under `bazel test`.
"""

import collections
import os
import random
import sys
import tempfile
import time

from absl import app, flags

from tests.fuzz import harness, mutations, programs

FLAGS = flags.FLAGS
flags.DEFINE_integer("count", 2000, "programs, valid and invalid")
flags.DEFINE_integer("seed", 1, "random seed; the same seed replays the same programs")
flags.DEFINE_float("valid", 0.5, "share of valid programs")
flags.DEFINE_list("archs", ["gfx1100", "gfx950"], "architectures the emulator runs valid programs on")
flags.DEFINE_integer("batch", 40, "valid programs per compile")
flags.DEFINE_string("out", None, "directory for the programs (default: a new temporary one)")

FAILURES_VALID = ("disagree", "crash", "unsupported")
# What hk may refuse in a valid program: the register budgets it checks, at trace and at build.
BUDGETS = ("register tiles live here need", "a spilling kernel is never returned")


def _refusal(detail):
    return "budget" if any(b in detail for b in BUDGETS) else "other"
FAILURES_INVALID = ("misplaced", "unlocated", "raw", "accepted")


def fuzz(count, seed, valid_share, archs, batch, out, report=print):
    """Runs `count` programs; returns (valid Counter, invalid Counter, findings)."""
    rng = random.Random(seed)
    n_valid = int(round(count * valid_share))
    findings = []
    valid, invalid = collections.Counter(), collections.Counter()
    seeds = [rng.randrange(1 << 30) for _ in range(count)]
    for start in range(0, n_valid, batch):
        group = [programs.generate(s) for s in seeds[start:min(start + batch, n_valid)]]
        for o in harness.run_valid(group, out, archs):
            valid[o.status] += 1
            valid["writing"] += o.written > 0
            if o.status == "refused":
                valid["refused " + _refusal(o.detail)] += 1
            if o.status in FAILURES_VALID or (o.status == "refused" and _refusal(o.detail) == "other"):
                findings.append("valid %s: %s %s" % (o.status, os.path.join(out, o.program.name + ".py"), o.detail))
        report("  valid %d/%d: %s" % (min(start + batch, n_valid), n_valid, dict(valid)))
    for k, s in enumerate(seeds[n_valid:]):
        bad = mutations.mutate(programs.generate(s), random.Random(s))
        o = harness.run_invalid(bad, out, k)
        invalid[o.status] += 1
        invalid[bad.name] += 0  # every mutation that ran, for the summary
        if o.status in FAILURES_INVALID:
            findings.append("invalid %s (%s): %s" % (o.status, bad.name, o.detail))
    return valid, invalid, findings


def main(argv):
    del argv
    out = FLAGS.out or tempfile.mkdtemp(prefix="hk-dsl-fuzz-")
    os.makedirs(out, exist_ok=True)
    start = time.time()
    valid, invalid, findings = fuzz(FLAGS.count, FLAGS.seed, FLAGS.valid, FLAGS.archs, FLAGS.batch, out)
    n_valid = sum(valid[s] for s in ("agree", "disagree", "refused", "unsupported", "crash"))
    n_invalid = sum(invalid[s] for s in ("located",) + FAILURES_INVALID)
    mutations_run = len([k for k in invalid if k not in ("located",) + FAILURES_INVALID])
    print("%d programs (seed %d) in %.0f s, kept in %s" % (n_valid + n_invalid, FLAGS.seed, time.time() - start, out))
    print("  valid:   %d: %d agree on %s (%d of them write an output), %d disagree, %d refused by hk "
          "(%d over a register budget), %d need an instruction the emulator lacks, %d crash"
          % (n_valid, valid["agree"], "+".join(FLAGS.archs), valid["writing"], valid["disagree"],
             valid["refused"], valid["refused budget"], valid["unsupported"], valid["crash"]))
    print("  invalid: %d from %d mutations: %d hk errors at the bad line, %d elsewhere, %d without a "
          "location, %d non-hk exceptions, %d accepted"
          % (n_invalid, mutations_run, invalid["located"], invalid["misplaced"], invalid["unlocated"],
             invalid["raw"], invalid["accepted"]))
    for f in findings:
        print(f, file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    app.run(main)
