"""How a search walks its space: every candidate of a small one; a pattern search, bounded by an
effort level and a wall-time budget, through a large one.

Both ask `evaluate(configs)` for a batch at a time (a batch is compiled and evaluated in
parallel) and read back a score per candidate (the geometric mean of its times over the shapes,
None when it was refused at some shape); the search keeps every result, and the best per shape
is chosen from all of them afterwards.

The pattern search starts at the best of today's choice and the other starts it is given (the
choices a tuned file holds at other buckets: a warm start), evaluates its neighbours (one knob
one step away), moves to the best of them while that improves, and when no neighbour does,
restarts from a random candidate not evaluated yet, until the effort's evaluations or the
budget run out.
"""

import random
import time

# effort -> (the largest space searched exhaustively, the evaluations a pattern search may make)
EFFORTS = {"low": (16, 16), "medium": (64, 48), "high": (256, 160)}


def limits(effort):
    from hk.errors import TuneError

    if effort not in EFFORTS:
        raise TuneError("effort is one of %s, not %r" % (", ".join(EFFORTS), effort))
    return EFFORTS[effort]


class Walk:
    """The candidates evaluated so far and their scores, the budget, and why the walk stopped."""

    def __init__(self, evaluate, budget_s=None, max_evaluations=None):
        self.evaluate = evaluate
        self.scores = {}
        self.deadline = None if budget_s is None else time.monotonic() + budget_s
        self.max_evaluations = max_evaluations
        self.stopped = None  # "budget" or "effort" when the walk ended before its strategy did

    def out_of_time(self):
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.stopped = "budget"
            return True
        return False

    def room(self):
        return None if self.max_evaluations is None else self.max_evaluations - len(self.scores)

    def batch(self, configs):
        """Evaluates those of `configs` not yet evaluated (within the effort); their scores."""
        todo = [c for c in dict.fromkeys(configs) if c not in self.scores]
        room = self.room()
        if room is not None and len(todo) > room:
            todo = todo[:max(room, 0)]
            self.stopped = "effort"
        if todo:
            self.scores.update(self.evaluate(todo))
        return {c: self.scores[c] for c in configs if c in self.scores}


def exhaustive(walk, candidates, batch_size):
    """Every candidate, a batch at a time (the budget is checked between batches)."""
    for i in range(0, len(candidates), batch_size):
        if walk.out_of_time():
            return
        walk.batch(candidates[i:i + batch_size])


def _best(scores):
    ok = [(s, i, c) for i, (c, s) in enumerate(scores.items()) if s is not None]
    return min(ok)[2] if ok else None


def pattern(walk, space, start, candidates, seed=0, starts=()):
    """Pattern search from the best of `start` and `starts` (see the module); `candidates` are
    the restarts' pool."""
    rng = random.Random(seed)
    current = _best(walk.batch(list(dict.fromkeys([start] + list(starts)))))
    while not walk.out_of_time() and walk.stopped is None:
        if current is None:  # a start that was refused, or a restart: a random fresh candidate
            fresh = [c for c in candidates if c not in walk.scores]
            if not fresh:
                return
            current = rng.choice(fresh)
            walk.batch([current])
            if walk.scores.get(current) is None:
                current = None
                continue
        scores = walk.batch(space.neighbours(current))
        better = _best({c: s for c, s in scores.items() if s is not None and s < walk.scores[current]})
        if better is not None:
            current = better
        elif all(c in walk.scores for c in candidates):
            return
        else:
            current = None  # a local optimum: restart elsewhere while the effort allows
