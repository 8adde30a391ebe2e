"""SGLang serving the dense Llama end to end on hk's kernels on the CPU (HK_SGLANG_CPU=1):
sglang.Engine with --device cpu and the attention backend "hk", its scheduler and detokenizer in
processes of their own, token for token against transformers' float32 greedy generate on six
prompts of different lengths, batched, with chunked prefill (32 tokens a chunk); a second generate
that finds the longest prompt in the radix cache.

Checked from outside, by the counters every process writes (HK_ENGINE_COUNTERS): each process
SGLang starts loaded hk's plugin through SGLang's own loader, and the scheduler's ModelRunner built
hk's backend through SGLang's registry: every attention, linear and RMSNorm call was hk's."""

import dataclasses
import os
import sys
import tempfile
import time

import pytest

from hk_engine.testing import reference

os.environ["HK_SGLANG_CPU"] = "1"

LAYERS = 2
CHUNK = 32
# Calls per forward pass: attention per layer; qkv, o, gate_up, down per layer; two RMSNorms per
# layer and the final one.
CALLS = {"sglang.attention": LAYERS, "sglang.linear": 4 * LAYERS, "sglang.norm": 2 * LAYERS + 1}


def model():
    return os.path.join(os.environ["TEST_SRCDIR"], "hk_dsl", "integration", "engine", "models", "llama")


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def relative_sockets(monkeypatch):
    """SGLang's sockets between its processes in the test's temporary directory. SGLang names them
    after files tempfile makes (in TMPDIR), by their absolute paths, and the test's directory is
    too deep for a socket's (at most 107 bytes): here the names are relative to the working
    directory, the test's, which the processes SGLang starts share."""
    from sglang.srt.server_args import PortArgs

    cwd = os.path.realpath(os.getcwd())
    assert cwd.startswith(os.path.realpath(os.environ["TEST_TMPDIR"]))
    monkeypatch.setenv("TMPDIR", cwd)
    monkeypatch.setattr(tempfile, "tempdir", None)  # computed again, from TMPDIR
    init_new = PortArgs.init_new

    def init_new_relative(*args, **kwargs):
        ports = init_new(*args, **kwargs)
        for field in dataclasses.fields(ports):
            name = getattr(ports, field.name)
            if isinstance(name, str) and name.startswith("ipc://"):
                setattr(ports, field.name, "ipc://" + os.path.relpath(name[len("ipc://"):], cwd))
        return ports

    monkeypatch.setattr(PortArgs, "init_new", staticmethod(init_new_relative))


@pytest.fixture(scope="module")
def engine(tmp_path_factory, monkeypatch_module):
    """(sglang.Engine, the prefix of its processes' counter files), shut down after the module."""
    prefix = tmp_path_factory.mktemp("counters") / "counters"
    os.environ["HK_ENGINE_COUNTERS"] = str(prefix)  # read by every process SGLang starts
    relative_sockets(monkeypatch_module)
    import sglang

    eng = sglang.Engine(model_path=model(), device="cpu", attention_backend="hk", page_size=16,
                        disable_cuda_graph=True, dtype="bfloat16", chunked_prefill_size=CHUNK, max_total_tokens=2048,
                        random_seed=0, skip_server_warmup=True, log_level="warning")
    try:
        yield eng, prefix
    finally:
        eng.shutdown()


def generate(eng, prompts, tokens=16):
    outs = eng.generate(input_ids=prompts, sampling_params={"temperature": 0.0, "max_new_tokens": tokens,
                                                            "ignore_eos": True}, return_logprob=True)
    return [(o["output_ids"], [lp for lp, _, _ in o["meta_info"]["output_token_logprobs"]], o["meta_info"])
            for o in outs]


def agree(prompts, greedy, indices, results, title):
    tokens, logprobs = [r[0] for r in results], [r[1] for r in results]
    forced = reference.forced(model(), [prompts[i] for i in indices], tokens)
    rows = reference.compare([greedy[i] for i in indices], forced, tokens, logprobs, reference.MARGIN,
                             reference.LOGPROB_ERROR)
    for row, i in zip(rows, indices):
        row.prompt = i
    text = reference.table(rows, title)
    print("\n" + text, file=sys.__stdout__, flush=True)  # into the log, passed or failed
    assert all(r.ok for r in rows), text


def process_counts(prefix, settle=2.0):
    """{pid: counters} of the processes that wrote theirs (within a second of each change)."""
    from hk_engine import counters

    time.sleep(settle)
    return counters.read_all(prefix)


def test_generate_matches_transformers_on_hks_kernels_in_sglangs_processes(engine):
    from hk_engine import counters

    eng, prefix = engine
    prompts, greedy = reference.read(os.path.join(model(), reference.FILE))
    assert max(len(p) for p in prompts) > CHUNK
    agree(prompts, greedy, range(len(prompts)), generate(eng, prompts), "SGLang, llama against transformers (float32)")

    # Every process SGLang started loaded the plugin through its loader: this one (the engine's
    # tokenizer manager), the scheduler and the detokenizer.
    assert counters.snapshot().get("sglang.plugin") == {"patched": 1}
    children = {pid: c for pid, c in process_counts(prefix).items() if pid != os.getpid()}
    assert len(children) == 2 and all(c.get("sglang.plugin") == {"patched": 1} for c in children.values()), children
    (scheduler,) = [c for c in children.values() if "sglang.attention" in c]
    calls = {name: routes for name, routes in scheduler.items() if name != "sglang.plugin"}
    passes = calls["sglang.attention"]["hk"] // LAYERS
    print("scheduler: %d forward passes, counters %s" % (passes, scheduler), file=sys.__stdout__, flush=True)
    assert passes and calls == {name: {"hk": n * passes} for name, n in CALLS.items()}, scheduler


def test_a_second_generate_finds_the_prompt_in_the_radix_cache(engine):
    eng, _ = engine
    prompts, greedy = reference.read(os.path.join(model(), reference.FILE))
    longest = max(range(len(prompts)), key=lambda i: len(prompts[i]))
    results = generate(eng, [prompts[longest]])
    agree(prompts, greedy, [longest], results, "SGLang, llama again from the radix cache")
    assert results[0][2]["cached_tokens"] >= 16
