"""Routing tables: which implementation serves a call, per target and shape.

A table is JSON, one per target (hk_engine/tables/<arch>.json, or a file named by
HK_ENGINE_ROUTES), holding for each op an ordered list of rules:

    {"target": "gfx1100",
     "provenance": "how the table was made",
     "ops": {"linear": [{"when": {"dtype": ["bfloat16", "float16"], "m": [1, 4096]}, "route": "hk"},
                        {"when": {}, "route": "engine"}]}}

A rule matches when every fact it names matches: a list of strings holds the fact, [lo, hi]
contains it (either end null: open). The first rule that matches gives the route: "hk", "engine"
(the engine's own kernel), or the name of another implementation a patch offers. An op with no
table, or no matching rule, takes "engine": a table only ever sends to hk what it names.

An op whose engine kernel differs between the engines (each engine's own Triton kernel, predicted
against hk's apart) has its rules per engine instead, under "engines":

    {"engines": {"vllm": {"moe": [rules]}, "sglang": {"moe": [rules]}}, "ops": {...}}

A call from an engine takes its engine's rules for the op when the table has them, else the
op's shared rules under "ops" (the ops both engines serve alike).

A rule may say why it routes as it does: "basis" (text: "predicted at 32 tokens", a published
measurement, "no code object to predict"...) and, for a rule from hk.perf's predictions
(routes_from_model), "ratio" (the engine's predicted time over hk's), "hk_us" and "engine_us".
"""

import functools
import json
import os

HK = "hk"
ENGINE = "engine"
NUMBERS = ("ratio", "hk_us", "engine_us")  # a predicted rule's figures
_TABLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tables")


class TableError(ValueError):
    """A routing table that cannot be read or does not have the table's form."""


def _check_rule(where, rule):
    if not isinstance(rule, dict) or not isinstance(rule.get("route"), str) or not isinstance(rule.get("when", {}), dict):
        raise TableError("%s: a rule is {\"when\": {...}, \"route\": NAME}, not %r" % (where, rule))
    for fact, cond in rule.get("when", {}).items():
        ok = (isinstance(cond, list) and (all(isinstance(c, str) for c in cond) or
                                          (len(cond) == 2 and all(c is None or isinstance(c, (int, float))
                                                                  for c in cond))))
        if not ok:
            raise TableError("%s: condition %s=%r is neither a list of names nor a range [lo, hi]"
                             % (where, fact, cond))
    if not isinstance(rule.get("basis", ""), str):
        raise TableError("%s: a rule's basis is text, not %r" % (where, rule["basis"]))
    for field in NUMBERS:
        if field in rule and (isinstance(rule[field], bool) or not isinstance(rule[field], (int, float))
                              or rule[field] <= 0):
            raise TableError("%s: a rule's %s is a positive number, not %r" % (where, field, rule[field]))


class Table:
    """A routing table for one target."""

    def __init__(self, data, source="<table>"):
        if not isinstance(data, dict) or not isinstance(data.get("ops", {}), dict):
            raise TableError("%s: a table is {\"target\": ..., \"ops\": {op: [rules]}}" % source)
        engines = data.get("engines", {})
        if not isinstance(engines, dict) or not all(isinstance(ops, dict) for ops in engines.values()):
            raise TableError("%s: a table's engines are {\"engine\": {op: [rules]}}" % source)
        for where, ops in [("", data.get("ops", {}))] + [("%s's " % e, ops) for e, ops in engines.items()]:
            for op, rules in ops.items():
                if not isinstance(rules, list):
                    raise TableError("%s: the rules of %s%s are not a list" % (source, where, op))
                for i, rule in enumerate(rules):
                    _check_rule("%s: %s%s rule %d" % (source, where, op, i), rule)
        self.target = data.get("target")
        self.provenance = data.get("provenance", "")
        self.ops = data.get("ops", {})
        self.engines = engines
        self.source = source

    @classmethod
    def load(cls, path):
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            raise TableError("cannot read the routing table %s: %s" % (path, e)) from None
        return cls(data, path)

    def rules(self, op, engine=None):
        """The rules a call to `op` from `engine` ("vllm", "sglang"; None: no engine's own) takes:
        the engine's own for the op, else the shared ones."""
        own = self.engines.get(engine, {}) if engine else {}
        return own[op] if op in own else self.ops.get(op, [])

    def route(self, op, engine=None, **facts):
        """The route of a call to `op` from `engine` with these facts (dtype="bfloat16", m=7, ...)."""
        for rule in self.rules(op, engine):
            if all(_matches(facts.get(fact), cond) for fact, cond in rule.get("when", {}).items()):
                return rule["route"]
        return ENGINE


def _matches(value, cond):
    if value is None:
        return False
    if all(isinstance(c, str) for c in cond):
        return str(value) in cond
    lo, hi = cond
    return (lo is None or value >= lo) and (hi is None or value <= hi)


def dtype_name(dtype):
    """A torch dtype as the tables name it: "bfloat16", "float16", "float32", ..."""
    return str(dtype).replace("torch.", "")


@functools.lru_cache(maxsize=None)
def _table_for(arch, override):
    if override:
        return Table.load(override)
    path = os.path.join(_TABLES, "%s.json" % arch)
    if not os.path.exists(path):
        return Table({"target": arch, "ops": {}}, "<no table for %s>" % arch)
    return Table.load(path)


def table(arch):
    """The table a process routes with for `arch`: HK_ENGINE_ROUTES's file when set (for every
    target), else the shipped one (an empty table, all "engine", for a target with none)."""
    return _table_for(arch, os.environ.get("HK_ENGINE_ROUTES") or None)


def shipped_targets():
    return sorted(os.path.splitext(n)[0] for n in os.listdir(_TABLES) if n.endswith(".json"))


def clear_cache():
    """Forget loaded tables (after HK_ENGINE_ROUTES changed, in tests)."""
    _table_for.cache_clear()
