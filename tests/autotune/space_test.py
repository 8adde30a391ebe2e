"""hk.space: candidates, constraints, the moves of a pattern search, and every refusal of a bad
space (empty, a knob without values, a knob the kernel does not take, constraints no candidate
meets) as an hk.errors.TuneError."""

import pytest

import hk
from hk.autotune import Config, Space
from hk.errors import TuneError


def test_candidates_are_the_product_the_constraints_admit_in_order():
    s = hk.space(BM=[64, 128, 256], waves=[4, 8], where=lambda c: c.BM // (c.waves // 2) >= 32)
    assert s.size == 6
    assert [c.as_dict() for c in s.candidates()] == [
        {"BM": 64, "waves": 4}, {"BM": 128, "waves": 4}, {"BM": 128, "waves": 8},
        {"BM": 256, "waves": 4}, {"BM": 256, "waves": 8}]
    assert s.admits(Config({"BM": 128, "waves": 8}))
    assert not s.admits(Config({"BM": 64, "waves": 8}))      # the constraint
    assert not s.admits(Config({"BM": 96, "waves": 4}))      # not a value of BM
    assert not s.admits(Config({"BM": 64}))                  # a knob missing


def test_several_constraints_and_where_chained():
    s = hk.space(a=[1, 2, 3, 4], b=[1, 2], where=[lambda c: c.a % 2 == 0, lambda c: c.a * c.b <= 4])
    assert [c.as_dict() for c in s.candidates()] == [{"a": 2, "b": 1}, {"a": 2, "b": 2}, {"a": 4, "b": 1}]
    assert [c.as_dict() for c in s.where(lambda c: c.b == 1).candidates()] == [{"a": 2, "b": 1}, {"a": 4, "b": 1}]


def test_neighbours_are_one_knob_one_step_away_and_admitted():
    s = hk.space(a=[1, 2, 3], b=["x", "y"], where=lambda c: not (c.a == 3 and c.b == "x"))
    around = s.neighbours(Config({"a": 2, "b": "x"}))
    assert sorted(tuple(c.items()) for c in around) == [(("a", 1), ("b", "x")), (("a", 2), ("b", "y"))]


def test_a_config_reads_as_attributes_and_keys_and_hashes_by_value():
    c = Config({"BM": 128, "BK": 32})
    assert c.BM == 128 and c["BK"] == 32 and c.as_dict() == {"BM": 128, "BK": 32}
    assert c == Config({"BK": 32, "BM": 128}) and hash(c) == hash(Config({"BK": 32, "BM": 128}))
    assert c.replace(BK=64).BK == 64 and c.BK == 32
    with pytest.raises(AttributeError, match="no knob 'BN'"):
        c.BN


def test_with_values_adds_values_and_replace_sets_them():
    s = hk.space(a=[1, 2], b=[1])
    assert s.with_values(a=[2, 3]).knobs == {"a": (1, 2, 3), "b": (1,)}
    assert s.replace(b=[5, 6], c=[0]).knobs == {"a": (1, 2), "b": (5, 6), "c": (0,)}
    with pytest.raises(TuneError, match="no knob c"):
        s.with_values(c=[1])


@pytest.mark.parametrize("make, message", [
    (lambda: hk.space(), "at least one knob"),
    (lambda: hk.space(BM=[]), "knob BM has no values"),
    (lambda: hk.space(BM=[64, 64]), "repeats a value"),
    (lambda: hk.space(BM=[object()]), "numbers, strings or booleans"),
    (lambda: hk.space(BM=[64], where=[3]), "a constraint is a function"),
    (lambda: hk.space(BM=[64, 128], where=lambda c: c.BM > 256).candidates(), "no candidate of the space"),
    (lambda: hk.space(BM=[64], where=lambda c: c.BN > 1).candidates(), "constraint #1 of the space raised"),
])
def test_bad_spaces_are_tune_errors(make, message):
    with pytest.raises(TuneError, match=message):
        make()


def test_constraints_no_candidate_meets_say_which_rejected_how_many():
    s = hk.space(a=[1, 2, 3], where=[lambda c: c.a > 1, lambda c: c.a > 5])
    with pytest.raises(TuneError) as e:
        s.candidates()
    assert "constraint #1 rejected 1, constraint #2 rejected 2" in str(e.value)


def test_a_kernel_tunes_only_its_constants():
    def body(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, BLOCK=64):
        pass

    k = hk.kernel(grid=(1,), tune=hk.space(BLOCK=[64, 128]))(body)
    assert isinstance(k.tune, Space)
    with pytest.raises(TuneError, match="its space tunes WAVES, which is not among its constants"):
        hk.kernel(grid=(1,), tune=hk.space(BLOCK=[64], WAVES=[4]))(body)
    with pytest.raises(TuneError, match="tune= is an hk.space"):
        hk.kernel(grid=(1,), tune={"BLOCK": [64]})(body)


def test_the_gemm_space_per_target_and_its_knobs():
    from hk.ops import gemm

    for arch in ("gfx1100", "gfx1201", "gfx942", "gfx950"):
        candidates = gemm.LINEAR.space_for(arch).candidates()
        assert len(candidates) >= 40, arch
        default = Config(gemm._linear_default(arch))
        assert default in candidates, arch  # today's choice competes
    with pytest.raises(TuneError, match="linear takes no knob BLOCK"):
        gemm.LINEAR.space_for("gfx1100", hk.space(BLOCK=[1]))
    # C's tile rows per wave are whole 16-row tiles; A's and B's two buffers fit 64 KiB on gfx1100.
    for c in gemm.LINEAR.space_for("gfx1100").candidates():
        assert c.BM % (16 * (c.waves // 2)) == 0 and 4 * (c.BM + c.BN) * c.BK <= 65536


def test_linear_buckets():
    from hk.ops import gemm

    assert gemm.linear_bucket((4096, 4096, 4096)) == "bf16 N=4096 K=4096 M=2049-4096"
    assert gemm.linear_bucket((2049, 6144, 4096, "fp16")) == "fp16 N=6144 K=4096 M=2049-4096"
    assert gemm.linear_bucket((33, 8, 8)) == "bf16 N=8 K=8 M=33-64"
    assert gemm.linear_bucket((10 ** 6, 8, 8)) == "bf16 N=8 K=8 M>16384"


def test_the_attention_space_and_buckets():
    from hk.ops import attention

    candidates = attention.ATTENTION.space_for("gfx1100").candidates()
    assert len(candidates) == 32 and Config({"KB": 0, "WAVES": 8, "KREAD": 0}) in candidates
    shape = (1, 32, 8, 4096, 4096, 128, True)
    assert attention.attention_bucket(shape) == "d128 g4 causal Nq=2049-4096 Nk=2049-4096"
    assert attention.attention_bucket((2, 8, 8, 100, 40000, 64, False)) == "d64 g1 full Nq=1-128 Nk=>32768"
    kernel, constants = attention.ATTENTION.kernel(Config({"KB": 0, "WAVES": 8, "KREAD": 0}), shape)
    assert kernel is attention.attention_kernel(128, 4) and constants == {"CAUSAL": True}
    kernel, _ = attention.ATTENTION.kernel(Config({"KB": 16, "WAVES": 4, "KREAD": 32}), shape)
    assert kernel is attention.attention_kernel(128, 4, 16, 4, 32) and kernel.warps == 4
