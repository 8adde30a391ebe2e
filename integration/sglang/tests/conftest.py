"""What every test of the SGLang plugin needs: hk's kernels on the interpreter, SGLang importable
on its CPU build (which has no torchvision: a stand-in for the names SGLang's modules import from
it), SGLang's runtime context (server args, a one-process gloo group, the model-parallel groups
its parallel layers read), a routing table that sends every op to hk, and the plugin registered."""

import json
import os
import socket

os.environ["HK_DEVICE"] = "interp"

import pytest  # noqa: E402

import torchvision_standin  # noqa: E402

torchvision_standin.install()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def runtime():
    """SGLang's process context as a one-GPU scheduler has it, on the CPU."""
    import torch.distributed
    from sglang.srt.distributed.parallel_state import init_distributed_environment, initialize_model_parallel
    from sglang.srt.runtime_context import SpawnRanks, publish
    from sglang.srt.server_args import ServerArgs

    publish(ServerArgs(model_path="dummy", device="cpu"), role="scheduler", ranks=SpawnRanks(world_rank=0))
    init_distributed_environment(world_size=1, rank=0, local_rank=0, backend="gloo",
                                 distributed_init_method="tcp://127.0.0.1:%d" % free_port())
    initialize_model_parallel()
    yield
    # (SGLang's destroy_model_parallel imports its server, whose packages a CPU build lacks.)
    torch.distributed.destroy_process_group()


ALL_HK = {"target": "any", "provenance": "tests: every op on hk",
          "ops": {op: [{"when": {}, "route": "hk"}]
                  for op in ("linear", "awq_gemm", "moe", "rms_norm", "attention_prefill", "attention_decode",
                             "int8_scaled_mm", "fp8_scaled_mm", "fp8_block_scaled_mm")}}


@pytest.fixture
def routes(tmp_path, monkeypatch):
    """Routes from a table of the test's (write(table) replaces it); counters from zero."""
    from hk_engine import counters, routing

    path = tmp_path / "routes.json"

    def write(table):
        path.write_text(json.dumps(table))
        routing.clear_cache()

    write(ALL_HK)
    monkeypatch.setenv("HK_ENGINE_ROUTES", str(path))
    counters.reset()
    yield write
    routing.clear_cache()


@pytest.fixture
def patched(runtime, routes):
    """SGLang with hk's plugin registered (as its entry point does), every op routed to hk."""
    import hk_sglang
    from hk_engine import counters
    from hk_sglang.plugin import plugin

    assert hk_sglang.register()
    counters.reset()  # the calls from here on (not the registration's count)
    yield plugin()
    plugin().unregister()
