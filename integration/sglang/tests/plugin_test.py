"""The plugin as SGLang loads it: through its own plugin loader and the installed entry point,
every seam hooked through its HookRegistry and put back by unregister; refused whole, with one
warning, by an SGLang that is not the one it was written against; and a seam left stock by its
switch."""

import importlib
import importlib.metadata
import inspect
import os
import subprocess
import sys
import warnings

import pytest

from hk_engine.contract import resolve
from hk_engine.plugin import EngineWarning

import hk_sglang
from hk_sglang import attention
from hk_sglang.plugin import plugin

MOE = "sglang.srt.layers.moe.moe_runner.triton_utils.fused_moe.fused_experts"
# Modules that import fused_experts by name (the HookRegistry rebinds those copies too).
MOE_COPIES = ["sglang.srt.layers.moe.moe_runner.triton_utils", "sglang.srt.layers.moe.fused_moe_triton"]


def targets():
    return [t.path for p in plugin().patches for t in p.targets]


def stock():
    from sglang.srt.layers.attention.attention_registry import ATTENTION_BACKENDS
    from sglang.srt.arg_groups.choices import ATTENTION_BACKEND_CHOICES

    return {path: resolve(path)[0] for path in targets()}, "hk" in ATTENTION_BACKENDS, \
        "hk" in ATTENTION_BACKEND_CHOICES


@pytest.fixture
def loader(runtime, monkeypatch):
    """SGLang's plugin loader as a fresh process has it."""
    import sglang.srt.plugins as plugins

    monkeypatch.setattr(plugins, "_plugins_loaded", False)
    monkeypatch.delenv("SGLANG_PLUGINS", raising=False)
    yield plugins
    plugin().unregister()


def test_sglangs_loader_registers_the_plugin_through_its_entry_point(loader):
    from sglang.srt.arg_groups.choices import ATTENTION_BACKEND_CHOICES
    from sglang.srt.layers.attention.attention_registry import ATTENTION_BACKENDS
    from sglang.srt.plugins.hook_registry import HookRegistry, HookSource, HookType

    (ep,) = [ep for ep in importlib.metadata.entry_points(group="sglang.srt.plugins") if ep.name == "hk"]
    assert ep.value == "hk_sglang:register" and ep.dist.name == "hk-sglang"
    originals, _, _ = stock()
    copies = {m: importlib.import_module(m).fused_experts for m in MOE_COPIES}
    assert all(copy is originals[MOE] for copy in copies.values())
    loader.load_plugins()

    assert plugin().registered and plugin().names() == ["linear", "awq", "moe", "norm", "attention", "w8a8"]
    assert sorted(plugin().hooks) == sorted(targets()) and len(targets()) == 9
    for path in targets():
        replacement, installed = plugin().hooks[path], resolve(path)[0]
        assert replacement.__module__.startswith("hk_sglang.") and replacement.__wrapped__ is originals[path]
        # SGLang's REPLACE wrapper, calling hk's function, registered by the loader on hk's behalf.
        assert installed is not originals[path] and installed.__wrapped__ is originals[path], path
        assert replacement in [c.cell_contents for c in installed.__closure__], path
        assert HookRegistry._hooks[path] == [(HookType.REPLACE, replacement, HookSource("hk", "hk-sglang"))]
        assert inspect.signature(installed) == inspect.signature(originals[path])
    assert all(sys.modules[m].fused_experts is resolve(MOE)[0] for m in MOE_COPIES)
    assert ATTENTION_BACKENDS["hk"] is attention.create_backend and "hk" in ATTENTION_BACKEND_CHOICES

    plugin().unregister()
    assert stock() == (originals, False, False)
    assert all(sys.modules[m].fused_experts is originals[MOE] for m in MOE_COPIES)
    assert not any(path in HookRegistry._hooks or path in HookRegistry._patched for path in targets())
    # Registered again (an engine restarted in the same process), the hooks apply again.
    assert hk_sglang.register()
    assert all(resolve(path)[0].__wrapped__ is originals[path] for path in targets())


@pytest.mark.parametrize("change, expected", [
    (lambda mp: mp.delattr("sglang.srt.layers.attention.attention_registry.register_attention_backend"),
     "attention_registry has no attribute register_attention_backend"),
    (lambda mp: mp.setattr("sglang.srt.layers.moe.moe_runner.triton_utils.fused_moe.fused_experts",
                           lambda hidden_states, w1, w2, topk_ids, config: None),
     "fused_experts takes (hidden_states, w1, w2, topk_ids, config)"),
    (lambda mp: mp.setattr("sglang.__version__", "0.5.22"), "sglang 0.5.22 is not a version"),
    (lambda mp: mp.setattr("sglang.srt.layers.quantization.w8a8_int8.W8A8Int8LinearMethod.apply",
                           lambda self, layer, x_q, x_scale: None),
     "W8A8Int8LinearMethod.apply takes (self, layer, x_q, x_scale)"),
    (lambda mp: mp.setattr("sglang.srt.layers.quantization.fp8_utils.triton_w8a8_block_fp8_linear",
                           lambda input, weight, weight_scale, block_size: None),
     "triton_w8a8_block_fp8_linear takes (input, weight, weight_scale, block_size)"),
    (lambda mp: mp.setattr("sglang.srt.layers.quantization.fp8_utils.dispatch_w8a8_block_fp8_linear",
                           lambda backend: None),
     "dispatch_w8a8_block_fp8_linear takes (backend)"),
])
def test_an_sglang_not_as_expected_stays_stock_with_one_warning(runtime, monkeypatch, change, expected):
    from sglang.srt.plugins.hook_registry import HookRegistry

    plugin.cache_clear()  # built again below, reading the (changed) version
    change(monkeypatch)
    before = stock()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert hk_sglang.register() is False
    refusals = [w for w in caught if issubclass(w.category, EngineWarning)]
    assert len(refusals) == 1 and expected in str(refusals[0].message), [str(w.message) for w in caught]
    assert stock() == before and plugin().hooks == {} and plugin().names() == []
    assert not any(path in HookRegistry._hooks for path in targets())
    plugin.cache_clear()


def test_a_switch_leaves_its_seam_stock(runtime, monkeypatch):
    monkeypatch.setenv("HK_SGLANG_MOE", "0")
    originals, _, _ = stock()
    assert hk_sglang.register()
    try:
        assert plugin().names() == ["linear", "awq", "norm", "attention", "w8a8"]
        assert resolve(MOE)[0] is originals[MOE] and MOE not in plugin().hooks
        assert all(resolve(p)[0] is not originals[p] for p in targets() if p != MOE)
    finally:
        plugin().unregister()
    assert stock()[0] == originals


CLI = """
import sys

import torchvision_standin

torchvision_standin.install()
from sglang.srt.plugins import load_plugins
from sglang.srt.server_args import ServerArgs, prepare_server_args

load_plugins()  # as `sglang serve` and sglang.launch_server do before they parse their arguments
args = prepare_server_args(["--model-path", "m", "--attention-backend", "hk", "--page-size", "16", "--device", "cpu"])
print(args.attention_backend, ServerArgs(model_path="m", attention_backend="hk", device="cpu").attention_backend)
"""


@pytest.mark.parametrize("switch", ["on", "off"])
def test_the_command_line_and_server_args_take_hk_from_the_loaded_plugin(switch):
    # A fresh process, as `sglang serve --attention-backend hk` is: SGLang's loader loads the plugin
    # from its entry point, which adds "hk" to the choices; with the plugin off the CLI refuses it.
    env = dict(os.environ, HK_SGLANG="1" if switch == "on" else "0")
    run = subprocess.run([sys.executable, "-c", CLI], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, timeout=300)
    if switch == "on":
        assert run.returncode == 0 and run.stdout.split()[-2:] == ["hk", "hk"], run.stderr[-3000:]
    else:
        assert run.returncode == 2 and "--attention-backend: invalid choice: 'hk'" in run.stderr, run.stderr[-3000:]
