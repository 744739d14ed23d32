"""Pass 1 of the parser, *clean*: the paste's decoders (notebook JSON, VS Code's error object, a log
record's escaped traceback, HTML entities, a browser's translation), the prefixes launchers, loggers
and pytest put before every line, boxes, fences and gutters taken off, a terminal's wraps joined and
flattened pastes split back into lines. Bounded: each step is linear in the paste, and the loop over
the lines looks at the budget."""

from __future__ import annotations

from explainer.budget import PARSE_RESERVE, Budget
from explainer.parse.state import (
    _CHECK_CHARS,
    _CHECK_LINES,
    _CJK,
    _DISTRIBUTED,
    _IPY_HEADER,
    _TAIL_LINES,
    _TB_TEXT,
    MAX_CHARS,
    MAX_FLAT_LINE,
    MAX_LINE,
)
from explainer.textio import (
    Lazy,
    strip_controls,
    valid_unicode,
)

_FENCE = Lazy(r"^\s*(```|~~~)[\w+-]*\s*$")


_PREFIXES = [
    r"^\[(?:rank|default|local_rank)?\d+\]\s*:\s?",  # [rank0]: / [default1]: / [0]:
    r"^\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?\s*(?:[-|:]\s*)?",  # ISO time
    r"^[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d\s+",  # "Oct 16 02:07:00 "
    r"^\d\d:\d\d:\d\d(?:[.,:-]\d+)?\s+",  # "10:53:25-006878 "
    # a log level, and the logger's name after it ("ERROR:pkg.mod:", loguru's "ERROR | pkg.mod:fn:12 - ")
    r"^\[?(?:ERROR|WARNING|WARN|INFO|DEBUG|CRITICAL|FATAL)\]?(?:\s*[:|]\s*|\s+-\s+|\s+)(?:[\w.]+:(?:[\w<>]+:\d+ - )?(?=\S))?",
    r"^[A-Z]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+[\w./-]+:\d+\]\s*",  # glog "W1130 01:02:03.456 123 file.cpp:45] "
    r"^\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[\w.-]{1,100}:\d+\] ?",  # vLLM's "11-05 12:03:00 client.py:250] " after its level
    r"^\[?[\w.-]+ ?(?:pid=|rank=)\d+\]?\s+",  # ray-style "(pid=123) "
    r"^\(\w+(?: rank=\d+)? pid=\d+(?:, ip=[\d.]+)?\)\s*",  # ray's "(raylet pid=1)", vLLM's "(VllmWorker rank=0 pid=2)"
    r"^E(?: {3,}|\t)",  # pytest error lines
    r"^\*\*\* ",  # pdb / ipdb print exceptions as "*** RuntimeError: ..."
    r"^\d{1,3}: (?=\s*(?:File |Traceback|\w+Error|\[rank))",  # srun -l / torchrun "0: "
    r"^>(?!>>) ?",  # a quoted reply or a Markdown blockquote ("> "), not the REPL's ">>> "
]


_RICH_EDGE = Lazy(r"^\s*[╭╰┏┗+][─━\-]")


_GROUP_BAR = Lazy(r"^(?:\s*+\|)++\s?")  # ExceptionGroup boxes (3.11+)


_GROUP_SEP = Lazy(r"^\s*\+[-+]+( \d+ -+| \.\.\.)")


_ANY_PREFIX = Lazy("|".join(f"(?:{p})" for p in _PREFIXES))


_BORDERS = "│┃|"


def _rich_content(line: str) -> str:
    """The text inside a rich box line ``│ text │``: the left border and one space after it, and a
    right border with the whitespace around it, removed (plain code: as a regular expression,
    ``^\\s*[│┃|]\\s?(.*?)\\s*[│┃|]?\\s*$`` is cubic on a line of spaces)."""
    s = line.lstrip()
    if not s or s[0] not in _BORDERS:
        return line
    s = s[1:]
    if s[:1].isspace():
        s = s[1:]
    s = s.rstrip()
    if s and s[-1] in _BORDERS:
        s = s[:-1].rstrip()
    return s


_PREFIX_OPENERS = frozenset("[(*>0123456789")


_LEVELS = ("ERROR", "WARN", "INFO", "DEBUG", "CRITICAL", "FATAL")


def _may_have_prefix(line: str) -> bool:
    """Whether one of ``_PREFIXES`` could match at the start of ``line``: false for most lines of a
    paste (``Traceback``, ``  File``, ``RuntimeError: ...``), which then skip the expression."""
    c = line[:1]
    if c in _PREFIX_OPENERS or "pid=" in line or "rank=" in line:
        return True
    # "Oct 16 02:07", "E   ", glog's "W1130 ", a log level
    return "A" <= c <= "Z" and (
        line[3:4] == " " or line[1:2] in (" ", "\t") or line[1:2].isdigit() or line.startswith(_LEVELS)
    )


def _split_prefix(line: str) -> tuple[str, str]:
    """(the launcher/logger/pytest prefixes of a line, the rest)."""
    rest = line
    for _ in range(8):  # prefixes stack: "[rank0]: 2026-11-30 12:00:01 ERROR ..."
        if not _may_have_prefix(rest):
            break
        m = _ANY_PREFIX.match(rest)
        if not m or not m.end() or m.end() >= len(rest):
            break
        rest = rest[m.end() :]
    return line[: len(line) - len(rest)], rest


# the logger an error-level prefix names: "ERROR:pkg.mod:", "| ERROR    | pkg.mod:fn:12 - "
_LOGGED_BY = Lazy(
    r"(?:ERROR|CRITICAL|FATAL)\]?(?:\s*[:|]\s*|\s+-\s+|\s+)([A-Za-z_][\w.]{0,200}):(?:([\w<>]{1,100}):(\d{1,7}) - )?"
)


def strip_prefixes(line: str) -> str:
    return _split_prefix(line)[1]


_DIGITS = Lazy(r"\d+")


# Markers that start a new line in a paste that lost its newlines.
_REFLOW = Lazy(
    r"\s(?=Traceback \(most recent call last\):)"
    r"|\s(?=File \"[^\"]{1,400}\", line \d+)"
    r"|\s(?=File (?:[A-Za-z]:\\|~|/)[^\n]{1,400}?:\d+,? in [\w<>.]+)"
    r"|\s(?=File (?:[A-Za-z]:\\|~|/)\S{1,400}?\.pyx?:\d+\s)"  # Spyder's module-level frame
    r"|\s(?=(?:The above exception was the direct cause|During handling of the above exception))"
    r"|\s(?=Original Traceback \(most recent call last\):)"
    r"|\s(?=Exception raised from )|\s(?=frame #\d+: )"
)


_FINAL_IN_FLAT = Lazy(
    r"(?<![\w.])((?:[A-Za-z_]\w*\.)*(?:_?[A-Z]\w*?)?(?:Error|Exception|Warning|Exit|Interrupt|Failed|Unsupported|Missing|Timeout|Exceeded)"
    r"|torch(?:\.[a-z_]\w*)++\.[A-Z][A-Za-z0-9]*+)[:：]\s"
)


# IPython's own layout, flattened: where a line started ("<ipython-input-5-ab> in <module>", a file
# frame "/x/y.py in f(", IPython 8's "Cell In[3], line 2" and "File ~/x.py:522, in f", an arrow
# "----> 2 ", a context line "    183 "); its separator is dropped.
# (A file frame starts after a character no path holds and scans path characters only, an arrow at
# its first dash, a run of spaces at its start: each character is scanned from one start at most.)
_IPY_SPLIT = Lazy(
    r"-{20,}+"
    r"|(?=<ipython-input-[\w-]{1,80}> in )"
    r"|(?<![\w/\\.~-])(?=(?:[A-Za-z]:\\|/)[\w/\\.~-]{1,400}?\.pyx? in [\w<>.]{1,100}\()"
    r"|(?=Cell In\s?\[\d{0,6}\], line \d)"  # IPython 8's cell frame
    r"|(?<!\w)(?=File (?:[A-Za-z]:\\|~|/)[\w/\\.~-]{1,400}?\.pyx?:\d{1,7}, in )"  # and its file frame
    r"|(?<!-)(?=-{1,12}> ?\d{1,6} )"
    r"|(?<!\s)\s{2,}+(?=\d{1,6}(?!\d))"
)


def _empty_context(piece: str) -> int:
    """The length of an empty context line ("186") that the next frame's path is glued to
    ("186/opt/x.py in f("), else 0. (Plain code: as an expression it is quadratic when searched.)"""
    d = len(piece) - len(piece.lstrip("0123456789"))
    rest = piece[d:]
    k = rest.find(" in ")
    path = rest[:k]
    if 0 < d <= 6 and k > 0 and (path[:1] == "/" or path[1:3] == ":\\") and path.endswith((".py", ".pyx")):
        return d if " " not in path else 0
    return 0


def _ipython_lines(text: str) -> list[str]:
    out = []
    for piece in _IPY_SPLIT.split(text):
        piece = piece.strip()
        if not piece:
            continue
        if piece[0].isdigit():  # a context line, indented as IPython prints it
            d = _empty_context(piece)
            if d:
                out.append("    " + piece[:d])
                piece = piece[d:]
            else:
                piece = "    " + piece
        out.append(piece)
    return out


def _reflow_ipython(line: str) -> list[str]:
    """An old IPython traceback that lost its newlines, split back into the lines IPython prints:
    the header, each frame, its context lines (indented) and its arrow, then the exception. The
    exception is the last "Type:" of the type the header names (glued to the line before it when
    the newlines were dropped with nothing in their place), else the last that reads as one."""
    lines = _ipython_lines(line)
    header = next((m for m in map(_IPY_HEADER.match, lines[:3]) if m), None)
    cut = line.rfind(header.group(1) + ":") if header else -1
    if cut <= line.find(_TB_TEXT):
        cut = -1
        for m in _FINAL_IN_FLAT.finditer(line):
            cut = m.start()
    if cut < 0:
        return lines
    return _ipython_lines(line[:cut]) + [line[cut:].strip()]


def _reflow(line: str) -> list[str]:
    """Split one long line that holds a whole traceback back into lines."""
    if "   " + _TB_TEXT in line:
        ipython = _reflow_ipython(line)  # IPython's layout: a "Type   Traceback" header, arrows
        if len(ipython) > 3 and any(_IPY_HEADER.match(l) for l in ipython[:3]):
            return ipython
    if len(_REFLOW.findall(line[:200_000])) < 2:
        return [line]
    pieces = _REFLOW.split(line)
    out: list[str] = []
    for piece in pieces:
        piece = piece.strip()
        if not piece:
            continue
        m = _FRAME_INLINE.match(piece)
        if m:
            out.append(piece[: m.end()])
            rest = piece[m.end() :].strip()
            if rest:
                # the frame's code, then possibly the final exception line
                ex = _FINAL_IN_FLAT.search(rest)
                if ex:
                    code = rest[: ex.start()].strip()
                    if code:
                        out.append("    " + code)
                    out.append(rest[ex.start() :])
                else:
                    out.append("    " + rest)
        else:
            out.append(piece)
    return out


_FRAME_INLINE = Lazy(
    r'File "[^"]{1,400}", line \d+(?:, in [\w<>.\[\]-]+)?'
    r"|File (?:[A-Za-z]:\\|~|/)[^\n]{1,400}?:\d+,? in [\w<>.\[\]-]+(?:\([^)]{0,300}\))?"
    r"|File (?:[A-Za-z]:\\|~|/)\S{1,400}?\.pyx?:\d+(?=\s|$)"
)


MIN_TERMINAL_WIDTH = 60


def _unwrap_terminal(lines: list[str]) -> list[str]:
    """Lines a terminal wrapped at its width (copied from a console that breaks long lines: every
    piece but the last exactly as wide as the screen) joined back. The width is the longest line's
    length when three lines or more have it and hold words (not a box's or a rule's lines); a piece
    is not joined to a line that starts a traceback, a frame, an exception or a warning. A line
    repeated (a warning printed three times) is a log's, not a screen's: pieces of one wrapped text
    differ, so fewer than three different full-width lines is no wrap."""
    lengths = list(map(len, lines))
    width = max(lengths, default=0)
    if width < MIN_TERMINAL_WIDTH or lengths.count(width) < 3:
        return lines
    full = [i for i, n in enumerate(lengths) if n == width]
    edges = _BORDERS + "─━═"
    if len({lines[i] for i in full}) < 3 or any(_ruled(lines[i], edges) for i in full):
        return lines
    out: list[list[str]] = []  # each line's pieces (joined once: linear however many there are)
    joining = False
    for line in lines:
        if (
            joining
            and line
            and not line.lstrip().startswith(("Traceback", "File ", "During handling", "The above"))
            and not _STARTS_RECORD.match(line[:MAX_LINE])
        ):
            out[-1].append(line)
        else:
            out.append([line])
        joining = len(line) == width
    return ["".join(pieces) for pieces in out]


# a line that opens a record of its own: an exception or a warning line, a warning's path:line: prefix
_STARTS_RECORD = Lazy(r"\A(?:[\w.]{0,120}(?:Error|Exception|Warning|Interrupt|Exit)\b:|[^\s:]{1,300}\.py:\d{1,7}: )")


def _ruled(line: str, edges: str) -> bool:
    """A line drawn to the screen's width, not wrapped by it: a box's side, a rule, a header between
    rules (pytest's "=== FAILURES ===", "___ test_x ___"), or no words."""
    first, last = line[:1], line[-1:]
    return (
        first in edges
        or last in edges
        or (
            first == last
            and not first.isalnum()
            and not first.isspace()
            and line.startswith(3 * first)
            and line.endswith(3 * first)
        )
        or not any(c.isalpha() for c in line)
    )


_INVISIBLE = ("\ufeff", "\u200b", "\u200c", "\u200d", "\u2060", "\u00ad")


def _indented_traceback(text: str) -> bool:
    """Whether a ``Traceback`` line of the text is indented (looked at where the words are only)."""
    at = text.find(_TB_TEXT)
    while at >= 0:
        if text[text.rfind("\n", 0, at) + 1 : at + 1][:1] in (" ", "\t"):
            return True
        # the next line's: every word on this line has this line's start (looked at once: a line
        # of a thousand Traceback words walked back a thousand times was quadratic)
        eol = text.find("\n", at)
        if eol < 0:
            return False
        at = text.find(_TB_TEXT, eol)
    return False


def _dedent_tracebacks(lines: list[str]) -> list[str]:
    """A traceback indented as a whole (Markdown's indented code, a reply a mail client indented, a
    list item): each run of lines that share an indentation and hold an indented ``Traceback``
    line, without that indentation, so that the traceback reads as printed (its prefixes at the
    start of the line, its frames' code deeper than their headers). A traceback's own indented
    lines (frames, code, a worker's) never hold its ``Traceback`` line: they are left alone."""
    out = list(lines)
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if line[:1] not in (" ", "\t") or not line.strip():
            i += 1
            continue
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        j, holds = i, False
        while j < n and (not lines[j].strip() or lines[j].startswith(indent)):
            holds = holds or _TB_TEXT in lines[j]
            j += 1
        if holds:
            for k in range(i, j):
                out[k] = lines[k][len(indent) :] if lines[k].strip() else ""
        i = j
    return out


def _at_most_three_shown(raw_lines: list[str]) -> bool:
    """Whether the paste has three lines or fewer that are not blank or a fence (looked at up to
    the fourth: a long paste is not walked twice)."""
    from itertools import filterfalse

    shown = 0
    # the blank lines skipped in C (a paste of 300 000 line breaks took 40 ms in a Python loop)
    for r in filterfalse(str.isspace, filter(None, raw_lines)):
        if not (r.lstrip()[:1] in "`~" and _FENCE.match(r[:MAX_LINE])):
            shown += 1
            if shown > 3:
                return False
    return True


# --- the passes over the whole text, in order: each (text, hints) -> text, linear, behind a cheap test


def _decoded(text: str, hints: set[str]) -> str:
    """A notebook's error output, an error object as VS Code copies it, or a traceback logged with
    escaped line breaks, decoded (:mod:`explainer.parse.decode`); valid Unicode after any of them."""
    # the decoders' own first tests, here: a plain paste never loads them
    if ('"traceback"' in text and '"ename"' in text) or ('"stack"' in text and '"message"' in text) or "\\n" in text:
        from explainer.parse import decode

        nb = decode._from_notebook_json(text)
        if nb is not None:
            text = nb
            hints.add("jupyter")
        else:
            obj = decode._from_error_object(text)
            if obj is not None:
                text = obj
            elif "\\n" in text:
                text = decode._from_escaped(text) or text
    return valid_unicode(text)  # the decoders read JSON escapes: \ud800 alone is a lone surrogate


_HTML_ENTITIES = ("&quot;", "&lt;", "&gt;", "&#39;", "&#x27;")


def _unescaped_html(text: str, hints: set[str]) -> str:
    if sum(text.count(e, 0, 200_000) for e in _HTML_ENTITIES) >= 2:
        import html

        return html.unescape(text)  # copied from a page's source: &quot;train.py&quot;, &lt;module&gt;
    return text


def _without_controls(text: str, hints: set[str]) -> str:
    """Colours for matching; escape sequences never reach a terminal; one kind of line break."""
    if "\x1b" in text:
        hints.add("ansi")
    text = strip_controls(text)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _without_invisible(text: str, hints: set[str]) -> str:
    if not text.isascii():
        # a no-break space is a space; what a web page or an editor adds unseen is nothing: a byte
        # order mark, zero-width spaces and joiners, a soft hyphen ("Runtime\u200bError")
        text = text.replace("\u00a0", " ")
        for ch in _INVISIBLE:
            if ch in text:
                text = text.replace(ch, "")
    return text


def _without_env_report(text: str, hints: set[str]) -> str:
    if "PyTorch version:" in text or "Collecting environment information" in text:
        from explainer.parse import decode

        return decode._drop_env_report(text)
    return text


def _untranslated(text: str, hints: set[str]) -> str:
    if ("回溯" in text or "追溯" in text or "错误：" in text or "错误:" in text) and _CJK.search(text):
        from explainer.parse import decode

        return decode._untranslate(text)
    return text


def _without_gutter(text: str, hints: set[str]) -> str:
    if text[:1].isdigit() or "\n1" in text[:2000]:
        from explainer.parse import decode

        return decode._strip_gutter(text)
    return text


TEXT_PASSES = (
    _decoded,
    _unescaped_html,
    _without_controls,
    _without_invisible,
    _without_env_report,
    _untranslated,
    _without_gutter,
)


def clean(text: str, budget: Budget | None = None) -> tuple[list[str], set[str], list[str], dict[int, str]]:
    """Lines ready for scanning, the format hints met on the way, each line's prefix shape (its
    prefixes with the numbers taken out: lines of one message share it), and the logger an
    error-level prefix named, by line (``pkg.mod`` or loguru's ``pkg.mod:function:line``). Once
    ``budget`` is spent only the last ``_TAIL_LINES`` lines are cleaned."""
    hints: set[str] = set()
    if len(text) > MAX_CHARS:
        text = text[-MAX_CHARS:]
        hints.add("truncated")
    for whole_text_pass in TEXT_PASSES:
        text = whole_text_pass(text, hints)
    raw_lines = _unwrap_terminal(text.split("\n"))
    if _indented_traceback(text):
        raw_lines = _dedent_tracebacks(raw_lines)
    # a paste of a few lines may be one that lost its newlines: its lines keep MAX_FLAT_LINE
    # characters until they are split back (cut at MAX_LINE first, a long flattened traceback lost
    # its last frames and the exception line); every line is cut at MAX_LINE after that
    few = _at_most_three_shown(raw_lines)
    cap = MAX_FLAT_LINE if few else MAX_LINE
    lines: list[str] = []
    tags: list[str] = []
    logged: dict[int, str] = {}
    wide = False  # a line of a longer paste kept past MAX_LINE to be split back
    k, n_raw, next_check, chars = 0, len(raw_lines), 0, 0
    while k < n_raw:
        raw = raw_lines[k]
        if budget is not None:
            chars += min(len(raw), MAX_LINE)
            if k >= next_check or chars > _CHECK_CHARS:
                next_check, chars = k + _CHECK_LINES, 0
                if k < n_raw - _TAIL_LINES and budget.spent(PARSE_RESERVE):
                    k = n_raw - _TAIL_LINES  # out of time: clean the end of the paste only
                    continue
        k += 1
        if not raw or raw.isspace():  # what every step below makes of a blank line, without the steps
            lines.append("")
            tags.append("")
            continue
        if len(raw) > cap and not few and _holds_flat_traceback(raw[:MAX_LINE]):
            line, wide = raw[:MAX_FLAT_LINE].rstrip(), True  # cut at MAX_LINE once it is split back
        else:
            line = raw[:cap].rstrip()
        lead = line.lstrip()[:1]  # what the box, fence and group expressions start with, looked at first
        if lead in "`~" and lead and _FENCE.match(line):
            continue
        if lead in "╭╰┏┗+" and lead and _RICH_EDGE.match(line):
            hints.add("rich")
            continue
        if lead in ("│", "┃"):
            line = _rich_content(line)
            hints.add("rich")
            lead = line.lstrip()[:1]
        if lead == "+" and _GROUP_SEP.match(line):
            lines.append("+--group--")
            tags.append("")
            continue
        if lead == "|":
            line = _GROUP_BAR.sub("", line)
            hints.add("group")
        prefix, stripped = _split_prefix(line) if _may_have_prefix(line) else ("", line)
        if prefix:
            if stripped.startswith(("E ", "E\t")) or line.startswith("E "):
                hints.add("pytest")
            elif _DISTRIBUTED.match(line):
                hints.add("distributed_prefixed")
            by = _LOGGED_BY.search(prefix) if "ERROR" in prefix or "CRITICAL" in prefix or "FATAL" in prefix else None
            if by:
                logged[len(lines)] = ":".join(g for g in by.groups() if g)
            line = stripped
        lines.append(line)
        tags.append(_DIGITS.sub("", "".join(prefix.split())) if prefix else "")
    if any(len(l) > 200 for l in lines):
        # a paste of a few lines: any long line may be a traceback that lost its newlines; in a
        # longer paste (the flattened traceback, then the poster's words or a log's last lines)
        # a long line that holds one
        few_lines = len(lines) <= 3
        flat: list[str] = []
        flat_tags: list[str] = []
        for l, t in zip(lines, tags):
            re_lines = _reflow(l) if len(l) > 200 and (few_lines or _holds_flat_traceback(l)) else [l]
            if len(re_lines) > 1:
                hints.add("flattened")
                logged = {}  # (lines split back: the loggers' places moved)
            flat.extend(re_lines)
            # one line's prefix, not a logger's on each
            flat_tags.extend([""] * len(re_lines) if few_lines or len(re_lines) > 1 else [t])
        lines, tags = flat, flat_tags
    if few or wide:
        lines = [l[:MAX_LINE] for l in lines]
    return lines, hints, tags, logged


def _holds_flat_traceback(line: str) -> bool:
    """Whether a long line of a longer paste holds a traceback without its newlines."""
    return "File " in line and (_TB_TEXT in line or line.count("File ") >= 2)
