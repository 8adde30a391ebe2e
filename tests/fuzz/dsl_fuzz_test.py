"""A seeded few hundred programs of the DSL fuzzer (dsl_fuzz.py): every valid one agrees between
the interpreter and the emulator on gfx1100 and gfx950, every invalid one ends in an hk error
at the generated file's bad line. And what the fuzzer counts (an instruction the emulator lacks
is a finding of its own) and generates (every value it computes is used)."""

import os
import re

from hk.emu.errors import EmuError
from hk.runtime import emu_launch
from tests.fuzz import dsl_fuzz, programs


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


def test_an_instruction_the_emulator_lacks_is_a_finding_and_valid_programs_are_as_many_as_asked(
        tmp_path, monkeypatch):
    # The emulator's own gap is counted as such and listed (not taken for hk refusing the
    # program); 3 valid programs in batches of 2 are 3, not 4.
    def lacks(*args, **kwargs):
        raise EmuError("kernel k, pc 0x100 (v_foo_b16 v0.l, v1.l): the emulator does not implement v_foo_b16")

    monkeypatch.setattr(emu_launch, "run", lacks)
    valid, invalid, findings = dsl_fuzz.fuzz(count=6, seed=2026, valid_share=0.5, archs=["gfx1100"], batch=2,
                                             out=str(tmp_path), report=lambda line: None)
    assert valid["unsupported"] == 3 and valid["refused"] == 0
    assert len(findings) == 3 and all("valid unsupported" in f and "v_foo_b16" in f for f in findings)
    assert invalid["located"] == 3


def test_a_value_a_device_branch_or_loop_rebinds_is_read_after_it():
    # hk refuses a kernel whose load is dead (its wait would never come): a tile rebound in an
    # `if` or a device loop and read nowhere after it made a valid program a refused one.
    rebound = 0
    for seed in range(400):
        body = programs.generate(seed).body
        for k, line in enumerate(body):
            m = re.match(r"^ {8}(\w+) = (.*)$", line)
            if not m or not re.search(r"\b%s\b" % m.group(1), m.group(2)):
                continue
            rebound += 1
            after = [later for later in body[k + 1:] if not later.startswith(" " * 8)]
            assert any(re.search(r"\b%s\b" % m.group(1), later) for later in after), (seed, line)
    assert rebound >= 20
