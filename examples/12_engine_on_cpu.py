"""A kernel inside an engine, with no GPU: writes a tiny Llama (random weights, a tokenizer trained
on the spot, nothing downloaded), serves it with vLLM's CPU build through hk's plugin, its calls on
hk's kernels on the ISA emulator (each kernel compiled for --arch, its code object run), and prints
the text and which kernels served each layer's calls.

    python examples/12_engine_on_cpu.py                     # gfx1100, on the emulator
    python examples/12_engine_on_cpu.py --arch=gfx950
    python examples/12_engine_on_cpu.py --device=interp     # the reference interpreter: quicker
    python examples/12_engine_on_cpu.py --model=DIR         # a model of your own

Change a kernel of hk.ops (or the routing table HK_ENGINE_ROUTES points at) and run it again: the
counters say whether vLLM's calls reached it. It needs vLLM 0.33 and hk's wheels (hk-dsl,
hk-engine, hk-vllm) in one environment, and for the emulator a compiler (`hk-toolchain install`,
or HK_ROCM_PATH). The plugin's CPU mode (HK_VLLM_CPU=1, set here) is described in
docs/integration.md.
"""

import os
import tempfile
import time

from absl import app, flags

flags.DEFINE_enum("device", "emu", ["emu", "interp"], "where hk's kernels run")
flags.DEFINE_string("arch", "gfx1100", "the target the emulator runs (--device=emu)")
flags.DEFINE_integer("tokens", 8, "tokens to generate after each prompt")
flags.DEFINE_string("model", None, "a model directory to serve instead of the tiny Llama written here")
FLAGS = flags.FLAGS

PROMPTS = ["The kernel reads a tile of the matrix", "A request arrives with a prompt;"]


def serve(model):
    """vLLM in this process on hk's kernels: (texts, seconds to start, seconds to generate)."""
    from vllm import LLM, SamplingParams

    start = time.perf_counter()
    llm = LLM(model=model, enforce_eager=True, dtype="bfloat16", block_size=16, max_model_len=256,
              kv_cache_memory_bytes=64 << 20, seed=0)
    started = time.perf_counter()
    outputs = llm.generate(PROMPTS, SamplingParams(temperature=0.0, max_tokens=FLAGS.tokens, ignore_eos=True),
                           use_tqdm=False)
    return [o.outputs[0].text for o in outputs], started - start, time.perf_counter() - started


def main(argv):
    del argv
    # Before vLLM is imported: its CPU platform, the plugin's CPU mode, hk's runner; the engine in
    # this process, so that its counters are this process's.
    os.environ.update(VLLM_TARGET_DEVICE="cpu", HK_VLLM_CPU="1", HK_DEVICE=FLAGS.device, HK_ARCH=FLAGS.arch,
                      VLLM_ENABLE_V1_MULTIPROCESSING="0")
    from hk_engine import counters
    from hk_engine.testing import models

    with tempfile.TemporaryDirectory() as tmp:
        model = FLAGS.model or models.write("llama", os.path.join(tmp, "tiny-llama"))
        texts, start, generate = serve(model)
    runner = "the emulator (%s)" % FLAGS.arch if FLAGS.device == "emu" else "the interpreter"
    print("\nvLLM on hk's kernels on %s: started in %.1f s, %d tokens a prompt in %.1f s (%.2f s a token, "
          "the %d prompts batched)" % (runner, start, FLAGS.tokens, generate, generate / FLAGS.tokens, len(PROMPTS)))
    for prompt, text in zip(PROMPTS, texts):
        print("  %r -> %r" % (prompt, text))
    print("calls, by the kernel that served them:")
    for name, routes in sorted(counters.snapshot().items()):
        print("  %-20s %s" % (name, ", ".join("%s %d" % r for r in sorted(routes.items()))))


if __name__ == "__main__":
    app.run(main)
