"""Causes and fixes of one matched entry, ranked for this paste and filled with the user's code.

For each cause, its evidence (:mod:`explainer.advise.evidence`) is checked against the paste: findings
that point to it rank it up, a finding that rules it out ranks it last. Each fix addresses some
causes; it ranks with the best of them (the entry's order among fixes of one cause: the safe fix an
author put first stays first), and a fix whose causes are all ruled out is never first and never
offered as a change of the line. A fix's code is
its rewrite applied to the user's failing line (:mod:`explainer.advise.rewrite`); where the rewrite does not
apply, or the fix is a change elsewhere, the code is the entry's example (filled with the values
the message gives) and ``applies`` is None: advice, never a half-filled line.

Everything here is language-neutral: texts come in both languages and the surfaces pick one.
"""

from __future__ import annotations

from explainer.advise.evidence import Context, assess
from explainer.advise.rewrite import (
    RewriteError,
    apply,
    apply_at,
    definitions_read,
    is_valid,
    parse_ops,
    split_target,
    structural,
)
from explainer.patterns import FILL_FIELD, fill, template_fields
from explainer.source import code_values
from explainer.textio import path_parts


def values_for(parsed, captures: dict, live: dict | None = None) -> dict[str, str]:
    """The values fixes and evidence are filled from: the user's line, the message, the live frame."""
    uf = parsed.user_frame
    values = code_values(uf.code if uf else None, getattr(uf, "focus", None) if uf else None)
    values.update({k: v for k, v in captures.items() if v})
    if live:
        values.update({k: v for k, v in live.items() if v not in (None, "")})
    return values


def _ops(text: str) -> list[tuple] | None:
    """A fix's rewrite operations; None for a malformed fence (lint reports it; the answer goes on)."""
    try:
        return parse_ops(text)
    except RewriteError:
        return None


def _example(fix: dict, values: dict[str, str]) -> str | None:
    """The generic example of a fix: its template filled, or (without one) its rewrite applied to a
    reproducer's line (with the message's values where it uses them); None when nothing valid comes
    out."""
    if fix.get("rewrite") and not (fix.get("template") or "").strip():
        ops = _ops(fix["rewrite"])
        if ops is None:
            return None
        message_values = {k: v for k, v in values.items() if k not in _CODE_KEYS}
        _, ops = split_target(ops)  # the example: the change itself, shown on a reproducer's line
        for line in fix.get("example_lines", ()):
            res = apply(ops, line, {**code_values(line), **message_values})
            if res:
                return res[1]
        return None
    template = fix.get("template") or ""
    if not template.strip():
        return None
    code = fill(template, values).rstrip()
    default = fill(template, {}).rstrip()  # the defaults: the tested example itself
    if code == default:  # nothing of the paste's in it: checked once per process, not per answer
        ok = _DEFAULT_VALID.get(default)
        if ok is None:
            ok = _DEFAULT_VALID[default] = is_valid(default)
        return default if ok else None
    if is_valid(code) and not template_fields(code):
        return code
    return default if is_valid(default) else None


_DEFAULT_VALID: dict[str, bool] = {}  # a template's defaults: whether they are valid Python (the kb's own text)


_CODE_KEYS = frozenset({"code", "target", "call", "receiver", "arg0", "arg1"})


def code_span(value: str) -> str:
    """``value`` as a Markdown code span that nothing in it can close (a longer backtick fence)."""
    text = " ".join(str(value).split())[:200]
    run = longest = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def fill_text(text: str, values: dict[str, str]) -> str:
    """Fill ``{name|default}`` placeholders of an entry's prose: a value from the paste goes in as
    a code span (it can never become a link, an image or markup), a missing one takes the default."""
    if "{" not in text:
        return text

    def sub(m) -> str:
        value = values.get(m.group(1))
        if value:
            return code_span(value)
        return m.group(2) if m.group(2) is not None else m.group(1).replace("_", " ")

    return FILL_FIELD.sub(sub, text).replace("{{", "{").replace("}}", "}")


def _lines(source, file: str | None) -> list[str] | None:
    """The user's file, where the surface can read it (``source``: file -> lines, or None)."""
    if source is None or not file:
        return None
    try:
        return source(file)
    except Exception:  # a reader that fails is a file that cannot be read: the fix is advice
        return None


def _caller_line(parsed, uf) -> int | None:
    """The line of the user's file that called the function the failing line is in: the nearest
    frame outward in the same file (the traceback's ``model(customer)`` above ``forward``)."""
    if uf is None:
        return None
    frames = list(parsed.frames)
    at = next((i for i, f in enumerate(frames) if f is uf), None)
    for f in reversed(frames[:at] if at is not None else []):
        if f.file == uf.file and f.line:
            return f.line
    return None


def advise(doc: dict, parsed, captures: dict, *, live: dict | None = None, source=None) -> dict:
    """``{"causes": [...], "fixes": [...]}`` ranked best first, for the entry ``doc`` (the index's
    full entry) and this paste. Texts are ``{"en", "zh"}`` pairs. ``source``: reads the user's
    file (file -> list of lines, or None) for the rewrites that change another line than the
    failing one (:func:`explainer.advise.rewrite.find_target`); without it they are advice."""
    values = values_for(parsed, captures, live)
    uf = parsed.user_frame
    lines = _lines(source, uf.file) if uf is not None else None
    ctx = Context(
        parsed,
        values,
        (lambda: definitions_read(uf.code, uf.line, values, lines)) if uf is not None and lines else None,
    )
    # each rewrite applied once; one that found, in the user's file, the definition its conditions
    # ask for (a `* 0.01` after requires_grad=True) is evidence for the causes it is written for
    applied: dict[int, tuple | None] = {}
    shown_by_file: dict[str, list[dict]] = {}
    caller = _caller_line(parsed, uf)
    for j, f in enumerate(doc.get("fixes", ())):
        ops = _ops(f["rewrite"]) if f.get("rewrite") else None
        res = apply_at(ops, uf.code, uf.line, values, lines, caller) if ops and uf is not None else None
        applied[j] = res
        line = res[2] if res else None
        if ops and line and uf is not None and line != uf.line and structural(ops):
            at = f"{path_parts(uf.file or '')[-1]}:{line}"
            seen = code_span(lines[line - 1].strip()) if lines else ""
            if split_target(ops)[0] == "caller":
                said = {
                    "en": f"{code_span(at)} calls the model outside a loop: {seen}",
                    "zh": f"{code_span(at)} 在循环之外调用了模型：{seen}",
                }
            else:
                said = {"en": f"{code_span(at)} made the value: {seen}", "zh": f"这个值来自 {code_span(at)}：{seen}"}
            for c in f.get("causes") or ():
                shown_by_file.setdefault(c, []).append(said)
    causes = []
    for i, c in enumerate(doc.get("causes", ())):
        found, ruled_out = assess(c.get("evidence"), ctx)
        if not ruled_out:
            found = found + shown_by_file.get(c["slug"], [])
        support = [f for f in found if not f.get("against")]
        causes.append(
            {
                "id": c["slug"],
                "title": {
                    "en": fill_text(c.get("title_en", ""), values),
                    "zh": fill_text(c.get("title_zh", ""), values),
                },
                "text": {"en": c.get("en", ""), "zh": c.get("zh", "")},
                "evidence": [{"en": fill_text(f["en"], values), "zh": fill_text(f["zh"], values)} for f in found],
                "ruled_out": ruled_out,
                "_key": (ruled_out, -len(support), i),
            }
        )
    causes.sort(key=lambda c: c["_key"])
    rank = {c["id"]: n for n, c in enumerate(causes)}
    ruled = {c["id"] for c in causes if c["ruled_out"]}
    all_ids = [c["id"] for c in causes]
    # the paste points to the first cause: a fix written for it comes before one for every cause
    pointed = bool(causes) and any(not e.get("against") for e in causes[0]["evidence"]) and not causes[0]["ruled_out"]
    fixes = []
    for j, f in enumerate(doc.get("fixes", ())):
        mine = [c for c in (f.get("causes") or all_ids) if c in rank] or all_ids
        contradicted = bool(mine) and all(c in ruled for c in mine)
        applies, code = None, None
        res = applied.get(j)
        if res and uf is not None and not contradicted:  # ruled out: shown as advice only
            applies = {"kind": res[0], "file": uf.file, "line": res[2]}
            if res[2] != uf.line:  # the line that must change is not the one that failed
                applies["fails_at"] = uf.line
            code = res[1]
        if applies is None and f.get("where_applies"):
            continue  # advice that only holds where the rewrite found its target in the user's code
        if code is None:
            code = _example(f, values)
        best = min((rank[c] for c in mine), default=len(rank))
        supported = bool(causes) and (not f.get("causes") or (pointed and causes[0]["id"] in mine) or len(all_ids) == 1)
        applicability = (
            ("review" if f.get("review") or not supported else "safe") if applies else ("example" if code else "advice")
        )
        fixes.append(
            {
                "id": f["slug"],
                "title": {
                    "en": fill_text(f.get("title_en", ""), values),
                    "zh": fill_text(f.get("title_zh", ""), values),
                },
                "text": {"en": f.get("en", ""), "zh": f.get("zh", "")},
                "causes": mine,
                "code": code,
                "applies": applies,
                "applicability": applicability,
                "verified": bool(f.get("verified")),
                # the entry's own order within a cause (a safe fix stays first), except that a prose fix
                # for every cause waits behind those written for the cause the paste points to
                "_key": (contradicted, best, pointed and not f.get("causes") and len(all_ids) > 1, j),
            }
        )
    fixes.sort(key=lambda f: f["_key"])
    for item in (*causes, *fixes):
        del item["_key"]
    return {"causes": causes, "fixes": fixes}


def as_json(advice: dict, lang: str) -> dict:
    """The ``causes`` and ``fixes`` keys of a match in the JSON answer (``../shared/INTERFACES.md``)."""

    def pick(pair: dict) -> str:
        if lang == "both":
            return f"{pair.get('en', '')} / {pair.get('zh', '')}"
        return pair.get("zh" if lang == "zh" else "en", "")

    return {
        "causes": [
            {"id": c["id"], "title": pick(c["title"]), "evidence": [pick(e) for e in c["evidence"]]}
            for c in advice["causes"]
        ],
        "fixes": [
            {
                "id": f["id"],
                "title": pick(f["title"]),
                "causes": f["causes"],
                "code": f["code"],
                "applies": f["applies"],
                "applicability": f["applicability"],
                "verified": f["verified"],
            }
            for f in advice["fixes"]
        ],
    }
