"""The GPU timing loop, driven by a clock of the test's own (no GPU here): warm-up runs untimed,
the L2 flushed before every timed run, each run between its marks, the median returned; and the
launch's meta tensors made real with their shapes and strides."""

import pytest
import torch

from hk.autotune import timing


class FakeClock:
    """Records what the loop does; the n-th timed run takes durations[n] seconds."""

    def __init__(self, durations):
        self.durations = list(durations)
        self.log = []

    def flush(self):
        self.log.append("flush")

    def start(self):
        self.log.append("start")
        return len([e for e in self.log if e == "start"]) - 1

    def stop(self, started):
        self.log.append("stop")
        return started

    def seconds(self, marks):
        return [self.durations[m] for m in marks]


def test_warmup_flush_marks_and_median():
    calls = []
    clock = FakeClock([5.0, 1.0, 3.0, 100.0, 2.0])
    median = timing.measure(lambda: calls.append(1), warmup=3, runs=5, clock=clock)
    assert median == 3.0                       # an outlier does not move the median
    assert len(calls) == 8                     # 3 warm-up runs + 5 timed
    assert clock.log == ["flush", "start", "stop"] * 5
    with pytest.raises(ValueError):
        timing.measure(lambda: None, runs=0, clock=clock)


def test_materialize_keeps_shapes_strides_and_dtypes():
    padded = torch.empty_strided((4, 8), (16, 1), dtype=torch.bfloat16, device="meta")
    ints = torch.empty(5, dtype=torch.int32, device="meta")
    out = timing.materialize([padded, ints, 3, 0.5], device="cpu")
    assert out[0].device.type == "cpu" and out[0].shape == (4, 8) and out[0].stride() == (16, 1)
    assert out[0].dtype == torch.bfloat16 and out[0].abs().sum() > 0
    assert out[1].dtype == torch.int32 and int(out[1].abs().sum()) == 0
    assert out[2:] == [3, 0.5]
    again = timing.materialize([padded], device="cpu")
    assert torch.equal(out[0], again[0])       # the same draws each time: candidates see the same data


def test_launches_share_a_tensor_and_host_tensors_move():
    # Split-K's parts: written by the first launch, summed by the second: one tensor in both.
    a = torch.empty(2, 8, dtype=torch.bfloat16, device="meta")
    parts = torch.empty(4, 2, 8, dtype=torch.float32, device="meta")
    ids = torch.arange(6, dtype=torch.int32)
    first, second = timing.materialize_launches([[a, parts, ids, 3], [parts, ids]], device="cpu")
    assert second[0] is first[1] and first[1].shape == (4, 2, 8) and first[0] is not first[1]
    assert torch.equal(first[2], ids) and second[1] is first[2] and first[3] == 3
    assert not (first[0] == 0).all()           # floats drawn, not left empty
