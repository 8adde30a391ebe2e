"""hk_engine: what every engine patch shares.

A patch puts hk ops under an engine's layers (vLLM's, SGLang's) where they measure faster, and
leaves the engine's own kernels everywhere else. Each patch is built from the same pieces:

    routing     which implementation serves a call: a per-target table (shipped JSON, keyed by
                op and shape ranges) naming hk, the engine's own kernel, or another
    contract    the engine's version and every internal it patches, checked before anything is
                patched: all or nothing, with one warning when the engine is not the one the
                patch was written against
    counters    calls per patch and route, readable from Python, dumped at exit when asked
    switches    an environment variable per engine and patch (HK_VLLM_LINEAR=0, ...)
    capture     the CUDA-graph contract: what may run while a graph is being captured
    plugin      the registration that ties them together (the engines' entry points call it),
                and dispatch, which serves each patched call by its route
    ops         the hk side of a patch, the same in every engine: an op's routing facts, what
                hk's kernel covers, its call
"""

from hk_engine.plugin import Patch, Plugin, Target  # noqa: F401
