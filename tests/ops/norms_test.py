"""hk.ops' norm family against torch: RMSNorm, LayerNorm and softmax, weighted or not, with a
bias, with a fused residual add (functional, out= and in place), in register strips and streamed,
bf16, fp16 and fp32, ragged and row-strided; on the interpreter for every variant and on the
emulator (gfx1100, gfx950) for each kind. Then torch.library.opcheck on every op, and
torch.compile(fullgraph=True) through them."""

import pytest
import torch

import hk
import hk.ops
from hk.errors import LaunchError
from hk.ops import norms

KINDS = ["rms", "layer", "softmax"]
EPS = {"rms": 1e-6, "layer": 1e-5, "softmax": 0.0}
TOL = {torch.bfloat16: 2e-2, torch.float16: 2e-3, torch.float32: 1e-5}
STRIP, STREAM = 200, 1500  # 200 columns fit a register strip; 1500 (24 tiles for 8 waves) do not


def reference(kind, x, residual, weight, bias):
    s = x.float() + (residual.float() if residual is not None else 0.0)
    if kind == "rms":
        y = s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + EPS[kind])
    elif kind == "layer":
        y = torch.nn.functional.layer_norm(s, s.shape[-1:], eps=EPS[kind])
    else:
        y = torch.softmax(s, -1)
    if weight is not None:
        y = y * weight.float()
    if bias is not None:
        y = y + bias.float()
    return y.to(x.dtype), s.to(x.dtype)


def extra(kind, weight, bias):
    """The op's arguments after x (and residual)."""
    return {"rms": (weight, EPS["rms"]), "layer": (weight, bias, EPS["layer"]), "softmax": (weight,)}[kind]


def inputs(rows, cols, dtype, strided=False, seed=0):
    g = torch.Generator().manual_seed(seed)
    make = lambda *shape: (torch.randn(*shape, generator=g) * 2).to(dtype)  # noqa: E731
    x = make(rows, cols + 64)[:, :cols] if strided else make(rows, cols)  # rows padded, as vLLM's
    return x, make(rows, cols), make(cols), make(cols)


def close(got, want):
    tol = TOL[want.dtype]
    torch.testing.assert_close(got.float(), want.float(), rtol=tol, atol=tol)


def run_all_forms(kind, x, residual, weight, bias):
    """Every form of the op on these inputs, each checked against torch."""
    name = norms.FAMILY[kind]
    ops = torch.ops.hk
    bias = bias if kind == "layer" else None
    args = extra(kind, weight, bias)
    want, total = reference(kind, x, None, weight, bias)
    close(getattr(ops, name)(x, *args), want)
    out = torch.empty_like(want)
    getattr(ops, name + "_out")(out, x, *args)
    close(out, want)
    want, total = reference(kind, x, residual, weight, bias)
    y, s = getattr(ops, "fused_add_" + name)(x, residual, *args)
    close(y, want)
    assert torch.equal(s, total)
    xi, ri = x.clone(), residual.clone()
    getattr(ops, "fused_add_%s_" % name)(xi, ri, *args)
    close(xi, want)
    assert torch.equal(ri, total)


@pytest.fixture
def interp(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("cols", [STRIP, STREAM, 64, 16384])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_every_form_on_the_interpreter(interp, kind, cols, dtype):
    rows = 3 if cols == 16384 else 37
    x, residual, weight, bias = inputs(rows, cols, dtype)
    run_all_forms(kind, x, residual, weight, bias)


@pytest.mark.parametrize("kind", KINDS)
def test_unweighted_fp32_row_strided_and_batched(interp, kind):
    x, residual, _, _ = inputs(21, STRIP, torch.float32, strided=True)
    run_all_forms(kind, x, residual, None, None)
    x3 = torch.randn(2, 5, STREAM)
    want, _ = reference(kind, x3, None, None, None)
    close(getattr(torch.ops.hk, norms.FAMILY[kind])(x3, *extra(kind, None, None)), want)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
@pytest.mark.parametrize("kind", KINDS)
def test_the_compiled_kernels_on_the_emulator(monkeypatch, arch, kind):
    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", arch)
    cols = STREAM if kind == "rms" else STRIP
    x, residual, weight, bias = inputs(20, cols, torch.bfloat16, strided=True)
    bias = bias if kind == "layer" else None
    args = extra(kind, weight, bias)
    want, total = reference(kind, x, residual, weight, bias)
    xi, ri = x.clone(), residual.clone()
    getattr(torch.ops.hk, "fused_add_%s_" % norms.FAMILY[kind])(xi, ri, *args)
    close(xi, want)
    assert torch.equal(ri, total)


def test_bad_arguments_are_launch_errors(interp):
    x = torch.randn(4, 64, dtype=torch.bfloat16)
    with pytest.raises(LaunchError, match="torch.float64 are not supported"):
        torch.ops.hk.rms_norm(x.double(), None, 1e-6)
    with pytest.raises(LaunchError, match=r"weight has shape \(63,\)"):
        torch.ops.hk.rms_norm(x, torch.ones(63, dtype=torch.bfloat16), 1e-6)
    with pytest.raises(LaunchError, match="weight is torch.float32"):
        torch.ops.hk.layer_norm(x, torch.ones(64), None, 1e-5)
    with pytest.raises(LaunchError, match="cannot be written in place"):
        torch.ops.hk.fused_add_rms_norm_(x.t().contiguous().t(), torch.randn(4, 64, dtype=torch.bfloat16), None, 1e-6)
    for op in (torch.ops.hk.rms_norm, torch.ops.hk.softmax):
        with pytest.raises(LaunchError, match="x is a 0-d tensor; the op works along its last dimension"):
            op(x[0, 0], None)


def test_empty_inputs_return_empty_outputs(interp):
    x = torch.randn(0, 128, dtype=torch.bfloat16)
    assert torch.ops.hk.layer_norm(x, None, None, 1e-5).shape == (0, 128)


OPCHECK = [
    ("rms_norm", lambda x, r, w, b: (x, w, 1e-6)), ("rms_norm_out", lambda x, r, w, b: (torch.empty_like(x), x, w, 1e-6)),
    ("fused_add_rms_norm", lambda x, r, w, b: (x, r, w, 1e-6)), ("fused_add_rms_norm_", lambda x, r, w, b: (x, r, w, 1e-6)),
    ("layer_norm", lambda x, r, w, b: (x, w, b, 1e-5)), ("layer_norm_out", lambda x, r, w, b: (torch.empty_like(x), x, w, b, 1e-5)),
    ("fused_add_layer_norm", lambda x, r, w, b: (x, r, None, b, 1e-5)), ("fused_add_layer_norm_", lambda x, r, w, b: (x, r, w, b, 1e-5)),
    ("softmax", lambda x, r, w, b: (x, None)), ("softmax_out", lambda x, r, w, b: (torch.empty_like(x), x, w)),
    ("fused_add_softmax", lambda x, r, w, b: (x, r, w)), ("fused_add_softmax_", lambda x, r, w, b: (x, r, None)),
]


def test_opcheck_covers_every_op():
    assert sorted(name for name, _ in OPCHECK) == sorted(norms.OPS)


@pytest.mark.parametrize("name, make", OPCHECK, ids=[n for n, _ in OPCHECK])
def test_opcheck(interp, name, make):
    x, residual, weight, bias = inputs(16, 96, torch.bfloat16, seed=1)
    torch.library.opcheck(getattr(torch.ops.hk, name).default, make(x, residual, weight, bias))


def block(x, residual, weight):
    # A model block's norms: the fused residual add in place, then a plain norm and a softmax.
    torch.ops.hk.fused_add_rms_norm_(x, residual, weight, 1e-6)
    h = torch.ops.hk.layer_norm(x * 2.0, weight, None, 1e-5)
    return torch.ops.hk.softmax(h, None) + residual


def test_torch_compile_fullgraph_traces_through(interp):
    x, residual, weight, _ = inputs(16, STRIP, torch.bfloat16, seed=2)
    eager = block(x.clone(), residual.clone(), weight)
    compiled = torch.compile(block, fullgraph=True, backend="aot_eager")
    xc, rc = x.clone(), residual.clone()
    got = compiled(xc, rc, weight)
    assert torch.equal(got, eager)
    want, total = reference("rms", x, residual, weight, None)
    close(xc, want)
    assert torch.equal(rc, total)
