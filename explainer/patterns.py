"""Message templates with named placeholders, compiled to regular expressions.

Rules (kb/README.md): ``{name}`` matches within one line, lazily; ``{name...}`` matches across lines,
lazily; ``{{`` and ``}}`` are literal braces; any run of whitespace matches any run of whitespace;
matching ignores case. A name may appear once per pattern.
"""

from __future__ import annotations

import re

from .normalize import normalize, tokens

_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)(\.\.\.)?\}|\s+")


class PatternError(ValueError):
    """A pattern that breaks the placeholder rules."""


def placeholders(pattern: str) -> list[str]:
    """Names of the placeholders in ``pattern``, in order."""
    return [m.group(1) for m in _TOKEN.finditer(pattern) if m.group(1)]


def to_regex(pattern: str) -> str:
    """Translate a template into regular-expression source (no anchors)."""
    out: list[str] = []
    seen: set[str] = set()
    pos = 0
    for m in _TOKEN.finditer(pattern):
        literal = pattern[pos : m.start()]
        if "{" in literal or "}" in literal:
            raise PatternError(f"stray brace in {literal!r}: write {{{{ or }}}} for a literal brace")
        out.append(re.escape(literal))
        tok = m.group(0)
        if tok == "{{":
            out.append(r"\{")
        elif tok == "}}":
            out.append(r"\}")
        elif m.group(1):
            name = m.group(1)
            if name in seen:
                raise PatternError(f"placeholder {{{name}}} appears twice")
            seen.add(name)
            body = r"[\s\S]*?" if m.group(2) else r"[^\n]*?"
            out.append(f"(?P<{name}>{body})")
        else:
            out.append(r"\s+")
        pos = m.end()
    tail = pattern[pos:]
    if "{" in tail or "}" in tail:
        raise PatternError(f"stray brace in {tail!r}: write {{{{ or }}}} for a literal brace")
    out.append(re.escape(tail))
    return "".join(out)


def compile_pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(to_regex(pattern), re.IGNORECASE)


def literal_text(pattern: str) -> str:
    """The pattern with placeholders replaced by a neutral token, for fuzzy comparison."""
    return _TOKEN.sub(lambda m: " <*> " if m.group(1) else ("{" if m.group(0) == "{{" else "}" if m.group(0) == "}}" else " "), pattern).strip()


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


FILL_FIELD = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)(?:\|([^{}\n]*))?\}(?!\})")


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
    pieces = [w for w in re.split(r"\{[^{}]*\}|\s+", first.replace("{{", "{").replace("}}", "}")) if w]
    return {
        "tokens": sorted(tokens(normalized)),
        "required": max(pieces, key=len).lower() if pieces else "",
        "specificity": min(0.015, len(re.sub(r"\{[^{}]*\}|\s", "", raw)) / 20000),
        "literal_start": not raw.lstrip().startswith("{") or raw.lstrip().startswith("{{"),
        "head": head,
    }
