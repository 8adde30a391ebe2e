"""hk.tuned: the choices a search made, shipped as data and read by hk.ops at launch.

hk/tuned/<arch>.json holds, per op and shape bucket, the knobs chosen, their time (predicted by
hk.perf, or measured), today's default's time at the same shapes, and where the figure comes
from (the model's version and stated error, or the device measured; the date):

    {"format": 1, "hk_version": "0.1.0", "arch": "gfx1100",
     "ops": {"linear": {"bf16 N=4096 K=4096 M=2049-4096": {
         "knobs": {"waves": 4, "BM": 128, ...}, "seconds": ..., "default_seconds": ..., "gain": ...,
         "shapes": [...], "evaluator": "model", "model": "0.1.0+...", "device": "W7900",
         "error": 0.05, "date": "2026-12-02"}}}}

A launch looks its bucket up (a dict lookup once the file is read). A file written by another
hk version, for another target, or that does not parse is ignored with one warning, and every
launch takes its default; so is a tuned choice that fails to trace, compile or pass the gates
(hk.ops calls `refuse`). HK_TUNED names another file (or a directory of <arch>.json files);
HK_AUTOTUNE=1 searches a bucket that has no entry when a launch first meets it (the result
cache keeps what it finds for the next process).
"""

import datetime
import json
import os

import hk
from hk import errors

FORMAT = 1
_DIR = os.path.dirname(os.path.abspath(__file__))

_tables = {}    # (path, arch) -> {op: {bucket: entry}}
_chosen = {}    # (op, bucket, arch, HK_TUNED) -> knobs or None
_buckets = {}   # (op, shape, arch, HK_TUNED) -> its key in _chosen: a launch computes no bucket
MAX_SHAPES = 4096  # the shapes _buckets remembers (a server meets a new M at every batch size)
# Counts forget() and refuse(): what an op remembers of a launch's choice is valid in one generation.
generation = 0


def path_for(arch):
    """The tuned file a launch on `arch` reads: HK_TUNED (a file, or a directory holding
    <arch>.json), else the one shipped in hk/tuned."""
    override = os.environ.get("HK_TUNED")
    if override:
        return os.path.join(override, arch + ".json") if os.path.isdir(override) else override
    return os.path.join(_DIR, arch + ".json")


def _ignored(path, why):
    errors.warn("the tuned choices in %s are ignored: %s; launches take their default choices" % (path, why))
    return {}


def entries(path, arch):
    """{op: {bucket: entry}} of the tuned file `path` for `arch`, {} (with one warning) when it
    cannot be used: what a launch finds in it."""
    try:
        with open(path) as f:
            raw = json.load(f)
    except FileNotFoundError:
        return _ignored(path, "there is no such file") if os.environ.get("HK_TUNED") else {}
    except OSError as e:
        return _ignored(path, "it cannot be read (%s)" % e.strerror)
    except ValueError as e:
        return _ignored(path, "it is not JSON (%s)" % e)
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        return _ignored(path, "its format is %r, this hk reads %d" % (
            raw.get("format") if isinstance(raw, dict) else None, FORMAT))
    if raw.get("hk_version") != hk.__version__:
        return _ignored(path, "it was written by hk %s, this is hk %s (tune again with hk-tune)"
                        % (raw.get("hk_version"), hk.__version__))
    if raw.get("arch") != arch:
        return _ignored(path, "it holds the choices of %s, not %s" % (raw.get("arch"), arch))
    ops = raw.get("ops")
    if not isinstance(ops, dict) or not all(isinstance(v, dict) for v in ops.values()):
        return _ignored(path, "its \"ops\" is not an object of op -> {bucket: entry}")
    return ops


def table(arch):
    """{op: {bucket: entry}} of the tuned file a launch on `arch` reads (read once)."""
    path = path_for(arch)
    found = _tables.get((path, arch))
    if found is None:
        found = _tables[path, arch] = entries(path, arch)
    return found


def lookup(tunable, shape, arch):
    """The tuned knobs ({knob: value}) of `tunable` at `shape` on `arch`, or None: take the
    default. The first call per bucket reads and checks; later ones are a dict lookup (of the
    shape, then of its bucket's choice, which refuse() may have changed). HK_TUNED is read at
    each call: a change takes effect at the next launch."""
    fast = (tunable.name, shape, arch, os.environ.get("HK_TUNED"))
    try:
        return _chosen[_buckets[fast]]
    except (KeyError, TypeError):  # TypeError: a shape that is no key
        pass
    key = (tunable.name, tunable.bucket(shape), arch, fast[3])
    try:
        knobs = _chosen[key]
    except KeyError:
        knobs = _chosen[key] = _resolve(tunable, shape, arch, key[1])
    try:
        if len(_buckets) >= MAX_SHAPES:
            _buckets.clear()
        _buckets[fast] = key
    except TypeError:
        pass
    return knobs


def _resolve(tunable, shape, arch, bucket):
    entry = table(arch).get(tunable.name, {}).get(bucket)
    if entry is None:
        return _autotune(tunable, shape, arch, bucket) if os.environ.get("HK_AUTOTUNE") == "1" else None
    knobs = entry.get("knobs") if isinstance(entry, dict) else None
    if not isinstance(knobs, dict):
        errors.warn("the tuned choice of %s at %s on %s has no knobs; using the default" % (tunable.name, bucket, arch))
        return None
    unknown = set(knobs) - set(tunable.knobs)
    if unknown:
        errors.warn("the tuned choice of %s at %s on %s sets %s, which %s does not take; using the default"
                    % (tunable.name, bucket, arch, ", ".join(sorted(unknown)), tunable.name))
        return None
    return dict(knobs)


def _autotune(tunable, shape, arch, bucket):
    """HK_AUTOTUNE=1: the best candidate a quick search finds at this shape (None, with a
    warning, when the search fails)."""
    from hk.autotune import searching

    try:
        result = searching.search(tunable, [shape], arch, effort="low")
    except errors.HKError as e:
        errors.warn("HK_AUTOTUNE: searching %s at %s on %s failed (%s); using the default"
                    % (tunable.name, bucket, arch, e.message))
        return None
    choice = result.choices.get(bucket)
    return dict(choice.knobs) if choice else None


def launch_arch():
    """The target a launch runs for now (hk.dsl.kernel.launch_arch), or None when there is no
    runner: then the launch itself says why."""
    global _kernel_launch_arch
    if _kernel_launch_arch is None:  # imported at the first launch: hk.dsl imports this module
        from hk.dsl.kernel import launch_arch as _kernel_launch_arch
    try:
        return _kernel_launch_arch()
    except errors.LaunchError:
        return None


_kernel_launch_arch = None


def launch(tunable, shape, run, arch=None):
    """run(knobs) with the tuned knobs of `shape`'s bucket on the launch's target (`arch`, if the
    caller has asked launch_arch()), else run(None) (the default). A tuned choice that fails to
    trace, compile or pass the gates is refused (one warning) and the default runs; a
    LaunchError (the call's own arguments) or a ToolchainError (no compiler) is the caller's."""
    arch = arch or launch_arch()
    knobs = lookup(tunable, shape, arch) if arch else None
    if knobs is not None:
        try:
            return run(knobs)
        except (errors.LaunchError, errors.ToolchainError):
            raise
        except (errors.HKError, ValueError) as e:
            refuse(tunable, shape, arch, e)
    return run(None)


def refuse(tunable, shape, arch, error):
    """Forgets the tuned choice of the call's bucket after it failed to build (`error`), with one
    warning: the launches of that bucket take the default from now on."""
    key = (tunable.name, tunable.bucket(shape), arch, os.environ.get("HK_TUNED"))
    errors.warn("the tuned choice of %s at %s on %s (%s) is refused: %s; using the default"
                % (tunable.name, key[1], arch, _knobs_text(_chosen.get(key)),
                   (getattr(error, "message", None) or str(error)).splitlines()[0]))
    _chosen[key] = None
    global generation
    generation += 1


def _knobs_text(knobs):
    return ", ".join("%s=%r" % kv for kv in (knobs or {}).items())


def forget():
    """Drops what was read (the next lookup reads the files again)."""
    global generation
    _tables.clear()
    _chosen.clear()
    _buckets.clear()
    generation += 1


def entry_of(choice, result):
    """A tuned file's entry for a search's Choice (hk.autotune.search)."""
    return {
        "knobs": dict(choice.knobs),
        "seconds": choice.seconds,
        "default_seconds": choice.default_seconds,
        "gain": round(choice.gain, 4) if choice.gain else None,
        "shapes": list(choice.shapes),
        "evaluator": result.evaluator,
        "model": result.model_version,
        "device": result.device,
        "error": result.error,
        "date": datetime.date.today().isoformat(),
    }


def write(path, arch, op, entries):
    """Records `entries` ({bucket: entry}) of `op` in the tuned file `path` for `arch`, keeping
    its other entries when it is a file of this hk version and target (written atomically)."""
    from hk.runtime import cache

    raw = None
    if os.path.exists(path):
        try:
            with open(path) as f:
                raw = json.load(f)
        except ValueError:
            raw = None
    if not (isinstance(raw, dict) and raw.get("format") == FORMAT and raw.get("hk_version") == hk.__version__
            and raw.get("arch") == arch and isinstance(raw.get("ops"), dict)):
        raw = {"format": FORMAT, "hk_version": hk.__version__, "arch": arch, "ops": {}}
    raw["ops"].setdefault(op, {}).update(entries)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    cache.write_atomically(path, (json.dumps(raw, indent=1, sort_keys=True) + "\n").encode())
    forget()
