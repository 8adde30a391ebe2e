"""hk.autotune.search: the best candidate of a kernel's space at each shape bucket.

    result = hk.autotune.search(hk.ops.gemm.LINEAR, [(4096, 4096, 4096)], "gfx1100")
    result.choices        # {bucket: Choice(knobs, seconds, default_seconds, ...)}
    print(result.report())

Each candidate is traced, verified, compiled and gated as a launch builds it; those refused are
dropped with their stage and reason, and counted. The rest are ranked by hk.perf's prediction
on the target's device (evaluator "model"), or timed where a GPU of that target runs this
process (evaluator "time"). Every result goes to the result cache (hk.autotune.results), so a
second search reads them and a space with a value added evaluates only the new candidates.
Today's choice (the Tunable's default) is evaluated too: the gain is measured against it.
"""

import dataclasses
import math
import os
import time

from hk.autotune import evaluate as evaluate_lib
from hk.autotune import fingerprint, results
from hk.autotune import strategy as strategies
from hk.autotune.space import Config
from hk.autotune.tunable import as_tunable
from hk.errors import TuneError


@dataclasses.dataclass
class Choice:
    """The best candidate of one shape bucket."""

    bucket: str
    knobs: dict
    seconds: float                # the sum over the bucket's shapes searched
    default_seconds: object       # today's choice's, or None when it was refused or not evaluated
    shapes: list                  # the shapes searched in this bucket (their descriptions)

    @property
    def gain(self):
        """Today's choice's time over this one's (1.0: no better), or None."""
        return self.default_seconds / self.seconds if self.default_seconds else None


@dataclasses.dataclass
class Refusal:
    knobs: dict
    shape: str
    stage: str    # trace, verify, compile, gate, launch, model, declare
    reason: str


@dataclasses.dataclass
class SearchResult:
    op: str
    arch: str
    evaluator: str          # "model" (hk.perf's prediction) or "time" (measured on the GPU)
    model_version: str      # hk.perf's version, or "measured"
    strategy: str           # "exhaustive" or "pattern"
    admitted: int           # candidates the space's constraints admit
    candidates: int         # candidates evaluated (or read from the cache)
    fresh: int              # candidate-shape results evaluated by this search
    cached: int             # candidate-shape results read from the result cache
    refusals: list
    choices: dict
    seconds: float
    stopped: object = None  # "budget" or "effort" when the search ended early
    device: str = ""
    error: object = None    # the model's stated relative error
    times: list = dataclasses.field(default_factory=list)  # [(knobs, shape, seconds)] of every result
    starts: int = 0         # a pattern search's starts besides today's choice (search's `starts`)

    def refused_by_stage(self):
        """{stage: candidates refused there} (a candidate counted once, at its first refusal)."""
        seen, counts = set(), {}
        for r in self.refusals:
            key = tuple(sorted(r.knobs.items()))
            if key not in seen:
                seen.add(key)
                counts[r.stage] = counts.get(r.stage, 0) + 1
        return counts

    def report(self):
        refused = self.refused_by_stage()
        lines = ["%s on %s (%s%s): %s search%s, %d of %d admitted candidates evaluated, %d refused%s; "
                 "%d results evaluated, %d from the cache, %.1f s%s"
                 % (self.op, self.arch, "predicted on %s" % self.device if self.evaluator == "model" else "timed",
                    ", model %s, stated error +-%.0f%%" % (self.model_version, 100 * self.error)
                    if self.error is not None else "", self.strategy,
                    " (also from %d tuned choice%s)" % (self.starts, "s" * (self.starts != 1)) if self.starts else "",
                    self.candidates, self.admitted,
                    sum(refused.values()),
                    " (%s)" % ", ".join("%s %d" % kv for kv in sorted(refused.items())) if refused else "",
                    self.fresh, self.cached, self.seconds,
                    "; stopped by the %s" % self.stopped if self.stopped else "")]
        for bucket, c in sorted(self.choices.items()):
            gain = " (default %.1f us, %.2fx)" % (c.default_seconds * 1e6, c.gain) if c.default_seconds else ""
            lines.append("  %s: %s  %.1f us%s" % (bucket, Config(c.knobs), c.seconds * 1e6, gain))
        return "\n".join(lines)


def _evaluator(chosen, arch):
    """"model", or "time" where a GPU of `arch` runs this process and no CPU runner is asked for."""
    if chosen not in (None, "model", "time"):
        raise TuneError("the evaluator is 'model' (hk.perf) or 'time' (a GPU), not %r" % (chosen,))
    from hk.runtime import device

    if chosen == "time" and device.detected_arch() != arch:
        raise TuneError("the 'time' evaluator needs a GPU of %s in this process (found: %s)"
                        % (arch, device.detected_arch() or "none"), hint="rank by hk.perf: evaluator='model'")
    if chosen:
        return chosen
    if os.environ.get("HK_DEVICE", "").strip().lower() in ("interp", "emu"):
        return "model"
    return "time" if device.detected_arch() == arch else "model"


def _target_key(evaluator, arch, device):
    if evaluator == "model":
        from hk.perf import device as devices

        return "model %s %s" % (arch, devices.get(device, arch=arch).name)
    import torch

    props = torch.cuda.get_device_properties(0)
    return "time %s %s %d" % (arch, props.name, props.multi_processor_count)


def _default(tunable, arch, space):
    """Today's choice as a Config of the space's knobs, or None when it sets none of them."""
    try:
        chosen = tunable.default(arch)
    except Exception:  # a kernel with a constant that has no default: no reference to compare with
        return None
    if not all(k in chosen for k in space.knobs):
        return None
    return Config(tuple((k, chosen[k]) for k in space.knobs))


def _starts(space, starts, start, most):
    """The first `most` of `starts` (knob dicts) the space admits, as Configs, other than `start`."""
    out = []
    for knobs in starts:
        if not isinstance(knobs, dict) or set(knobs) != set(space.knobs):
            continue
        config = Config(tuple((k, knobs[k]) for k in space.knobs))
        if config != start and config not in out and space.admits(config):
            out.append(config)
    return out[:most]


def _score(records, config, count):
    """The geometric mean of a candidate's times over the shapes, None when any was refused."""
    times = [records.get((config, i)) for i in range(count)]
    if any(r is None or r.get("status") != "ok" for r in times):
        return None
    return math.exp(sum(math.log(max(r["seconds"], 1e-12)) for r in times) / count)


def search(target, shapes, arch=None, *, space=None, strategy="auto", effort="medium", budget_s=None,
           jobs=None, evaluator=None, device=None, min_gain=1.0, progress=None, starts=()):
    """Searches `target` (an hk.Kernel declared with tune=, or a Tunable) at `shapes` on `arch`.

    space        replaces the declared space (same knobs as the kernel takes)
    strategy     "exhaustive", "pattern", or "auto" (exhaustive when the space is small for
                 the effort)
    effort       "low", "medium" or "high": how large a space is searched exhaustively, how many
                 candidates a pattern search may evaluate
    budget_s     a wall-time budget in seconds, checked between batches
    jobs         worker processes (default: the machine's cores)
    evaluator    "model" or "time" (default: time where a GPU of `arch` is present)
    device       the device hk.perf predicts (default: the arch's)
    min_gain     a bucket keeps today's choice unless the best is this much faster (1.02: by 2%;
                 a prediction's ranking is worth little below the model's error)
    progress     called as progress(done, total) as candidates finish
    starts       knob dicts a pattern search also starts from (the best of them and today's
                 choice): choices made at other buckets; those the space does not admit are
                 skipped, and they take at most a quarter of the effort's evaluations
    """
    from hk.dsl.kernel import default_arch
    from hk.runtime import toolchain as toolchain_lib
    from hk.target import facts

    started = time.monotonic()
    tunable = as_tunable(target)
    arch = arch or default_arch()
    facts.target(arch)
    chosen_space = tunable.space_for(arch, space)
    candidates = chosen_space.candidates()
    shapes = list(shapes)
    if not shapes:
        raise TuneError("search %s: no shapes to search at" % tunable.name)
    if not min_gain >= 1.0:
        raise TuneError("min_gain is at least 1.0 (no gain), not %r" % (min_gain,))
    exhaustive_up_to, max_evaluations = strategies.limits(effort)
    if strategy == "auto":
        strategy = "exhaustive" if len(candidates) <= exhaustive_up_to else "pattern"
    if strategy not in ("exhaustive", "pattern"):
        raise TuneError("the strategy is 'exhaustive', 'pattern' or 'auto', not %r" % (strategy,))
    evaluator = _evaluator(evaluator, arch)
    target_key = _target_key(evaluator, arch, device)
    compiler = fingerprint.compiler_digest(toolchain_lib.find().identity)
    model = fingerprint.model_version() if evaluator == "model" else "measured"
    described = [tunable.describe(s) for s in shapes]
    default = _default(tunable, arch, chosen_space)
    workers = jobs or os.cpu_count() or 1

    records, counts = {}, {"fresh": 0, "cached": 0, "done": 0}
    total = len(candidates) + 1 if strategy == "exhaustive" else min(len(candidates), max_evaluations) + 1

    def tick():
        counts["done"] += 1
        if progress:
            progress(counts["done"], max(total, counts["done"]))

    def evaluate(configs):
        batch = []
        for c in configs:
            missing = []
            for i, d in enumerate(described):
                k = results.key(tunable.source_digest, c, target_key, compiler, model, d)
                record = results.get(k)
                if record is None:
                    missing.append((i, k))
                else:
                    records[c, i] = record
                    counts["cached"] += 1
            if missing:
                batch.append((c, missing))
            else:
                tick()
        jobs_ = [evaluate_lib.Job(tunable, c, arch, [(shapes[i], k) for i, k in missing], evaluator, device)
                 for c, missing in batch]
        outcomes = evaluate_lib.run(jobs_, workers, done=lambda job: tick())
        for (c, missing), outcome in zip(batch, outcomes):
            for (i, _), (_, record) in zip(missing, outcome):
                records[c, i] = record
                counts["fresh"] += 1
        return {c: _score(records, c, len(shapes)) for c in configs}

    walk = strategies.Walk(evaluate, budget_s, None if strategy == "exhaustive" else max_evaluations)
    warm = []
    if strategy == "exhaustive" and budget_s is None:
        # One batch, today's choice first: the workers take candidates and shapes until the last
        # with no wait between batches (a budget is checked between batches: then they are small).
        walk.batch(([default] if default is not None else []) + candidates)
    elif strategy == "exhaustive":
        if default is not None:
            walk.batch([default])
        strategies.exhaustive(walk, candidates, max(2 * workers, 1))
    else:
        if default is not None:
            walk.batch([default])
        start = default if default in candidates else candidates[0]
        warm = _starts(chosen_space, starts, start, max(1, max_evaluations // 4))
        strategies.pattern(walk, chosen_space, start, candidates, starts=warm)

    # Today's choice competes only where the space admits it (else it is the reference alone).
    admitted = [c for c in walk.scores if chosen_space.admits(c)]
    result = SearchResult(op=tunable.name, arch=arch, evaluator=evaluator, model_version=model,
                          strategy=strategy, admitted=len(candidates), candidates=len(admitted),
                          fresh=counts["fresh"], cached=counts["cached"], refusals=[], choices={},
                          seconds=time.monotonic() - started, stopped=walk.stopped,
                          starts=len(warm))
    for (c, i), r in records.items():
        if r.get("status") == "ok":
            result.device, result.error = r.get("device") or "", r.get("error")
            result.times.append((c.as_dict(), described[i], r["seconds"]))
        else:
            result.refusals.append(Refusal(c.as_dict(), described[i], r.get("stage", "refused"), r.get("reason", "")))
    result.choices = _choices(tunable, shapes, described, admitted, records, default, min_gain)
    if not result.choices:
        counts_text = ", ".join("%s %d" % kv for kv in sorted(result.refused_by_stage().items()))
        raise TuneError("search %s on %s: every candidate was refused (%s)" % (tunable.name, arch, counts_text),
                        notes=[(None, "%s at %s: %s: %s" % (Config(r.knobs), r.shape, r.stage, r.reason))
                               for r in result.refusals[:3]])
    return result


def _choices(tunable, shapes, described, configs, records, default, min_gain=1.0):
    """{bucket: Choice}: per bucket the candidate of least total time over its shapes (today's
    choice, where it competes, unless that one is min_gain times faster)."""
    buckets = {}
    for i, s in enumerate(shapes):
        buckets.setdefault(tunable.bucket(s), []).append(i)
    choices = {}
    for bucket, indices in buckets.items():
        def total(c):
            rs = [records.get((c, i)) for i in indices]
            if any(r is None or r.get("status") != "ok" for r in rs):
                return None
            return sum(r["seconds"] for r in rs)

        timed = [(total(c), n, c) for n, c in enumerate(configs) if total(c) is not None]
        if not timed:
            continue
        seconds, _, best = min(timed)
        reference = total(default) if default is not None else None
        if default in configs and reference is not None and seconds * min_gain > reference:
            seconds, best = reference, default
        choices[bucket] = Choice(bucket, best.as_dict(), seconds, reference, [described[i] for i in indices])
    return choices
