"""A seeded few hundred programs of the DSL fuzzer (dsl_fuzz.py): every valid one agrees between
the interpreter and the emulator on gfx1100 and gfx950, every invalid one ends in an hk error
at the generated file's bad line."""

import os

from tests.fuzz import dsl_fuzz


def test_a_seeded_run_finds_nothing(tmp_path):
    lines = []
    valid, invalid, findings = dsl_fuzz.fuzz(count=300, seed=2026, valid_share=20 / 300,
                                             archs=["gfx1100", "gfx950"], batch=20, out=str(tmp_path),
                                             report=lines.append)
    assert findings == []
    # The run tested something: programs agreed, wrote their outputs, and errors were located.
    assert valid["agree"] >= 17 and valid["writing"] >= 12
    assert invalid["located"] == 280
    assert len([k for k in invalid if k != "located"]) >= 40  # distinct mutations that ran
    assert len(os.listdir(tmp_path)) >= 300  # every program kept as a file
