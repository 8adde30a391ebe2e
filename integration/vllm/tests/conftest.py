"""What the vLLM plugin's tests share: vLLM's CPU platform, hk's interpreter, a tiny model's
config (no weights: layers are built and filled by the tests), one process group."""

import json
import os
import socket

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
os.environ.setdefault("HK_DEVICE", "interp")

import pytest  # noqa: E402
import torch  # noqa: E402

TINY = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
        "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
        "num_hidden_layers": 1, "vocab_size": 128, "max_position_embeddings": 256, "rms_norm_eps": 1e-6,
        "torch_dtype": "bfloat16"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def vllm_config(tmp_path_factory):
    """A VllmConfig of a tiny Llama, current for the session, with its one-rank process group."""
    from vllm.config import ModelConfig, VllmConfig, set_current_vllm_config
    from vllm.distributed import init_distributed_environment, initialize_model_parallel

    model = tmp_path_factory.mktemp("tiny-llama")
    (model / "config.json").write_text(json.dumps(TINY))
    config = VllmConfig(model_config=ModelConfig(model=str(model), skip_tokenizer_init=True, dtype="bfloat16"))
    with set_current_vllm_config(config):
        init_distributed_environment(1, 0, "tcp://127.0.0.1:%d" % free_port(), 0, "gloo")
        initialize_model_parallel(1, 1)
        yield config


@pytest.fixture(scope="session", autouse=True)
def portable_cpu_linear():
    """vLLM's CPU platform repacks a 16-bit linear layer's weight for its own CPU kernels where
    the CPU has AMX (torch.ops._C, which its PyPI wheel lacks) and drops layer.weight. On a GPU
    the layer keeps its weight, which hk's patch reads: keep vLLM on its portable path, whatever
    CPU runs the tests."""
    from vllm.model_executor.layers import utils

    chosen = utils.check_cpu_sgl_kernel
    utils.check_cpu_sgl_kernel = lambda n, k, dtype: False
    yield
    utils.check_cpu_sgl_kernel = chosen


@pytest.fixture(scope="session")
def loaded(vllm_config):
    """hk's plugin, loaded by vLLM's own plugin loader from the installed entry point."""
    import vllm.plugins

    from hk_vllm import plugin

    vllm.plugins.plugins_loaded = False
    vllm.plugins.load_general_plugins()
    assert plugin.plugin().registered
    return plugin.plugin()


@pytest.fixture
def counts():
    from hk_engine import counters

    counters.reset()
    return counters


def close(got, want, dtype=torch.bfloat16):
    tol = {torch.bfloat16: (1.6e-2, 1e-2), torch.float16: (1e-3, 1e-3)}.get(dtype, (1e-5, 1e-5))
    torch.testing.assert_close(got.float(), want.float(), rtol=tol[0], atol=tol[1])
