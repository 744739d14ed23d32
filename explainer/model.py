"""The plain traceback model: what the parser produces and everything downstream reads.

Immutable records built on ``tuple`` (see ``Record``) rather than frozen dataclasses or
``typing.NamedTuple``: the same plain, comparable, immutable values, without the ~9 ms that
importing ``dataclasses`` (and ``inspect``) or the ~5 ms that creating six ``NamedTuple`` classes adds
to every ``tbx explain --json``.

Two producers fill it: :func:`explainer.parse.parser.parse_text` for pasted text and
:func:`explainer.parse.live.from_exception` for a live exception. Matching and rendering take only this.
"""

from __future__ import annotations

from operator import itemgetter


class Record(tuple):
    """A named, immutable tuple: fields and defaults come from the subclass's annotations."""

    __slots__ = ()
    _fields: tuple = ()
    _defaults: dict = {}

    def __init_subclass__(cls) -> None:
        names = tuple(cls.__dict__.get("__annotations__", {}))
        cls._fields = names
        cls._defaults = {n: cls.__dict__[n] for n in names if n in cls.__dict__}
        for i, n in enumerate(names):
            setattr(cls, n, property(itemgetter(i)))

    def __new__(cls, *args, **kwargs):
        values = list(args)
        for name in cls._fields[len(args) :]:
            if name in kwargs:
                values.append(kwargs.pop(name))
            elif name in cls._defaults:
                values.append(cls._defaults[name])
            else:
                raise TypeError(f"{cls.__name__}() missing argument {name!r}")
        if kwargs or len(values) > len(cls._fields):
            raise TypeError(f"{cls.__name__}() got unexpected arguments")
        return tuple.__new__(cls, values)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{n}={v!r}" for n, v in zip(self._fields, self)) + ")"

    def _asdict(self) -> dict:
        return dict(zip(self._fields, self))

    def _replace(self, **changes):
        return type(self)(**{**self._asdict(), **changes})


class Frame(Record):
    file: str
    line: int | None
    function: str | None
    code: str | None = None
    library: bool = False
    focus: str | None = None  # the part of ``code`` Python's carets point at (``self.fc1(x)``), 3.11+


class Link(Record):
    """An earlier exception in the paste: a chained cause/context, a worker's wrapper, a group."""

    exc_type: str | None
    message: str | None
    relation: str  # cause | context | worker | group


class Signal(Record):
    kind: str  # nccl, cuda_assert, signal, cpp_frame, warning, terminate, ...
    text: str


# signal kinds derived from what was read, not from one line's words: an entry's signal "@own_package"
# is met by the parser's signal of that kind; "@library_kwarg" by the matcher (a keyword argument that
# some releases of a library's callable take and others do not: data/names.json.gz)
NAMED_SIGNALS = frozenset(
    {
        "own_package",
        "crash",
        "cpp_type",
        "library_kwarg",
        "unknown_module",
        "found_package",
        "spawned_child",
        "other_requirement",
        "script_in_folder",
        "private_attribute",
        "none_object",
    }
)


class Other(Record):
    exc_type: str | None
    message: str | None


class Parsed(Record):
    exc_type: str | None
    message: str | None
    frames: tuple = ()
    chain: tuple = ()
    signals: tuple = ()
    others: tuple = ()
    format: str = "unknown"
    lang_hint: str | None = None  # "zh" when the paste's own words are Chinese
    lines: tuple = ()  # the paste's last lines (cut), where an entry's signals are looked for; not in the JSON
    alternatives: tuple = ()  # no exception line: other error-like lines the matcher tries; not in the JSON

    @property
    def user_frame(self) -> Frame | None:
        for f in reversed(self.frames):
            if not f.library:
                return f
        return None

    def as_json(self) -> dict:
        uf = self.user_frame
        return {
            "exc_type": self.exc_type,
            "message": self.message,
            "frames": [f._asdict() for f in self.frames],
            "chain": [c._asdict() for c in self.chain],
            "user_frame": {k: getattr(uf, k) for k in ("file", "line", "function", "code", "focus")} if uf else None,
            "signals": [s._asdict() for s in self.signals],
            "others": [o._asdict() for o in self.others],
            "format": self.format,
        }


class Candidate(Record):
    """One knowledge-base entry proposed for a paste, with the evidence behind it."""

    id: str
    score: float  # calibrated confidence in [0, 1]
    reasons: tuple
    captures: dict  # values the matched template captured from the message
    tier: int = 2  # 1 template, 2 fuzzy, 3 frames/signals only


class IndexError_(Exception):
    """The index is missing, unreadable, damaged or stale and cannot be rebuilt here: every surface
    answers it with one line. (Here, below every stage, so that matching can raise it.)"""
