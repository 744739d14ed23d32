"""Normalise messages before comparing them (as Sentry does for grouping).

Values that differ between two occurrences of the same error (numbers, shapes, sizes, dtypes,
devices, pids, addresses, paths, quoted names) become one placeholder token ``<*>``; case, width
(full-width punctuation) and whitespace are folded. Patterns go through the same function with their
``{placeholders}`` already turned into ``<*>``, so both sides meet in the same space.
"""

from __future__ import annotations

import re

from explainer.textio import Lazy

V = "<*>"

# Every rule is linear: no two quantifiers can take the same characters (the possessive ``*+``,
# ``++`` never give back what the next part could not use anyway), bounded repeats where a rule could
# otherwise scan to the end of the text from many starts. ``tests/test_reliability.py`` attacks each
# one with the inputs of :mod:`explainer.knowledge.attack`. The text is folded first: one space between words.
_D = "0-9"  # in a rule's needs: any digit
_RULES: list[tuple[Lazy, str, tuple[str, ...]]] = [
    # (expression, replacement, needs: the rule can only match a text holding one of these; an
    # expression is compiled the first time a text has what it needs)
    (Lazy(r"https?://\S++"), V, ("http",)),
    (Lazy(r"0x[0-9a-f]++"), V, ("0x",)),
    (Lazy(r"torch\.size\(\[[^\]]*+\]\)"), V, ("torch.size(",)),
    (Lazy(r"(?:[a-z]:[\\/]|[~.]?/)[^\s:'\",;()]++"), V, ("/", "\\")),  # paths
    # quoted names and values; an apostrophe inside a word ("can't") opens nothing
    (Lazy(r"(?<![\w])'[^'\n]{0,200}+'(?!\w)|\"[^\"\n]{0,200}+\"|`[^`\n]{0,200}+`"), V, ("'", '"', "`")),
    (Lazy(r"\[[\d\s,*.x-]*+\]"), V, ("[",)),  # [32, 3, 224, 224], [*, 10]
    # (3x1x1), (2, 3): the spaces around a separator belong to it, so items never compete for them
    (Lazy(r"\(\s*+(?:-?\d++\s*+[,x]\s*+)++-?\d*+\s*+\)"), V, ("(",)),
    (Lazy(r"\b\d++(?:\s*+x\s*+\d++)++\b"), V, (_D,)),  # 4x20, 2 x 2
    (Lazy(r"\b(?:cuda|mps|xpu|meta|cpu|hpu):\d++\b|\bcpu\b"), V, (":", "cpu")),  # a bare "cuda" is a word
    (
        Lazy(
            r"\b(?:torch\.)?(?:float(?:16|32|64)?|double|half|bfloat16|int(?:8|16|32|64)?|long|short|"
            r"u?int8|byte|bool|complex(?:32|64|128)?|char)(?:tensor)?\b"
        ),
        V,
        ("float", "double", "half", "int", "long", "short", "byte", "bool", "complex", "char"),
    ),
    (Lazy(r"\b\d++(?:\.\d++)?\s*+(?:[kmgt]i?b|bytes?)\b"), V, (_D,)),  # 2.00 GiB
    # digits glued to letters ("2d", "3rd"): the number is a value, as a template's "{n}D" says
    (Lazy(r"\b\d++(?=[a-z])(?!e[-+]?\d)"), V + " ", (_D,)),
    (Lazy(r"-?\b\d++(?:\.\d++)?(?:e[-+]?\d++)?\b"), V, (_D,)),  # numbers
]
_DIGIT = re.compile(r"\d")
# a run of whitespace is tried once, from its start (the look-behind), not from each of its characters
_PUNCT_SPACE = re.compile(r"(?:(?<!\s)\s++)?([,;:()])\s*+")
_MULTI_V = re.compile(r"(?:<\*>\s*+){2,}")
_WS = re.compile(r"\s+")


def fold(text: str) -> str:
    """Case, width and whitespace folding only."""
    if not text.isascii():  # NFKC leaves ASCII as it is; most pastes never load unicodedata (1.5 ms)
        import unicodedata

        text = unicodedata.normalize("NFKC", text)
    return _WS.sub(" ", text.lower()).strip()


_QUOTES = "'\"`"


def normalize(text: str) -> str:
    s = fold(text)
    # a message that is one quoted span (KeyError prints its message's repr) is that message: its
    # words must not be collapsed into one placeholder (a single quoted name still is)
    if len(s) > 2 and s[0] in _QUOTES and s[-1] == s[0] and " " in s:
        s = s[1:-1].strip()
    for rx, repl, needs in _RULES:
        # most messages hold no URL, path or shape: a substring test is far cheaper than a sub
        if any(_DIGIT.search(s) if n is _D else n in s for n in needs):
            s = rx.sub(repl, s)
    s = _PUNCT_SPACE.sub(r"\1 ", s)
    s = _MULTI_V.sub(V + " ", s)
    return _WS.sub(" ", s).strip()


# snake_case splits into its words. (A class of the CJK range costs a millisecond to compile: ASCII
# text, most of it, is read with the ASCII expression, and the other is compiled when first needed.)
_ASCII_WORD = re.compile(r"[a-z][a-z0-9]{2,}")
_WORD = Lazy(r"[a-z][a-z0-9]{2,}|[\u4e00-\u9fff]{1,}")
STOPWORDS = frozenset(
    "the and for with that this are was were not but from you your has have had can its into use "
    "when than then there which while will would should could been being any all one".split()
)


def tokens(normalized: str) -> set[str]:
    """Content words of a normalised text; Chinese runs become overlapping bigrams."""
    out: set[str] = set()
    for w in (_ASCII_WORD if normalized.isascii() else _WORD).findall(normalized):
        if "\u4e00" <= w[0] <= "\u9fff":
            if len(w) == 1:
                out.add(w)
            out.update(w[i : i + 2] for i in range(len(w) - 1))
        elif w not in STOPWORDS:
            out.add(w)
    return out


_QUOTED = Lazy(r"'([^'\n]{1,120})'|\"([^\"\n]{1,120})\"|`([^`\n]{1,120})`")


_PLACEHOLDER = Lazy(r"\{[^{}]{0,80}\}")


def quoted_tokens(text: str) -> set[str]:
    """Words inside quotes (``'torchvision.models.utils'``, `"cv2"`): normalising turns each quoted
    span into one placeholder, which would make every ``No module named '...'`` alike; these words
    tell them apart when candidates are ranked. Of a span holding a ``{placeholder}``, the words around it."""
    out: set[str] = set()
    for m in _QUOTED.finditer(text[:4000]):
        span = (m.group(1) or m.group(2) or m.group(3) or "").lower()
        if "{" in span:  # a template's placeholder: only the literal text around it ('torch.{name}' -> torch)
            span = _PLACEHOLDER.sub(" ", span)
        out.update(w for w in _ASCII_WORD.findall(span) if w not in STOPWORDS)
    return out


def cjk_bigrams(text: str) -> str:
    """Text for the full-text index: Chinese runs as space-separated bigrams, the rest unchanged."""

    def split(m: re.Match[str]) -> str:
        run = m.group(0)
        if len(run) == 1:
            return f" {run} "
        return " " + " ".join(run[i : i + 2] for i in range(len(run) - 1)) + " "

    return _CJK_RUN.sub(split, text)


_CJK_RUN = Lazy(r"[\u4e00-\u9fff]+")
