"""The plugin's CPU mode (HK_SGLANG_CPU=1): refused on a GPU or without a CPU runner for hk;
installed, every call hk covers routes to hk, and the one kernel SGLang's generic platform
imports from vLLM (RotaryEmbedding's fallback, vllm._custom_ops.rotary_embedding) has a stand-in
while vLLM itself stays absent, computing what SGLang's own rotary computes."""

import importlib
import os
import sys

import pytest
import torch


@pytest.fixture
def fresh(runtime, monkeypatch):
    """The plugin registered, no routes or stand-in from before, all put back after."""
    from hk_sglang.plugin import plugin

    monkeypatch.delenv("HK_ENGINE_ROUTES", raising=False)
    monkeypatch.delitem(sys.modules, "vllm._custom_ops", raising=False)
    monkeypatch.setenv("HK_DEVICE", "interp")
    assert plugin().register()
    yield plugin()
    sys.modules.pop("vllm._custom_ops", None)
    plugin().unregister()


@pytest.mark.parametrize("problem, expected", [
    ("gpu", r"this machine has a GPU \(AMD Radeon PRO W7900\): unset HK_SGLANG_CPU"),
    ("runner", "set HK_DEVICE=interp or HK_DEVICE=emu, not 'gpu'"),
])
def test_the_cpu_mode_refuses_a_gpu_and_a_gpu_runner(fresh, monkeypatch, problem, expected):
    from hk_sglang import cpu

    if problem == "gpu":
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "get_device_name", lambda i=0: "AMD Radeon PRO W7900")
    else:
        monkeypatch.setenv("HK_DEVICE", "gpu")
    with pytest.raises(cpu.RefusedError, match=expected):
        cpu.install(fresh)
    assert "vllm._custom_ops" not in sys.modules and "HK_ENGINE_ROUTES" not in os.environ


def test_the_cpu_mode_routes_to_hk_and_stands_in_for_the_rotary_kernel_it_imports(fresh):
    from hk_engine import testing
    from hk_sglang import cpu
    from sglang.srt.layers.rotary_embedding import get_rope

    cpu.install(fresh)
    assert os.environ["HK_ENGINE_ROUTES"] == testing.ALL_HK_ROUTES
    from vllm._custom_ops import rotary_embedding  # what RotaryEmbedding.__init__ imports here

    with pytest.raises(ImportError):
        importlib.import_module("vllm")  # SGLang's other optional imports of vLLM still find none
    rope = get_rope(64, rotary_dim=64, max_position=256, base=10000, is_neox_style=True, dtype=torch.float32)
    positions = torch.tensor([0, 3, 200])
    q, k = torch.randn(3, 2 * 64), torch.randn(3, 64)
    want_q, want_k = rope.forward_native(positions, q.clone(), k.clone())
    rotary_embedding(positions, q, k, 64, rope.cos_sin_cache, True)
    torch.testing.assert_close(q, want_q)
    torch.testing.assert_close(k, want_k)
