"""A plugin: an engine's patches, registered together after its contract is checked.

    plugin = Plugin("vllm", version=vllm.__version__, supported=("0.33.",), seams=SEAMS,
                    patches=[Patch("linear", [Target(".....UnquantizedLinearMethod.apply", wrap_apply)])])
    plugin.register()     # the engine's entry point calls this; once per process

`register` checks the contract first (every seam of every patch, and the version): when anything
is not as expected it warns once, naming every difference, and patches nothing. Otherwise it
applies each patch whose switch is on (hk_engine.switches); a patch's targets are replaced all
together or not at all. `unregister` puts the originals back.

Each process's registration is counted as "<engine>.plugin" with the route "patched", "refused"
(the contract) or "off" (the switch): the counters of an engine's processes say which loaded it.

In each replaced function, `dispatch` decides per call: the routing table's route for the op
and its facts, the engine's own kernel for what the hk op does not cover, and the CUDA-graph
contract; it counts every call.
"""

import dataclasses
import inspect
import logging
import threading
import warnings

from hk_engine import capture, contract, counters, routing, switches

log = logging.getLogger("hk_engine")


class EngineWarning(UserWarning):
    """The engine is not as a plugin expects: it stays stock."""


class UncoveredWarning(UserWarning):
    """Calls that hk's kernel does not cover (a dtype, a shape, a variant): the engine's own kernel
    serves them."""


_uncovered_lock = threading.Lock()
_uncovered_seen = set()


def count_uncovered(name, reason):
    """Counts a call of patch `name` that hk does not cover as "engine:uncovered", and warns once
    per process for each patch and reason."""
    counters.count(name, "engine:uncovered")
    with _uncovered_lock:
        if (name, reason) in _uncovered_seen:
            return
        _uncovered_seen.add((name, reason))
    warnings.warn("%s: hk's kernel does not cover these calls (%s); the engine's own kernel serves them "
                  "(counted as engine:uncovered)" % (name, reason), UncoveredWarning, stacklevel=3)


def reset_uncovered_warnings():
    """Warn again for what was warned about (tests)."""
    with _uncovered_lock:
        _uncovered_seen.clear()


@dataclasses.dataclass
class Target:
    """One replacement: the function at `path` becomes `wrap(original)`. `params` are the names
    the original's parameters start with (checked by the contract)."""

    path: str
    wrap: object
    params: tuple = None

    @property
    def seam(self):
        return contract.Seam(self.path, self.params)


@dataclasses.dataclass
class Patch:
    """A switchable unit: its targets, and optionally `install()` / `uninstall()` for what is not
    a replacement (registering an attention backend, an IR provider)."""

    name: str
    targets: list = dataclasses.field(default_factory=list)
    install: object = None
    uninstall: object = None


def _raw(parent, name):
    """The attribute as stored (a staticmethod or classmethod stays one)."""
    if inspect.isclass(parent):
        for klass in parent.__mro__:
            if name in vars(klass):
                return vars(klass)[name]
    return getattr(parent, name)


def _rewrap(raw, function):
    if isinstance(raw, staticmethod):
        return staticmethod(function)
    if isinstance(raw, classmethod):
        return classmethod(function)
    return function


class Plugin:
    """An engine's patches and the contract they rely on."""

    def __init__(self, engine, *, version, supported, patches, seams=(), apply=None):
        self.engine = engine
        self.version = version
        self.supported = tuple(supported)
        self.patches = list(patches)
        self.seams = list(seams)
        self.applied = []  # (parent, name, raw original) in order of replacement
        self.installed = []  # patches whose install() ran
        self.registered = False
        self._apply = apply

    def contract_problems(self):
        seams = self.seams + [t.seam for p in self.patches for t in p.targets]
        return contract.check(self.engine, self.version, self.supported, seams)

    def register(self):
        """Checks the contract and applies the switched-on patches; True when patched. Once per
        process: a second call does nothing."""
        if self.registered:
            return True
        if not switches.enabled(self.engine):
            log.info("hk %s plugin: off (%s)", self.engine, switches.variable(self.engine))
            counters.count(self.engine + ".plugin", "off")
            return False
        problems = self.contract_problems()
        if problems:
            warnings.warn("hk's %s plugin patches nothing: %s %s is not what it was written against:\n  %s"
                          % (self.engine, self.engine, self.version, "\n  ".join(problems)), EngineWarning,
                          stacklevel=2)
            counters.count(self.engine + ".plugin", "refused")
            return False
        try:
            for patch in self.patches:
                if switches.enabled(self.engine, patch.name):
                    self._apply_patch(patch)
        except Exception:
            self.unregister()
            raise
        self.registered = True
        log.info("hk %s plugin: patched %s", self.engine, ", ".join(self.names()) or "nothing")
        counters.count(self.engine + ".plugin", "patched")
        return True

    def names(self):
        return [p.name for p in self.installed]

    def _apply_patch(self, patch):
        for target in patch.targets:
            _, parent, name = contract.resolve(target.path)
            raw = _raw(parent, name)
            original = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
            replacement = target.wrap(original)
            replacement.__wrapped__ = original
            if self._apply:
                self._apply(target.path, parent, name, replacement)
            else:
                setattr(parent, name, _rewrap(raw, replacement))
            self.applied.append((parent, name, raw))
        if patch.install:
            patch.install()
        self.installed.append(patch)

    def unregister(self):
        """Puts every original back (tests, or an engine restarted in the same process)."""
        for patch in reversed(self.installed):
            if patch.uninstall:
                patch.uninstall()
        for parent, name, raw in reversed(self.applied):
            setattr(parent, name, raw)
        self.applied, self.installed, self.registered = [], [], False


def current_arch():
    """The target the hk ops launch for in this process."""
    from hk.ops import registry

    return registry.launch_arch()


def dispatch(name, op, facts, hk_call, engine_call, *, uncovered=None, others=None, arch=None, table=None):
    """Serves one call: `hk_call()` or `engine_call()` (or `others[route]()`), by the routing
    table (`table`, else the target's) for `op` and `facts`, unless `uncovered` names why hk
    cannot (then the engine's); under graph capture hk only for a specialization already
    launched. `name` is the counter ("vllm.linear"); its first part names the engine whose own
    rules the table applies (routing.Table.rules)."""
    if uncovered:
        count_uncovered(name, uncovered)
        return engine_call()
    engine = name.split(".", 1)[0]
    route = (table or routing.table(arch or current_arch())).route(op, engine, **facts)
    if route == routing.HK:
        key = (op,) + tuple(sorted(facts.items()))
        if not capture.allowed(key):
            counters.count(name, "engine:capture")
            return engine_call()
        out = hk_call()
        capture.launched(key)
        counters.count(name, routing.HK)
        return out
    if others and route in others:
        counters.count(name, route)
        return others[route]()
    counters.count(name, route if route == routing.ENGINE else "engine:unknown-route")
    return engine_call()
