"""Evaluating candidates: each traced, verified, compiled and gated as a launch builds it
(Kernel.build, the one compile path through the compile cache), then predicted by hk.perf or,
on a GPU, timed. Candidates run in forked worker processes; a refusal is a result that names
its stage and reason.

A result is a record (JSON-able): {"status": "ok", "seconds", "bound", "percent_of_peak",
"device", "error"} or {"status": "refused", "stage", "reason"}.
"""

import concurrent.futures
import dataclasses
import multiprocessing
import warnings

from hk.autotune import results
from hk.errors import (CompileError, HKError, HKWarning, LaunchError, ResourceError, ToolchainError,
                       TraceError, TuneError, VerifyError)

# The stage each kind of refusal happens at, most specific first.
_STAGES = ((TraceError, "trace"), (VerifyError, "verify"), (CompileError, "compile"),
           (ResourceError, "gate"), (LaunchError, "launch"), (TuneError, "declare"))


def stage_of(error):
    for cls, stage in _STAGES:
        if isinstance(error, cls):
            return stage
    if isinstance(error, HKError) and type(error).__module__.startswith("hk.perf"):
        return "model"
    return "refused"


def _refused(stage, error):
    text = getattr(error, "message", None) or str(error)
    hint = getattr(error, "hint", None)
    if hint:
        text += " (hint: %s)" % hint
    record = {"status": "refused", "stage": stage, "reason": text.strip()[:600]}
    cause = error.__cause__
    if cause is not None and not isinstance(cause, HKError):
        # hk wrapped a foreign exception (an import that failed, a bug): it may not recur, so it
        # is reported but never cached.
        record["transient"] = True
    return record


def keep(k, record):
    """Stores a result in the result cache unless it must not outlive this search; whether it
    did."""
    if record.get("transient"):
        return False
    results.put(k, record)
    return True


@dataclasses.dataclass
class Job:
    """One candidate at the shapes whose results are not cached: [(shape, cache key)]."""

    tunable: object
    config: object
    arch: str
    shapes: list
    evaluator: str        # "model" or "time"
    device: object = None  # the device hk.perf predicts (None: the arch's)


def _launches(job, shape):
    """([Launch] of the job's candidate at `shape`, None), or (None, a refusal record)."""
    try:
        return job.tunable.launches_of(job.config, shape), None
    except ToolchainError:
        raise
    except HKError as e:
        return None, _refused(stage_of(e), e)
    except (ValueError, TypeError) as e:  # a factory refusing a knob's value
        return None, _refused("declare", e)


def _ok(predictions):
    """The record of a candidate's predicted launches: their times summed; the bound and percent
    of peak of the longest; the largest stated error. A candidate of several launches also
    records each one's time ("launches")."""
    slowest = max(predictions, key=lambda p: p.seconds)
    errors = [p.error for p in predictions if p.error is not None]
    record = {"status": "ok", "seconds": sum(p.seconds for p in predictions), "bound": slowest.bound,
              "percent_of_peak": round(slowest.percent_of_peak, 2), "device": slowest.device,
              "error": max(errors) if errors else None}
    if len(predictions) > 1:
        record["launches"] = [p.seconds for p in predictions]
    return record


def _each_shape(job, step):
    """[(key, record)] of a job: `step(launches)` at each shape whose launches the candidate
    makes, its HKError (other than the toolchain's) recorded as the refusal of the stage that
    raised it."""
    out = []
    for shape, k in job.shapes:
        made, refusal = _launches(job, shape)
        if refusal is not None:
            out.append((k, refusal))
            continue
        try:
            out.append((k, step(made)))
        except ToolchainError:
            raise
        except HKError as e:
            out.append((k, _refused(stage_of(e), e)))
    return out


def predict(job):
    """[(key, record)] of a job, each shape's launches predicted by hk.perf (each built as a
    launch builds it) and their times summed."""
    from hk import perf

    out = _each_shape(job, lambda made: _ok([
        perf.predict(x.kernel, *x.args, arch=job.arch, device=job.device, **x.constants) for x in made]))
    for k, record in out:
        keep(k, record)
    return out


def build(job):
    """[(key, refusal record or None)] of a job: each shape's launches built and gated, not run
    (the timed evaluator builds in the workers and times in the process that owns the GPU)."""
    from hk.runtime import launch

    def gated(made):
        for x in made:
            launch.built(x.kernel, list(x.args), job.arch, x.constants)
        return None

    return _each_shape(job, gated)


def time(job, clock=None, tensor_device="cuda"):
    """[(key, record)] of a job timed on the GPU (hk.autotune.timing), after build(): a
    candidate's launches run in order as one timed unit. `clock` and `tensor_device` stand in
    for the GPU's in the tests."""
    from hk.autotune import timing

    out = []
    for (shape, k), (_, record) in zip(job.shapes, build(job)):
        if record is None:  # built and gated: time it
            made = job.tunable.launches_of(job.config, shape)
            args = timing.materialize_launches([x.args for x in made], device=tensor_device)

            def run(made=made, args=args):
                for x, a in zip(made, args):
                    x.kernel(*a, arch=job.arch, **x.constants)

            seconds = timing.measure(run, clock=clock)
            record = {"status": "ok", "seconds": seconds, "bound": "measured", "percent_of_peak": None,
                      "device": _gpu_name(), "error": None}
        out.append((k, record))
        keep(k, record)
    return out


def _gpu_name():
    import torch

    try:
        return torch.cuda.get_device_name(0)
    except (RuntimeError, AssertionError):
        return "gpu"


def _parts(jobs, workers):
    """The work of a run as [(job index, shape indices, job)], in the order workers take it:
    whole jobs first (a worker reuses the candidate it traced, built and decoded at its other
    shapes), then the last 2 x workers jobs cut into their shapes, each of them at its first
    shape, then at its second..., so that the workers build different candidates at once and
    the last results to come in are one prediction each, not a candidate's whole list: every
    worker stays busy until nearly the end (and a batch of one candidate uses them all)."""
    whole = max(0, len(jobs) - 2 * workers)
    out = [(i, list(range(len(job.shapes))), job) for i, job in enumerate(jobs[:whole])]
    for s in range(max((len(j.shapes) for j in jobs[whole:]), default=0)):
        for i, job in enumerate(jobs[whole:], whole):
            if s < len(job.shapes):
                out.append((i, [s], dataclasses.replace(job, shapes=[job.shapes[s]])))
    return out


# The jobs of a run in progress: forked workers inherit them and are sent an index (a job holds
# the user's functions, which need not pickle).
_JOBS = []


def _in_worker(index):
    job = _JOBS[index]
    # A candidate's tracing warnings (registers near the budget, say) would repeat for every
    # candidate: what counts is whether the gates pass it, which the result says.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HKWarning)
        return build(job) if job.evaluator == "time" else predict(job)


def run(jobs, workers=1, done=None):
    """Each job's [(key, record)], in order. Workers > 1: in forked processes (the compile cache
    and the result cache are safe under concurrent writers), the last jobs a shape at a time
    (_parts); done(job) after each job's last shape. A record does not depend on the process
    that makes it nor on what that process made before."""
    outcomes = [None] * len(jobs)
    parts = _parts(jobs, workers) if workers > 1 else []
    try:
        if len(parts) > 1:
            _JOBS[:] = [job for _, _, job in parts]
            per_job = [[None] * len(job.shapes) for job in jobs]
            left = [len(job.shapes) for job in jobs]
            context = multiprocessing.get_context("fork")  # workers inherit the loaded kernels
            with concurrent.futures.ProcessPoolExecutor(min(workers, len(parts)), mp_context=context) as pool:
                futures = {pool.submit(_in_worker, n): n for n in range(len(parts))}
                for future in concurrent.futures.as_completed(futures):
                    i, shapes, _ = parts[futures[future]]
                    for s, result in zip(shapes, future.result()):
                        per_job[i][s] = result
                    left[i] -= len(shapes)
                    if not left[i]:
                        outcomes[i] = per_job[i]
                        if done:
                            done(jobs[i])
        else:
            _JOBS[:] = jobs
            for i in range(len(jobs)):
                outcomes[i] = _in_worker(i)
                if done:
                    done(jobs[i])
    finally:
        _JOBS.clear()
    for i, job in enumerate(jobs):
        if job.evaluator == "time":  # the GPU belongs to this process: time what the workers built
            outcomes[i] = time(job)
    return outcomes
