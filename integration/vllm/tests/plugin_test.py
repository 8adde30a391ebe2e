"""hk's vLLM plugin as vLLM loads it: through its general-plugin entry point, every seam patched
(and each put back by unregister); a vLLM that is not the one it was written against (a seam
missing, a signature changed, another version) stays stock with one warning; switches."""

import importlib.metadata
import warnings

import pytest

from hk_engine import contract, plugin as engine_plugin


def targets(p):
    return [t.path for patch in p.patches for t in patch.targets]


def test_the_entry_point_loads_the_plugin_and_every_seam_is_patched(loaded):
    (ep,) = [e for e in importlib.metadata.entry_points(group="vllm.general_plugins") if e.name == "hk"]
    assert ep.value == "hk_vllm:register" and ep.dist.name == "hk-vllm"
    assert loaded.names() == ["linear", "awq", "moe", "norm", "rotary", "activation", "attention", "w8a8"]
    for path in targets(loaded):
        fn = contract.resolve(path)[0]
        assert fn.__module__.startswith("hk_vllm."), (path, fn)
    from vllm import ir
    from vllm.v1.attention.backends.registry import AttentionBackendEnum

    assert AttentionBackendEnum.CUSTOM.get_path() == "hk_vllm.attention.HKAttentionBackend"
    # The name vLLM's Attention layer looks the backend up by (cpu_mode_test builds that layer).
    assert AttentionBackendEnum.CUSTOM.get_class().get_name() == "CUSTOM"
    assert "hk" in ir.ops.rms_norm.impls and "hk" in ir.ops.fused_add_rms_norm.impls
    ours = ["HkInt8ScaledMMLinearKernel", "HkFP8ScaledMMLinearKernel", "HkFp8BlockScaledMMKernel"]
    assert hk_scaled_mm_kernels() == {"ROCM": ours, "CPU": ours}


def hk_scaled_mm_kernels():
    """The first kernel of vLLM's int8, fp8 and block fp8 lists per platform, where it is hk's."""
    from vllm.model_executor.kernels import linear as kl
    from vllm.platforms import PlatformEnum

    firsts = {}
    for platform in PlatformEnum:
        names = [t[platform][0].__name__ for t in (kl._POSSIBLE_INT8_KERNELS, kl._POSSIBLE_FP8_KERNELS,
                                                       kl._POSSIBLE_FP8_BLOCK_KERNELS)
                 if t.get(platform) and t[platform][0].__module__ == "hk_vllm.w8a8"]
        if names:
            firsts[platform.name] = names
    return firsts


def test_the_config_puts_hk_first_in_the_ir_priority(loaded):
    from vllm.config import VllmConfig

    config = VllmConfig()
    assert config.kernel_config.ir_op_priority.rms_norm[0] == "hk"
    assert config.kernel_config.ir_op_priority.fused_add_rms_norm[0] == "hk"


@pytest.fixture
def fresh(loaded):
    """A second plugin object on the same vLLM, with the loaded one's patches taken off for the
    test (and put back after)."""
    from hk_vllm import plugin

    plugin.plugin().unregister()
    plugin.plugin.cache_clear()
    yield plugin.plugin
    plugin.plugin().unregister()
    plugin.plugin.cache_clear()
    assert plugin.plugin().register()


def stock(p):
    return [contract.resolve(path)[0] for path in targets(p)]


@pytest.mark.parametrize("fake, expected", [
    ("seam", "has no attribute AutoAWQLinearMethod"),
    ("signature", "UnquantizedLinearMethod.apply takes (self, layer, inputs)"),
    ("version", "vllm 0.32.4 is not a version this plugin was written for (0.33.*)"),
    ("scaled_mm", "FP8ScaledMMLinearKernel.apply_scaled_mm takes (self, a, b"),
])
def test_an_older_vllm_stays_stock_with_one_warning(fresh, monkeypatch, fake, expected):
    if fake == "seam":
        from vllm.model_executor.layers.quantization import auto_awq

        monkeypatch.delattr(auto_awq, "AutoAWQLinearMethod")
    elif fake == "signature":
        from vllm.model_executor.layers.linear import UnquantizedLinearMethod

        monkeypatch.setattr(UnquantizedLinearMethod, "apply", lambda self, layer, inputs: None)
    elif fake == "scaled_mm":
        from vllm.model_executor.kernels.linear.scaled_mm.ScaledMMLinearKernel import FP8ScaledMMLinearKernel

        monkeypatch.setattr(FP8ScaledMMLinearKernel, "apply_scaled_mm", lambda self, a, b, scale_a, scale_b: None)
    else:
        import vllm

        monkeypatch.setattr(vllm, "__version__", "0.32.4")
    p = fresh()
    before = stock(p) if fake != "seam" else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert not p.register()
    assert len(caught) == 1 and issubclass(caught[0].category, engine_plugin.EngineWarning)
    assert expected in str(caught[0].message)
    assert p.names() == []
    if before is not None:
        assert stock(p) == before
    from vllm import ir
    from vllm.v1.attention.backends.registry import AttentionBackendEnum

    assert "hk" not in ir.ops.rms_norm.impls and not AttentionBackendEnum.CUSTOM.is_overridden()
    assert hk_scaled_mm_kernels() == {}


def test_switches_leave_seams_stock(fresh, monkeypatch):
    monkeypatch.setenv("HK_VLLM_MOE", "0")
    monkeypatch.setenv("HK_VLLM_ATTENTION", "0")
    monkeypatch.setenv("HK_VLLM_W8A8", "0")
    p = fresh()
    assert p.register() and p.names() == ["linear", "awq", "norm", "rotary", "activation"]
    assert hk_scaled_mm_kernels() == {}
    from vllm.model_executor.layers.fused_moe.experts.triton_moe import TritonExperts
    from vllm.v1.attention.backends.registry import AttentionBackendEnum

    assert not TritonExperts.apply.__module__.startswith("hk_vllm")
    assert not AttentionBackendEnum.CUSTOM.is_overridden()
    p.unregister()
    monkeypatch.setenv("HK_VLLM", "0")
    assert not fresh().register()
