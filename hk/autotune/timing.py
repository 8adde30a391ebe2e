"""Timing a launch on a GPU, where one is present: warm-up runs, the L2 flushed before each
timed run, events recorded on the launch's stream around it, the median of the runs.

    seconds = timing.measure(lambda: kernel(a, b, c), warmup=10, runs=50)

The clock is a parameter (`clock=`): on a GPU, StreamEvents; the tests drive the same loop with
a clock of their own, since no machine of the project's CI has a GPU.
"""

import statistics

# Bigger than the L2 (and the Infinity Cache) of every target's devices: writing it evicts what
# a previous run left there.
FLUSH_BYTES = 512 << 20


class StreamEvents:
    """The GPU's clock: events recorded on torch's current stream; elapsed times once the runs
    are synchronized."""

    def __init__(self):
        import torch

        self._torch = torch
        self._flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")

    def flush(self):
        self._flush.zero_()

    def start(self):
        event = self._torch.cuda.Event(enable_timing=True)
        event.record()
        return event

    def stop(self, started):
        event = self._torch.cuda.Event(enable_timing=True)
        event.record()
        return started, event

    def seconds(self, marks):
        self._torch.cuda.synchronize()
        return [begin.elapsed_time(end) / 1e3 for begin, end in marks]


def measure(fn, *, warmup=10, runs=50, clock=None):
    """The median time in seconds of `fn()` over `runs` runs after `warmup` (L2 flushed before
    each timed run; each run bracketed by the clock's marks)."""
    if runs < 1 or warmup < 0:
        raise ValueError("runs >= 1 and warmup >= 0, not %r and %r" % (runs, warmup))
    clock = clock or StreamEvents()
    for _ in range(warmup):
        fn()
    marks = []
    for _ in range(runs):
        clock.flush()
        started = clock.start()
        fn()
        marks.append(clock.stop(started))
    return statistics.median(clock.seconds(marks))


def materialize(args, device="cuda", seed=0):
    """The launch's arguments on `device`: each meta tensor a tensor of its shape and strides
    there (floats drawn normal, integers zero), everything else as it is."""
    return materialize_launches([args], device=device, seed=seed, move=False)[0]


def materialize_launches(arguments, device="cuda", seed=0, move=True):
    """The arguments of a sequence of launches ([args] each) on `device`, as materialize makes
    them: a tensor two launches share (the split-K parts one writes and the next sums) stays one
    tensor, and (`move`) a host tensor whose values steer the kernels (a MoE layer's sorted
    ids) is copied there."""
    import torch

    generator = torch.Generator(device="cpu").manual_seed(seed)
    made = {}  # id of a given tensor -> its tensor on the device

    def real(a):
        if not isinstance(a, torch.Tensor) or (a.device.type != "meta" and not move):
            return a
        if id(a) not in made:
            if a.device.type == "meta":
                t = torch.empty_strided(a.shape, a.stride(), dtype=a.dtype, device=device)
                if t.is_floating_point():
                    t.copy_(torch.randn(t.shape, generator=generator).to(t.dtype))
                else:
                    t.zero_()
            else:
                t = a.to(device)
            made[id(a)] = t
        return made[id(a)]

    return [[real(a) for a in args] for args in arguments]
