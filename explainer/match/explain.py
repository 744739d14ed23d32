"""The one call every surface makes: text (or a parsed model) in, ranked answer out."""

from __future__ import annotations

import builtins

from explainer.budget import DEFAULT_BUDGET_S, Budget
from explainer.match.matcher import AMBIGUOUS_GAP, THRESHOLD
from explainer.model import Candidate, Parsed, Record
from explainer.parse.assemble import lang_hint, parse_text
from explainer.textio import Lazy


class Answer(Record):
    """What the matcher found for one paste: plain data, no index and no connection. The renderer
    (:mod:`explainer.render`) joins it with the entries it names, for JSON, Markdown and the terminal."""

    parsed: Parsed
    candidates: tuple[Candidate, ...]  # best first, including those below the threshold
    live: dict | None = None  # in the hooks: values of the failing line's frame (explainer.parse.live.live_facts)
    partial: bool = False  # the time budget ran out: the answer is what was found before it did
    raised_at: tuple = ()  # the long tail: where in PyTorch's sources the message was raised (explainer.match.longtail)
    torch_version: dict | None = None  # the torch release the paste shows (explainer.match.versions), or None

    @property
    def matches(self) -> tuple[Candidate, ...]:
        """Candidates at or above the threshold: empty when the matcher abstains."""
        return tuple(c for c in self.candidates if c.score >= THRESHOLD)

    @property
    def ambiguous(self) -> bool:
        """Two entries close together on a paste too thin to tell them apart."""
        m = self.matches
        return len(m) > 1 and m[0].score - m[1].score < AMBIGUOUS_GAP and not self.parsed.frames


def explain(
    parsed: Parsed,
    matcher,
    *,
    top: int = 3,
    live: dict | None = None,
    budget: float | Budget | None = DEFAULT_BUDGET_S,
) -> Answer:
    """Rank the entries for a parsed paste with ``matcher`` (:class:`explainer.match.matcher.Matcher`)
    within ``budget`` (seconds, a running :class:`Budget`, or None for no deadline); an answer cut by
    the deadline has ``partial`` set. ``live``: the failing frame's values, in the hooks."""
    b = budget if isinstance(budget, Budget) else Budget(budget)
    try:
        candidates = matcher.match(parsed, top=max(top, 2), budget=b)[: max(top, 1)]
    except Exception:
        _raise_if_damaged(getattr(matcher, "index", None))
        raise
    cut = b.cut
    if candidates and candidates[0].tier == 2 and candidates[0].score >= THRESHOLD:
        # an answer from similar words only: where a raise site's template holds the message word for
        # word, the paste is that message, not the entry's one it resembles ("input must be a CUDA
        # tensor" is no "Tensors must be CUDA and dense")
        sites = raised_at(parsed, b, near=False)
        if _said_elsewhere(sites, parsed.message or "", _patterns_of(matcher, candidates[0].id)):
            candidates = [_held_back(c) if c.tier == 2 else c for c in candidates]
            candidates.sort(key=lambda c: -c.score)
        if any(c.score >= THRESHOLD for c in candidates):
            return Answer(parsed, tuple(candidates), live, cut, sites)
        return Answer(parsed, tuple(candidates), live, cut, sites or raised_at(parsed, b))
    if any(c.score >= THRESHOLD for c in candidates):
        # a curated answer: where torch raised it is one more line, looked up when a surface shows it,
        # word for word only (a close wording of another release is worth its cost only without one)
        return Answer(parsed, tuple(candidates), live, cut, _Later(lambda: raised_at(parsed, None, near=False)))
    return Answer(parsed, tuple(candidates), live, cut, raised_at(parsed, b))  # never compiles


def _patterns_of(matcher, eid: str) -> list[str]:
    """An entry's patterns, lower case."""
    index = getattr(matcher, "index", None)
    return [p[2].lower() for p in getattr(index, "patterns", ()) if p[0] == eid]


def _said_elsewhere(sites, message: str, patterns: list[str]) -> bool:
    """Whether a raise site's template fits the message word for word, says most of it itself (not a
    label such as ``CUDA error: {}``, nor a message's last sentences after a hole that holds its
    first) and is another message than the entry's: its longest literal piece is in none of the
    entry's patterns (another release's wording of the entry's own message shares it: ``NCCL error in: ``)."""
    for r in sites:
        tpl = r.get("template") or ""
        if r.get("strength") != "exact" or r.get("origin") == "paste":
            continue
        pieces = [p.strip().lower() for p in tpl.split("{}")]
        longest = max(pieces, key=len, default="")
        if (
            len(longest) >= 12
            and sum(map(len, pieces)) >= 0.6 * len(message.strip())
            and not any(longest in p for p in patterns)
        ):
            return True
    return False


def _held_back(c: Candidate) -> Candidate:
    """A candidate found by similar words only, held below the threshold: among the nearest, no answer."""
    from explainer.i18n import Reason
    from explainer.match.matcher import UNLESS_CAP

    why = Reason("elsewhere")
    return Candidate(c.id, min(c.score, UNLESS_CAP), (*c.reasons, why), c.captures, c.tier)


def _raise_if_damaged(index) -> None:
    """After a failure while matching: when the index's rows are damaged (edited by hand, a disk
    error), one :class:`~explainer.knowledge.index.IndexError_` that says so and how to mend it, instead of the
    traceback of whatever read the bad row; when they are not, nothing (the failure is ours)."""
    damage = getattr(index, "damage", None) if index is not None else None
    problems = damage() if damage is not None else []
    if problems:
        from explainer.model import IndexError_

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


# whole words only: "mps" is in json.dumps, "hip" in relationship
_GPU_WORD = Lazy(r"\b(?:cuda|mps|cudnn|cufft|cublas|cusolver|cusparse|nccl|gpu|metal|rocm|hip)\b")


def _on_a_gpu(parsed: Parsed) -> bool:
    """Whether the paste shows a GPU run: its message, its last lines or its frames name a GPU backend."""
    text = " ".join([parsed.message or "", *parsed.lines[-60:], *(f.file or "" for f in parsed.frames[-20:])])
    return bool(_GPU_WORD.search(text[:20000].lower()))


def with_cpp_site(parsed: Parsed) -> str:
    """The message with the line where c10 names the C++ site (``Exception raised from F at P:L (most
    recent call first):``), which the parser keeps as a signal, not as part of the message."""
    msg = parsed.message or ""
    for sig in parsed.signals:
        if sig.kind == "cpp_frame" and sig.text.lstrip().startswith("Exception raised from "):
            return f"{msg}\n{sig.text.strip()}"
    return msg


def _with_moved(found: tuple, history) -> tuple:
    """Each site of torch's own release followed by the other releases' sites of the same words in
    another file (a module that moved), so that a paste from before the move finds its file and the
    releases of both together date it."""
    if history is None:
        return found
    out: list = []
    shown = {r.get("file") for r in found}  # a file the release's own sites name already is no other file
    for r in found:
        out.append(r)
        if r.get("template") and r.get("origin") != "paste":
            moved = [o for o in history.elsewhere(r["template"], r.get("file")) if o.get("file") not in shown][:1]
            shown.update(o.get("file") for o in moved)
            out += moved
    return tuple(out)


def _cpu_only(site: dict) -> dict:
    """A site group without the CUDA/MPS copies among its other sites."""
    from explainer.match.longtail import is_gpu_file

    also = [a for a in site.get("also") or [] if not is_gpu_file(a.get("file") or "")]
    if len(also) == len(site.get("also") or []):
        return site
    return dict(site, also=also, sites=site["sites"] - (len(site["also"]) - len(also)))


def raised_at(parsed: Parsed, budget: Budget | None = None, *, compile_ok: bool = False, near: bool = True) -> tuple:
    """The long tail's raise sites for the paste's message (empty without a data file, or when the
    budget is spent: no answer waits for compiling the data file, which :func:`explainer.knowledge.index.open_index`
    does with the index, and a damaged data file never breaks one); ``near``: also a close wording
    when no release holds the message word for word."""
    if budget is not None and budget.spent():
        return ()
    if not parsed.message:  # a bare ``assert``: where the paste shows it was raised, if anywhere
        from explainer.match.origin import paste_sites

        return paste_sites(parsed)
    import sqlite3

    from explainer.match.longtail import open_libsites, open_longtail, open_torchhistory

    try:
        # torch's indexed release, torch's other releases, then the libraries around it (transformers,
        # the Hub, vLLM, ...): word for word first in all three, then a close wording in all three
        tails = (open_longtail, open_torchhistory, open_libsites)
        opened: list = []
        message = with_cpp_site(parsed)
        if near and (parsed.exc_type or "").endswith("Warning"):
            from explainer.match.origin import warning_site

            # a warning's own header names where it was issued: better than a close wording of another message
            near = not warning_site(parsed)
        for close in (False, True) if near else (False,):
            for i, opener in enumerate(tails):
                if budget is not None and budget.spent():
                    return ()
                if len(opened) <= i:
                    opened.append(opener(compile_ok=compile_ok))  # type: ignore[operator]  # three openers, one signature
                tail = opened[i]
                found = tuple(tail.lookup(message, parsed.exc_type, parsed.frames, near=close)) if tail else ()
                if found and not all(r.get("origin") == "gpu-source" for r in found):
                    # CUDA/MPS code repeats many CPU checks word for word: where the CPU code raises the
                    # words too, its copy answers a paste that shows no GPU run (words only the GPU
                    # code raises come from a GPU run, whatever the paste shows of it)
                    cpu = tuple(_cpu_only(r) for r in found if r.get("origin") != "gpu-source")
                    if cpu != found and not _on_a_gpu(parsed):
                        found = cpu
                if found:
                    if i == 0:  # torch's own release: where other releases raised it
                        found = _with_moved(found, open_torchhistory(compile_ok=compile_ok))
                    return found
        from explainer.match.origin import paste_sites

        found = paste_sites(parsed)  # no indexed release holds the message
        if found and found[0].get("origin") == "warning" and found[0].get("library"):
            category = (parsed.exc_type or "").rsplit(".", 1)[-1]
            tail = opened[0] if opened else None
            if not hasattr(builtins, category) and tail is not None and category in tail.types():
                # torch's own warning class (TracerWarning), pointed at the caller's line in a library
                found = (dict(found[0], library=None), *found[1:])
        return found
    except (OSError, ValueError, KeyError, sqlite3.Error) as exc:
        import sys

        print(f"tbx: warning: the long-tail index could not be read: {type(exc).__name__}: {exc}", file=sys.stderr)
        return ()


def explain_text(text: str, index, *, top: int = 3, budget: float | Budget | None = DEFAULT_BUDGET_S) -> Answer:
    """Parse and explain ``text`` with the matcher of ``index`` (an index, or a matcher itself);
    parsing and matching share one ``budget`` (default 200 ms). Building the matcher (the first
    explanation of a process) is no part of the budget."""
    b = budget if isinstance(budget, Budget) else Budget(budget)
    matcher = b.setup(lambda: matcher_of(index))
    answer = explain(parse_text(text, b), matcher, top=top, budget=b)
    version = None
    if (
        "orch" in text
    ):  # torch, PyTorch: the release the paste shows: read from the text, which the parsed model drops parts of
        from explainer.match.versions import torch_version

        version = torch_version(text)
        if version is not None and isinstance(answer.raised_at, tuple) and len(answer.raised_at) > 1:
            # the release the paste prints: a site of a wording that release raises comes first
            answer = Answer(*answer[:4], _by_release(answer.raised_at, version["range"]))
    if version is None and answer.raised_at and all(r.get("versions") for r in answer.raised_at):
        # no release printed: the wording of the message, raised only by these releases of torch (any
        # of the sites may have raised it: their ranges together; a wording every indexed release
        # raises says nothing of the release)
        from explainer.facts import version_key
        from explainer.match.longtail import release_span

        first = min((r["versions"][0] for r in answer.raised_at), key=version_key)
        last = max((r["versions"][1] for r in answer.raised_at), key=version_key)
        if (first, last) != release_span():
            first_site: dict = next(iter(answer.raised_at))
            why = (
                f"an internal assert at {first_site['file']}:{first_site['line']}"
                if first_site.get("origin") == "paste"
                else "the message's wording"
            )
            version = {"range": [first, last], "evidence": [f"{why}: torch {first} to {last}"]}
    message = with_cpp_site(answer.parsed)
    if version is None and " at " in message:
        from explainer.match.longtail import wording_era

        version = wording_era(message)
    return Answer(*answer[:-1], version) if version else answer


def _by_release(sites: tuple, printed: list[str]) -> tuple:
    """``sites`` with those whose ``versions`` hold the printed release(s) first (the rest in their order)."""
    from explainer.facts import version_key

    lo, hi = version_key(printed[0]), version_key(printed[-1])

    def holds(r) -> bool:
        vs = r.get("versions")
        return not vs or version_key(vs[0]) <= hi and lo <= version_key(vs[1])

    return tuple(sorted(sites, key=lambda r: not holds(r)))


def matcher_of(index):
    """The matcher of an index (built on first use), or ``index`` when it is a matcher already."""
    return index if hasattr(index, "match") else index.matcher


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
