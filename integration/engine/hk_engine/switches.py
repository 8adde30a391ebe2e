"""A switch per engine and patch, by environment variable: HK_<ENGINE>_<PATCH> ("0", "false",
"off" or "no" turns the patch off; anything else, or nothing, leaves it on), and HK_<ENGINE>
for all of an engine's patches at once (HK_VLLM=0: the plugin patches nothing)."""

import os

_OFF = ("0", "false", "off", "no")


def variable(engine, patch=None):
    return ("HK_%s_%s" % (engine, patch) if patch else "HK_%s" % engine).upper()


def enabled(engine, patch=None):
    """Whether the engine's plugin (patch None) or one of its patches is on."""
    names = [variable(engine)] + ([variable(engine, patch)] if patch else [])
    return all(os.environ.get(n, "1").strip().lower() not in _OFF for n in names)
