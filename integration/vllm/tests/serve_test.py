"""`vllm serve DIR` in its own processes (the API server, the engine core, its worker) with hk's
plugin on the CPU (HK_VLLM_CPU=1), listening on 127.0.0.1 only, asked through its
OpenAI-compatible API by the `openai` client: the same text as vLLM's offline run of the same
prompts, and the worker's counters say every call was hk's. The server is stopped pass or fail."""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

import e2e

KIND = "llama"
TOKENS = 8
PROMPTS = ["The kernel reads a tile of the matrix", "Rain fell all night on the hills, and by noon"]
START_SECONDS = 300
ENGINE_ARGS = ["--enforce-eager", "--dtype", "bfloat16", "--block-size", str(e2e.BLOCK), "--max-model-len", "128",
               "--kv-cache-memory-bytes", str(32 << 20), "--seed", "0"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def offline():
    """vLLM's offline run of the prompts in this process: their texts."""
    from vllm import SamplingParams
    from vllm.distributed.parallel_state import cleanup_dist_env_and_memory

    llm = e2e.engine(KIND)
    params = SamplingParams(temperature=0.0, max_tokens=TOKENS, ignore_eos=True)
    texts = [o.outputs[0].text for o in llm.generate(PROMPTS, params, use_tqdm=False)]
    del llm
    cleanup_dist_env_and_memory()
    return texts


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """(base URL, counters prefix): `vllm serve` of the model, stopped after the module's tests."""
    tmp = tmp_path_factory.mktemp("serve")
    port = free_port()
    # Its files in the test's temporary directory: tempfile's, and the sockets between its processes
    # relative to their working directory, the test's (a socket's path is limited to 107 bytes).
    assert os.path.realpath(os.getcwd()).startswith(os.path.realpath(os.environ["TEST_TMPDIR"]))
    env = dict(os.environ, HK_VLLM_CPU="1", VLLM_ENABLE_V1_MULTIPROCESSING="1",
               HK_ENGINE_COUNTERS=str(tmp / "counters"), TMPDIR=str(tmp), VLLM_RPC_BASE_PATH=".")
    # e2e's, for the runs in this process: the server runs as vLLM's users run it.
    env.pop("TORCHDYNAMO_DISABLE")
    # `vllm serve`: the module behind vLLM's `vllm` command, run by this environment's interpreter.
    vllm = [sys.executable, "-m", "vllm.entrypoints.cli.main"]
    log = open(tmp / "server.log", "w")
    proc = subprocess.Popen(vllm + ["serve", e2e.model(KIND), "--host", "127.0.0.1", "--port", str(port)] + ENGINE_ARGS,
                            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = "http://127.0.0.1:%d" % port
    try:
        deadline = time.monotonic() + START_SECONDS
        while not healthy(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("vllm serve did not come up (exit %s):\n%s" % (proc.poll(), read(tmp / "server.log")))
            time.sleep(1)
        yield url, tmp / "counters"
    finally:
        stop(proc)
        log.close()


def healthy(url):
    try:
        with urllib.request.urlopen(url + "/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def stop(proc):
    """SIGTERM to the server's process group (its engine processes with it), SIGKILL if it lingers."""
    for sig, wait in ((signal.SIGTERM, 60), (signal.SIGKILL, 30)):
        if proc.poll() is not None:
            return
        os.killpg(proc.pid, sig)
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            continue


def read(path):
    with open(path) as f:
        return f.read()[-8000:]


def test_the_server_answers_as_the_offline_run_on_hks_kernels(offline, server):
    from hk_engine import counters
    from openai import OpenAI

    url, prefix = server
    client = OpenAI(base_url=url + "/v1", api_key="unused", timeout=600, max_retries=0)
    (model,) = [m.id for m in client.models.list().data]
    assert model == e2e.model(KIND)
    result = client.completions.create(model=model, prompt=PROMPTS, max_tokens=TOKENS, temperature=0.0,
                                       extra_body={"ignore_eos": True})
    texts = [c.text for c in sorted(result.choices, key=lambda c: c.index)]
    e2e.report("served: %r\noffline: %r" % (texts, offline))
    assert texts == offline and all(texts)
    assert result.usage.completion_tokens == TOKENS * len(PROMPTS)
    time.sleep(1.5)  # each process writes its counters within a second of a change
    counts = counters.read_all(prefix)
    # The plugin loaded in each of vLLM's processes (API server, engine core, worker), through
    # vLLM's own loader; the worker ran the model, every call on hk.
    assert len(counts) == 3 and all(c.get("vllm.plugin") == {"patched": 1} for c in counts.values()), counts
    (calls,) = [{k: v for k, v in c.items() if k != "vllm.plugin"} for c in counts.values() if len(c) > 1]
    e2e.per_pass(KIND, calls)
