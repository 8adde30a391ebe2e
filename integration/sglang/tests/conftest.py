"""What every test of the SGLang plugin needs: hk's kernels on the interpreter, SGLang importable
on its CPU build (which has no torchvision: a stand-in for the names SGLang's modules import from
it), SGLang's runtime context (server args, a one-process gloo group, the model-parallel groups
its parallel layers read), a routing table that sends every op to hk, and the plugin registered."""

import enum
import importlib.machinery
import json
import os
import socket
import sys
import types

os.environ["HK_DEVICE"] = "interp"

import pytest  # noqa: E402


def install_torchvision_standin():
    """SGLang's config modules import torchvision.transforms (for vision models only). A stand-in
    in sys.modules serves those imports; transformers must have decided that torchvision is
    absent before it exists (it caches the answer), or it would import torchvision.io."""
    if "torchvision" in sys.modules:
        return
    from transformers.utils import import_utils

    assert not import_utils.is_torchvision_available()
    import_utils.is_torchvision_v2_available()

    class InterpolationMode(enum.Enum):
        NEAREST, NEAREST_EXACT, BILINEAR, BICUBIC = "nearest", "nearest-exact", "bilinear", "bicubic"
        BOX, HAMMING, LANCZOS = "box", "hamming", "lanczos"

    def missing(module_name):
        def __getattr__(attr):
            raise AttributeError("torchvision is not installed (a stand-in has no %s.%s)" % (module_name, attr))
        return __getattr__

    modules = {}
    for name in ("torchvision", "torchvision.transforms", "torchvision.transforms.functional",
                 "torchvision.transforms.v2", "torchvision.transforms.v2.functional"):
        package = not name.endswith("functional")
        module = types.ModuleType(name)
        module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=package)
        if package:
            module.__path__ = []
        module.__getattr__ = missing(name)
        if name != "torchvision":
            module.InterpolationMode = InterpolationMode
            parent, _, leaf = name.rpartition(".")
            setattr(modules[parent], leaf, module)
        modules[name] = sys.modules[name] = module
    modules["torchvision"].__version__ = "0.0.0+standin"


install_torchvision_standin()


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
                  for op in ("linear", "awq_gemm", "moe", "rms_norm", "attention_prefill", "attention_decode")}}


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
    from hk_sglang.plugin import plugin

    assert hk_sglang.register()
    yield plugin()
    plugin().unregister()
