"""What the tests of tuned ops share: a private compile cache and no tuned file, runner, target or
HK_AUTOTUNE from the environment (`env`, an autouse fixture: import it); a tuned file written for
a test and pointed at (HK_TUNED), with the runner and target its launches are for; and a block in
which any hk warning fails the test."""

import contextlib
import warnings

import pytest

from hk import tuned
from hk.errors import HKWarning


@pytest.fixture(autouse=True)
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("HK_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("HK_DEVICE", "HK_AUTOTUNE", "HK_TUNED", "HK_ARCH"):
        monkeypatch.delenv(name, raising=False)
    tuned.forget()
    yield
    tuned.forget()


def use(op, entries, monkeypatch, tmp_path, arch="gfx1100", device="interp"):
    """Records {bucket: entry} of `op` in a tuned file for `arch` under tmp_path and launches
    with it on `device` as `arch`."""
    path = tmp_path / (arch + ".json")
    tuned.write(str(path), arch, op, entries)
    point(path, arch, monkeypatch, device)


def point(path, arch, monkeypatch, device="interp"):
    """Launches with the tuned file `path` on `device` as `arch` (what was read is forgotten)."""
    monkeypatch.setenv("HK_TUNED", str(path))
    monkeypatch.setenv("HK_DEVICE", device)
    monkeypatch.setenv("HK_ARCH", arch)
    tuned.forget()


@contextlib.contextmanager
def quiet():
    """A block in which any hk warning fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", HKWarning)
        yield
