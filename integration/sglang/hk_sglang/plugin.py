"""The SGLang plugin: its patches, the contract of SGLang's internals they rely on, and their
application as REPLACE hooks of SGLang's own HookRegistry (so that SGLang logs them, and hooks
other plugins registered before on the same functions wrap them).

register applies the hooks at once, to know they all took (the registry logs a target it cannot
patch and goes on): a hook another plugin registers later on one of these functions is then not
applied, as the registry applies a target once."""

import functools
import sys

from hk_engine import Plugin
from hk_engine.contract import Seam, resolve
from hk_sglang import attention, awq, linear, moe, norm, w8a8
from hk_sglang.common import ENGINE

SUPPORTED = ("0.5.23",)
HOOKS = "sglang.srt.plugins.hook_registry"

# What the patches use beyond the functions they replace: the registry that applies them (its
# hooks and the set of applied targets, which unregister clears), and what each patch reads.
SEAMS = [
    Seam(HOOKS + ".HookRegistry.register", ("target", "hook", "hook_type", "source")),
    Seam(HOOKS + ".HookRegistry.apply_hooks", ()),
    Seam(HOOKS + ".HookRegistry._hooks"),
    Seam(HOOKS + ".HookRegistry._patched"),
    Seam(HOOKS + ".HookType.REPLACE"),
] + linear.SEAMS + awq.SEAMS + moe.SEAMS + norm.SEAMS + attention.SEAMS + w8a8.SEAMS


def calls(function, replacement):
    """Whether `function` (a HookRegistry wrapper, maybe inside other plugins' wrappers) calls
    `replacement`: SGLang's REPLACE wrapper holds its hook in its closure."""
    seen = set()
    while function is not None and id(function) not in seen:
        seen.add(id(function))
        function = getattr(function, "__func__", function)
        cells = getattr(function, "__closure__", None) or ()
        if any(cell.cell_contents is replacement for cell in cells):
            return True
        function = getattr(function, "__wrapped__", None)
    return False


class HookedPlugin(Plugin):
    """A Plugin whose replacements SGLang's HookRegistry applies. unregister puts the originals
    back everywhere the registry put its wrappers (it also rebinds `from X import f` copies in
    other modules) and forgets the hooks, so that a later register applies them again."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, apply=self._hook, **kwargs)
        self.hooks = {}  # target path -> replacement

    def _hook(self, path, parent, name, replacement):
        from sglang.srt.plugins.hook_registry import HookRegistry, HookType

        HookRegistry.register(path, replacement, HookType.REPLACE)
        self.hooks[path] = replacement

    def register(self):
        if self.registered:
            return True
        if not super().register():
            return False
        from sglang.srt.plugins.hook_registry import HookRegistry

        # Now, not only when load_plugins ends, to check each hook took (and for a direct call);
        # targets already applied are skipped, so load_plugins' own call changes nothing.
        HookRegistry.apply_hooks()
        missing = [path for path, replacement in self.hooks.items() if not calls(resolve(path)[0], replacement)]
        if missing:
            self.unregister()
            raise RuntimeError("SGLang's HookRegistry did not apply hk's hooks on %s (its log says why)"
                               % ", ".join(missing))
        return True

    def unregister(self):
        from sglang.srt.plugins.hook_registry import HookRegistry

        wrappers = {path: resolve(path)[0] for path in self.hooks}
        super().unregister()
        originals = {id(wrappers[path]): resolve(path)[0] for path in self.hooks
                     if wrappers[path] is not resolve(path)[0]}
        for module in list(sys.modules.values()):
            for attr, value in list(getattr(module, "__dict__", {}).items()):
                if id(value) in originals:
                    setattr(module, attr, originals[id(value)])
        rehook = False
        for path, replacement in self.hooks.items():
            hooks = [h for h in HookRegistry._hooks.get(path, ()) if h[1] is not replacement]
            HookRegistry._hooks.pop(path, None)
            HookRegistry._patched.discard(path)
            if hooks:  # another plugin's hooks on the same target: applied again, on the original
                HookRegistry._hooks[path] = hooks
                rehook = True
        self.hooks = {}
        if rehook:
            HookRegistry.apply_hooks()


@functools.lru_cache(maxsize=None)
def plugin():
    import sglang

    return HookedPlugin(ENGINE, version=sglang.__version__, supported=SUPPORTED, seams=SEAMS,
                        patches=[linear.PATCH, awq.PATCH, moe.PATCH, norm.PATCH, attention.PATCH, w8a8.PATCH])
