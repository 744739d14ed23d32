r"""Message templates with named placeholders, compiled to regular expressions.

Rules (kb/README.md): ``{name}`` matches within one line, lazily; ``{name...}`` matches across lines,
lazily; ``{{`` and ``}}`` are literal braces; any run of whitespace matches any run of whitespace;
matching ignores case; a closing ``.`` or ``:`` is optional (pastes drop it). A name may appear once per pattern.

**Linear by construction.** The compiled expressions run on pasted text with Python's backtracking
``re``, so they are built so that no two quantifiers can take the same characters, and so that a
failed attempt is never retried in a way that cannot succeed:

* a whitespace run compiles to the possessive ``\s++``; a placeholder next to a whitespace run can
  neither start nor (before one) end with whitespace, so the run and the placeholder never compete
  for the same characters (the naive ``\s+(?P<x>[^\n]*?)\s+`` is cubic on a run of spaces). An
  empty placeholder between two runs still needs two whitespace characters, as before, through the
  look-behind ``(?<=\s\s)``;
* a placeholder and the literal text after it form an atomic group ``(?>...)``: the placeholder
  stops at the first place where that literal text matches, and is never stretched to a later one.
  That is exactly what the lazy placeholder would end up with, whenever the next placeholder can
  absorb everything this one could (same kind, or a one-line placeholder before a multi-line one):
  if the rest matches after a later occurrence of the literal, it also matches after the first one,
  the next placeholder taking the text in between. Without the groups, a pattern with k
  placeholders is O(n^k) on a near miss. The last placeholder (before the end of a full match) and a
  multi-line placeholder followed by a one-line one keep plain lazy matching; a multi-line
  placeholder directly followed by a one-line placeholder can only end at a line break (or be
  empty), which is again what lazy matching would choose;
* a placeholder directly followed by another one that can take everything it could stays empty:
  that is what lazy matching gives, found without trying every length (quadratic);
* ``search`` (a template found inside a longer message) tries every start; the variant the matcher
  searches with (``to_regex(..., search=True)``) stops every placeholder before the pattern's
  opening text, so that no start is scanned over from an earlier start (else a near miss repeated
  along the message is quadratic). It finds the innermost occurrence: where the first placeholder
  of a match held the opening again, a match starts at that later opening; a template whose later
  placeholder would have to hold its own opening text is not "found inside" (the fuzzy tier still
  compares it);
* the results are the same matches with the same captures as the plain lazy translation (checked by
  ``tests/test_reliability.py`` on every pattern of the knowledge base against real messages), and
  every pattern stays under 10 ms on the adversarial inputs of :mod:`explainer.knowledge.attack` at the
  matcher's 2 000-character cap.

Python 3.11's ``re`` has atomic groups and possessive quantifiers, so no other engine is needed; the
``regex`` module (timeouts) and RE2 (``google-re2``, no backtracking, but no possessive quantifiers
or look-behind, and an extra compiled dependency) were not needed for any pattern.
"""

from __future__ import annotations

import re

from explainer.normalize import normalize, quoted_tokens, tokens
from explainer.textio import Lazy

_TOKEN = Lazy(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)(\.\.\.)?\}|\s+")


class PatternError(ValueError):
    """A pattern that breaks the placeholder rules."""


def placeholders(pattern: str) -> list[str]:
    """Names of the placeholders in ``pattern``, in order."""
    return [m.group(1) for m in _TOKEN.finditer(pattern) if m.group(1)]


def _items(pattern: str) -> list[tuple]:
    """The template as ("lit", text) / ("ws",) / ("ph", name, multi) items; raises PatternError."""
    items: list[tuple] = []
    seen: set[str] = set()
    pos = 0

    def literal(text: str) -> None:
        if "{" in text or "}" in text:
            raise PatternError(f"stray brace in {text!r}: write {{{{ or }}}} for a literal brace")
        if text:
            if items and items[-1][0] == "lit":
                items[-1] = ("lit", items[-1][1] + text)
            else:
                items.append(("lit", text))

    for m in _TOKEN.finditer(pattern):
        literal(pattern[pos : m.start()])
        tok = m.group(0)
        if tok in ("{{", "}}"):
            if items and items[-1][0] == "lit":
                items[-1] = ("lit", items[-1][1] + tok[0])
            else:
                items.append(("lit", tok[0]))
        elif m.group(1):
            name = m.group(1)
            if name in seen:
                raise PatternError(f"placeholder {{{name}}} appears twice")
            seen.add(name)
            items.append(("ph", name, bool(m.group(2))))
        else:
            items.append(("ws",))
        pos = m.end()
    literal(pattern[pos:])
    # a message's closing full stop or colon is often lost in a paste (prose drops it, a log line
    # is cut): it is optional at the very end of a template
    if items and items[-1][0] == "lit" and items[-1][1][-1] in ".:" and not items[-1][1].endswith(".."):
        text = items[-1][1]
        if len(text) > 1:
            items[-1] = ("lit", text[:-1])
        else:
            items.pop()
        items.append(("end", text[-1]))
    return items


def _literal_regex(items: list[tuple]) -> str:
    return "".join(
        re.escape(it[1]) if it[0] == "lit" else re.escape(it[1]) + "?" if it[0] == "end" else r"\s++" for it in items
    )


def to_regex(pattern: str, *, search: bool = False) -> str:
    """Translate a template into regular-expression source (no anchors); see the module docstring
    for why it is written this way. ``search``: the variant the matcher searches with, whose first
    placeholder does not run over the pattern's opening text again (see the module docstring)."""
    items = _items(pattern)
    phs = [i for i, it in enumerate(items) if it[0] == "ph"]
    opening = _literal_regex(items[: phs[0]] if phs else items)
    # a pattern opening with whitespace starts a match at the start of a run only, not inside it
    out = [r"(?<!\s)" if items and items[0][0] == "ws" else "", opening]
    for n, i in enumerate(phs):
        name, multi = items[i][1], items[i][2]
        nxt = phs[n + 1] if n + 1 < len(phs) else len(items)
        tail = items[i + 1 : nxt]  # the literal text up to the next placeholder (or the end)
        x = r"[\s\S]" if multi else r"[^\n]"
        if search and opening:
            x = f"(?:(?!{opening}){x})"
        after_ws = i > 0 and items[i - 1][0] == "ws"
        before_ws = bool(tail) and tail[0][0] == "ws"
        next_single = nxt < len(items) and not items[nxt][2]
        # atomic with its literal text when the next placeholder can absorb what this one could
        atomic = bool(tail) and nxt < len(items) and not (multi and next_single)
        if not tail and nxt < len(items) and (not multi or not next_single):
            # directly before a placeholder that can take all it could: lazy matching leaves it empty
            # (if the rest matches with it longer, it matches with it empty, the next one longer)
            out.append(f"(?P<{name}>)")
        elif multi and not tail and next_single:
            # directly before a one-line placeholder: lazy matching only ever stops at a line break
            out.append(rf"(?P<{name}>(?:[\s\S]*?\n)??)")
        elif after_ws and before_ws:
            # non-empty first (what the lazy placeholder after a greedy \s+ tries first), then
            # empty, which needs the two whitespace runs to be one of at least two characters
            rest = _literal_regex(tail[1:])
            first = rf"(?P<{name}>\S(?:{x}*?\S)??)\s++{rest}"
            out.append(rf"(?:{'(?>' + first + ')' if atomic else first}|(?<=\s\s){rest})")
        else:
            if after_ws:
                body = rf"(?:\S{x}*?)??"
            elif before_ws:
                body = rf"(?:{x}*?\S)??"
            else:
                body = rf"{x}*?"
            group = rf"(?P<{name}>{body}){_literal_regex(tail)}"
            out.append(f"(?>{group})" if atomic else group)
    return "".join(out)


def to_regex_lazy(pattern: str) -> str:
    """The plain translation (``\\s+`` and lazy placeholders): the reference :func:`to_regex` is
    checked against. Not used for matching: it backtracks badly on crafted input."""
    out: list[str] = []
    for it in _items(pattern):
        if it[0] == "lit":
            out.append(re.escape(it[1]))
        elif it[0] == "end":
            out.append(re.escape(it[1]) + "?")
        elif it[0] == "ws":
            out.append(r"\s+")
        else:
            body = r"[\s\S]*?" if it[2] else r"[^\n]*?"
            out.append(f"(?P<{it[1]}>{body})")
    return "".join(out)


def compile_pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(to_regex(pattern), re.IGNORECASE)


def literal_text(pattern: str) -> str:
    """The pattern with placeholders replaced by a neutral token, for fuzzy comparison."""
    return _TOKEN.sub(
        lambda m: " <*> " if m.group(1) else ("{" if m.group(0) == "{{" else "}" if m.group(0) == "}}" else " "),
        pattern,
    ).strip()


def fill(template: str, values: dict[str, str]) -> str:
    """Fill ``{name}`` / ``{name|default}`` placeholders of a fix template.

    Unknown names without a default are left as written, so the user sees what to substitute.
    """

    def sub(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        value = values.get(name)
        if value:
            return value
        return default if default is not None else m.group(0)

    return FILL_FIELD.sub(sub, template).replace("{{", "{").replace("}}", "}")


FILL_FIELD = Lazy(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)(?:\|([^{}\n]*))?\}(?!\})")


def template_fields(template: str) -> list[tuple[str, str | None]]:
    """(name, default) for each placeholder of a fix template."""
    return [(m.group(1), m.group(2)) for m in FILL_FIELD.finditer(template)]


def pattern_features(raw: str, normalized: str) -> dict:
    """What the matcher needs to know about a pattern beyond its regex; computed when the index is
    built, so that starting the matcher is reading, not analysing."""
    raw_s = raw.strip()
    # the opening of a multi-line pattern (or the first sentence of a long one), for pastes that
    # kept only the first line of the message
    first = raw_s.split("\n", 1)[0]
    if first == raw_s and len(raw_s) > 100 and ". " in raw_s:
        first = raw_s[: raw_s.index(". ") + 1]
    head = ""
    if first != raw_s and len(tokens(normalize(literal_text(first)))) >= 3:
        try:
            head = to_regex(first)
        except ValueError:
            head = ""
    # the longest whitespace-free literal piece of that opening: a message without it can match
    # neither the template nor its opening, so the regular expressions are skipped
    # (without a closing full stop or colon, which the template does not require)
    pieces = [w for w in re.split(r"\{[^{}]*\}|\s+", first.replace("{{", "{").replace("}}", "}").rstrip(".:")) if w]
    literal = lambda t: len(re.sub(r"\{[^{}]*\}|\s", "", t))  # noqa: E731
    # every literal piece of the whole template (the longest few): a message missing one cannot match
    # the template, fully or at its start, so the expressions are not even tried (a near miss of a
    # long template with several multi-line placeholders costs tens of milliseconds to reject)
    everything = {
        w.lower().rstrip(".:") for w in re.split(r"\{[^{}]*\}|\s+", raw_s.replace("{{", "{").replace("}}", "}"))
    }
    quoted = quoted_tokens(raw_s) - tokens(normalized)
    return {
        "pieces": sorted((w for w in everything if len(w) >= 4), key=lambda w: (-len(w), w))[:8],
        "head_share": round(literal(first) / max(1, literal(raw_s)), 3) if head else 1.0,
        "tokens": sorted(tokens(normalized) | quoted),
        "quoted": sorted(quoted),  # words in the template's quotes: a message that lacks one is another error
        "required": max(pieces, key=len).lower() if pieces else "",
        "specificity": min(0.015, len(re.sub(r"\{[^{}]*\}|\s", "", raw)) / 20000),
        "literal_start": not raw.lstrip().startswith("{") or raw.lstrip().startswith("{{"),
        "head": head,
    }
