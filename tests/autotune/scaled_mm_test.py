"""The 8-bit GEMMs' schedules searched and launched: int8_scaled_mm (W8A8) and scaled_mm (fp8 in
the target's own format) ranked by hk.perf over a small space, the choice written to a tuned file
and launched by hk.ops (its bucket's knobs; the product within bf16's rounding of a float64
reference, on the interpreter); a choice that no longer builds falls back once; hk-tune's shapes
of them."""

import pytest
import torch

import hk
import hk.ops
from hk import tuned
from hk.autotune import cli, searching
from hk.compiler.cli import UsageError
from hk.errors import HKWarning
from hk.ops import gemm, mm8
from hk.runtime import launch
from tests.autotune.tuned_files import env, point as use, quiet  # noqa: F401 (env: an autouse fixture)

SHAPE = (64, 128, 256)  # M, N, K
CASES = [  # (op, target, the operands' hk type, their torch dtype)
    ("int8_scaled_mm", "gfx1100", "i8", torch.int8),
    ("scaled_mm", "gfx950", "fp8e4m3", torch.float8_e4m3fn),
    ("scaled_mm", "gfx942", "fp8e4m3fnuz", torch.float8_e4m3fnuz),
]


def operands(dtype, m=SHAPE[0], n=SHAPE[1], k=SHAPE[2]):
    """a [M, K], b [K, N] column-major (a weight [N, K] transposed, as vLLM passes it), per-token
    and per-channel scales."""
    g = torch.Generator().manual_seed(0)
    if dtype == torch.int8:
        a = torch.randint(-127, 128, (m, k), generator=g, dtype=torch.int8)
        w = torch.randint(-127, 128, (n, k), generator=g, dtype=torch.int8)
    else:
        a = (torch.randn(m, k, generator=g) * 2).to(dtype)
        w = (torch.randn(n, k, generator=g) * 2).to(dtype)
    scale_a = torch.rand(m, 1, generator=g) / 64 + 1e-3
    scale_b = torch.rand(1, n, generator=g) / 64 + 1e-3
    return a, w.t(), scale_a, scale_b


def call(op, a, b, scale_a, scale_b):
    return getattr(hk.ops, op)(a, b, scale_a, scale_b, torch.bfloat16)


def reference(a, b, scale_a, scale_b):
    return (a.double() * scale_a.double()) @ (b.double() * scale_b.double())


def launched(op, dtype):
    """(kernel, constants) of the one launch hk.ops makes for the call."""
    with launch.capture() as launches:
        call(op, *operands(dtype))
    [(kernel, _, _, constants)] = launches
    return kernel, constants


@pytest.mark.parametrize("op, arch, name, dtype", CASES)
def test_a_search_ranks_the_schedules_and_the_op_launches_the_choice(op, arch, name, dtype, monkeypatch, tmp_path):
    tunable = hk.ops.TUNABLES[op]
    shape = SHAPE + (name,)
    space = hk.space(BM=[64, 128], BN=[64], BK=[64], UNROLL=[2])
    result = searching.search(tunable, [shape], arch, space=space, jobs=1, evaluator="model")
    assert not result.refusals
    [choice] = result.choices.values()
    assert choice.bucket == "%s N=128 K=256 M=33-64" % name
    assert choice.seconds == min(s for _, _, s in result.times) and choice.default_seconds > 0
    path = tmp_path / (arch + ".json")
    tuned.write(str(path), arch, op, {b: tuned.entry_of(c, result) for b, c in result.choices.items()})

    use(path, arch, monkeypatch)
    kernel, constants = launched(op, dtype)
    assert kernel is mm8.mm8_fast_kernel(getattr(hk, name), hk.bf16, False) and constants == choice.knobs
    a, b, scale_a, scale_b = operands(dtype)
    with quiet():
        got = call(op, a, b, scale_a, scale_b)
    want = reference(a, b, scale_a, scale_b)
    # Exact products summed in fp32, rounded once to bf16 (8 bits of mantissa).
    assert ((got.double() - want).abs() <= want.abs() * 2 ** -8 + 1e-6).all()


def test_a_bucket_with_no_choice_takes_todays_schedule(monkeypatch, tmp_path):
    path = tmp_path / "gfx1100.json"
    tuned.write(str(path), "gfx1100", "int8_scaled_mm",
                {"i8 N=128 K=256 M=65-128": {"knobs": {"BM": 64, "BN": 64}, "seconds": 1.0}})
    use(path, "gfx1100", monkeypatch)
    with quiet():
        assert launched("int8_scaled_mm", torch.int8)[1] == {}  # M = 64: the bucket below


@pytest.mark.parametrize("knobs, message", [
    ({"BM": 64, "BK": 24}, "is refused: "),
    ({"BM": 64, "WAVES": 8}, "sets WAVES, which int8_scaled_mm does not take"),
])
def test_a_choice_that_no_longer_builds_falls_back_once(knobs, message, monkeypatch, tmp_path):
    path = tmp_path / "gfx1100.json"
    tuned.write(str(path), "gfx1100", "int8_scaled_mm", {"i8 N=128 K=256 M=33-64": {"knobs": knobs, "seconds": 1.0}})
    use(path, "gfx1100", monkeypatch)
    a, b, scale_a, scale_b = operands(torch.int8)
    with pytest.warns(HKWarning, match=message):
        got = call("int8_scaled_mm", a, b, scale_a, scale_b)
    want = reference(a, b, scale_a, scale_b)
    assert ((got.double() - want).abs() <= want.abs() * 2 ** -8 + 1e-6).all()
    with quiet():
        assert launched("int8_scaled_mm", torch.int8)[1] == {}


def test_block_scaled_and_converted_products_keep_their_schedules(monkeypatch, tmp_path):
    # A tuned scaled_mm entry on gfx1100 (no fp8 instruction: converted operands) is not read.
    path = tmp_path / "gfx1100.json"
    tuned.write(str(path), "gfx1100", "scaled_mm",
                {"fp8e4m3 N=128 K=256 M=33-64": {"knobs": {"BM": 64}, "seconds": 1.0}})
    use(path, "gfx1100", monkeypatch)
    with quiet():
        kernel, constants = launched("scaled_mm", torch.float8_e4m3fn)
    assert constants == {} and kernel is not mm8.mm8_fast_kernel(hk.fp8e4m3, hk.bf16, False)


def test_hk_tune_shapes_of_the_8bit_gemms():
    assert cli.parse_shape("int8_scaled_mm", "32,4096,4096") == (32, 4096, 4096, "i8")
    assert cli.parse_shape("scaled_mm", "32,4096,4096", "gfx942") == (32, 4096, 4096, "fp8e4m3fnuz")
    assert cli.parse_shape("scaled_mm", "32,4096,4096,e5m2", "gfx1100") == (32, 4096, 4096, "fp8e5m2")
    with pytest.raises(UsageError, match="gfx1100 has none"):
        cli.parse_shape("scaled_mm", "32,4096,4096", "gfx1100")
    for bad in ("32,4096", "32,4096,4096,e4m3"):
        with pytest.raises(UsageError, match="int8_scaled_mm's shape is M,N,K"):
            cli.parse_shape("int8_scaled_mm", bad)
    with pytest.raises(UsageError, match="optional fp8 format"):
        cli.parse_shape("scaled_mm", "1,2,3,e3m4", "gfx950")
    # No split-K: a decode's rows from one, then every bucket's upper end up to its graphs, and the chunk.
    assert cli.engine_tokens("int8_scaled_mm", "vllm", "gfx1100") == [1, 32, 64, 128, 256, 512, 2048]
    shapes = cli.shapes_for("scaled_mm", [], ["qwen3-8b"], [1], "gfx950")
    assert shapes == [(1, n, k, "fp8e4m3") for n, k in cli.linear_shapes(cli.models()["qwen3-8b"])]
    assert {gemm.linear_bucket(s) for s in shapes} == {"fp8e4m3 N=%d K=%d M=1-32" % nk
                                                       for nk in cli.linear_shapes(cli.models()["qwen3-8b"])}


def test_the_spaces_constraints_follow_the_target():
    # Two buffers of both tiles in the LDS, a wave's quarter of C in half of its registers.
    small = hk.ops.TUNABLES["int8_scaled_mm"].space_for("gfx1100").candidates()
    wide = hk.ops.TUNABLES["int8_scaled_mm"].space_for("gfx950").candidates()
    assert len(wide) > len(small) >= 8
    for c in small:
        assert 2 * (c.BM + c.BN) * c.BK <= 64 * 1024 and (c.BM // 2) * (c.BN // 2) // 32 <= 128
    tall = {"BM": 256, "BN": 128, "BK": 64, "UNROLL": 2}  # 128 x 64 of C a wave: 128 VGPRs on wave64
    assert tall in [c.as_dict() for c in wide] and tall not in [c.as_dict() for c in small]
    assert mm8._mm8_default("gfx1100") == {"BM": 128, "BN": 128, "BK": 64, "UNROLL": 2}
