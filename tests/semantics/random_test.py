"""Random kernels (the DSL fuzzer's generator) on the interpreter and, compiled, on the emulator
for gfx1100 and gfx950, compared bit for bit where the generator knows both must agree exactly
(integers, data movement, exact float arithmetic, casts) and within rounding elsewhere. Each
focus weights one family of statements: memory at every edge, numbers, control flow."""

import collections

import pytest

from tests.fuzz import harness, programs

FOCUS = {
    "memory": ["load", "vector_load", "scalar_memory", "rows_by_index", "lds", "store"],
    "numbers": ["binary", "cast", "unary", "select", "reduce", "scalar_stmt"],
    "control": ["loop", "branch", "misc", "mma"],
}
PER_FOCUS = 8


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
def test_random_kernels_agree_between_the_interpreter_and_the_emulator(tmp_path, arch):
    group = [programs.generate(1000 * k + seed, "%s_%s_%d" % (arch, focus, seed), focus=statements)
             for k, (focus, statements) in enumerate(sorted(FOCUS.items())) for seed in range(PER_FOCUS)]
    outcomes = harness.run_valid(group, str(tmp_path), [arch])
    status = collections.Counter(o.status for o in outcomes)
    problems = ["%s %s: %s" % (o.program.name, o.status, o.detail) for o in outcomes
                if o.status not in ("agree", "unsupported")]
    assert problems == []
    assert status["agree"] >= len(group) - 2  # an instruction the emulator lacks, at most twice
    assert sum(o.written > 0 for o in outcomes) >= len(group) * 2 // 3  # they wrote something
