"""AWQ's decode split of K as a tuned schedule: a search ranks the parts by hk.perf, the choice
written to a tuned file is what hk.ops.awq_gemm launches (one unsplit product, or the split
product and the sum of its parts) and its result is the dequantized product's; a choice that
no longer builds falls back once; past a decode's rows nothing is looked up; hk-tune's shapes."""

import pytest
import torch

import hk
import hk.ops
from hk import tuned
from hk.autotune import cli, searching
from hk.compiler.cli import UsageError
from hk.errors import HKWarning
from hk.ops import awq
from hk.runtime import launch
from tests.autotune import tuned_files
from tests.autotune.tuned_files import env, quiet  # noqa: F401 (env: an autouse fixture)

SHAPE = (2, 256, 512, 32)  # M, N, K, G: 16 groups of K
BUCKET = "fp16 G=32 N=256 K=512 M=1-32"


def operands(m=SHAPE[0], n=SHAPE[1], k=SHAPE[2], g=SHAPE[3]):
    """x fp16 [M, K]; every int32 word is 8 valid nibbles (weights, zero points)."""
    gen = torch.Generator().manual_seed(0)
    words = lambda *shape: torch.randint(-2 ** 31, 2 ** 31, shape, generator=gen, dtype=torch.int64).to(torch.int32)
    x = torch.randn(m, k, generator=gen).half()
    scales = (torch.rand(k // g, n, generator=gen) * 0.02 + 0.002).half()
    return x, words(k, n // 8), scales, words(k // g, n // 8)


def launched(*args):
    """[(kernel, the scalar `per` or None)] of the launches hk.ops.awq_gemm makes for the call."""
    with launch.capture() as launches:
        hk.ops.awq_gemm(*(args or operands()))
    return [(kernel, next((a for a in call_args if isinstance(a, int)), None))
            for kernel, call_args, _, _ in launches]


def use(entries, monkeypatch, tmp_path, arch="gfx1100"):
    tuned_files.use("awq_gemm", entries, monkeypatch, tmp_path, arch)


def close(got, want):
    torch.testing.assert_close(got.float(), want.float(), rtol=4e-3, atol=4e-3 * (SHAPE[2] / 16) ** 0.5)


def test_todays_rule_splits_the_decode():
    # The default (no tuned file) is split_k's rule: for this shape several parts.
    splits, per = awq.split_k(*SHAPE[:3], SHAPE[3])
    assert splits > 1
    assert awq.split_plan(None, SHAPE) == awq.split_plan({"parts": 0}, SHAPE) == (splits, per)
    assert awq.split_plan({"parts": 4}, SHAPE) == (4, 4)
    assert awq.split_plan({"parts": 5}, SHAPE) == (4, 4)  # runs of 4 groups: the fifth would be empty
    assert awq.split_plan({"parts": 64}, SHAPE) == (16, 1)  # no more parts than groups
    assert awq.split_plan({"parts": 1}, SHAPE) == (1, 16)
    for bad in (-1, 2.0, "4", True):
        with pytest.raises(ValueError, match="parts is 0"):
            awq.split_plan({"parts": bad}, SHAPE)
    with pytest.raises(ValueError, match="a decode's: M up to 32"):
        awq.split_plan({}, (33,) + SHAPE[1:])


def test_a_search_ranks_the_parts_and_the_op_launches_the_choice(monkeypatch, tmp_path):
    tunable = hk.ops.TUNABLES["awq_gemm"]
    result = searching.search(tunable, [SHAPE], "gfx1100", space=hk.space(parts=[0, 1, 4]), jobs=1,
                              evaluator="model")
    assert not result.refusals and len(result.times) == 3
    [choice] = result.choices.values()
    assert choice.bucket == BUCKET
    assert choice.seconds == min(s for _, _, s in result.times) and choice.default_seconds > 0
    # One part is a single launch, several a product and a sum: they are predicted apart.
    assert len({s for _, _, s in result.times}) == 3

    use({b: tuned.entry_of(c, result) for b, c in result.choices.items()}, monkeypatch, tmp_path)
    splits, per = awq.split_plan(choice.knobs, SHAPE)
    with quiet():
        made = launched()
    if splits == 1:
        assert made == [(awq.awq_kernel(hk.fp16, SHAPE[3]), None)]
    else:
        assert made == [(awq.awq_kernel(hk.fp16, SHAPE[3], split=True), per), (awq.sum_kernel(hk.fp16), None)]


@pytest.mark.parametrize("parts, launches", [(1, 1), (4, 2)])
def test_the_tuned_parts_are_launched_and_compute_the_product(parts, launches, monkeypatch, tmp_path):
    use({BUCKET: {"knobs": {"parts": parts}, "seconds": 1.0}}, monkeypatch, tmp_path)
    args = operands()
    with quiet():
        made = launched(*args)
        got = hk.ops.awq_gemm(*args)
    assert len(made) == launches
    if parts == 4:
        assert made[0] == (awq.awq_kernel(hk.fp16, SHAPE[3], split=True), 4)  # 4 groups a part
    close(got, awq.reference(*args))


@pytest.mark.parametrize("knobs, message", [
    ({"parts": -2}, "is refused: parts is 0"),
    ({"parts": 4, "BM": 64}, "sets BM, which awq_gemm does not take"),
])
def test_a_choice_that_no_longer_builds_falls_back_once(knobs, message, monkeypatch, tmp_path):
    use({BUCKET: {"knobs": knobs, "seconds": 1.0}}, monkeypatch, tmp_path)
    args = operands()
    with pytest.warns(HKWarning, match=message):
        got = hk.ops.awq_gemm(*args)
    close(got, awq.reference(*args))
    splits, per = awq.split_k(*SHAPE[:3], SHAPE[3])
    with quiet():
        assert launched() == [(awq.awq_kernel(hk.fp16, SHAPE[3], split=True), per), (awq.sum_kernel(hk.fp16), None)]


def test_past_a_decodes_rows_one_part_and_no_lookup(monkeypatch, tmp_path):
    # An entry whose knobs would be refused is never read for 33 rows: no warning, one launch.
    use({"fp16 G=32 N=256 K=512 M=33-64": {"knobs": {"parts": -2}, "seconds": 1.0}}, monkeypatch, tmp_path)
    with quiet():
        assert launched(*operands(m=33)) == [(awq.awq_kernel(hk.fp16, SHAPE[3]), None)]


def test_hk_tune_shapes_of_awq():
    assert cli.parse_shape("awq_gemm", "1,4096,4096,128") == (1, 4096, 4096, 128)
    assert cli.parse_shape("awq_gemm", "32,4096,4096,64,bf16") == (32, 4096, 4096, 64, "bf16")
    for bad in ("1,4096,4096", "33,4096,4096,128", "1,4100,4096,128", "1,4096,4096,24", "1,4096,4000,128",
                "1,4096,4096,128,fp32"):
        with pytest.raises(UsageError, match="an AWQ product's shape is M,N,K,G"):
            cli.parse_shape("awq_gemm", bad)
    assert cli.engine_tokens("awq_gemm", "vllm", "gfx942") == [1, 32]
    assert cli.engine_tokens("awq_gemm", "sglang", "gfx1201") == [1, 8]
    shapes = cli.shapes_for("awq_gemm", [], ["llama-3-8b"], [1, 64])
    assert shapes == [(1, n, k, cli.AWQ_GROUP) for n, k in cli.linear_shapes(cli.models()["llama-3-8b"])]
    assert awq.awq_bucket(shapes[0]) == "fp16 G=128 N=6144 K=4096 M=1-32"
    with pytest.raises(UsageError, match="awq_gemm is a decode's linear"):
        cli.shapes_for("awq_gemm", [], ["qwen3-8b"], [64])
