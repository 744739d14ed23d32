"""The answer in a terminal: the renderer's Markdown drawn with ANSI styles, fast.

The answers are Markdown of a small, known form (headings, paragraphs, ordered and bulleted lists,
quotes, fenced code, ``**bold**``, ``*italic*``, `` `code` ``, links), so this draws that form directly
instead of loading a general Markdown parser and a terminal library on every run (rich and
markdown-it cost about 60 ms to import, pygments' lexer more on the first highlighted block: several
times the rest of an answer). Paragraphs are reflowed to the terminal's width (a CJK character counts
two columns and a line may break between two of them); code keeps its lines and gets a light,
linear highlighter. Every scan here is a single pass over the text: the user's own messages and
code lines are in it.
"""

from __future__ import annotations

import re
import unicodedata

RESET = "\x1b[0m"
STYLE = {
    "b": "1",
    "i": "3",
    "code": "36",
    "h2": "1;4",
    "h3": "1;36",
    "quote": "2",
    "mark": "1;33",
    "kw": "35",
    "str": "32",
    "num": "36",
    "comment": "2",
    "rule": "2",
}
MAX_WIDTH = 100  # long lines are hard to read; a wide terminal gets this measure

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^(#{1,6})\s++(.*)$")
_ITEM = re.compile(r"^(\s*+)(\d{1,3}[.)]|[-*+])\s++(.*)$")
_QUOTE = re.compile(r"^\s{0,3}>\s?+(.*)$")
_RULE = re.compile(r"^\s{0,3}(?:-{3,}|\*{3,}|_{3,})\s*+$")
# Python, linearly: each alternative starts with a different character class and never backtracks
_TOKENS = re.compile(
    r"(?P<comment>#[^\n]*+)"
    r"|(?P<str>[rbfuRBFU]{0,2}(?:'(?:[^'\\\n]|\\.)*+'?|\"(?:[^\"\\\n]|\\.)*+\"?))"
    r"|(?P<num>\b\d[\w.]*+)"
    r"|(?P<name>[A-Za-z_]\w*+)"
)
_KEYWORDS = frozenset(
    "False None True and as assert async await break class continue def del elif else except finally for "
    "from global if import in is lambda nonlocal not or pass raise return try while with yield".split()
)


def sgr(style: str | None, text: str) -> str:
    return f"\x1b[{STYLE[style]}m{text}{RESET}" if style and text else text


def width_of(text: str) -> int:
    """Columns ``text`` takes in a terminal (East Asian wide and full-width characters take two)."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 0 if unicodedata.combining(c) else 1 for c in text)


CLOSING = frozenset("，。、；：！？）》」』】〉…")


def _is_wide(c: str) -> bool:
    return not c.isascii() and unicodedata.east_asian_width(c) in "WF"


# -- inline ------------------------------------------------------------------------------------------
def inline(text: str) -> list[tuple[str, str | None, str | None]]:
    """``text`` as (text, style, link) runs: code spans first (nothing inside them is markup), then
    bold, italic and links; unmatched markers stay as they are. Linear: a search for a closing marker
    that found none is not repeated further on, and one that found one is reused while it lies ahead."""
    out: list[tuple[str, str | None, str | None]] = []
    plain: list[str] = []
    bold = italic = False
    i, n = 0, len(text)
    ahead: dict[str, int] = {}  # marker -> where it next occurs at or after the last search (n: nowhere)

    def find(marker: str, start: int) -> int:
        at = ahead.get(marker, -1)
        if at < start:
            at = text.find(marker, start)
            at = ahead[marker] = n if at == -1 else at
        return -1 if at >= n else at

    def flush() -> None:
        if plain:
            style = "b" if bold else "i" if italic else None
            out.append(("".join(plain), style, None))
            plain.clear()

    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] in "\\`*_[]()#>-!|":
            plain.append(text[i + 1])
            i += 2
            continue
        if c == "`":
            run = i
            while run < n and text[run] == "`":
                run += 1
            ticks = text[i:run]
            end = find(ticks, run)
            while end != -1 and end + len(ticks) < n and text[end + len(ticks)] == "`":
                stop = end + len(ticks)
                while stop < n and text[stop] == "`":
                    stop += 1
                end = find(ticks, stop)  # a longer run is not the closing one
            if end == -1:
                plain.append(ticks)
                i = run
                continue
            flush()
            body = text[run:end]
            if len(body) > 2 and body[0] == " " and body[-1] == " ":
                body = body[1:-1]
            out.append((body, "code", None))
            i = end + len(ticks)
            continue
        if c == "*" and text.startswith("**", i):
            if bold or find("**", i + 2) != -1:
                flush()
                bold = not bold
                i += 2
                continue
        elif c == "*" and (italic or (i + 1 < n and not text[i + 1].isspace() and find("*", i + 1) != -1)):
            flush()
            italic = not italic
            i += 1
            continue
        if c == "<" and text.startswith(("<http://", "<https://"), i):
            end, space = find(">", i), find(" ", i)
            if end != -1 and (space == -1 or space > end):
                flush()
                out.append((text[i + 1 : end], None, text[i + 1 : end]))
                i = end + 1
                continue
        if c == "[":
            close = find("](", i + 1)
            end = find(")", close + 2) if close != -1 else -1
            newline = find("\n", i)
            if close != -1 and end != -1 and (newline == -1 or newline > end):
                flush()
                for body, style, _ in inline(text[i + 1 : close]):
                    out.append((body, style, text[close + 2 : end]))
                i = end + 1
                continue
        plain.append(c)
        i += 1
    flush()
    return out


def _pieces(runs):
    """Breakable pieces: (text, style, link, is_space), a word, a space or one wide character."""
    for text, style, link in runs:
        word: list[str] = []
        for c in text:
            if c == " " or c == "\n" or _is_wide(c):
                if word:
                    yield "".join(word), style, link, False
                    word = []
                yield (" ", style, link, True) if c in " \n" else (c, style, link, False)
            else:
                word.append(c)
        if word:
            yield "".join(word), style, link, False


def _draw(text: str, style: str | None, link: str | None) -> str:
    s = sgr(style, text)
    return f"\x1b]8;;{link}\x1b\\{s}\x1b]8;;\x1b\\" if link and link.startswith(("http://", "https://")) else s


def _line(prefix: str, pieces: list[tuple[str, str | None, str | None]]) -> str:
    """One drawn line: neighbouring pieces of the same style and link drawn as one run."""
    out: list[str] = [prefix]
    run: list[str] = []
    key: tuple | None = None
    for text, style, link in pieces:
        if (style, link) != key and run:
            out.append(_draw("".join(run), *key))  # type: ignore[misc]  # key is set once run holds text
            run = []
        key = (style, link)
        run.append(text)
    if run:
        out.append(_draw("".join(run), *key))  # type: ignore[misc]
    return "".join(out)


def wrap(runs, width: int, first: str = "", rest: str = "") -> list[str]:
    """Fill lines of at most ``width`` columns with the runs' pieces, ``first`` before the first line
    and ``rest`` before the others (the hanging indent of a list item); a piece longer than a line
    gets a line of its own."""
    lines: list[str] = []
    cur: list[tuple[str, str | None, str | None]] = []
    prefix = first
    used = width_of(first)
    pending: tuple | None = None  # a space, drawn only if a word follows it on the same line
    for text, style, link, space in _pieces(runs):
        if space:
            if cur:
                pending = (text, style, link)
            continue
        w = width_of(text)
        extra = 1 if pending else 0
        # closing punctuation stays on the line of what it closes (。，」) even a column past the width
        if cur and used + extra + w > width and not (w == 2 and not extra and text in CLOSING):
            lines.append(_line(prefix, cur))
            cur, prefix, used, pending, extra = [], rest, width_of(rest), None, 0
        if pending and extra:
            cur.append((" ", style if pending[1] == style else None, link if pending[2] == link else None))
            used += 1
        pending = None
        cur.append((text, style, link))
        used += w
    if cur or not lines:
        lines.append(_line(prefix, cur))
    return lines


# -- code --------------------------------------------------------------------------------------------
def highlight(line: str, lang: str) -> str:
    if lang not in ("python", "py", "pycon", "python3", ""):
        return sgr("comment", line) if line.lstrip().startswith("#") and lang in ("bash", "sh", "console") else line
    out, last = [], 0
    for m in _TOKENS.finditer(line):
        out.append(line[last : m.start()])
        kind = m.lastgroup
        word = m.group()
        if kind == "name":
            out.append(sgr("kw", word) if word in _KEYWORDS else word)
        else:
            out.append(sgr(kind, word))
        last = m.end()
    out.append(line[last:])
    return "".join(out)


# -- blocks ------------------------------------------------------------------------------------------
def to_ansi(md: str, width: int = 80) -> str:
    """The Markdown ``md`` drawn for a terminal ``width`` columns wide."""
    width = max(20, min(width, MAX_WIDTH))
    lines = md.split("\n")
    out: list[str] = []
    para: list[str] = []
    item: tuple[str, str] | None = None  # (first-line prefix, hanging indent) of an open list item

    def blank() -> None:
        if out and out[-1] != "":
            out.append("")

    def close() -> None:
        nonlocal item
        if para:
            text = " ".join(p.strip() for p in para)
            if item:
                out.extend(wrap(inline(text), width, item[0], item[1]))
            else:  # an indented paragraph (one that goes on a list item) keeps its indent
                lead = " " * min(len(para[0]) - len(para[0].lstrip()), 8)
                out.extend(wrap(inline(text), width, lead, lead))
            para.clear()
        item = None

    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            close()
            indent = " " * (len(line) - len(line.lstrip()))
            lang = line.strip()[len(fence.group(1)) :].strip().lower()
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(fence.group(1)):
                code = lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i].lstrip()
                out.append(indent + "  " + highlight(code, lang))
                i += 1
            i += 1
            blank()
            continue
        if not line.strip():
            close()
            blank()
            i += 1
            continue
        heading = _HEADING.match(line)
        if heading:
            close()
            blank()
            level = len(heading.group(1))
            style = "h2" if level <= 2 else "h3"
            out.extend(sgr(style, ln) if ln else ln for ln in wrap([(heading.group(2), None, None)], width))
            out.append("")
            i += 1
            continue
        if _RULE.match(line):
            close()
            out.append(sgr("rule", "─" * width))
            i += 1
            continue
        quote = _QUOTE.match(line)
        if quote:
            close()
            body = [quote.group(1)]
            while i + 1 < len(lines) and _QUOTE.match(lines[i + 1]):
                i += 1
                body.append(_QUOTE.match(lines[i]).group(1))  # type: ignore[union-attr]  # matched just above
            bar = sgr("quote", "▌ ")
            pieces: list[list[str]] = []
            for b in body:  # a quoted list's items start pieces of their own; other lines go on the last
                if b.lstrip().startswith("- ") or not pieces:
                    pieces.append([b.strip()])
                else:
                    pieces[-1].append(b.strip())
            for piece in pieces:
                text = " ".join(piece)
                if text.startswith("- "):
                    out.extend(wrap(inline(text[2:]), width, bar + sgr("mark", "• "), bar + "  "))
                else:
                    out.extend(wrap(inline(text), width, bar, bar))
            i += 1
            continue
        m = _ITEM.match(line)
        # a bullet, or a number that opens a list or follows an item or its indented paragraph, starts
        # an item (a wrapped line of prose that starts with "2. " does not)
        if m and (not para or item is not None or m.group(2)[0] in "-*+1" or para[0][:1] == " "):
            close()
            lead, marker, text = m.groups()
            bullet = "•" if marker in "-*+" else marker
            first = lead + bullet + " "
            item = (sgr("mark", first) if bullet == "•" else first, " " * width_of(first))
            para.append(text)
            i += 1
            continue
        para.append(line)
        i += 1
    close()
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def rule(title: str, width: int, *, styled: bool = True) -> str:
    """A horizontal rule with ``title`` in its middle (the hooks' header)."""
    width = max(20, min(width, MAX_WIDTH))
    side = max(2, (width - width_of(title) - 2) // 2)
    left, right = "─" * side, "─" * max(2, width - side - width_of(title) - 2)
    return f"{sgr('rule', left)} {title} {sgr('rule', right)}" if styled else f"{left} {title} {right}"


def print_markdown(md: str, file=None, *, title: str | None = None) -> None:
    """``md`` on ``file`` (stdout): drawn for a terminal, or plain Markdown (no colour, no padding)
    when it is not one or under ``NO_COLOR``; ``title``: a rule with that title first (the hooks)."""
    import os
    import sys

    file = file or sys.stdout
    styled = bool(getattr(file, "isatty", None) and file.isatty()) and not os.environ.get("NO_COLOR")
    width = _columns(file)
    head = rule(title, width, styled=styled) + "\n\n" if title else ""
    if not styled:
        file.write(head + "\n".join(line.rstrip() for line in md.rstrip().split("\n")) + "\n")
        return
    file.write(head + to_ansi(md, width))


def _columns(file) -> int:
    """The terminal's width: ``COLUMNS`` when set, else the size of ``file``'s terminal (80 when it
    has none); shutil's version of this costs its import (bz2, lzma) on every run."""
    import os

    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(file.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80
