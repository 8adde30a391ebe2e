"""Paged decode attention split along each sequence's keys as a tuned schedule: the split kernel
and the merge of its parts against attention in torch (parts that do not divide a sequence's
tiles, parts past a short sequence's keys, a sequence of none, grouped heads, fp8 caches, K and V
in one cache) on the interpreter and the emulator; a search ranks the parts by hk.perf and the
choice is what hk.ops.paged_attention_decode launches; a choice that no longer builds falls back
once; the kernels through the gates on every target; hk-tune's shapes."""

import pytest
import torch

import hk
import hk.ops
from hk import tuned
from hk.autotune import cli, searching
from hk.compiler.cli import UsageError
from hk.errors import HKWarning
from hk.ops import paged
from hk.runtime import launch
from hk.target import facts
from tests.autotune import tuned_files
from tests.autotune.tuned_files import env, quiet  # noqa: F401 (env: an autouse fixture)

SHAPE = (3, 2048, 8, 2, 64)  # seqs, context, heads, K/V heads, head size (16-slot blocks)
BUCKET = "H=8 KVH=2 D=64 BS=16 seqs=2-4"


reference = paged.decode_reference


def case(heads, kv_heads, d, lens, bs=16, blocks=40, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(len(lens), heads, d, generator=g).to(torch.bfloat16)
    kc = torch.randn(blocks, bs, kv_heads, d, generator=g).to(torch.bfloat16)
    vc = torch.randn(blocks, bs, kv_heads, d, generator=g).to(torch.bfloat16)
    most = max(max(-(-n // bs) for n in lens), 1)
    tables = torch.stack([torch.randperm(blocks, generator=g)[:most] for _ in lens]).to(torch.int32)
    return q, kc, vc, tables, torch.tensor(lens, dtype=torch.int32)


def close(got, want):
    torch.testing.assert_close(got.float(), want.float(), rtol=1.6e-2, atol=1e-2)


def use(parts, monkeypatch, tmp_path, arch="gfx1100", bucket=BUCKET, device="interp"):
    """A tuned file choosing `parts` (knobs, when a dict) at `bucket`, and the device to run on."""
    knobs = parts if isinstance(parts, dict) else {"parts": parts}
    tuned_files.use("paged_attention_decode", {bucket: {"knobs": knobs, "seconds": 1.0}}, monkeypatch, tmp_path,
                    arch, device)


def launched(*args):
    """The names of the kernels hk.ops.paged_attention_decode launches for the call."""
    with launch.capture() as launches:
        torch.ops.hk.paged_attention_decode(*args)
    return [kernel.name for kernel, _, _, _ in launches]


SPLIT = ["paged_decode_split_d64_g4_b16", "paged_decode_merge_d64"]
TODAY = ["paged_decode_d64_g4_b16"]


# Lengths: a partial last tile, one key, none, and 16 tiles, which 3 and 5 parts do not divide
# (and 32 parts leave some empty).
LENS = [37, 1, 0, 256]


@pytest.mark.parametrize("parts", [2, 3, 5, 32])
def test_the_split_decode_on_the_interpreter(parts, monkeypatch, tmp_path):
    use(parts, monkeypatch, tmp_path, bucket="H=8 KVH=2 D=64 BS=16 seqs=2-4")
    q, kc, vc, tables, lens = case(8, 2, 64, LENS)
    with quiet():
        got = torch.ops.hk.paged_attention_decode(q, kc, vc, tables, lens, 0.125)
        assert launched(q, kc, vc, tables, lens, 0.125) == SPLIT
    close(got, reference(q, kc, vc, tables, lens, 0.125))
    assert torch.equal(got[2], torch.zeros_like(got[2]))  # no keys: zeros


def test_one_part_is_todays_kernel(monkeypatch, tmp_path):
    use(1, monkeypatch, tmp_path)
    q, kc, vc, tables, lens = case(8, 2, 64, LENS)
    with quiet():
        assert launched(q, kc, vc, tables, lens, 0.125) == TODAY


def test_grouped_heads_fp8_and_one_cache(monkeypatch, tmp_path):
    # 32 query heads per K/V head (two query tiles), head size 128; K and V as the halves of one
    # cache; an e4m3 cache with its scales.
    use(4, monkeypatch, tmp_path, bucket="H=32 KVH=1 D=128 BS=16 seqs=2-4")
    q, kc, vc, tables, lens = case(32, 1, 128, [70, 5])
    with quiet():
        close(torch.ops.hk.paged_attention_decode(q, kc, vc, tables, lens, 0.09),
              reference(q, kc, vc, tables, lens, 0.09))
        kv = torch.stack([kc, vc], 3).flatten(3)  # each head's K, then its V
        halves = kv[..., :128], kv[..., 128:]
        assert paged.interleaved(*halves) is not None
        close(torch.ops.hk.paged_attention_decode(q, *halves, tables, lens, 0.09),
              reference(q, kc, vc, tables, lens, 0.09))
        scale = torch.tensor([0.5])
        k8, v8 = (t.float().div(0.5).to(torch.float8_e4m3fn) for t in (kc, vc))
        want = reference(q, k8.float().mul(0.5).to(torch.bfloat16), v8.float().mul(0.5).to(torch.bfloat16),
                         tables, lens, 0.09)
        close(torch.ops.hk.paged_attention_decode(q, k8.view(torch.uint8), v8.view(torch.uint8), tables, lens, 0.09,
                                                  scale, scale), want)


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_the_split_decode_on_the_emulator(arch, monkeypatch, tmp_path):
    use(3, monkeypatch, tmp_path, arch=arch, device="emu")
    q, kc, vc, tables, lens = case(8, 2, 64, [37, 0, 100])
    with quiet():
        close(torch.ops.hk.paged_attention_decode(q, kc, vc, tables, lens, 0.125),
              reference(q, kc, vc, tables, lens, 0.125))


def test_the_tables_are_read_through_the_scalar_cache():
    # The block table's and the lengths' reads wait for no K and V load in flight (hk-scalar-reads).
    for kernel in (paged.decode_kernel(128, 4, 16), paged.decode_split_kernel(128, 4, 16),
                   paged.decode_kernel(128, 4, 16, 1, "raw fp8e4m3")):
        traced = kernel.trace("gfx942")
        assert {"tables", "lens"} <= set(traced.scalar_reads), traced.scalar_reads
        assert not {"q", "k", "v", "tables", "lens"} & set(traced.writes)
        assert "hk::load_scalar(" not in traced.cpp and "hk::load_scalar_cached(" in traced.cpp


@pytest.mark.parametrize("arch", facts.archs())
def test_the_split_kernels_pass_the_gates(arch):
    for d, group in ((64, 4), (128, 4), (128, 8)):
        for kernel in (paged.decode_split_kernel(d, group, 16), paged.merge_kernel(d)):
            assert kernel.build(arch, divisors=64).meta.spills == 0


def test_a_search_ranks_the_parts_and_the_op_launches_the_choice(monkeypatch, tmp_path):
    tunable = hk.ops.TUNABLES["paged_attention_decode"]
    result = searching.search(tunable, [SHAPE], "gfx942", space=hk.space(parts=[1, 2, 8]), jobs=1,
                              evaluator="model")
    assert not result.refusals and len(result.times) == 3
    [choice] = result.choices.values()
    print(result.report())
    assert choice.bucket == BUCKET
    assert choice.seconds == min(s for _, _, s in result.times) and choice.default_seconds > 0
    # One wave per K/V head of 3 sequences leaves MI300X's 304 units nearly idle: splitting wins.
    assert choice.knobs["parts"] > 1 and choice.seconds < choice.default_seconds

    tuned_files.use("paged_attention_decode", {b: tuned.entry_of(c, result) for b, c in result.choices.items()}, monkeypatch,
                    tmp_path, "gfx942")
    q, kc, vc, tables, lens = case(8, 2, 64, [200, 3, 256])
    with quiet():
        assert launched(q, kc, vc, tables, lens, 0.125) == SPLIT


@pytest.mark.parametrize("knobs, message", [
    ({"parts": 0}, "is refused: parts is a positive number"),
    ({"parts": 4, "BM": 64}, "sets BM, which paged_attention_decode does not take"),
])
def test_a_choice_that_no_longer_builds_falls_back_once(knobs, message, monkeypatch, tmp_path):
    use(knobs, monkeypatch, tmp_path)
    q, kc, vc, tables, lens = case(8, 2, 64, LENS)
    with pytest.warns(HKWarning, match=message):
        got = torch.ops.hk.paged_attention_decode(q, kc, vc, tables, lens, 0.125)
    close(got, reference(q, kc, vc, tables, lens, 0.125))
    with quiet():
        assert launched(q, kc, vc, tables, lens, 0.125) == TODAY


def test_buckets_and_parts():
    assert paged.decode_bucket((1, 1024, 32, 8, 128)) == "H=32 KVH=8 D=128 BS=16 seqs=1-1"
    assert paged.decode_bucket((17, 1024, 32, 8, 128, 32)) == "H=32 KVH=8 D=128 BS=32 seqs=17-64"
    assert paged.decode_bucket((300, 64, 32, 8, 128)) == "H=32 KVH=8 D=128 BS=16 seqs>256"
    # The context does not decide the bucket (a launch does not know its sequences' lengths).
    assert paged.decode_bucket((3, 64, 8, 2, 64)) == paged.decode_bucket((3, 8192, 8, 2, 64)) == BUCKET
    assert paged.decode_parts(None) == paged.decode_parts({}) == 1
    for bad in (0, -1, 2.0, "4", True):
        with pytest.raises(ValueError, match="parts is a positive number"):
            paged.decode_parts({"parts": bad})


def test_hk_tune_shapes_of_the_decode():
    assert cli.parse_shape("paged_attention_decode", "4,1024,32,8,128") == (4, 1024, 32, 8, 128)
    assert cli.parse_shape("paged_attention_decode", "4,1024,32,8,128,32") == (4, 1024, 32, 8, 128, 32)
    for bad in ("4,1024,32,8", "4,1024,32,6,128", "4,1024,32,8,120", "4,1024,32,8,128,8", "0,1024,32,8,128"):
        with pytest.raises(UsageError, match="a paged decode's shape is SEQS,CONTEXT,HEADS,KV_HEADS,D"):
            cli.parse_shape("paged_attention_decode", bad)
    shapes = cli.shapes_for("paged_attention_decode", [], ["llama-3-8b"], [1, 16])
    assert shapes == [(1, cli.DECODE_CONTEXT, 32, 8, 128), (16, cli.DECODE_CONTEXT, 32, 8, 128)]
    assert cli.engine_tokens("paged_attention_decode", "vllm", "gfx942") == [1, 2, 4, 5, 16, 17, 64, 65, 256,
                                                                              257, 512]
    assert cli.engine_tokens("paged_attention_decode", "sglang", "gfx1201") == [1, 2, 4, 5, 8]
