"""The one call every surface makes: text (or a parsed model) in, ranked answer out."""

from __future__ import annotations

from explainer.budget import DEFAULT_BUDGET_S, Budget
from explainer.match.matcher import AMBIGUOUS_GAP, THRESHOLD
from explainer.model import Candidate, Parsed, Record
from explainer.parse.parser import lang_hint, parse_text

TYPE_CHECKING = False  # the annotations are strings: typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any


class Answer(Record):
    parsed: Parsed
    candidates: tuple[Candidate, ...]  # best first, including those below the threshold
    index: Any  # the explainer.knowledge.index.Index; Any, as this field shadows tuple.index (a method)
    live: dict | None = None  # in the hooks: values of the failing line's frame (explainer.parse.live.live_facts)
    partial: bool = False  # the time budget ran out: the answer is what was found before it did
    raised_at: tuple = ()  # the long tail: where in PyTorch's sources the message was raised (explainer.match.longtail)
    source: object = None  # reads the user's file (file -> lines, or None) where the surface may: the CLI, the hooks

    @property
    def matches(self) -> tuple[Candidate, ...]:
        """Candidates at or above the threshold: empty when the matcher abstains."""
        return tuple(c for c in self.candidates if c.score >= THRESHOLD)

    @property
    def ambiguous(self) -> bool:
        """Two entries close together on a paste too thin to tell them apart."""
        m = self.matches
        return len(m) > 1 and m[0].score - m[1].score < AMBIGUOUS_GAP and not self.parsed.frames

    def advice(self, cand: Candidate, live: dict | None = None) -> dict:
        """Causes and fixes of ``cand`` ranked for this paste (:func:`explainer.advise.advise`)."""
        from explainer.advise.advise import advise

        return advise(
            self.index.entry(cand.id) or {},
            self.parsed,
            cand.captures,
            live=live if live is not None else self.live,
            source=self.source,
        )

    def as_json(self, *, lang: str = "en", rendered: bool = False) -> dict:
        from explainer.advise.advise import as_json as advise_json

        out_matches = []
        for c in self.matches:
            e = self.index.entries[c.id]
            title = (
                e["title_zh"]
                if lang == "zh"
                else e["title_en"]
                if lang == "en"
                else f"{e['title_en']} / {e['title_zh']}"
            )
            reasons = list(c.reasons)
            if lang == "zh":
                from explainer.i18n import reason

                reasons = [reason(r, lang) for r in reasons]
            m = {"id": c.id, "score": c.score, "title": title, "reasons": reasons, "captures": dict(c.captures)}
            advice = self.advice(c)  # ranked once: the JSON and the rendering show the same
            m.update(advise_json(advice, lang))
            if rendered:
                from explainer.render import render_match

                m["rendered"] = render_match(self, c, lang=lang, advice=advice)
            out_matches.append(m)
        out = {
            "parsed": self.parsed.as_json(),
            "matches": out_matches,
            "abstained": not out_matches,
            "ambiguous": self.ambiguous,
        }
        if not out_matches and self.candidates:
            out["nearest"] = [{"id": c.id, "score": c.score} for c in self.candidates[:2]]
        out["raised_at"] = [dict(r) for r in self.raised_at]
        if rendered and self.raised_at and not out_matches:
            from explainer.render import markdown_to_html, raised_at_markdown

            md = raised_at_markdown(self, lang=lang)
            out["raised_at_rendered"] = {"markdown": md, "html": markdown_to_html(md)}
        if self.partial:
            out["partial"] = True
        return out


def explain(
    parsed: Parsed,
    index,
    *,
    top: int = 3,
    live: dict | None = None,
    budget: float | Budget | None = DEFAULT_BUDGET_S,
    source=None,
) -> Answer:
    """Rank the entries for a parsed paste within ``budget`` (seconds, a running :class:`Budget`,
    or None for no deadline); an answer cut by the deadline has ``partial`` set. ``live``: the
    failing frame's values, in the hooks. ``source``: reads the user's file (file -> lines, or
    None), for fixes that change another line than the failing one; only surfaces running on the
    user's own machine pass it (:func:`explainer.source.local_lines`), never the HTTP API."""
    b = budget if isinstance(budget, Budget) else Budget(budget)
    try:
        matcher = b.setup(lambda: index.matcher)
        candidates = matcher.match(parsed, top=max(top, 2), budget=b)[: max(top, 1)]
    except Exception:
        _raise_if_damaged(index)
        raise
    cut = b.cut
    if any(c.score >= THRESHOLD for c in candidates):
        # a curated answer: where torch raised it is one more line, looked up when a surface shows it
        return Answer(
            parsed,
            tuple(candidates),
            index,
            live,
            cut,
            _Later(lambda: raised_at(parsed, None)),
            source,
        )
    return Answer(parsed, tuple(candidates), index, live, cut, raised_at(parsed, b), source)  # never compiles


def _raise_if_damaged(index) -> None:
    """After a failure while matching: when the index's rows are damaged (edited by hand, a disk
    error), one :class:`~explainer.knowledge.index.IndexError_` that says so and how to mend it, instead of the
    traceback of whatever read the bad row; when they are not, nothing (the failure is ours)."""
    damage = getattr(index, "damage", None)
    problems = damage() if damage is not None else []
    if problems:
        from explainer.knowledge.index import IndexError_

        more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
        raise IndexError_(
            f"the index {index.path} is damaged ({problems[0]}{more}); rebuild it with `tbx build`"
        ) from None


class _Later:
    """A sequence computed on first use (the raise sites under a curated answer: the JSON, the
    terminal and the hooks show them; matching alone never pays for them)."""

    __slots__ = ("_fn", "_value")

    def __init__(self, fn) -> None:
        self._value: tuple | None
        self._fn, self._value = fn, None

    def _get(self) -> tuple:
        if self._value is None:
            self._value, self._fn = tuple(self._fn()), None
        return self._value

    def __iter__(self):
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __bool__(self) -> bool:
        return bool(self._get())

    def __getitem__(self, i):
        return self._get()[i]


def raised_at(parsed: Parsed, budget: Budget | None = None, *, compile_ok: bool = False) -> tuple:
    """The long tail's raise sites for the paste's message (empty without a data file, or when the
    budget is spent: no answer waits for compiling the data file, which :func:`explainer.knowledge.index.open_index`
    does with the index, and a damaged data file never breaks one)."""
    if not parsed.message or (budget is not None and budget.spent()):
        return ()
    import sqlite3

    from explainer.match.longtail import open_longtail

    try:
        lt = open_longtail(compile_ok=compile_ok)
        return tuple(lt.lookup(parsed.message, parsed.exc_type, parsed.frames)) if lt is not None else ()
    except (OSError, ValueError, KeyError, sqlite3.Error) as exc:
        import sys

        print(f"tbx: warning: the long-tail index could not be read: {type(exc).__name__}: {exc}", file=sys.stderr)
        return ()


def explain_text(
    text: str, index, *, top: int = 3, budget: float | Budget | None = DEFAULT_BUDGET_S, source=None
) -> Answer:
    """Parse and explain ``text``; parsing and matching share one ``budget`` (default 200 ms).
    ``source``: see :func:`explain`."""
    b = budget if isinstance(budget, Budget) else Budget(budget)
    return explain(parse_text(text, b), index, top=top, budget=b, source=source)


def detect_lang(text: str) -> str:
    """'zh' when the paste's own words are Chinese or the locale is Chinese, else 'en'."""
    if lang_hint(text) == "zh":
        return "zh"
    import os

    # LANGUAGE (a priority list such as "zh_CN:en") comes first, as gettext reads it
    for var in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LC_CTYPE", "LANG"):
        v = os.environ.get(var, "")
        if v and v.split(":")[0] not in ("C", "POSIX", "C.UTF-8"):
            return "zh" if v.lower().startswith("zh") else "en"
    if os.name != "nt":
        return "en"  # elsewhere the locale comes from those variables: none set is the C locale
    import locale  # Windows: the system's locale, which no variable names

    try:
        loc = locale.getlocale()[0] or ""
    except ValueError:
        loc = ""
    return "zh" if loc.lower().startswith("zh") else "en"


def explain_check(index):
    """For verification: a function telling why a reproducer's real output is not explained as its entry."""

    def check(entry, paste: str) -> str | None:
        if not paste:
            return "the reproducer printed nothing to explain"
        answer = explain_text(paste, index, top=3)
        top = answer.matches[0].id if answer.matches else None
        if top != entry.id:
            got = ", ".join(f"{c.id} {c.score:.2f}" for c in answer.candidates) or "nothing"
            return f"its real traceback is not explained top-1 as {entry.id} (got: {got})"
        return None

    return check
