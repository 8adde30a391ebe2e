"""hk.ops.linear (the library's GEMM as an op) against torch: decode-sized and ragged M, N and
K, weights with padded rows (vLLM pads gfx11 weights to K + 64), bias or not, bf16 and fp16,
batched x; on the interpreter, and on the emulator for gfx1100 and gfx950; opcheck,
torch.compile(fullgraph=True), bad arguments, and the bias kernels through the gates on every
target."""

import pytest
import torch

import hk
import hk.ops
from hk.errors import LaunchError
from hk.ops import gemm
from hk.target import facts


def operands(m, n, k, dtype, padded=False, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(m, k, generator=g).to(dtype)
    w = torch.randn(n, k + (64 if padded else 0), generator=g).to(dtype)[:, :k]
    bias = torch.randn(n, generator=g).to(dtype)
    return x, w, bias


def reference(x, w, bias):
    y = x.float() @ w.float().t()
    return (y + bias.float() if bias is not None else y).to(x.dtype)


def close(got, want, k):
    # fp32 accumulation of 16-bit products: only the order of the sums differs, then one rounding.
    tol = 2e-2 if want.dtype == torch.bfloat16 else 2e-3
    torch.testing.assert_close(got.float(), want.float(), rtol=tol, atol=tol * max(1.0, k ** 0.5 / 4))


@pytest.fixture
def interp(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("m, n, k", [(1, 256, 128), (7, 200, 96), (32, 130, 64), (150, 64, 40)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_linear_on_the_interpreter(interp, dtype, m, n, k, with_bias):
    x, w, bias = operands(m, n, k, dtype, padded=(m == 7))
    bias = bias if with_bias else None
    close(torch.ops.hk.linear(x, w, bias), reference(x, w, bias), k)
    out = torch.empty(m, n, dtype=dtype)
    torch.ops.hk.linear_out(out, x, w, bias)
    close(out, reference(x, w, bias), k)


def test_batched_x_and_empty_k(interp):
    x, w, bias = operands(10, 64, 64, torch.bfloat16)
    x3 = x.view(2, 5, 64)
    close(torch.ops.hk.linear(x3, w, bias), reference(x, w, bias).view(2, 5, 64), 64)
    nothing = lambda *shape: torch.empty(*shape, dtype=torch.bfloat16)  # noqa: E731
    empty = torch.ops.hk.linear(nothing(3, 0), nothing(4, 0), bias[:4])
    assert torch.equal(empty, bias[:4].expand(3, 4))


@pytest.mark.parametrize("device", ["interp", "emu"])
def test_k_of_one_and_a_strided_bias_of_one(monkeypatch, device):
    # Tensors whose last dimension has one element, at any stride: the weight a transposed row
    # ([64, 1], strides (1, 64)) and a bias sliced with a step.
    monkeypatch.setenv("HK_DEVICE", device)
    monkeypatch.setenv("HK_ARCH", "gfx950")
    x, w, _ = operands(20, 1, 64, torch.bfloat16)
    close(torch.ops.hk.linear(x[:, :1], w.t(), None), reference(x[:, :1], w.t(), None), 1)
    bias = torch.randn(2).to(torch.bfloat16)[::2]
    close(torch.ops.hk.linear(x, w, bias), reference(x, w, bias), 64)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
@pytest.mark.parametrize("m, n, k, padded", [(20, 136, 96, True), (9, 70, 45, False), (33, 40, 42, False)])
def test_linear_on_the_emulator(monkeypatch, arch, m, n, k, padded):
    # K = 45 and 42: rows that are not 16-byte multiples, read in pieces of one and two elements.
    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", arch)
    x, w, bias = operands(m, n, k, torch.bfloat16, padded=padded)
    close(torch.ops.hk.linear(x, w, bias), reference(x, w, bias), k)


def test_bad_arguments_are_launch_errors(interp):
    x, w, bias = operands(4, 64, 32, torch.bfloat16)
    with pytest.raises(LaunchError, match=r"needs \[N, 32\]"):
        torch.ops.hk.linear(x, w[:, :16])
    with pytest.raises(LaunchError, match="float32 are not supported"):
        torch.ops.hk.linear(x.float(), w.float())
    with pytest.raises(LaunchError, match=r"bias has shape \(63,\)"):
        torch.ops.hk.linear(x, w, bias[:63])
    with pytest.raises(LaunchError, match="x is a 0-d tensor"):
        torch.ops.hk.linear(x[0, 0], w)
    with pytest.raises(LaunchError, match=r"weight has shape \(\); it must be \[N, K\]"):
        torch.ops.hk.linear(x, w[0, 0])


def test_the_op_is_predicted_on_meta_tensors():
    # The dispatcher sends meta tensors to an op's fake; hk.perf.predict_call takes the op's own
    # implementation, which plans the same launch as on real tensors.
    import hk.perf

    x, w, _ = operands(16, 256, 256, torch.bfloat16)
    meta = lambda t: torch.empty_like(t, device="meta")  # noqa: E731
    (op,) = hk.perf.predict_call(torch.ops.hk.linear, meta(x), meta(w), arch="gfx1100")
    (direct,) = hk.perf.predict_call(torch.ops.hk.linear.default, x, w, arch="gfx1100")
    assert op.kernel == direct.kernel == "gemm_ABt_bf16_bf16"
    assert op.seconds == pytest.approx(direct.seconds, rel=0.01)
    with pytest.raises(LaunchError, match=r"needs \[N, 256\]"):
        hk.perf.predict_call(torch.ops.hk.linear, meta(x), meta(w)[:, :100], arch="gfx1100")


@pytest.mark.parametrize("name", ["linear", "linear_out"])
def test_opcheck(interp, name):
    x, w, bias = operands(16, 64, 32, torch.bfloat16)
    args = (x, w, bias) if name == "linear" else (torch.empty(16, 64, dtype=torch.bfloat16), x, w, bias)
    torch.library.opcheck(getattr(torch.ops.hk, name).default, args)


def test_torch_compile_fullgraph(interp):
    x, w, bias = operands(8, 64, 64, torch.bfloat16)
    w2 = operands(8, 64, 64, torch.bfloat16, seed=1)[1]

    def mlp(x):
        h = torch.ops.hk.silu(torch.ops.hk.linear(x, w, bias))
        return torch.ops.hk.linear(h, w2)

    assert torch.equal(torch.compile(mlp, fullgraph=True, backend="aot_eager")(x), mlp(x))


@pytest.mark.parametrize("arch", facts.archs())
def test_the_bias_kernels_pass_the_gates(arch):
    for dtype in (hk.bf16, hk.fp16):
        built = gemm.gemm_kernel(dtype, dtype, "ABt", True).build(arch, divisors=64)
        assert built.meta.spills == 0, built.report()
    # Rows in pieces (any K): what linear runs for them.
    for div in (1, 2, 4):
        built = gemm.gemm_kernel(hk.bf16, hk.bf16, "ABt", True).build(arch, divisors=div, **gemm.PIECES)
        assert built.meta.spills == 0, built.report()


def test_an_ops_error_names_the_callers_line(interp):
    # Not a line of torch's op dispatch, which stands between the call and hk.
    x, w, _ = operands(4, 32, 64, torch.bfloat16)
    with pytest.raises(LaunchError) as e:
        torch.ops.hk.linear(x, w[:, :32])
    assert e.value.location.file == __file__, e.value.location
    assert "torch.ops.hk.linear(x, w[:, :32])" in str(e.value)


def test_rows_in_pieces_are_told_apart():
    x = torch.zeros(4, 64, dtype=torch.bfloat16)
    assert not gemm.in_pieces(x, x[:, :32])
    assert gemm.in_pieces(x, x[:, :36])        # 72-byte rows
    assert gemm.in_pieces(x[:, 1:9])           # 16-byte rows starting 2 bytes in


@pytest.mark.parametrize("device, arch", [("interp", "gfx1100"), ("emu", "gfx1100"), ("emu", "gfx950")])
def test_decode_sums_its_parts_of_k(monkeypatch, device, arch):
    # A few rows and a long K: K in parts over many workgroups, summed by a second kernel.
    monkeypatch.setenv("HK_DEVICE", device)
    monkeypatch.setenv("HK_ARCH", arch)
    for m, n, k, dtype in ((1, 256, 1024, torch.bfloat16), (7, 200, 2056, torch.float16), (32, 70, 45 * 13, torch.bfloat16)):
        assert gemm.split_k(m, n, k)[0] > 1
        x, w, bias = operands(m, n, k, dtype, padded=True)
        close(torch.ops.hk.linear(x, w, bias), reference(x, w, bias), k)
        close(torch.ops.hk.linear(x, w), reference(x, w, None), k)


def test_how_k_is_split():
    assert gemm.split_k(33, 4096, 4096) == (1, 128)                # not a decode: one part
    assert gemm.split_k(1, 4096, 4096) == (4, 32)                  # 32 column tiles x 4 parts
    assert gemm.split_k(1, 128, 200) == (1, 7)                     # too short to split
    parts, per = gemm.split_k(16, 512, 4000)
    assert parts * per >= 125 > (parts - 1) * per and per >= gemm.SPLIT_STEPS


def test_how_a_split_k_choice_splits():
    shape = (1, 4096, 4096, "bf16")
    kernel, constants, parts, per = gemm.split_plan({}, shape)           # today's: split_k's rule
    assert (kernel, constants, (parts, per)) == (gemm.gemm_kernel(hk.bf16, hk.fp32, "ABt", split=True), {},
                                                 gemm.split_k(1, 4096, 4096))
    assert gemm.split_plan({"parts": 0, "BN": 256}, shape)[2:] == gemm.split_k(1, 4096, 4096, bn=256)
    assert gemm.split_plan({"parts": 5}, shape)[2:] == (5, 26)          # 128 steps of 32 in 5 runs
    assert gemm.split_plan({"parts": 200, "BK": 64}, shape)[2:] == (64, 1)  # no part without a step
    kernel, constants, _, _ = gemm.split_plan({"waves": 2, "BM": 16}, shape)
    assert kernel.warps == 2 and constants == {"BM": 16}
    with pytest.raises(ValueError, match="split-K is a decode's: M up to 32 rows, not 33"):
        gemm.split_plan({}, (33, 4096, 4096))
    with pytest.raises(ValueError, match="parts is 0"):
        gemm.split_plan({"parts": 1.5}, shape)


def test_decode_takes_a_tuned_split_on_the_emulator(monkeypatch, tmp_path):
    import json

    from hk import tuned
    from hk.runtime import launch

    monkeypatch.setenv("HK_DEVICE", "emu")
    monkeypatch.setenv("HK_ARCH", "gfx1100")
    path = tmp_path / "gfx1100.json"
    knobs = {"parts": 8, "waves": 2, "BM": 16, "BN": 64, "UNROLL": 4}
    path.write_text(json.dumps({"format": tuned.FORMAT, "hk_version": hk.__version__, "arch": "gfx1100",
                                "ops": {"linear_split_k": {"bf16 N=256 K=1024 M=1-32": {"knobs": knobs}}}}))
    monkeypatch.setenv("HK_TUNED", str(path))
    tuned.forget()
    try:
        x, w, bias = operands(3, 256, 1024, torch.bfloat16)
        with launch.capture() as launches:
            gemm.launch_linear(x, w, bias, torch.empty(3, 256, dtype=torch.bfloat16))
        (product, args, _, constants), _ = launches
        assert (product.warps, constants, args[2].shape[0], args[3]) == (2, {"BM": 16, "BN": 64, "UNROLL": 4}, 8, 4)
        close(torch.ops.hk.linear(x, w, bias), reference(x, w, bias), 1024)
    finally:
        tuned.forget()


@pytest.mark.parametrize("arch", facts.archs())
def test_the_decode_kernels_pass_the_gates(arch):
    for div, schedule in ((64, {}), (1, gemm.PIECES)):
        built = gemm.gemm_kernel(hk.bf16, hk.fp32, "ABt", split=True).build(arch, divisors=div, **schedule)
        assert built.meta.spills == 0, built.report()
    for dtype in (hk.bf16, hk.fp16):
        for bias in (False, True):
            assert gemm.split_sum_kernel(dtype, bias).build(arch, divisors=64).meta.spills == 0
