"""A search split into shards that run anywhere: each evaluates every N-th candidate of the
space at every shape and writes its results to a file; the search then imports the files into
the result cache and finds nothing left to evaluate.

This is how hk_tune (hk/autotune/defs.bzl) makes a search's candidates Bazel actions, one per
shard, which a remote executor runs in parallel:

    records = shards.evaluate(hk.ops.gemm.LINEAR, shapes, "gfx1100", index=0, count=8)
    shards.write(path, records)                  # in each action
    shards.load([path, ...])                     # where the search runs, then search(...)

A record carries the result cache's key, which covers the kernel's sources, the candidate, the
target and device, the compiler and the model: a shard evaluated by other sources or another
compiler matches nothing and its results are never used (the search evaluates afresh).
"""

import json
import os

from hk.autotune import evaluate as evaluate_lib
from hk.autotune import fingerprint, results, searching
from hk.autotune.tunable import as_tunable
from hk.errors import TuneError

FORMAT = 1


def evaluate(target, shapes, arch, index, count, *, space=None, device=None, jobs=1):
    """[{"key", "knobs", "shape", "record"}] of the candidates of shard `index` of `count`: every
    count-th candidate of the whole space (today's choice in shard 0), ranked later by the model
    (a shard never times: an executor has no GPU to time on)."""
    from hk.runtime import toolchain as toolchain_lib

    if not (isinstance(count, int) and isinstance(index, int) and 0 <= index < count):
        raise TuneError("a shard is INDEX/COUNT with 0 <= INDEX < COUNT, not %r/%r" % (index, count))
    tunable = as_tunable(target)
    chosen = tunable.space_for(arch, space)
    shapes = list(shapes)
    if not shapes:
        raise TuneError("shard of %s: no shapes to evaluate at" % tunable.name)
    configs = chosen.candidates()[index::count]
    default = searching._default(tunable, arch, chosen)
    if index == 0 and default is not None and default not in configs:
        configs.insert(0, default)
    target_key = searching._target_key("model", arch, device)
    compiler = fingerprint.compiler_digest(toolchain_lib.find().identity)
    model = fingerprint.model_version()
    described = [tunable.describe(s) for s in shapes]
    jobs_ = [evaluate_lib.Job(tunable, c, arch,
                              [(s, results.key(tunable.source_digest, c, target_key, compiler, model, d))
                               for s, d in zip(shapes, described)], "model", device)
             for c in configs]
    out = []
    for job, outcome in zip(jobs_, evaluate_lib.run(jobs_, jobs)):
        for d, (k, record) in zip(described, outcome):
            out.append({"key": k, "knobs": job.config.as_dict(), "shape": d, "record": record})
    return out


def write(path, records):
    """Writes a shard's records (staged and renamed: a reader never sees half a file)."""
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump({"format": FORMAT, "records": records}, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def load(paths):
    """Puts the records of shard files into the result cache; returns how many. A file that is
    not a shard's is a TuneError naming it."""
    count = 0
    for path in paths:
        try:
            with open(path) as f:
                data = json.load(f)
            if data.get("format") != FORMAT:
                raise ValueError("format %r, not %d" % (data.get("format"), FORMAT))
            records = [(r["key"], r["record"]) for r in data["records"]]
            if not all(isinstance(k, str) and isinstance(v, dict) and "status" in v for k, v in records):
                raise ValueError("a record is not {key, record}")
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            raise TuneError("%s is not a shard's results: %s" % (path, e),
                            hint="give the files hk-tune --shard wrote") from None
        for k, record in records:
            count += evaluate_lib.keep(k, record)
    return count
