"""hk's attention backend inside vLLM's own Attention layer, built the engine's way with
`--attention-backend CUSTOM` selected (the layer looks its backend up in AttentionBackendEnum by
get_name(), on every platform); and the plugin's CPU mode (HK_VLLM_CPU=1): refused on a GPU or
without a CPU runner for hk, what it puts in place and takes back, and its stand-ins for the
kernels vLLM's CPU build calls, against what those kernels compute."""

import pytest
import torch

from conftest import TINY, close

HEADS, KV_HEADS, D = TINY["num_attention_heads"], TINY["num_key_value_heads"], TINY["head_dim"]


def test_vllms_attention_layer_builds_with_the_custom_backend_selected(loaded, vllm_config, monkeypatch):
    from vllm.config import AttentionConfig, VllmConfig, set_current_vllm_config
    from vllm.model_executor.layers.attention.attention import Attention
    from vllm.platforms import current_platform
    from vllm.v1.attention import selector
    from vllm.v1.attention.backends.registry import AttentionBackendEnum

    # A GPU platform takes the selected backend (after checking it supports the layer); the CPU
    # platform would put CPU_ATTN in its place whatever is selected.
    def take_the_selected(selected, attn_selector_config, num_heads=None):
        assert selected == AttentionBackendEnum.CUSTOM
        return selected.get_path()

    monkeypatch.setattr(current_platform, "get_attn_backend_cls", take_the_selected)
    selector._cached_get_attn_backend.cache_clear()
    config = VllmConfig(model_config=vllm_config.model_config,
                        attention_config=AttentionConfig(backend=AttentionBackendEnum.CUSTOM))
    with set_current_vllm_config(config):
        layer = Attention(HEADS, D, D ** -0.5, num_kv_heads=KV_HEADS, prefix="model.layers.0.self_attn.attn")
    selector._cached_get_attn_backend.cache_clear()
    assert layer.attn_backend is AttentionBackendEnum.CUSTOM.get_class()
    assert layer.backend is AttentionBackendEnum.CUSTOM and layer.attn_backend.get_name() == "CUSTOM"
    assert type(layer.impl).__module__ == "hk_vllm.attention"


@pytest.fixture
def cpu_mode(loaded, monkeypatch):
    """The CPU mode installed in this process (as HK_VLLM_CPU=1 has the entry point do), taken
    back after the test."""
    from hk_vllm import cpu

    monkeypatch.setenv("HK_DEVICE", "interp")
    monkeypatch.delenv("HK_ENGINE_ROUTES", raising=False)
    cpu.install(loaded)
    yield cpu
    cpu.uninstall()


def test_the_cpu_mode_puts_hks_backend_in_cpu_attns_place_and_takes_it_back(loaded, monkeypatch):
    import os

    from hk_engine import testing
    from hk_vllm import cpu
    from vllm.model_executor.custom_op import CustomOp
    from vllm.model_executor.layers import utils
    from vllm.model_executor.layers.activation import SiluAndMul
    from vllm.v1.attention.backends.registry import AttentionBackendEnum

    monkeypatch.setenv("HK_DEVICE", "interp")
    monkeypatch.delenv("HK_ENGINE_ROUTES", raising=False)
    from vllm.model_executor.kernels import linear as kl
    from vllm.model_executor.kernels.linear.scaled_mm.triton import (TritonFp8BlockScaledMMKernel,
                                                                     TritonInt8ScaledMMLinearKernel)
    from vllm.platforms import PlatformEnum

    gemm_choice, silu_cpu = utils.check_cpu_sgl_kernel, SiluAndMul.forward_cpu
    int8_lists = kl._POSSIBLE_INT8_KERNELS
    int8_cpu = list(int8_lists[PlatformEnum.CPU])
    cpu.install(loaded)
    try:
        assert AttentionBackendEnum.CPU_ATTN.get_path() == "hk_vllm.attention.HKAttentionBackend"
        assert AttentionBackendEnum.CPU_ATTN.get_class().get_name() == "CUSTOM"
        assert os.environ["HK_ENGINE_ROUTES"] == testing.ALL_HK_ROUTES
        assert utils.check_cpu_sgl_kernel is not gemm_choice
        assert not utils.check_cpu_sgl_kernel(4096, 4096, torch.bfloat16)
        assert SiluAndMul.forward_cpu is CustomOp.forward_hip and SiluAndMul.op is torch.ops._C.silu_and_mul
        assert kl._POSSIBLE_INT8_KERNELS[PlatformEnum.CPU] == kl._POSSIBLE_INT8_KERNELS[PlatformEnum.ROCM]
        assert kl._POSSIBLE_FP8_KERNELS[PlatformEnum.CPU][0].__name__ == "HkFP8ScaledMMLinearKernel"
        assert TritonInt8ScaledMMLinearKernel.is_supported() == (True, None)
        assert [k.__name__ for k in kl._POSSIBLE_FP8_BLOCK_KERNELS[PlatformEnum.CPU]] == [
            k.__name__ for k in kl._POSSIBLE_FP8_BLOCK_KERNELS[PlatformEnum.ROCM]]
        assert TritonFp8BlockScaledMMKernel.is_supported() == (True, None)
    finally:
        cpu.uninstall()
    assert kl._POSSIBLE_INT8_KERNELS is int8_lists and kl._POSSIBLE_INT8_KERNELS[PlatformEnum.CPU] == int8_cpu
    assert not TritonInt8ScaledMMLinearKernel.is_supported()[0]
    assert not TritonFp8BlockScaledMMKernel.is_supported()[0]
    assert AttentionBackendEnum.CPU_ATTN.get_path() == "vllm.v1.attention.backends.cpu_attn.CPUAttentionBackend"
    assert utils.check_cpu_sgl_kernel is gemm_choice and SiluAndMul.forward_cpu is silu_cpu
    assert "op" not in vars(SiluAndMul)


@pytest.mark.parametrize("problem, expected", [
    ("gpu", "this machine has a GPU (AMD Instinct MI300X): unset HK_VLLM_CPU"),
    ("runner", "set HK_DEVICE=interp or HK_DEVICE=emu, not 'gpu'"),
])
def test_the_cpu_mode_refuses_a_gpu_and_a_gpu_runner(loaded, monkeypatch, problem, expected):
    from hk_vllm import cpu

    monkeypatch.setenv("HK_DEVICE", "gpu" if problem == "runner" else "interp")
    if problem == "gpu":
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "get_device_name", lambda i=0: "AMD Instinct MI300X")
    with pytest.raises(cpu.RefusedError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        cpu.install(loaded)
    assert not cpu._installed


def test_the_stand_ins_compute_what_vllms_kernels_do(cpu_mode):
    from vllm.model_executor.layers.rotary_embedding import get_rope

    # The slot of each scheduled token: its request's block, the row in it; padding -1.
    starts = torch.tensor([0, 3, 5], dtype=torch.int32)
    positions = torch.tensor([0, 1, 17, 30, 31])
    table = torch.tensor([[4, 9, 0], [2, 7, 0]], dtype=torch.int32)
    slots = torch.zeros(8, dtype=torch.int64)
    torch.ops._C.compute_slot_mapping_kernel_impl(starts, positions, table, slots, 16)
    assert slots.tolist() == [64, 65, 9 * 16 + 1, 7 * 16 + 14, 7 * 16 + 15, -1, -1, -1]

    logits = torch.tensor([[0.0, 5.0, 1.0], [3.0, -1.0, 2.0]])
    assert torch.ops._C.greedy_argmax(logits).tolist() == [1, 0]
    # Gumbel-max: the same seed the same token; a peaked distribution its mode; a flat one, many.
    seeds = torch.tensor([7, 7])
    flat = torch.zeros(2, 64)
    same = torch.ops._C.fused_gumbel_argmax(flat, seeds)
    assert same[0] == same[1] and torch.ops._C.fused_gumbel_argmax(logits * 100, seeds).tolist() == [1, 0]
    assert len({int(torch.ops._C.fused_gumbel_argmax(flat[:1], torch.tensor([s]))) for s in range(40)}) > 20

    # Rotary, neox and interleaved, against vLLM's own rotary in torch.
    for neox in (True, False):
        rope = get_rope(D, 1024, is_neox_style=neox, dtype=torch.float32)
        q, k = torch.randn(5, HEADS * D), torch.randn(5, KV_HEADS * D)
        want_q, want_k = rope.forward_native(positions, q.clone(), k.clone())
        torch.ops._C.rotary_embedding(positions, q, k, D, rope.cos_sin_cache, neox)
        close(q, want_q, torch.float32)
        close(k, want_k, torch.float32)

    x = torch.randn(3, 2 * 48)
    out = torch.empty(3, 48)
    torch.ops._C.silu_and_mul(out, x)
    close(out, torch.nn.functional.silu(x[:, :48]) * x[:, 48:], torch.float32)


def test_the_engine_attention_stand_in_against_sdpa(cpu_mode):
    from hk_vllm import cpu_kernels

    bs, blocks = 16, 6
    key_cache, value_cache = torch.zeros(blocks, bs, KV_HEADS, D), torch.zeros(blocks, bs, KV_HEADS, D)
    table = torch.tensor([[3, 1, 0], [5, 2, 4]], dtype=torch.int32)
    lens, new = [20, 35], [20, 3]
    slots = torch.tensor([int(table[s, p // bs]) * bs + p % bs for s in range(2) for p in range(lens[s])])
    keys, values = torch.randn(len(slots), KV_HEADS, D), torch.randn(len(slots), KV_HEADS, D)
    cpu_kernels.reshape_and_cache_flash(keys, values, key_cache, value_cache, slots, "auto", None, None)
    q = torch.randn(sum(new), HEADS, D)
    out = torch.empty_like(q)
    starts = torch.tensor([0, 20, 23], dtype=torch.int32)
    for window in ((-1, -1), (7, 0)):
        cpu_kernels.unified_attention(q, key_cache, value_cache, out, starts, 20, torch.tensor(lens), 35, D ** -0.5,
                                      True, window, table, 0, None, None, None)
        for s, (n, m) in enumerate(zip(lens, new)):
            k = keys[sum(lens[:s]):sum(lens[:s + 1])].repeat_interleave(HEADS // KV_HEADS, 1).transpose(0, 1)
            v = values[sum(lens[:s]):sum(lens[:s + 1])].repeat_interleave(HEADS // KV_HEADS, 1).transpose(0, 1)
            qpos, kpos = torch.arange(n - m, n)[:, None], torch.arange(n)[None, :]
            mask = (kpos <= qpos) & ((qpos - kpos <= window[0]) if window[0] >= 0 else True)
            want = torch.nn.functional.scaled_dot_product_attention(q[starts[s]:starts[s + 1]].transpose(0, 1), k, v,
                                                                    attn_mask=mask, scale=D ** -0.5)
            close(out[starts[s]:starts[s + 1]], want.transpose(0, 1), torch.float32)
