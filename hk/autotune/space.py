"""A search space: knobs, the values each may take, and constraints between them.

    space = hk.space(BM=[64, 128, 256], BN=[64, 128, 256], waves=[4, 8], BK=[32, 64],
                     where=[lambda c: c.BM // (c.waves // 2) % 16 == 0,
                            lambda c: 4 * (c.BM + c.BN) * c.BK <= 65536])
    space.candidates()        # every Config the constraints admit, in a fixed order
    space.size                # how many the knobs make before the constraints

A Config is one candidate: a frozen mapping of knob to value, read as c.BM or c["BM"]. Values
are numbers, strings or booleans, so that a candidate is a key of the result cache and a line
of a tuned file as it is.
"""

import itertools

from hk.errors import TuneError

_VALUE_TYPES = (bool, int, float, str)


class Config:
    """One candidate: knob -> value, hashable, in the space's knob order."""

    __slots__ = ("_items",)

    def __init__(self, items):
        object.__setattr__(self, "_items", tuple(items.items() if isinstance(items, dict) else items))

    def __getattr__(self, name):
        for k, v in self._items:
            if k == name:
                return v
        raise AttributeError("the candidate %s has no knob %r" % (self, name))

    def __setattr__(self, name, value):
        raise AttributeError("a candidate is immutable")

    def __getitem__(self, name):
        for k, v in self._items:
            if k == name:
                return v
        raise KeyError(name)

    def __iter__(self):
        return iter(k for k, _ in self._items)

    def __len__(self):
        return len(self._items)

    def items(self):
        return self._items

    def as_dict(self):
        return dict(self._items)

    def replace(self, **changes):
        return Config(tuple((k, changes.get(k, v)) for k, v in self._items))

    def __eq__(self, other):
        return isinstance(other, Config) and sorted(self._items) == sorted(other._items)

    def __hash__(self):
        return hash(tuple(sorted(self._items)))

    def __repr__(self):
        return "(%s)" % ", ".join("%s=%r" % kv for kv in self._items)


class Space:
    """Knobs with their values and the constraints a candidate must meet (see the module)."""

    def __init__(self, knobs, where=()):
        if not knobs:
            raise TuneError("a search space needs at least one knob",
                            hint="hk.space(BM=[64, 128], ...): a knob and its values")
        self.knobs = {}
        for name, values in knobs.items():
            values = tuple(values) if isinstance(values, (list, tuple, range)) else (values,)
            if not values:
                raise TuneError("knob %s has no values; give it at least one" % name)
            for v in values:
                if not isinstance(v, _VALUE_TYPES):
                    raise TuneError("knob %s: value %r is a %s; a knob's values are numbers, strings or "
                                    "booleans" % (name, v, type(v).__name__))
            if len(set(values)) != len(values):
                raise TuneError("knob %s repeats a value: %r" % (name, list(values)))
            self.knobs[name] = values
        where = [where] if callable(where) else list(where or ())
        for w in where:
            if not callable(w):
                raise TuneError("a constraint is a function of a candidate returning a bool, not %r" % (w,))
        self.constraints = tuple(where)

    @property
    def size(self):
        """How many candidates the knobs make, before the constraints."""
        n = 1
        for values in self.knobs.values():
            n *= len(values)
        return n

    def where(self, *constraints):
        """This space with more constraints."""
        return Space(self.knobs, self.constraints + constraints)

    def with_values(self, **more):
        """This space with more values for some knobs (a new knob is refused: every candidate
        would change)."""
        unknown = set(more) - set(self.knobs)
        if unknown:
            raise TuneError("the space has no knob %s (its knobs: %s)"
                            % (", ".join(sorted(unknown)), ", ".join(self.knobs)))
        knobs = {k: v + tuple(x for x in more.get(k, ()) if x not in v) for k, v in self.knobs.items()}
        return Space(knobs, self.constraints)

    def replace(self, **knobs):
        """This space with these knobs taking these values (a knob not in it joins it)."""
        return Space(dict(self.knobs, **knobs), self.constraints)

    def _refusing(self, config):
        """The index of the first constraint `config` fails, or None when it meets them all."""
        for i, constraint in enumerate(self.constraints):
            try:
                ok = constraint(config)
            except Exception as e:  # the user's constraint: say which and on what
                raise TuneError("constraint #%d of the space raised %s: %s on the candidate %s"
                                % (i + 1, type(e).__name__, e, config)) from e
            if not ok:
                return i
        return None

    def admits(self, config):
        """Whether `config` takes a value of each knob and meets every constraint."""
        if set(config) != set(self.knobs) or any(config[k] not in v for k, v in self.knobs.items()):
            return False
        return self._refusing(config) is None

    def candidates(self):
        """Every Config the constraints admit. TuneError when they admit none."""
        names = list(self.knobs)
        admitted, rejected = [], [0] * len(self.constraints)
        for values in itertools.product(*self.knobs.values()):
            config = Config(tuple(zip(names, values)))
            i = self._refusing(config)
            if i is None:
                admitted.append(config)
            else:
                rejected[i] += 1
        if not admitted:
            raise TuneError("no candidate of the space meets its constraints (%d candidates; %s)"
                            % (self.size, ", ".join("constraint #%d rejected %d" % (i + 1, n)
                                                   for i, n in enumerate(rejected) if n)),
                            hint="loosen a constraint or add knob values it admits")
        return admitted

    def neighbours(self, config):
        """The admitted candidates that differ from `config` in one knob, by one step of its
        values (the moves of a pattern search)."""
        out = []
        for name, values in self.knobs.items():
            i = values.index(config[name])
            for j in (i - 1, i + 1):
                if 0 <= j < len(values):
                    other = config.replace(**{name: values[j]})
                    if self._refusing(other) is None:
                        out.append(other)
        return out

    def __repr__(self):
        return "hk.space(%s%s)" % (", ".join("%s=%r" % (k, list(v)) for k, v in self.knobs.items()),
                                   ", where=<%d constraints>" % len(self.constraints) if self.constraints else "")


def space(where=(), **knobs):
    """A search space: each keyword a knob and the list of its values; `where` a constraint
    (a function of a candidate, c.KNOB, returning whether it is admitted) or a list of them."""
    return Space(knobs, where)
