"""The plain traceback model: what the parser produces and everything downstream reads.

Two producers fill it: :func:`explainer.parser.parse_text` for pasted text and
:func:`explainer.live.from_exception` for a live exception. Matching and rendering take only this.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Frame:
    file: str
    line: int | None
    function: str | None
    code: str | None = None
    library: bool = False


@dataclass(frozen=True)
class Link:
    """An earlier exception in the paste: a chained cause/context, a worker's wrapper, a group."""

    exc_type: str | None
    message: str | None
    relation: str  # cause | context | worker | group


@dataclass(frozen=True)
class Signal:
    kind: str  # nccl, cuda_assert, signal, cpp_frame, warning, terminate, ...
    text: str


@dataclass(frozen=True)
class Other:
    exc_type: str | None
    message: str | None


@dataclass(frozen=True)
class Parsed:
    exc_type: str | None
    message: str | None
    frames: tuple[Frame, ...] = ()
    chain: tuple[Link, ...] = ()
    signals: tuple[Signal, ...] = ()
    others: tuple[Other, ...] = ()
    format: str = "unknown"
    lang_hint: str | None = None  # "zh" when the paste's own words are Chinese

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
            "frames": [asdict(f) for f in self.frames],
            "chain": [asdict(c) for c in self.chain],
            "user_frame": {k: getattr(uf, k) for k in ("file", "line", "function", "code")} if uf else None,
            "signals": [asdict(s) for s in self.signals],
            "others": [asdict(o) for o in self.others],
            "format": self.format,
        }


@dataclass(frozen=True)
class Candidate:
    """One knowledge-base entry proposed for a paste, with the evidence behind it."""

    id: str
    score: float  # calibrated confidence in [0, 1]
    reasons: tuple[str, ...]
    captures: dict[str, str] = field(default_factory=dict)
    tier: int = 2  # 1 template, 2 fuzzy, 3 frames/signals only
