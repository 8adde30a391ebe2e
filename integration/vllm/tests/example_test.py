"""examples/11_vllm_integration.py's vLLM part, inside vLLM's environment: the example's own
plugin patches vLLM's SiluAndMul with its kernel, the layer computes through it, and a call the
kernel does not cover stays vLLM's."""

import importlib.util
import os
import sys

import torch

from conftest import close


def example():
    path = os.path.join(os.environ["TEST_SRCDIR"], "hk_dsl", "examples", "11_vllm_integration.py")
    sys.path.insert(0, os.path.dirname(path))  # its `common`
    spec = importlib.util.spec_from_file_location("vllm_integration_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_patches_vllms_layer(vllm_config, counts):
    ex = example()
    assert ex.patch_into_vllm("cpu") == {"example.plugin": {"patched": 1}, "example.silu_and_mul": {"hk": 1}}
    from vllm.model_executor.layers.activation import SiluAndMul

    x = torch.randn(4, 64)  # fp32: not the kernel's
    close(SiluAndMul().forward_native(x), ex.reference(x), torch.float32)
    assert counts.snapshot()["example.silu_and_mul"] == {"hk": 1, "engine:uncovered": 1}
