"""What makes an entry unusable for the index: wrong types in its front matter, patterns and signals
that do not compile or could backtrack without end. ``tbx build`` (:mod:`explainer.knowledge.index`)
leaves such an entry out with a warning, ``tbx lint`` (:mod:`explainer.knowledge.lint`) reports them
with the rest; both import this module, neither the other for it."""

from __future__ import annotations

import re

from explainer.knowledge.kb import LANGS, Entry
from explainer.patterns import PatternError, compile_pattern


class Problem(str):
    """One problem: the message (the string itself), its code, and the line it is about (0: unknown
    until :func:`locate` reads the file)."""

    code: str
    line: int

    def __new__(cls, code: str, message: str, line: int = 0) -> Problem:
        self = super().__new__(cls, message)
        self.code, self.line = code, line
        return self

    def at(self, message: str) -> Problem:
        """The same code and line with another message."""
        return Problem(self.code, message, self.line)


SCHEMA: dict[str, tuple[type, bool]] = {  # key -> (type, required)
    "id": (str, True),
    "title": (dict, True),
    "category": (str, True),
    "kind": (str, True),
    "exception_types": (list, True),
    "patterns": (list, True),
    "frames": (list, True),
    "signals": (list, False),
    "excludes": (list, True),
    "related": (list, True),
    "wraps": (bool, False),
    "torch_verified": (list, True),
    "docs": (list, True),
    "retired": (str, False),
    "raised_by": (dict, False),
    "unless": (list, False),
}
RAISED_BY_KINDS = ("torch", "library", "environment", "python")


def type_problems(meta: dict) -> list[Problem]:
    """Missing required keys and values of the wrong type in the front matter."""
    out = []
    for key, (typ, required) in SCHEMA.items():
        if key not in meta:
            if required:
                out.append(Problem("KB101", f"front matter: missing key {key!r}"))
            continue
        if not isinstance(meta[key], typ):
            out.append(Problem("KB102", f"front matter: {key!r} must be a {typ.__name__}"))
            continue
        if typ is list and not all(isinstance(v, str) for v in meta[key]):
            out.append(Problem("KB103", f"front matter: every item of {key!r} must be a string"))
    return out


def schema_problems(entry: Entry) -> list[str]:
    """The problems that make an entry unusable for the index (wrong types, patterns or signals that
    do not compile); ``tbx build`` skips such an entry with a warning, ``tbx lint`` reports them with
    the rest."""
    out: list[str] = [Problem("KB100", p) for p in entry.problems]
    meta = entry.meta
    if not meta:
        return out or ["front matter: empty"]
    out += type_problems(meta)
    title = meta.get("title")
    if isinstance(title, dict) and not all(isinstance(title.get(lang), str) for lang in LANGS):
        out.append(Problem("KB104", "front matter: title needs the strings 'en' and 'zh'"))
    raised_by = meta.get("raised_by")
    if isinstance(raised_by, dict) and (
        raised_by.get("kind") not in RAISED_BY_KINDS
        or not isinstance(raised_by.get("library", ""), str)
        or set(raised_by) - {"kind", "library"}
    ):
        out.append(
            Problem(
                "KB105",
                "front matter: raised_by is { kind = torch|library|environment|python, library = "
                '"<distribution or tool>" } (library left out: the paste names it)',
            )
        )
    if out:
        return out
    for p in meta["patterns"]:
        try:
            compile_pattern(p)
        except (PatternError, re.error) as exc:
            out.append(Problem("KB201", f"pattern {p[:60]!r}: {exc}"))
    from explainer.knowledge.attack import nested_repeat
    from explainer.model import NAMED_SIGNALS

    for sig in meta.get("unless", []):
        if not (isinstance(sig, str) and sig.startswith("@") and sig[1:] in NAMED_SIGNALS):
            out.append(
                Problem("KB203", f"unless: {sig!r} names no derived signal ({', '.join(sorted(NAMED_SIGNALS))})")
            )
    for sig in meta.get("signals", []):
        if isinstance(sig, str) and sig.startswith("@"):
            if sig[1:] not in NAMED_SIGNALS:
                out.append(
                    Problem(
                        "KB202",
                        f"signals: {sig!r} names no derived signal ({', '.join(sorted(NAMED_SIGNALS))})",
                    )
                )
            continue
        try:
            re.compile(sig)
        except re.error as exc:
            out.append(Problem("KB202", f"signals: {sig!r} is not a valid regular expression: {exc}"))
            continue
        if nested_repeat(sig):
            out.append(Problem("KB208", f"signals: {sig!r}: {NESTED_REPEAT}"))
    for _eid, label, src in evidence_regexes([entry]):
        try:
            bad = nested_repeat(src)
        except re.error:
            continue  # reported by the ordinary checks
        if bad:
            out.append(Problem("KB208", f"{label}: {src[:60]!r}: {NESTED_REPEAT}"))
    return out


NESTED_REPEAT = (
    "a repeat holds a repeat that can split the same characters more than one way, which can take "
    "exponential time on a near miss: make the inner repeat possessive (\\S++, \\s*+) or put a character "
    "between them that the inner one cannot match"
)


def evidence_regexes(entries) -> list[tuple[str, str, str]]:
    """(entry id, label, expression) of every regular expression in the causes' evidence."""
    out = []
    for e in entries:
        for c in e.causes:
            for kind in ("if", "unless"):
                for n, item in enumerate(
                    (c.get("evidence") or {}).get(kind, ()) if isinstance(c.get("evidence"), dict) else ()
                ):
                    for test in ("code", "lines", "message", "chain", "frame"):
                        if isinstance(item, dict) and isinstance(item.get(test), str):
                            out.append((e.id, f"evidence {c['slug']} [[{kind}]] #{n + 1} {test}", item[test]))
    return out
