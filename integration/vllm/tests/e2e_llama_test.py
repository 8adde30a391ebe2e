"""vLLM serving the dense Llama (GQA, heads of 64) end to end on hk's kernels on the interpreter,
token for token against transformers' float32 greedy generate: six requests of different lengths
batched by the scheduler with chunked prefill (a budget of 32 tokens a step, under the longest
prompt) in a KV cache small enough to preempt; a second generate on the same engine that hits
the prefix cache; a request aborted mid-way while another runs on. Every linear (the logits'
included), RMSNorm, rotary, SiLU-and-mul, KV-cache write and attention call is hk's."""

import pytest

import e2e

KIND = "llama"
BUDGET = 32  # max_num_batched_tokens: prompts longer than this are prefilled in chunks
BLOCKS = 7  # KV cache blocks: fewer than four running requests of up to 49 tokens need (10)


def block_bytes():
    # K and V of each layer: 16 slots of 2 KV heads of 64 bf16 values.
    return e2e.LAYERS * 2 * e2e.BLOCK * 2 * 64 * 2


@pytest.fixture(scope="module")
def llm():
    return e2e.engine(KIND, max_num_batched_tokens=BUDGET, max_num_seqs=4, max_model_len=64,
                      kv_cache_memory_bytes=BLOCKS * block_bytes(), disable_log_stats=False)


@pytest.fixture
def counts():
    from hk_engine import counters

    counters.reset()
    return counters


def metric(llm, name):
    return sum(m.value for m in llm.get_metrics() if m.name == name)


def test_batched_requests_with_chunked_prefill_and_preemption(llm, counts):
    prompts, _ = e2e.expected(KIND)
    lengths = [len(p) for p in prompts]
    assert len(set(lengths)) > 3 and max(lengths) > BUDGET
    preempted = metric(llm, "vllm:num_preemptions")
    outputs = e2e.generate(llm, prompts, 16)
    e2e.agree(KIND, outputs)
    assert metric(llm, "vllm:num_preemptions") > preempted
    e2e.per_pass(KIND, counts.snapshot())


def test_a_second_generate_hits_the_prefix_cache(llm, counts):
    prompts, _ = e2e.expected(KIND)
    longest = max(range(len(prompts)), key=lambda i: len(prompts[i]))
    e2e.generate(llm, [prompts[longest]], 2)  # its prompt's blocks, cached (the cache is small)
    hits = metric(llm, "vllm:prefix_cache_hits")
    outputs = e2e.generate(llm, [prompts[longest], prompts[0]], 16)
    e2e.agree(KIND, outputs, [longest, 0], "%s again, from cached blocks" % KIND)
    cached = len(prompts[longest]) // e2e.BLOCK * e2e.BLOCK
    assert outputs[0].num_cached_tokens == cached and metric(llm, "vllm:prefix_cache_hits") >= hits + cached
    e2e.per_pass(KIND, counts.snapshot())


def test_a_request_aborted_mid_way_leaves_the_others_right(llm, counts):
    prompts, _ = e2e.expected(KIND)
    engine = llm.llm_engine
    engine.add_request("stays", {"prompt_token_ids": prompts[1]}, e2e.greedy_params(16))
    engine.add_request("aborted", {"prompt_token_ids": prompts[4]}, e2e.greedy_params(16))
    finished, aborted_at = {}, None
    while engine.has_unfinished_requests():
        for out in engine.step():
            if out.request_id == "aborted" and aborted_at is None and len(out.outputs[0].token_ids) >= 4:
                aborted_at = len(out.outputs[0].token_ids)
                engine.abort_request(["aborted"])
            if out.finished:
                finished[out.request_id] = out
    assert aborted_at is not None
    if "aborted" in finished:  # an output the abort marked finished
        assert len(finished["aborted"].outputs[0].token_ids) < 16
    e2e.agree(KIND, [finished["stays"]], [1], "%s beside an aborted request" % KIND)
    # The engine serves on after the abort.
    e2e.agree(KIND, e2e.generate(llm, [prompts[4]], 16), [4], "%s, the aborted prompt again" % KIND)
    e2e.per_pass(KIND, counts.snapshot())
