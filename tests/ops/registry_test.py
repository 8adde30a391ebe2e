"""hk.ops.registry.define's registration through torch's dispatcher, on ops that do no more than
record their calls: what it returns, the tensors an op writes (schema, version counter,
functionalization under torch.compile), a call whose inputs require grad (it runs; a backward
through it is an hk error), fake tensors (the redispatch below autograd)."""

import pytest
import torch

from hk.errors import LaunchError
from hk.ops import registry

CALLS = []


def _scale(x, factor):
    CALLS.append("scale")
    return x * factor


def _scale_out(out, x, factor):
    CALLS.append("scale_out")
    out.copy_(x * factor)


SCALE = registry.define("test_registry_scale", "(Tensor x, float factor) -> Tensor", _scale,
                        lambda x, factor: torch.empty_like(x))
SCALE_OUT = registry.define("test_registry_scale_out", "(Tensor(a!) out, Tensor x, float factor) -> ()", _scale_out,
                            lambda out, x, factor: None, mutates=("out",))


@pytest.fixture(autouse=True)
def calls():
    CALLS.clear()
    yield CALLS


def test_define_returns_the_overload():
    assert SCALE is torch.ops.hk.test_registry_scale.default
    x = torch.arange(6.0).view(2, 3)
    torch.testing.assert_close(SCALE(x, 2), x * 2)  # an int for a float: the schema converts it
    torch.testing.assert_close(torch.ops.hk.test_registry_scale(x, factor=3.0), x * 3)
    assert CALLS == ["scale", "scale"]


def test_mutates_must_match_the_schema():
    with pytest.raises(AssertionError, match="the schema writes"):
        registry.define("test_registry_mismatch", "(Tensor(a!) out, Tensor x) -> ()", _scale_out,
                        lambda out, x: None, mutates=())
    assert not hasattr(torch.ops.hk, "test_registry_mismatch")  # refused before it is defined


def test_an_out_op_bumps_the_version_of_what_it_writes():
    x, out = torch.ones(4), torch.empty(4)
    written = out._version
    assert SCALE_OUT(out, x, 2.0) is None
    torch.testing.assert_close(out, x * 2)
    # copy_ bumped once, the op's own kernel once more: what autograd's saved-tensor check reads
    assert out._version == written + 2
    before = x._version
    SCALE_OUT(out, x, 2.0)
    assert x._version == before  # what it only reads is left alone


def test_a_backward_through_an_op_is_an_hk_error():
    x = torch.ones(3, requires_grad=True)
    y = SCALE(x, 2.0)
    assert y.requires_grad and CALLS == ["scale"]
    torch.testing.assert_close(y.detach(), torch.full((3,), 2.0))
    with pytest.raises(LaunchError, match="hk.ops.test_registry_scale has no autograd formula"):
        y.sum().backward()
    with torch.no_grad():
        assert not SCALE(x, 2.0).requires_grad


def test_fake_tensors_take_the_fake():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode() as mode:
        y = SCALE(mode.from_tensor(torch.ones(5, 2)), 2.0)
    assert y.shape == (5, 2) and CALLS == []


def test_opcheck_and_compile():
    x = torch.randn(4, 8)
    torch.library.opcheck(SCALE, (x, 2.0))
    torch.library.opcheck(SCALE_OUT, (torch.empty(4, 8), x, 2.0))

    def block(x):
        out = torch.empty_like(x)
        SCALE_OUT(out, x, 3.0)
        return SCALE(x, 2.0) + out

    torch.testing.assert_close(torch.compile(block, fullgraph=True, backend="aot_eager")(x), x * 5)
