"""hk.ops' elementwise ops against torch: the activations, the gated ones of an MLP (vLLM's
silu_and_mul and gelu_tanh_and_mul, out= as vLLM calls them), add and mul; bf16, fp16 and
fp32, ragged, row-strided and one column of any stride, on the interpreter and (each form) on
the emulator for gfx1100 and gfx950; opcheck on every op; every kernel through the gates on
every target."""

import pytest
import torch
import torch.nn.functional as F

import hk
import hk.ops
from hk.errors import LaunchError
from hk.ops import elementwise
from hk.target import facts

TOL = {torch.bfloat16: 1e-2, torch.float16: 2e-3, torch.float32: 1e-5}
ACT = {"silu": F.silu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"), "relu": F.relu}


def close(got, want):
    tol = TOL[want.dtype]
    torch.testing.assert_close(got.float(), want.float(), rtol=tol, atol=tol)


def ref_unary(fn, x):
    return ACT[fn](x.float()).to(x.dtype)


def ref_gated(fn, x):
    d = x.shape[-1] // 2
    return (ACT[fn](x[..., :d].float()) * x[..., d:].float()).to(x.dtype)


def ref_binary(fn, x, y):
    return (x.float() + y.float() if fn == "add" else x.float() * y.float()).to(x.dtype)


def tensor(*shape, dtype, strided=False, seed=0):
    g = torch.Generator().manual_seed(seed)
    if strided:  # rows padded by 64 elements, as vLLM pads weights on gfx11
        return (torch.randn(*shape[:-1], shape[-1] + 64, generator=g) * 3).to(dtype)[..., :shape[-1]]
    return (torch.randn(*shape, generator=g) * 3).to(dtype)


def check_all(x, y, g):
    for fn in elementwise.ACTIVATIONS:
        close(getattr(torch.ops.hk, fn)(x), ref_unary(fn, x))
        out = torch.empty_like(x)
        getattr(torch.ops.hk, fn + "_out")(out, x)
        close(out, ref_unary(fn, x))
        if fn != "relu":
            close(getattr(torch.ops.hk, fn + "_and_mul")(g), ref_gated(fn, g))
            out = torch.empty(g.shape[:-1] + (g.shape[-1] // 2,), dtype=g.dtype)
            getattr(torch.ops.hk, fn + "_and_mul_out")(out, g)
            close(out, ref_gated(fn, g))
    for fn in elementwise.BINARY:
        close(getattr(torch.ops.hk, fn)(x, y), ref_binary(fn, x, y))
        out = torch.empty_like(x)
        getattr(torch.ops.hk, fn + "_out")(out, x, y)
        close(out, ref_binary(fn, x, y))


@pytest.fixture
def interp(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
@pytest.mark.parametrize("shape", [(37, 200), (3, 5, 130), (1, 4096)])
def test_every_op_on_the_interpreter(interp, dtype, shape):
    x, y = tensor(*shape, dtype=dtype), tensor(*shape, dtype=dtype, seed=1)
    g = tensor(*shape[:-1], 2 * shape[-1], dtype=dtype, seed=2)
    check_all(x, y, g)


def test_row_strided_inputs(interp):
    x = tensor(20, 96, dtype=torch.bfloat16, strided=True)
    y = tensor(20, 96, dtype=torch.bfloat16, strided=True, seed=1)
    g = tensor(20, 192, dtype=torch.bfloat16, strided=True, seed=2)
    check_all(x, y, g)


@pytest.mark.parametrize("device", ["interp", "emu"])
def test_one_column_of_any_stride(monkeypatch, device):
    # [37, 1] with strides (1, 37), a transposed row: torch calls it contiguous (a column of one
    # has no stride to speak of), and so does a launch.
    monkeypatch.setenv("HK_DEVICE", device)
    monkeypatch.setenv("HK_ARCH", "gfx1100")
    x = tensor(1, 37, dtype=torch.bfloat16).t()
    y = tensor(1, 37, dtype=torch.bfloat16, seed=1).t()
    assert x.stride() == (1, 37) and x.is_contiguous()
    close(torch.ops.hk.silu(x), ref_unary("silu", x))
    close(torch.ops.hk.add(x, y), ref_binary("add", x, y))


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
def test_each_form_on_the_emulator(monkeypatch, arch):
    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", arch)
    x = tensor(20, 200, dtype=torch.bfloat16, strided=True)
    y = tensor(20, 200, dtype=torch.bfloat16, seed=1)
    g = tensor(20, 400, dtype=torch.bfloat16, seed=2)
    close(torch.ops.hk.gelu_tanh(x), ref_unary("gelu_tanh", x))
    out = torch.empty_like(x)
    torch.ops.hk.silu_and_mul_out(out, g)
    close(out, ref_gated("silu", g))
    close(torch.ops.hk.mul(x, y), ref_binary("mul", x, y))


def test_bad_arguments_are_launch_errors(interp):
    x = torch.randn(4, 64, dtype=torch.bfloat16)
    with pytest.raises(LaunchError, match="the shapes differ"):
        torch.ops.hk.add(x, torch.randn(1, 64, dtype=torch.bfloat16))
    with pytest.raises(LaunchError, match="needs x of"):
        torch.ops.hk.silu_and_mul_out(torch.empty(4, 64, dtype=torch.bfloat16), x)
    with pytest.raises(LaunchError, match="int32 are not supported"):
        torch.ops.hk.relu(torch.ones(4, 4, dtype=torch.int32))
    for op in (torch.ops.hk.silu, torch.ops.hk.silu_and_mul):
        with pytest.raises(LaunchError, match="x is a 0-d tensor; the op works along its last dimension"):
            op(x[0, 0])


def args_of(name):
    x = tensor(16, 96, dtype=torch.bfloat16, seed=3)
    if name.endswith("_and_mul"):
        return (tensor(16, 192, dtype=torch.bfloat16),)
    if name.endswith("_and_mul_out"):
        return (torch.empty_like(x), tensor(16, 192, dtype=torch.bfloat16))
    base = name[:-4] if name.endswith("_out") else name
    inputs = (x, tensor(16, 96, dtype=torch.bfloat16, seed=4)) if base in elementwise.BINARY else (x,)
    return ((torch.empty_like(x),) if name.endswith("_out") else ()) + inputs


@pytest.mark.parametrize("name", sorted(elementwise.OPS))
def test_opcheck(interp, name):
    torch.library.opcheck(getattr(torch.ops.hk, name).default, args_of(name))


def test_torch_compile_fullgraph(interp):
    def mlp(x, g):
        return torch.ops.hk.add(torch.ops.hk.silu_and_mul(g), torch.ops.hk.relu(x))

    x, g = tensor(16, 64, dtype=torch.bfloat16), tensor(16, 128, dtype=torch.bfloat16, seed=1)
    assert torch.equal(torch.compile(mlp, fullgraph=True, backend="aot_eager")(x, g), mlp(x, g))


FORMS = [("unary", fn) for fn in elementwise.ACTIVATIONS] + [("gated", "silu"), ("gated", "gelu_tanh")] + \
        [("binary", fn) for fn in elementwise.BINARY]


@pytest.mark.parametrize("arch", facts.archs())
@pytest.mark.parametrize("form, fn", FORMS)
def test_every_kernel_passes_the_gates(arch, form, fn):
    for dtype in (hk.bf16, hk.fp32):
        built = elementwise.elementwise_kernel(form, fn, dtype).build(arch, divisors=1)
        assert built.meta.spills == 0, built.report()
