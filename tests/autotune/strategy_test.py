"""The search strategies on a made-up cost: exhaustive evaluates every candidate a batch at a
time; the pattern search finds the optimum of a bowl in fewer evaluations, restarts past a
local optimum, and stops at its effort and at the wall-time budget."""

import time

import pytest

import hk
from hk.autotune import strategy
from hk.errors import TuneError

SPACE = hk.space(x=list(range(10)), y=list(range(10)))


def counting(cost):
    calls = []

    def evaluate(configs):
        calls.append(list(configs))
        return {c: cost(c) for c in configs}

    return evaluate, calls


def best_of(walk):
    return min((c for c, s in walk.scores.items() if s is not None), key=walk.scores.get)


def test_exhaustive_evaluates_each_candidate_once_in_batches():
    evaluate, calls = counting(lambda c: c.x + c.y)
    walk = strategy.Walk(evaluate)
    strategy.exhaustive(walk, SPACE.candidates(), batch_size=8)
    assert len(walk.scores) == 100 and sum(len(b) for b in calls) == 100
    assert max(len(b) for b in calls) == 8


def test_pattern_search_finds_a_bowls_bottom_in_fewer_evaluations():
    evaluate, calls = counting(lambda c: (c.x - 6) ** 2 + (c.y - 3) ** 2 + 1.0)
    walk = strategy.Walk(evaluate, max_evaluations=60)
    candidates = SPACE.candidates()
    start = candidates[0]
    strategy.pattern(walk, SPACE, start, candidates)
    best = best_of(walk)
    assert (best.x, best.y) == (6, 3)
    assert len(walk.scores) <= 60 < 100


def test_pattern_search_restarts_past_a_local_optimum_within_its_effort():
    # Two basins: a shallow one at the start, the deep one far away.
    def cost(c):
        return min((c.x - 1) ** 2 + (c.y - 1) ** 2 + 5.0, (c.x - 8) ** 2 + (c.y - 8) ** 2 + 1.0)

    evaluate, _ = counting(cost)
    walk = strategy.Walk(evaluate, max_evaluations=100)
    candidates = SPACE.candidates()
    strategy.pattern(walk, SPACE, [c for c in candidates if (c.x, c.y) == (1, 1)][0], candidates, seed=1)
    best = best_of(walk)
    assert (best.x, best.y) == (8, 8)


def test_refused_candidates_score_none_and_are_walked_around():
    evaluate, _ = counting(lambda c: None if c.x == 5 else abs(c.x - 7) + abs(c.y - 2) + 1.0)
    walk = strategy.Walk(evaluate, max_evaluations=100)
    candidates = SPACE.candidates()
    strategy.pattern(walk, SPACE, candidates[0], candidates)
    best = best_of(walk)
    assert (best.x, best.y) == (7, 2)


def test_effort_caps_the_evaluations():
    evaluate, _ = counting(lambda c: float(c.x + c.y))
    walk = strategy.Walk(evaluate, max_evaluations=5)
    candidates = SPACE.candidates()
    strategy.pattern(walk, SPACE, candidates[-1], candidates)
    assert len(walk.scores) == 5 and walk.stopped == "effort"


def test_the_budget_stops_between_batches():
    def slow(configs):
        time.sleep(0.05)
        return {c: 1.0 for c in configs}

    walk = strategy.Walk(slow, budget_s=0.12)
    strategy.exhaustive(walk, SPACE.candidates(), batch_size=4)
    assert walk.stopped == "budget" and 4 <= len(walk.scores) <= 16


def test_effort_levels():
    assert strategy.limits("low") < strategy.limits("high")
    with pytest.raises(TuneError, match="effort is one of"):
        strategy.limits("max")


def test_a_warm_start_begins_at_the_best_of_the_starts():
    # Today's choice far from the bowl's bottom; a start given next to it (another bucket's choice).
    evaluate, calls = counting(lambda c: (c.x - 8) ** 2 + (c.y - 8) ** 2 + 1.0)
    candidates = SPACE.candidates()
    at = {(c.x, c.y): c for c in candidates}
    walk = strategy.Walk(evaluate, max_evaluations=8)
    strategy.pattern(walk, SPACE, at[0, 0], candidates, starts=[at[9, 0], at[7, 8], at[0, 0]])
    assert calls[0] == [at[0, 0], at[9, 0], at[7, 8]]  # one batch, today's first, no repeat
    assert (best_of(walk).x, best_of(walk).y) == (8, 8) and len(walk.scores) <= 8
    # Cold, the same effort does not get there.
    cold = strategy.Walk(counting(lambda c: (c.x - 8) ** 2 + (c.y - 8) ** 2 + 1.0)[0], max_evaluations=8)
    strategy.pattern(cold, SPACE, at[0, 0], candidates)
    assert (best_of(cold).x, best_of(cold).y) != (8, 8)


def test_refused_starts_are_passed_over():
    evaluate, _ = counting(lambda c: None if c.x >= 7 else abs(c.x - 5) + abs(c.y - 5) + 1.0)
    candidates = SPACE.candidates()
    at = {(c.x, c.y): c for c in candidates}
    walk = strategy.Walk(evaluate, max_evaluations=30)
    strategy.pattern(walk, SPACE, at[9, 9], candidates, starts=[at[8, 5], at[4, 5]])
    assert (best_of(walk).x, best_of(walk).y) == (5, 5)
