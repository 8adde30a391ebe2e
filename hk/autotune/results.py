"""The result cache: one entry per candidate and shape, so that a search evaluates only what no
search has evaluated before (a knob value added re-evaluates the new candidates alone; a second
search of the same space reads everything).

The key covers the kernel's sources (Tunable.source_digest), the candidate's knob values, the
target and the evaluator (the device predicted or timed), the compiler's digest, the model's
version and the shape (which names its bucket). A refusal is a result too: the same compiler
refuses the same candidate again.

Entries are written as the compile cache writes code objects, through a staged file and a
rename, so a concurrent search never reads a partial one; two searches that evaluate the same
candidate at once both write the same result. Each entry carries its own digest: a damaged one
(truncated, edited) is evaluated again, with a warning, never read.

    $HK_CACHE_DIR/tune/<k[:2]>/<k>.json
"""

import hashlib
import json
import os

from hk import errors
from hk.runtime import cache, paths

FORMAT = 1


def root():
    return os.path.join(paths.cache_base(), "tune")


def key(source_digest, config, target, compiler_digest, model_version, shape):
    """The key of one candidate's result at one shape (config: a Config or a dict)."""
    knobs = json.dumps(sorted(dict(config.items() if hasattr(config, "items") else config).items()))
    digest = hashlib.sha256()
    for part in ("format %d" % FORMAT, source_digest, knobs, target, compiler_digest, model_version, shape):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def _path(k):
    return os.path.join(root(), k[:2], k + ".json")


def _digest(k, record):
    return hashlib.sha256((k + "\0" + json.dumps(record, sort_keys=True)).encode()).hexdigest()


def get(k):
    """The record stored under `k`, or None (absent, or damaged: then with a warning)."""
    path = _path(k)
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        errors.warn("the cached tuning result %s is unreadable (%s); evaluating the candidate again"
                    % (path, e.strerror))
        return None
    try:
        entry = json.loads(text)
        record = entry["record"]
        if entry.get("key") != k or entry.get("sha256") != _digest(k, record):
            raise ValueError("its digest does not match")
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        errors.warn("the cached tuning result %s is damaged (%s); evaluating the candidate again" % (path, e))
        return None
    return record


def put(k, record):
    """Stores `record` (a JSON-able dict) under `k`, atomically."""
    path = _path(k)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    entry = {"key": k, "record": record, "sha256": _digest(k, record)}
    cache.write_atomically(path, (json.dumps(entry, sort_keys=True) + "\n").encode())
