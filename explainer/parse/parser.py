"""Turn any pasted text into the plain traceback model. Never raises.

The work happens in three passes over bounded input:

1. *clean*: decode notebook JSON, drop ANSI codes, Markdown fences, rich box borders and the
   prefixes that launchers, loggers and pytest put before every line; re-split pastes that lost
   their newlines;
2. *scan*: one pass over the lines with the table ``LINE_RULES``, small named rules in the order of
   the grammar over a :class:`Scan` state: frame headers of every style and their code lines,
   exception lines and their messages, chain separators, worker re-raises, signal lines (NCCL, CUDA
   assertions, signals, C++ frames, warnings); the first rule that takes a line says where the scan
   goes on. What they find is a list of events;
3. *assemble*: pick the exception the user should read first, the chain before it, the other
   tracebacks in the paste, and mark library frames.

Every regular expression here is linear: no two quantifiers can take the same characters (where
they could, the first one is possessive, ``*+`` / ``++``, or the work is done in plain code), lines
are capped at ``MAX_LINE`` before they are matched and the paste at ``MAX_CHARS``.
``tests/test_reliability.py`` attacks every expression of this module at those caps with the inputs
of :mod:`explainer.knowledge.attack`.

A :class:`~explainer.budget.Budget` bounds the time of one parse: it is checked between the passes
and every ``_CHECK_LINES`` lines of the scan; once it is spent, the scan goes on with the last
``_TAIL_LINES`` lines only (the final exception is at the end) and the answer is marked partial.
"""

from __future__ import annotations

import re

from explainer.budget import PARSE_RESERVE, Budget
from explainer.model import Frame, Link, Other, Parsed, Signal
from explainer.textio import (
    USER_CODE,
    Lazy,
    drop_invisible,
    escape_invisible,
    has_invisible,
    strip_controls,
    valid_unicode,
)

MAX_CHARS = 300_000  # keep the tail of longer pastes: the final exception is at the end
MAX_LINE = 6_000  # longer lines are cut (a message's identifying words come first)
MAX_FLAT_LINE = 64_000  # a line of a paste that lost its newlines, before it is split back into lines
MAX_MESSAGE_LINES = 40
MAX_NOTEBOOK_STRINGS = 20_000  # strings read from a notebook's cut JSON (a traceback has far fewer)

# ---------------------------------------------------------------------------------------------
# pass 1: cleaning

_TB_TEXT = "Traceback (most recent call last)"
_FENCE = Lazy(r"^\s*(```|~~~)[\w+-]*\s*$")
_PREFIXES = [
    r"^\[(?:rank|default|local_rank)?\d+\]\s*:\s?",  # [rank0]: / [default1]: / [0]:
    r"^\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?\s*(?:[-|:]\s*)?",  # ISO time
    r"^[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d\s+",  # "Oct 16 02:07:00 "
    r"^\d\d:\d\d:\d\d(?:[.,:-]\d+)?\s+",  # "10:53:25-006878 "
    r"^\[?(?:ERROR|WARNING|WARN|INFO|DEBUG|CRITICAL|FATAL)\]?(?:\s*[:|]\s*|\s+-\s+|\s+)(?:[\w.]+:(?=\S))?",  # log level
    r"^[A-Z]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+[\w./-]+:\d+\]\s*",  # glog "W1130 01:02:03.456 123 file.cpp:45] "
    r"^\[?[\w.-]+ ?(?:pid=|rank=)\d+\]?\s+",  # ray-style "(pid=123) "
    r"^\(\w+ pid=\d+(?:, ip=[\d.]+)?\)\s*",
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


def strip_prefixes(line: str) -> str:
    return _split_prefix(line)[1]


_DIGITS = Lazy(r"\d+")


def _from_notebook_json(text: str) -> str | None:
    """Error output of a notebook cell (``"ename"``, ``"evalue"``, ``"traceback": [...]``)."""
    if '"traceback"' not in text or '"ename"' not in text:
        return None
    import json

    start = text.find("{")
    blobs = []
    for candidate in (text[start:] if start >= 0 else "", "{" + text.strip().strip(",") + "}"):
        try:
            blobs.append(json.loads(candidate))
            break
        except ValueError:
            continue
    found: list[str] = []

    def walk(o) -> None:
        if isinstance(o, dict):
            if isinstance(o.get("traceback"), list) and "ename" in o:
                found.append("\n".join(str(x) for x in o["traceback"]))
                return
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    for b in blobs:
        walk(b)
    if found:
        return found[-1]
    # not valid JSON (cut by the paste): unescape the traceback strings one by one
    m = _TB_KEY.search(text)
    if not m:
        return None
    # a string that is not closed before the end of its line is skipped (as a search for closed
    # strings would, which retried from every escaped quote inside it: quadratic)
    from itertools import islice

    found_strings = islice(_JSON_STRING.finditer(text, m.end()), 4 * MAX_NOTEBOOK_STRINGS)
    parts = [sm.group(1) for sm in found_strings if sm.group(2)][:MAX_NOTEBOOK_STRINGS]
    out = []
    for p in parts:
        if "\\" not in p:
            out.append(p)  # nothing to unescape (json.loads would return it unchanged)
            continue
        try:
            out.append(json.loads(f'"{p}"'))
        except ValueError:
            out.append(p)
    return "\n".join(out) if out else None


def _from_error_object(text: str) -> str | None:
    """The traceback inside an error object as VS Code copies it (``{"name": ..., "message": ...,
    "stack": ...}``), often not valid JSON (raw newlines in the strings): the stack, with the
    ``name: message`` line added when the stack does not end with it. None for any other text."""
    if '"stack"' not in text or '"message"' not in text:
        return None
    import json

    start = text.find("{")
    end = text.rfind("}")
    obj = None
    if 0 <= start < end:
        try:
            obj = json.loads(text[start : end + 1], strict=False)  # strict=False: raw newlines in strings
        except ValueError:
            obj = None
    if not isinstance(obj, dict):
        # cut or mangled: each field's string read on its own
        obj = {}
        for key in ("name", "message", "stack"):
            value = _field(text, key)
            if value is not None:
                obj[key] = value
    stack, name, message = (obj.get(k) for k in ("stack", "name", "message"))
    if not isinstance(stack, str) or not stack.strip():
        return None
    if isinstance(name, str) and isinstance(message, str) and name and f"{name}: {message}" not in stack:
        stack = stack.rstrip() + f"\n{name}: {message}"
    return stack


_ESCAPED_TB = "Traceback (most recent call last):\\n"


def _from_escaped(text: str) -> str | None:
    """A traceback logged with its line breaks escaped (a JSON log record's ``"exc_info":
    "Traceback (most recent call last):\\n  File ..."``, a log line that printed a repr), or an
    error in a JSON record's value: the line that holds the last one, with the JSON string it sits
    in (or the rest of the line) decoded in its place. None when the text holds none."""
    at = text.rfind(_ESCAPED_TB)
    tb = at >= 0
    if not tb:
        at = max(text.rfind("Error"), text.rfind("Exception"))
        if at < 0 or "\\n" not in text[text.rfind("\n", 0, at) + 1 : at]:
            return None  # an error word after an escaped line break on its line: a logged message
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    line, k = text[start:end], at - start
    m = next((m for m in _JSON_STRING.finditer(line) if m.start() < k < m.end()), None)
    if not tb and (m is None or not line.lstrip().startswith("{") or not line[: m.start()].rstrip().endswith(":")):
        return None  # a message only from a JSON record's value ("msg": "..."), not between two quoted paths
    raw = m.group(1) if m else line[k:]
    import json

    try:
        decoded = json.loads(f'"{raw}"', strict=False)
    except ValueError:  # not a JSON string's escapes (a Windows path's backslash): the line breaks only
        decoded = raw.replace("\\r\\n", "\n").replace("\\n", "\n").replace("\\t", "\t")
    before, after = (line[: m.start()], line[m.end() :]) if m else (line[:k], "")
    return f"{text[:start]}{before}\n{decoded}\n{after}{text[end:]}"


def _field(text: str, key: str) -> str | None:
    """The string value of ``"key": "..."`` in a text that is not valid JSON (cut, raw newlines)."""
    import json

    m = _OBJECT_FIELD.get(key)
    found = m.search(text) if m is not None else None
    if found is None:
        return None
    rest = text[found.end() :]
    close = _STRING_END.search(rest)
    value = rest[: close.start()] if close else rest.rstrip().rstrip("}").rstrip().rstrip('"')
    try:
        return json.loads(f'"{value}"', strict=False)
    except ValueError:
        return value


_OBJECT_FIELD = {k: Lazy(rf'"{k}"\s*+:\s*+"') for k in ("name", "message", "stack")}
_STRING_END = Lazy(r'(?<!\\)"\s*+[,}]')  # the closing quote of a string value, before the next key or the end
# A traceback run through a browser's translation into Chinese: its fixed lines back in Python's words
# (the message itself stays as translated: entries carry translated patterns)
_ZH_TYPES = {
    "运行时错误": "RuntimeError",
    "类型错误": "TypeError",
    "值错误": "ValueError",
    "索引错误": "IndexError",
    "键错误": "KeyError",
    "属性错误": "AttributeError",
    "断言错误": "AssertionError",
    "导入错误": "ImportError",
    "模块未找到错误": "ModuleNotFoundError",
    "未实现错误": "NotImplementedError",
    "名称错误": "NameError",
    "内存错误": "MemoryError",
    "零除错误": "ZeroDivisionError",
    "文件未找到错误": "FileNotFoundError",
    "操作系统错误": "OSError",
    "递归错误": "RecursionError",
    "溢出错误": "OverflowError",
    "超时错误": "TimeoutError",
    "用户警告": "UserWarning",
}
_ZH_TYPE_LINE = Lazy(r"^(\s*+)(" + "|".join(sorted(_ZH_TYPES, key=len, reverse=True)) + r")\s*+[:：]\s*+")
_ZH_TB_START = Lazy(r"^(\s*+)(?:回溯|追溯|Traceback)\s*+[（(]最近一次调用[^）)\n]{0,12}[）)]\s*+[:：]\s*+$")
_ZH_FRAME = Lazy(
    r'^(\s*+)文件\s*+["“”]([^"“”\n]{1,400})["“”]\s*+[，,]\s*+第\s*+(\d+)\s*+行\s*+'
    r"(?:[，,]\s*+(?:在|位于)\s*+([\w<>.\[\]-]{1,200})(?:\s*+中)?)?\s*+$"
)


def _untranslate(text: str) -> str:
    """The fixed lines of a browser-translated traceback ("回溯（最近一次调用最后）：", '文件 "x.py"，第 3 行，在
    f 中', "运行时错误：...") back in Python's own words, so the frames and the type are read."""
    out = []
    for line in text.split("\n"):
        if len(line) < 600:
            m = _ZH_TB_START.match(line)
            if m:
                line = f"{m.group(1)}Traceback (most recent call last):"
            elif m := _ZH_FRAME.match(line):
                line = f'{m.group(1)}File "{m.group(2)}", line {m.group(3)}' + (
                    f", in {m.group(4)}" if m.group(4) else ""
                )
            elif m := _ZH_TYPE_LINE.match(line):
                line = f"{m.group(1)}{_ZH_TYPES[m.group(2)]}: {line[m.end() :]}"
        out.append(line)
    return "\n".join(out)


_GUTTER = Lazy(r"(\d{1,5})(?:[ \t]|\s*[|:│](?=\s|$))")


def _strip_gutter(text: str) -> str:
    """A paste copied with an editor's or a viewer's line numbers ("1 Traceback ...", "2   File ..."),
    or with ``srun -l``'s rank on every line ("0: ..."): when the numbers count up by one, or one
    number with a colon repeats, on every line of a run of three or more, they are taken off
    (IPython's context lines are indented, so never read as a gutter)."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if _GUTTER.match(line)), None)
    if start is None:
        return text
    expected, numbered, rank = None, [], None
    for i in range(start, len(lines)):
        m = _GUTTER.match(lines[i])
        if not m:
            if lines[i].strip():
                break
            continue
        n = int(m.group(1))
        if expected is not None and n != expected:
            if rank is None and len(numbered) == 1 and n == expected - 1 and ":" in lines[i][: m.end()]:
                rank = n  # "0: ", "0: ", ...: a launcher's rank, not a count
            if rank is None or n != rank:
                break
        numbered.append((i, m.end()))
        expected = n if rank is not None else n + 1
    if len(numbered) < 3:
        ranks = _one_rank(lines)
        return text if ranks is None else "\n".join(ranks)
    for i, end in numbered:
        rest = lines[i][end:]
        lines[i] = rest[1:] if rest.startswith(" ") and not rest.startswith("  ") else rest
    return "\n".join(lines)


_RANK = Lazy(r"(\d{1,3}):(?: |$)")


def _one_rank(lines: list[str]) -> list[str] | None:
    """The output of several ranks interleaved line by line (``srun -l``: "0: ...", "1: ...", each
    rank's traceback cut into the others'): the lines of the rank that printed last, without their
    prefix; the lines of no rank (the poster's words) stay. None when the paste is not that: under
    four lines with a rank, more than two lines without one (or a tenth of them), or a rank that is
    not on several lines."""
    ranks = []
    other = 0
    for line in lines:
        if line.strip():
            m = _RANK.match(line)
            if m:
                ranks.append(m.group(1))
            else:
                other += 1
    if len(ranks) < 4 or other > max(2, len(ranks) // 9) or not 2 <= len(set(ranks)) <= len(ranks) // 2:
        return None
    last = ranks[-1]
    out = []
    for line in lines:
        m = _RANK.match(line)
        if m is None:
            out.append(line)
        elif m.group(1) == last:
            out.append(line[m.end() :])
    return out


_ENV_START = ("PyTorch version:", "Collecting environment information")
_ENV_LINE = ("[pip", "[conda]", "/", "GPU ", "CPU:", "Versions of relevant libraries")
_ENV_KEY = Lazy(r"[A-Za-z][\w .()/+-]{0,60}:(?:\s|$)")
_NOT_ENV = ("Error", "Exception", "Warning", "Traceback", "File ", "During handling", "The above exception")


def _drop_env_report(text: str) -> str:
    """The paste without the report of ``python -m torch.utils.collect_env`` (what PyTorch's issue
    template asks for: "PyTorch version: ...", "Nvidia driver version: ...", "cuDNN version: ...",
    lscpu's lines, "[pip3] torch==..."): it describes the machine, not the error, and its words
    would read as evidence ("driver version", "cuDNN"). The report runs from its first line while
    lines are its own: "Key: value", a path, a GPU, a package, blank; a traceback's or an
    exception's line (a type, ``Traceback``, ``File``) ends it."""
    lines = text.split("\n")
    out: list[str] = []
    inside = False
    for line in lines:
        s = line.strip()
        if not inside:
            inside = s.startswith(_ENV_START)
        elif s and not ((s.startswith(_ENV_LINE) or _ENV_KEY.match(s)) and not any(w in s for w in _NOT_ENV)):
            inside = False
        if not inside:
            out.append(line)
    return "\n".join(out)


_HTML_ENTITIES = ("&quot;", "&lt;", "&gt;", "&#39;", "&#x27;")
_TB_KEY = Lazy(r'"traceback"\s*+:\s*+\[')
_JSON_STRING = Lazy(r'"((?:[^"\\\n]|\\.)*+)(")?')


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


def clean(text: str, budget: Budget | None = None) -> tuple[list[str], set[str], list[str]]:
    """Lines ready for scanning, the format hints met on the way, and each line's prefix shape
    (its prefixes with the numbers taken out: lines of one message share it). Once ``budget`` is
    spent only the last ``_TAIL_LINES`` lines are cleaned."""
    hints: set[str] = set()
    if len(text) > MAX_CHARS:
        text = text[-MAX_CHARS:]
        hints.add("truncated")
    nb = _from_notebook_json(text)
    if nb is not None:
        text = nb
        hints.add("jupyter")
    else:
        obj = _from_error_object(text)
        if obj is not None:
            text = obj
        elif "\\n" in text:
            text = _from_escaped(text) or text
    text = valid_unicode(text)  # the decoders read JSON escapes: \ud800 alone is a lone surrogate
    if sum(text.count(e, 0, 200_000) for e in _HTML_ENTITIES) >= 2:
        import html

        text = html.unescape(text)  # copied from a page's source: &quot;train.py&quot;, &lt;module&gt;
    if "\x1b" in text:
        hints.add("ansi")
    text = strip_controls(text)  # colours for matching; escape sequences never reach a terminal
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.isascii():
        # a no-break space is a space; what a web page or an editor adds unseen is nothing: a byte
        # order mark, zero-width spaces and joiners, a soft hyphen ("Runtime\u200bError")
        text = text.replace("\u00a0", " ")
        for ch in _INVISIBLE:
            if ch in text:
                text = text.replace(ch, "")
    if "PyTorch version:" in text or "Collecting environment information" in text:
        text = _drop_env_report(text)
    if ("回溯" in text or "追溯" in text or "错误：" in text or "错误:" in text) and _CJK.search(text):
        text = _untranslate(text)
    if text[:1].isdigit() or "\n1" in text[:2000]:
        text = _strip_gutter(text)
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
        prefix, stripped = _split_prefix(line)
        if prefix:
            if stripped.startswith(("E ", "E\t")) or line.startswith("E "):
                hints.add("pytest")
            elif _DISTRIBUTED.match(line):
                hints.add("distributed_prefixed")
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
            flat.extend(re_lines)
            # one line's prefix, not a logger's on each
            flat_tags.extend([""] * len(re_lines) if few_lines or len(re_lines) > 1 else [t])
        lines, tags = flat, flat_tags
    if few or wide:
        lines = [l[:MAX_LINE] for l in lines]
    return lines, hints, tags


def _holds_flat_traceback(line: str) -> bool:
    """Whether a long line of a longer paste holds a traceback without its newlines."""
    return "File " in line and (_TB_TEXT in line or line.count("File ") >= 2)


# ---------------------------------------------------------------------------------------------
# pass 2: scanning

_TB_START = Lazy(r"^\s*(?:Original )?Traceback \(most recent call last\):?\s*$")
_IPY_HEADER = Lazy(r"^\s*((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)\s{3,}Traceback \(most recent call last\)")
_CAUSE = Lazy(r"The above exception was the direct cause of the following exception")
_CONTEXT = Lazy(r"During handling of the above exception, another exception occurred")
_WORKER = Lazy(r"Caught (\w+) in DataLoader worker process \d+")

_FRAME_RES = [
    # standard CPython: File "x.py", line 3, in f
    ("standard", Lazy(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>\S+))?\s*(?P<code>.*)$')),
    # IPython 8 / Spyder: File ~/x.py:12, in f(x)   File D:\a\b.py:581 in backward
    (
        "ipython",
        Lazy(
            r"^\s*File (?P<file>(?:[A-Za-z]:[\\/]|~|/|\.|\w)[^\n]*?):(?P<line>\d+),? in (?P<func>[\w<>.\[\]-]+)(?:\([^)]*\))?\s*(?P<code>.*)$"
        ),
    ),
    # Spyder's module-level frame: File D:\proj\train.py:30 (no function named)
    ("ipython", Lazy(r"^\s*File (?P<file>(?:[A-Za-z]:[\\/]|~|/|\.)[^\n:]*?\.pyx?):(?P<line>\d+)\s*$")),
    # IPython 8 cells: Cell In[3], line 5   /  Input In [3], in <cell line: 5>()
    ("ipython", Lazy(r"^\s*(?P<file>Cell In\s?\[\d*\]), line (?P<line>\d+)(?:, in (?P<func>[\w<>.]+))?")),
    ("ipython", Lazy(r"^\s*(?P<file>Input In \[\d*\]), in (?P<func>[^\n(]+)")),
    # old IPython / Colab: <ipython-input-9-abc> in <module>()   /path/x.py in f(a, b); IPython 7 drops
    # the parentheses of <module>
    (
        "ipython",
        Lazy(
            r"^\s*(?P<file><ipython-input-[\w-]+>|(?:[A-Za-z]:[\\/]|/|~)[^\n]*?\.pyx?) in (?P<func>[\w<>.]+)(?:\(.*)?$"
        ),
    ),
    # rich: /path/x.py:12 in f   (borders already removed)
    (
        "rich",
        Lazy(r"^\s*(?P<file>(?:[A-Za-z]:[\\/]|/|~)[^\s:]*(?: [^\s:]+)*\.py):(?P<line>\d+) in (?P<func>[\w<>.]+)\s*$"),
    ),
    # pdb / ipdb: > /path/x.py(12)forward()
    (
        "debugger",
        Lazy(r"^>?\s*(?P<file>(?:[A-Za-z]:[\\/]|/|~|\.)[^\s()]*\.py)\((?P<line>\d+)\)(?P<func>[\w<>]+)\(\)\s*$"),
    ),
    # pytest: path/x.py:12: in test_f
    ("pytest", Lazy(r"^(?P<file>[^\s:][^:\n]*\.py):(?P<line>\d+): in (?P<func>[\w<>.]+)\s*$")),
]
_ARROW = Lazy(r"^\s*-+>\s*(?P<line>\d+)\s(?P<code>.*)$")
_IPY_CONTEXT = Lazy(r"^\s{2,}\d+(?:\s|$)")  # a context line, empty ones too ("    117")


def caret_focus(code_line: str, marker_line: str) -> str | None:
    """The part of a code line that Python 3.11+'s ``^^^~~~`` line under it points at, or None.
    Plain string scanning (no regular expression): the columns of the first and last marker."""
    if len(marker_line) > 2000 or not marker_line.strip() or marker_line.strip(" ^~") or "^" not in marker_line:
        return None
    start = len(marker_line) - len(marker_line.lstrip(" "))
    end = len(marker_line.rstrip())
    piece = code_line[start:end].strip()
    return piece or None


_MARKERS = Lazy(r"^[\^~\s]++$")
_REPEATED = Lazy(r"^\s*\[Previous line repeated \d+ more times?\]")
_PYTEST_SRC = Lazy(r"^>\s{3,}(?P<code>\S.*)$")
_PYTEST_LOC = Lazy(r"^(?P<file>[^\s:][^:\n]*\.py):(?P<line>\d+): (?P<type>\w+)$")
_FAILED_SUMMARY = Lazy(r"^(?:FAILED|ERROR) \S+ - (?P<rest>.+)$")
_DEBUGGER_WORDS = ("Exception has occurred", "发生异常", "例外が発生しました")  # VS Code, in three languages
_VSCODE = Lazy(r"^\s*(?:" + "|".join(_DEBUGGER_WORDS) + r")\s*[:：]\s*(?P<type>[\w.]+)\s*$")


def _debugger_words(line: str) -> bool:
    return any(w in line for w in _DEBUGGER_WORDS)


_TERMINATE = Lazy(r"terminate called after throwing an instance of '(?P<type>[^']+)'")
_WHAT = Lazy(r"^\s*what\(\):\s*(?P<msg>.*)$")
_WARNING_LINE = Lazy(r"^(?P<file>\S[^\n]*?):(?P<line>\d+): (?P<type>\w*Warning): ?(?P<msg>.*)$")
_EXC_LINE = Lazy(r"^(?P<indent>\s*)(?P<type>(?:[A-Za-z_]\w*(?:\.|::))*[A-Za-z_]\w*)(?:(?:\s*[:：]\s?)(?P<msg>.*))?$")
_EXC_SUFFIX = Lazy(r"(?:Error|Exception|Warning|Exit|Interrupt|Failed|Unsupported|Missing|Iteration|Timeout|Exceeded)$")
_KNOWN_TYPES = {"KeyboardInterrupt", "StopIteration", "GeneratorExit", "SystemExit", "python-BaseException"}
# An exception quoted inside prose: the type may be glued to Chinese text (CJK characters are \w to
# Python's re, so only ASCII word characters may not precede it), wrapped alone in Markdown emphasis
# (**RuntimeError**: ...), followed by a colon with or without a space (full-width too), or written as
# its repr in a log line (got RuntimeError('...')). Starts are ASCII-word starts only: linear.
_INLINE_EXC = Lazy(
    r"(?P<open>\*\*|[`'\"“‘「]?)(?<![A-Za-z0-9_.])"
    r"(?P<type>(?:[A-Za-z_][A-Za-z0-9_]*+\.)*+[A-Z][A-Za-z0-9_]*?(?:Error|Exception))(?P<shut>\*\*|`)?"
    r"(?:\s*+[:：](?![:/])\s?|\((?P<q>['\"]))"
)
_QUOTED_LINES = 8  # a quoted message is looked for its closing quote this many lines on
_CLOSERS = {"**": "**", "`": "`", "'": "'", '"': '"', "“": "”", "‘": "’", "「": "」"}
# the closing quote of an inline message: followed by a space, punctuation or the end
_CLOSING = {c: Lazy(re.escape(c) + r"(?=\s|[.,;:)!?]|$)") for c in set(_CLOSERS.values())}
_SENTENCE_END = Lazy(r"(?<=[.!?。！？])\s+")
_DISTRIBUTED = Lazy(r"^\[(?:rank|default)")
_CODEISH = Lazy(r"[.(=\[]")
_PARAGRAPH = Lazy(r"^(?:[A-Z][a-z]+ |\(\d\) |from user code:)")
_TYPE_SEP = Lazy(r"\.|::")
_CAMEL = Lazy(r"^[A-Z]\w*$")
_N_FRAMES = Lazy(r"^\s*+\d++ frames?\s*$")
_ELLIPSIS = Lazy(r"^\s*+\.\.\.\s*$")
_WHAT_INLINE = Lazy(r"what\(\):\s*+(?P<msg>.*)$")
_CPP = Lazy(r"^\s*(?:Exception raised from .* \(most recent call first\):|frame #\d+: )")
_SIGNAL_RES = [
    # (an assertion's text stops at the next "Assertion": a match from an earlier one would also be
    # one from that later one, and each character is then scanned from one start only)
    (
        "cuda_assert",
        Lazy(r"Assertion `?(?:(?!Assertion)[^\n]){0,400}`? failed\.|device-side assert|CUDA kernel errors", re.I),
    ),
    (
        "nccl",
        Lazy(
            r"\bNCCL\b|ProcessGroupNCCL|Watchdog caught collective|ncclUnhandled|ncclSystemError|ncclInternalError",
            re.I,
        ),
    ),
    (
        "signal",
        Lazy(
            r"killed by signal|Segmentation fault|Bus error|core dumped|SIGKILL|SIGSEGV|SIGBUS|SIGABRT|Received signal|exitcode\s*:\s*-\d+|Killed$|OOM[- ]killer|out of shared memory|shm",
            re.I,
        ),
    ),
    ("terminate", Lazy(r"terminate called after throwing")),
]
# every signal expression above contains one of these words: lines without any skip the expressions.
# Matched against the lower-cased line: an IGNORECASE alternation is several times slower.
_SIGNAL_WORDS = Lazy(
    "assert|cuda kernel|nccl|watchdog|killed|segmentation|bus error|core dumped|sig|exitcode|oom|shm|shared memory|terminate called"
)
# ("site-packages" anywhere makes a path a library path, so "/torch/" needs no look-ahead for it)
_LIB = Lazy(
    r"(?:site-packages|dist-packages|[\\/]lib[\\/]python\d[\d.]*[\\/]|[\\/]Lib[\\/]|[\\/]pkgs[\\/]|"
    r"^<frozen |[\\/]torch[\\/]|^torch[\\/]|[\\/]importlib[\\/]|[\\/]\.pyenv[\\/]versions[\\/][^\\/]+[\\/]lib[\\/])"
)


def is_library(path: str) -> bool:
    return bool(_LIB.search(path))


class _Event:
    """An exception or warning found in the paste, with the frames read before it."""

    __slots__ = ("kind", "exc_type", "message", "relation", "frames", "warning")

    def __init__(
        self, kind: str, exc_type: str | None, message: str | None, frames: list[Frame], *, warning: bool = False
    ) -> None:
        self.kind = kind  # exc, inline, summary, terminate, debugger, truncated, worker, group
        self.exc_type = exc_type
        self.message = message
        self.relation: str | None = None
        self.frames = frames
        self.warning = warning


def _is_code(line: str) -> bool:
    text = line.strip()
    if not text or len(text) > 200 or text.endswith(":") or not _CODEISH.search(text) or not text.isascii():
        return False  # ("Traceback (most recent call last):" is the usual line before a first frame)
    try:
        compile(text, USER_CODE, "exec", dont_inherit=True)  # a syntax check only: never executed
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


_CJK_OR_FULLWIDTH = Lazy(r"[\u4e00-\u9fff，。？！；]")


def _trim_commentary(first: str) -> str:
    """An English message followed, on the same line, by Chinese words is a message plus the
    poster's comment ("... scalar outputs，请问怎么解决？"); a quoted Chinese path is not cut."""
    if not first or not first[0].isascii() or first.isascii():
        return first
    pos = singles = doubles = 0  # quotes before the current character, counted once
    for m in _CJK_OR_FULLWIDTH.finditer(first):
        singles += first.count("'", pos, m.start())
        doubles += first.count('"', pos, m.start())
        pos = m.start()
        if singles % 2 == 0 and doubles % 2 == 0:
            before = first[: m.start()]
            # a few ASCII words then Chinese is a translated message ("mat1 和 mat2 形状..."), kept
            return before.rstrip(" ,:;-—(（") if len(before.split()) >= 4 else first
    return first


_TOOL_PREFIX = Lazy(r"([a-z][a-z0-9_.-]{1,19}): \S")


def _tool_log_line(lines: list[str], j: int) -> bool:
    """A line of another tool's log ("wandb: ...", "mlflow: ..."): its lower-case ``name: `` prefix
    starts another line beside it too (a message's own "note: ..." line stands alone)."""
    m = _TOOL_PREFIX.match(lines[j])
    if not m:
        return False
    prefix = m.group(1) + ": "
    return any(lines[k].startswith(prefix) for k in range(max(0, j - 3), min(len(lines), j + 4)) if k != j)


def _ends_message(lines: list[str], k: int) -> bool:
    """After a line with no letters or digits: nothing more, or the poster's own words (a closing
    ``>>``, ``---`` or fence then "thanks"), not torch's next lines (torchrun's ``====`` tables)."""
    while k < len(lines) and not lines[k].strip():
        k += 1
    if k >= len(lines):
        return True
    s = lines[k].strip()
    return bool(_CHATTY.search(s.lower()) or (not s.isascii() and _CJK.search(s)))


def _continues(line: str) -> bool:
    """After a blank line inside an exception's message: does this line still belong to it?"""
    s = line.strip()
    if _is_structural(line):
        return False
    if line.startswith((" ", "\t")):
        return True  # torch indents the paragraphs of its long messages; commentary is rarely indented
    if _CHATTY.search(s.lower()) or (not s.isascii() and _CJK.search(s)):
        return False
    if s.startswith(
        ("Process finished with exit code", "python-BaseException", "During handling", "The above exception")
    ):
        return False
    if _is_exc_line(line):
        return False
    return bool(_PARAGRAPH.match(s))


def _is_exc_line(line: str) -> bool:
    """``Type: message`` where Type reads as an exception type: the start of another exception."""
    m = _EXC_LINE.match(line)
    return bool(m and m.group("msg") is not None and _looks_like_type(m.group("type"), False))


def _looks_like_type(name: str, after_frames: bool) -> bool:
    last = _TYPE_SEP.split(name)[-1]
    if name in _KNOWN_TYPES or _EXC_SUFFIX.search(last):
        return True
    if last == "error" and "." in name and name[0].isalpha():
        return True  # a module's lower-case exception class: cv2.error, socket.error, zmq.error
    # torch's own exception classes are not all named ...Error (GuardOnDataDependentSymNode,
    # FailOnRecompileLimitHit): a CamelCase class inside the torch package is one wherever it stands
    if name.startswith("torch.") and name.count(".") >= 2 and _CAMEL.match(last):
        return True
    # right after a traceback's frames, a dotted CamelCase name is an exception type too
    return after_frames and bool(_CAMEL.match(last)) and ("." in name or "::" in name)


def _is_structural(line: str) -> bool:
    # (each expression behind a substring it needs: most lines hold none of them)
    return bool(
        (_TB_TEXT in line and _TB_START.match(line))
        or ("above exception" in line and bool(_CAUSE.search(line) or _CONTEXT.search(line)))
        or (("frame #" in line or "Exception raised from" in line) and _CPP.match(line))
        or (
            ("File " in line or " in " in line or "Cell In" in line or "Input In" in line or ".py(" in line)
            and any(rx.match(line) for _, rx in _FRAME_RES)
        )
        or ("terminate called" in line and _TERMINATE.search(line))
        or (line.startswith(("FAILED ", "ERROR ")) and _FAILED_SUMMARY.match(line))
        or (line.startswith(">") and _PYTEST_SRC.match(line))
        or line == "+--group--"
    )


_CHECK_LINES = 256  # the budget is looked at after this many lines or this many characters
_CHECK_CHARS = 16_000
_TAIL_LINES = 400  # once the budget is spent, the lines still read (the end of the paste)
MAX_SIGNALS = 200


class Scan:
    """What the line rules read and write: the lines, the one being read (``i``), and what was
    found so far. ``frames`` are the frames since the last exception; ``relation`` is how the next
    exception relates to the one before it (cause, context, worker, group); ``pending_type`` is a
    type announced before its message (an IPython header, "Exception has occurred: X")."""

    __slots__ = ("lines", "tags", "i", "events", "signals", "hints", "frames", "in_tb", "relation", "pending_type")

    def __init__(self, lines: list[str], tags: list[str] | None = None) -> None:
        self.lines = lines
        self.tags = tags
        self.i = 0
        self.events: list[_Event] = []
        self.signals: list[Signal] = []
        self.hints: set[str] = set()
        self.frames: list[Frame] = []
        self.in_tb = False
        self.relation: str | None = None
        self.pending_type: str | None = None

    def add_exc(self, exc_type: str | None, msg: str | None, *, warning: bool = False, kind: str = "exc") -> None:
        """An exception (or warning) ends here: it takes the frames read since the last one."""
        ev = _Event(kind, exc_type, msg, self.frames, warning=warning)
        ev.relation = self.relation
        self.events.append(ev)
        self.frames, self.in_tb, self.relation = [], False, None

    def forget(self) -> None:
        """Drop the traceback being read (the scan jumps ahead)."""
        self.frames, self.in_tb, self.relation, self.pending_type = [], False, None, None


def _collect(lines: list[str], j: int, limit: int, stop=None) -> tuple[list[str], int]:
    """The lines from ``j`` on, stripped, up to a blank or structural line or one that ``stop``
    accepts, at most ``limit`` of them; and the index of the line after them."""
    out: list[str] = []
    n = len(lines)
    while j < n and len(out) < limit and lines[j].strip() and not _is_structural(lines[j]):
        if stop is not None and stop(lines[j]):
            break
        out.append(lines[j].strip())
        j += 1
    return out, j


# The line rules, in the order of the grammar. Each gets the scan, the line and the line stripped;
# it returns the index of the next line to read when the line is its own, or None to let the next
# rule look at it. A line no rule takes is skipped.


def _blank(st: Scan, line: str, s: str) -> int | None:
    return st.i + 1 if not s else None


def _group_marker(st: Scan, line: str, s: str) -> int | None:
    """The marker ``clean`` puts where an ExceptionGroup's box starts a sub-exception."""
    if s != "+--group--":
        return None
    if st.events:
        st.events[-1].kind = "group"
    st.relation = "group"
    return st.i + 1


def _signal_line(st: Scan, line: str, s: str) -> int | None:
    """Notes a line that tells something by itself (NCCL, a device-side assert, a signal); the line
    still goes to the rules after this one."""
    if len(st.signals) < MAX_SIGNALS and _SIGNAL_WORDS.search(s.lower()):
        rx: Lazy | re.Pattern[str]
        for kind, rx in _SIGNAL_RES:
            if rx.search(s):
                st.signals.append(Signal(kind, s[:500]))
                break
    return None


def _cpp_frame(st: Scan, line: str, s: str) -> int | None:
    """A C++ stack line (``frame #3: ...``, "Exception raised from ..."): one signal per run of them."""
    if not (("frame #" in line or "Exception raised from" in line) and _CPP.match(line)):
        return None
    if len(st.signals) < MAX_SIGNALS and not any(x.kind == "cpp_frame" for x in st.signals[-3:]):
        st.signals.append(Signal("cpp_frame", s[:300]))
    st.hints.add("cpp_frames")
    return st.i + 1


def _ipython_header(st: Scan, line: str, s: str) -> int | None:
    """IPython's ``ValueError      Traceback (most recent call last)``: the type comes first."""
    m = _IPY_HEADER.match(line) if _TB_TEXT in line else None
    if not m:
        return None
    st.hints.add("ipython")
    st.in_tb, st.frames, st.pending_type = True, [], m.group(1)
    return st.i + 1


def _traceback_start(st: Scan, line: str, s: str) -> int | None:
    """``Traceback (most recent call last):``, and a DataLoader worker's ``Original Traceback``."""
    if not (_TB_TEXT in line and _TB_START.match(line)):
        return None
    if "Original" in s:
        st.hints.add("dataloader_worker")
        if st.events and _WORKER.search(st.events[-1].message or ""):
            st.events[-1].kind = "worker"
        if st.events and st.events[-1].kind == "worker":
            st.relation = "worker"
    st.in_tb, st.frames = True, []
    return st.i + 1


def _chain_marker(st: Scan, line: str, s: str) -> int | None:
    """ "The above exception was the direct cause ..." / "During handling of the above exception ..."."""
    if "above exception" not in s:
        return None
    if _CAUSE.search(s):
        st.relation = "cause"
    elif _CONTEXT.search(s):
        st.relation = "context"
    else:
        return None
    st.hints.add("chained")
    return st.i + 1


def _frame_header(st: Scan, line: str, s: str) -> int | None:
    """A frame in any of the styles of ``_FRAME_RES``, with its code line when one follows."""
    if not ("File " in line or " in " in line or "Cell In" in line or "Input In" in line or ".py(" in line):
        return None
    for style, rx in _FRAME_RES:  # noqa: B007 - the matching style is read below
        fm = rx.match(line)
        if fm:
            break
    else:
        return None
    lines, i = st.lines, st.i
    if style != "standard":
        st.hints.add(style)
    gd = fm.groupdict()
    if not st.frames and not st.events and i > 0 and _is_code(lines[i - 1]):
        # a paste cut at the top often starts with the user's own code line
        st.frames.append(Frame("<truncated>", None, None, lines[i - 1].strip(), False))
    code = (gd.get("code") or "").strip() or None
    focus = None
    # the code sits on the next line unless the frame header carried it (flattened pastes)
    if code is None and i + 1 < len(lines):
        nxt = lines[i + 1]
        if (
            nxt.startswith((" ", "\t"))
            and nxt.strip()
            # deeper than the header: in a traceback indented as a whole (a quoted reply, Markdown's
            # indented code) the exception line after a frame without code is not its code
            and _indent(nxt) > _indent(line)
            and not _is_structural(nxt)
            and not _MARKERS.match(nxt)
            and not ("->" in nxt and _ARROW.match(nxt))
            and not _IPY_CONTEXT.match(nxt)
        ):
            code = nxt.strip()
            i += 1
            if i + 1 < len(lines):
                focus = caret_focus(nxt, lines[i + 1])
    file = gd["file"].strip()
    line_no = int(gd["line"]) if gd.get("line") else None
    st.frames.append(Frame(file, line_no, (gd.get("func") or "").strip() or None, code, is_library(file), focus))
    st.in_tb = True
    return i + 1


def _ipython_arrow(st: Scan, line: str, s: str) -> int | None:
    """IPython's ``----> 12 loss.backward()``: the line and code of the frame above it."""
    m = _ARROW.match(line) if "->" in line else None
    if not (m and st.frames):
        return None
    f = st.frames[-1]
    st.frames[-1] = Frame(
        f.file, f.line or int(m.group("line")), f.function, f.code or m.group("code").strip() or None, f.library
    )
    return st.i + 1


def _traceback_filler(st: Scan, line: str, s: str) -> int | None:
    """Inside a traceback: carets, "[Previous line repeated N more times]", IPython's context lines,
    "N frames", an ellipsis."""
    if st.in_tb and (
        _MARKERS.match(line)
        or _REPEATED.match(line)
        or _IPY_CONTEXT.match(line)
        or _N_FRAMES.match(line)
        or _ELLIPSIS.match(line)
    ):
        return st.i + 1
    return None


def _pytest_source(st: Scan, line: str, s: str) -> int | None:
    """pytest's ``>       loss.backward()``: the code of the frame above it."""
    m = _PYTEST_SRC.match(line) if line.startswith(">") else None
    if not m:
        return None
    st.hints.add("pytest")
    if st.frames and not st.frames[-1].code:
        f = st.frames[-1]
        st.frames[-1] = Frame(f.file, f.line, f.function, m.group("code").strip(), f.library)
    return st.i + 1


def _pytest_location(st: Scan, line: str, s: str) -> int | None:
    """pytest's ``train.py:12: RuntimeError`` under a failure: the type is on the ``E`` lines."""
    return st.i + 1 if ".py:" in s and _PYTEST_LOC.match(s) else None


def _debugger_header(st: Scan, line: str, s: str) -> int | None:
    """VS Code's "Exception has occurred: X", the message on the lines after it."""
    m = _VSCODE.match(line) if _debugger_words(line) else None
    if not m:
        return None
    st.hints.add("debugger")
    msg_lines, j = _collect(st.lines, st.i + 1, MAX_MESSAGE_LINES)
    st.add_exc(m.group("type"), "\n".join(msg_lines) or None, kind="debugger")
    st.pending_type = None
    return j


def _cpp_terminate(st: Scan, line: str, s: str) -> int | None:
    """ "terminate called after throwing an instance of 'c10::Error'", then ``what():  message``."""
    m = _TERMINATE.search(s) if "terminate called" in s else None
    if not m:
        return None
    lines, n = st.lines, len(st.lines)
    j = st.i + 1
    while j < n and not lines[j].strip():
        j += 1
    wm = _WHAT.match(lines[j]) if j < n else None
    if wm is None:
        inline = _WHAT_INLINE.search(s)
        msg = inline.group("msg") if inline else None
        j = st.i
    else:
        msg = wm.group("msg")
    extra, k = _collect(lines, j + 1, 10, _is_exc_line)
    st.add_exc(m.group("type"), "\n".join([msg or "", *extra]).strip() or None, kind="terminate")
    return k


def _pytest_summary(st: Scan, line: str, s: str) -> int | None:
    """``FAILED test_x.py::test_y - RuntimeError: ...``: an exception, cut; a full one wins over it."""
    m = _FAILED_SUMMARY.match(s) if s.startswith(("FAILED ", "ERROR ")) else None
    if not m:
        return None
    st.hints.add("pytest")
    em = _EXC_LINE.match(m.group("rest"))
    if em and em.group("msg") is not None and _looks_like_type(em.group("type"), False):
        st.add_exc(em.group("type"), em.group("msg").strip(), kind="summary")
    return st.i + 1


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _warning(st: Scan, line: str, s: str) -> int | None:
    """``path.py:148: UserWarning: message`` as ``warnings`` prints it, the message maybe on more
    lines, then the source line that warned, indented by two (``  warnings.warn(...)``): skipped."""
    m = _WARNING_LINE.match(s) if "Warning" in s else None
    if not m:
        return None
    first = m.group("msg").strip()
    source = _indent(line) + 2

    def ends(nxt: str) -> bool:
        t = nxt.strip()
        return (
            _indent(nxt) >= source
            or t.startswith("warnings.warn")
            or ("Warning" in t and bool(_WARNING_LINE.match(t)))
            or _is_exc_line(t)
        )

    more, j = _collect(st.lines, st.i + 1, 8 - bool(first), ends)
    if j < len(st.lines) and (_indent(st.lines[j]) >= source or st.lines[j].strip().startswith("warnings.warn")):
        j += 1
    st.signals.append(Signal("warning", s[:500]))
    st.add_exc(m.group("type"), " ".join([first, *more] if first else more) or None, warning=True)
    return j


def _pycharm_trailer(st: Scan, line: str, s: str) -> int | None:
    """PyCharm's ``python-BaseException`` after a traceback: not an exception of its own."""
    return st.i + 1 if s == "python-BaseException" else None


_HEADINGS = ("Error", "Exception", "Errors", "Exceptions")


def _exception_line(st: Scan, line: str, s: str) -> int | None:
    """``Type: message`` (or a bare type after frames), the message running on over the next lines."""
    em = _EXC_LINE.match(line)
    after_frames = st.in_tb and bool(st.frames)
    if not (em and (em.group("msg") is not None or after_frames) and _looks_like_type(em.group("type"), after_frames)):
        return None
    exc_type: str | None = em.group("type")
    if exc_type in _HEADINGS and not after_frames and not (em.group("msg") or "").strip():
        return None  # "Error:" over what the poster shows next is a heading, not an exception of that name
    msg_lines, j = _message_lines(st, _trim_commentary((em.group("msg") or "").strip()))
    message = "\n".join(msg_lines).strip() or None
    if exc_type == "python-BaseException":
        exc_type = None
    if st.pending_type and exc_type == st.pending_type:
        st.pending_type = None
    st.add_exc(exc_type, message)
    if message and _WORKER.search(message) and "Original Traceback" in message:
        st.events[-1].kind = "worker"
    return j


def _message_lines(st: Scan, first: str) -> tuple[list[str], int]:
    """An exception's message from its first line on, and the index of the line after it. It ends
    at a structural line, another exception or warning, another logger's or tool's line, a closing
    delimiter, the poster's own words, or a blank line that no continuation of torch's follows."""
    lines, tags, i, n = st.lines, st.tags, st.i, len(st.lines)
    msg_lines = [first] if first else []
    j = i + 1
    # a message that starts empty continues after one blank line (spawn's bootstrapping text,
    # indented); the poster's words after a bare exception do not ("StopIteration", blank, "I...")
    if (
        not first
        and j + 1 < n
        and not lines[j].strip()
        and lines[j + 1].strip()
        and (
            lines[j + 1].startswith((" ", "\t"))
            or not (_CHATTY.search(lines[j + 1].lower()) or (not lines[j + 1].isascii() and _CJK.search(lines[j + 1])))
        )
    ):
        j += 1
    had_frames = bool(st.frames)
    while j < n and len(msg_lines) < MAX_MESSAGE_LINES:
        nxt = lines[j]
        if not nxt.strip():
            # torch often adds a hint paragraph after up to two blank lines (torch.load's
            # weights-only messages leave two); commentary is not that
            k = j + 1
            while k < n and not lines[k].strip() and k - j < 3:
                k += 1
            if k < n and k - j < 3 and had_frames and _continues(lines[k]):
                msg_lines.append("")
                j = k
                continue
            break
        indented = nxt.startswith((" ", "\t"))
        # another logger's line ends it; an indented one wraps the message
        if tags and tags[j] != tags[i] and (tags[j] or not indented):
            break
        if _is_structural(nxt) or nxt.strip() == "python-BaseException":
            break
        opens_more = bool(msg_lines) and msg_lines[-1].rstrip().endswith(("raised:", "error:"))
        if (not opens_more and not indented and _is_exc_line(nxt)) or (
            "Warning" in nxt and _WARNING_LINE.match(nxt.strip())
        ):
            break
        if (_debugger_words(nxt) and _VSCODE.match(nxt)) or _tool_log_line(lines, j):
            break  # "wandb: Synced run ...": another tool's log lines after the error
        if not any(ch.isalnum() for ch in nxt) and _ends_message(lines, j + 1):
            break  # a closing delimiter of the poster's (">>", "---", a code fence), not the message
        if (
            not indented
            and not nxt.isascii()
            and all(m.isascii() for m in msg_lines)
            and (_CHATTY.search(nxt) or _chinese_prose(nxt))
            and _CJK.search(nxt)
        ):
            break  # the poster's words in Chinese right under an English message
        msg_lines.append(nxt.strip() if not nxt.startswith("\t") else nxt.rstrip())
        j += 1
    return msg_lines, j


def _chinese_prose(line: str) -> bool:
    """A line written mostly in Chinese (a path or a key with a Chinese name in it is not)."""
    han = len(_CJK.findall(line))
    return han >= 4 and han * 3 >= sum(1 for ch in line if ch.isalnum())


def _inline_exception(st: Scan, line: str, s: str) -> int | None:
    """An exception quoted in commentary or logged as a repr: "I get 'RuntimeError: ...' when ...",
    ``ERROR job 7: got RuntimeError('...')``."""
    im = _INLINE_EXC.search(line) if ("Error" in line or "Exception" in line) else None
    if not im:
        return None
    end = st.i
    rest = line[im.end() :]
    quote = im.group("q")
    if quote:  # a repr: the message ends at its closing quote and parenthesis
        cut = rest.find(quote + ")")
        rest = (rest[:cut] if cut >= 0 else rest).replace("\\" + quote, quote).replace("\\n", "\n")
    opener = im.group("open")
    closer = None if im.group("shut") or quote else _CLOSERS.get(opener)
    if closer and closer not in rest:
        # a quoted message wrapped onto the next lines: it goes on to its closing quote
        for j in range(st.i + 1, min(len(st.lines), st.i + 1 + _QUOTED_LINES)):
            nxt = st.lines[j].strip()
            if not nxt or _is_structural(st.lines[j]):
                break
            if closer in nxt:
                rest, end = rest.rstrip() + " " + nxt, j
                break
    msg = _trim_commentary(rest.strip())
    if closer and closer in msg:
        if opener in ("**", "`"):
            msg = msg[: msg.rindex(closer)]
        else:  # the closing quote, not an apostrophe inside a word ("Can't")
            close = _CLOSING[closer].search(msg)
            msg = msg[: close.start()] if close else msg
    # commentary often goes on after the message: drop the sentences that talk to the reader
    sentences = _SENTENCE_END.split(msg.strip())
    while len(sentences) > 1 and _CHATTY.search(sentences[-1].lower()):
        sentences.pop()
    st.add_exc(im.group("type"), " ".join(sentences).strip().strip("*`") or None, kind="inline")
    return end + 1


LINE_RULES = (
    _blank,
    _group_marker,
    _signal_line,
    _cpp_frame,
    _ipython_header,
    _traceback_start,
    _chain_marker,
    _frame_header,
    _ipython_arrow,
    _traceback_filler,
    _pytest_source,
    _pytest_location,
    _debugger_header,
    _cpp_terminate,
    _pytest_summary,
    _warning,
    _pycharm_trailer,
    _exception_line,
    _inline_exception,
)


def _scan(
    lines: list[str], tags: list[str] | None = None, budget: Budget | None = None
) -> tuple[list[_Event], list[Signal], set[str]]:
    """Pass 2: the line rules over the cleaned lines, in order; the events (exceptions, warnings),
    signal lines and format hints they found."""
    st = Scan(lines, tags)
    n = len(lines)
    next_check, chars = 0, 0
    while st.i < n:
        line = lines[st.i]
        if budget is not None:
            chars += len(line)
            if st.i >= next_check or chars > _CHECK_CHARS:
                next_check, chars = st.i + _CHECK_LINES, 0
                if st.i < n - _TAIL_LINES and budget.spent(PARSE_RESERVE):
                    # out of time: go on with the end of the paste, where the final exception is
                    st.i = n - _TAIL_LINES
                    st.forget()
                    continue
        s = line.strip()
        for rule in LINE_RULES:
            nxt = rule(st, line, s)
            if nxt is not None:
                st.i = nxt
                break
        else:
            st.i += 1
    _finish(st)
    return st.events, st.signals, st.hints


def _finish(st: Scan) -> None:
    """At the end of the paste: a type announced but never followed, frames with no exception after them."""
    if st.pending_type and not any(e.exc_type == st.pending_type for e in st.events):
        st.add_exc(st.pending_type, None)
    if st.frames and not st.events:
        st.add_exc(None, None, kind="truncated")  # the paste was cut before the exception line
    elif st.frames and not st.events[-1].frames:
        # the stack printed after the message: VS Code (innermost first), or a paste put together
        # as "error line, then the traceback"
        st.events[-1].frames = st.frames[::-1] if st.events[-1].kind == "debugger" else st.frames


# ---------------------------------------------------------------------------------------------
# pass 3: assembling

_ERRORISH = Lazy(
    r"error|exception|failed|failure|cannot|can't|could not|unable|invalid|expected|must|mismatch|"
    r"out of (?:memory|bounds|range)|not (?:supported|implemented|found|available|compiled|defined|match)|"
    r"does not|doesn't|illegal|assert|killed|timed? ?out|segmentation|unexpectedly|"
    r"错误|报错|失败|无法|不能|必须|异常",
)  # these three are matched against lower-cased text
# a poster's own words (not "you" or "please": torch's messages say "if you need to", "Please file an issue")
_CHATTY = Lazy(
    r"\b(?:i|i'm|i've|my|we|our|me|thanks?|thank you|hello|hi|help|anyone|somebody|"
    r"trying to fix|how to|how can|why|any idea|solve|solution)\b|[?？]\s*$|我|请|谢谢|怎么|为什么|求助|大佬",
)


_WEAK = Lazy(r"\b(?:not|no|only|instead|freed|requires?|should|while|because)\b")


# "a digit, x, a digit" is all the shape test needs to know: written so, it is linear
_SHAPEISH = Lazy(r"\d\s*+x\s*+\d|\[\d++(?:, \d++)*+\]|torch\.\w|cuda|tensor")


def _error_score(line: str) -> float:
    if line == "python-BaseException":
        return -10.0
    low = line.lower()
    score = len(_ERRORISH.findall(low)) * 2.0 + len(_WEAK.findall(low)) - len(_CHATTY.findall(low)) * 3.0
    if _SHAPEISH.search(low):
        score += 1.0
    if line.endswith((":", "：")) and not line.isascii() and _chinese_prose(line):
        score -= 3.0  # the poster's lead-in to what follows ("直接段错误退出了，什么报错信息都没有：")
    return score


def _unwrap(line: str) -> str:
    """Markdown emphasis or code marks around a whole line: `...` or **...**."""
    for mark in ("**", "`"):
        if len(line) > 2 * len(mark) and line.startswith(mark) and line.endswith(mark):
            return line[len(mark) : -len(mark)].strip()
    return line


def _fallback_message(lines: list[str]) -> str | None:
    """No exception line: the line that reads most like an error message (the later one on a tie),
    with the lines that go on from it without a break (a typeless error of several lines: "CUDA
    error: ...", then torch's hint lines), up to commentary, a blank line or a traceback line."""
    numbered = [(k, _unwrap(l.strip())) for k, l in enumerate(lines) if l.strip()][-60:]
    if not numbered:
        return None
    best, best_score = None, float("-inf")
    for k, l in numbered:
        sc = _error_score(l)
        if len(l) > 12 and sc >= best_score:
            best, best_score = k, sc
    if best is None:
        return numbered[-1][1]
    out = [_unwrap(lines[best].strip())]
    for nxt in lines[best + 1 : best + MAX_MESSAGE_LINES]:
        s = nxt.strip()
        if (
            not s
            or len(s) < 20
            or _error_score(s) < 0
            or _is_structural(nxt)
            or _is_exc_line(nxt)
            or (not s.isascii() and _CJK.search(s))
        ):
            break  # (a short line is a log's or a UI's label: "error", "Progress", "Step 0 of 3000")
        out.append(s)
    return "\n".join(out)


MAX_ALTERNATIVES = 2


def _alternatives(lines: list[str], message: str | None) -> tuple[str, ...]:
    """No exception line: the next lines that read most like an error after the one taken as the
    message (the poster's sentence that quotes the error may have lost to a line of theirs that
    says "报错"); the matcher tries their templates too."""
    taken = set((message or "").split("\n"))
    scored = []
    for l in lines[-60:]:
        s = _unwrap(l.strip())
        if len(s) > 12 and s not in taken and _ERRORISH.search(s.lower()) and not _is_structural(l):
            scored.append((_error_score(s), s))
    scored.sort(key=lambda x: -x[0])  # (stable: the earlier line first on a tie)
    return tuple(dict.fromkeys(s for _, s in scored))[:MAX_ALTERNATIVES]


# c10's exception classes and the Python types torch raises for them (CATCH_CORE_ERRORS in
# torch/csrc/Exceptions.h); any other c10 class derives from c10::Error: RuntimeError
_C10_TYPES = {
    "Error": "RuntimeError",
    "IndexError": "IndexError",
    "ValueError": "ValueError",
    "TypeError": "TypeError",
    "NotImplementedError": "NotImplementedError",
    "OutOfMemoryError": "torch.OutOfMemoryError",
    "AcceleratorError": "torch.AcceleratorError",
    "LinAlgError": "torch.linalg.LinAlgError",
    "BufferError": "BufferError",
    "SyntaxError": "SyntaxError",
    "DistError": "torch.distributed.DistError",
    "DistBackendError": "torch.distributed.DistBackendError",
    "DistStoreError": "torch.distributed.DistStoreError",
    "DistNetworkError": "torch.distributed.DistNetworkError",
    "DistQueueEmptyError": "torch.distributed.DistQueueEmptyError",
}


def _raised_literal(code: str | None) -> tuple[str | None, str | None]:
    """``raise SomeError("literal ...")`` on a frame's code line, read with ``ast`` (never run):
    its type and message (an f-string's fields kept as ``{expr}``, which a template's placeholder
    fits)."""
    if not code or "raise" not in code or len(code) > 500:
        return None, None
    import ast  # only for a paste cut after a raise line: not at start-up

    try:
        node = ast.parse(code.strip(), USER_CODE, mode="exec").body[0]
    except (SyntaxError, ValueError, RecursionError, MemoryError, IndexError):
        return None, None
    if not isinstance(node, ast.Raise) or not isinstance(node.exc, ast.Call):
        return None, None
    exc_type = _dotted(node.exc.func)
    if exc_type is None or not _looks_like_type(exc_type, True):
        return None, None
    message = None
    if node.exc.args:
        arg = node.exc.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            message = arg.value
        elif isinstance(arg, ast.JoinedStr):
            from typing import cast  # an f-string's parts are str constants and formatted values

            message = "".join(
                cast(str, v.value)
                if isinstance(v, ast.Constant)
                else "{" + ast.unparse(cast(ast.FormattedValue, v).value) + "}"
                for v in arg.values
            )
    return exc_type, message


def _dotted(node) -> str | None:
    import ast

    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _cut_before_exception(frames: list[Frame], lines: list[str]) -> tuple[str | None, str | None]:
    """A traceback cut before its exception line: the last frame's ``raise X("...")`` names it;
    otherwise the most error-like line outside the traceback (some tools log the message before
    the traceback they print)."""
    exc_type, message = _raised_literal(frames[-1].code if frames else None)
    if exc_type:
        return exc_type, message
    outside = [l for l in lines if l.strip() and not l.startswith((" ", "\t")) and not _is_structural(l)]
    best = _fallback_message(outside) if outside else None
    return (None, best) if best and _error_score(best) > 0 else (None, None)


_CJK = Lazy(r"[\u4e00-\u9fff]")


def lang_hint(text: str) -> str | None:
    if text.isascii():
        return None
    cjk = len(_CJK.findall(text[-20000:]))
    return "zh" if cjk >= 4 else None


def parse_text(text: str, budget: Budget | None = None) -> Parsed:
    """Parse any text into the traceback model. Never raises. With a ``budget``, a parse that runs
    out of time reads only the end of the paste (``budget.cut`` tells)."""
    try:
        text = text if isinstance(text, str) else str(text)
        parsed = _parse(text, budget)
        return _visible(parsed) if _has_invisible(parsed) else parsed
    except Exception:  # the parser must never take the surface down; fall back to the last line
        try:
            last = _fallback_message(strip_controls(text[-MAX_CHARS:]).splitlines()[-50:])
        except Exception:
            last = None
        return Parsed(exc_type=None, message=last, format="unknown")


def _has_invisible(p: Parsed) -> bool:
    """Whether any text of the model holds an invisible character (looked for in the model, not the
    paste: a decoder turns an escaped \\u202e into one)."""
    texts = [p.exc_type, p.message, *p.lines, *p.alternatives]
    texts += [t for f in p.frames for t in (f.file, f.function, f.code, f.focus)]
    texts += [t for c in (*p.chain, *p.others) for t in (c.exc_type, c.message)]
    texts += [s.text for s in p.signals]
    return any(t and has_invisible(t) for t in texts)


def _visible(p: Parsed) -> Parsed:
    """The model without characters that change how text reads unseen (bidi overrides, tag
    characters, Hangul fillers: Trojan Source): gone from the messages and the type, shown escaped
    in code (``loss\\u202e.backward()``), where a rewrite then sees a line Python would not run as shown."""

    def prose(s):
        return drop_invisible(s) if s else s

    return p._replace(
        exc_type=prose(p.exc_type),
        message=prose(p.message),
        frames=tuple(
            f._replace(
                file=escape_invisible(f.file) if f.file else f.file,
                function=prose(f.function),
                code=f.code and escape_invisible(f.code),
                focus=f.focus and escape_invisible(f.focus),
            )
            for f in p.frames
        ),
        chain=tuple(c._replace(exc_type=prose(c.exc_type), message=prose(c.message)) for c in p.chain),
        others=tuple(o._replace(exc_type=prose(o.exc_type), message=prose(o.message)) for o in p.others),
        signals=tuple(s._replace(text=prose(s.text)) for s in p.signals),
        lines=tuple(prose(l) for l in p.lines),
        alternatives=tuple(prose(a) for a in p.alternatives),
    )


def _parse(text: str, budget: Budget | None = None) -> Parsed:
    lines, hints, tags = clean(text, budget)
    events, signals, scan_hints = _scan(lines, tags, budget)
    hints |= scan_hints
    errors = [e for e in events if not e.warning and e.kind != "inline"]
    inline = [e for e in events if e.kind == "inline"]
    warned = [e for e in events if e.warning]
    pool = errors or inline
    if not pool and warned:
        # a warning is the answer only when no line reads more like an error than it does
        fb = _fallback_message(lines)
        if (
            fb
            and _error_score(fb) > _error_score(warned[-1].message or "") + 2
            and (warned[-1].message or "") not in fb
        ):
            pool = []
        else:
            pool = warned
    if not pool:
        msg = _fallback_message(lines)
        return Parsed(
            exc_type=None,
            message=msg,
            alternatives=_alternatives(lines, msg),
            signals=tuple(signals),
            format=_format(hints, last_line=True),
            lang_hint=lang_hint(text),
            lines=_signal_lines(lines),
        )
    final = pool[-1]
    if final.kind == "truncated" and final.exc_type is None and final.message is None:
        final.exc_type, final.message = _cut_before_exception(final.frames, lines)
    if final.exc_type and final.exc_type.startswith("c10::") and final.kind != "terminate":
        # torch turns its C++ exceptions into Python ones: the user sees (and catches) that type;
        # the C++ name is kept as a signal line
        signals = [*signals, Signal("cpp_type", final.exc_type)]
        final.exc_type = _C10_TYPES.get(final.exc_type[5:], "RuntimeError")
    # A C++ terminate line or a pytest summary line repeats an exception already in the paste: prefer
    # the real exception line with its frames when the texts agree.
    if final.kind in ("summary",) and len(pool) > 1:
        for e in reversed(pool[:-1]):
            if e.exc_type and final.exc_type and e.exc_type.split(".")[-1] == final.exc_type.split(".")[-1]:
                final = e
                break
    idx = events.index(final)
    # the chain: walk back over events linked by relations
    chain: list[Link] = []
    k = idx
    while k > 0:
        rel = events[k].relation
        prev = events[k - 1]
        if rel in ("cause", "context", "group", "worker") or prev.kind in ("worker", "group"):
            relation = rel or ("worker" if prev.kind == "worker" else "group")
            chain.insert(0, Link(prev.exc_type, prev.message, relation))
            k -= 1
        else:
            break
    chained = set(range(k, idx + 1))
    others = [Other(e.exc_type, e.message) for j, e in enumerate(events) if j not in chained and e is not final]
    frames = tuple(final.frames)
    if not frames:
        # VS Code / commentary pastes put frames after the message
        later = [e for e in events if e.frames]
        if later:
            frames = tuple(later[-1].frames)
    if (
        frames
        and idx > 0
        and (final.relation == "worker" or events[idx - 1].kind == "worker")
        and events[idx - 1].frames
    ):
        # a worker's error re-raised in the main process: the main traceback (the user's
        # `for batch in loader:`) is where it happened for the user, the worker's frames below it
        frames = tuple(events[idx - 1].frames) + frames
    if "dataloader_worker" in hints and final.relation != "worker" and not any(c.relation == "worker" for c in chain):
        hints.discard("dataloader_worker")
    fmt = _format(hints, last_line=not frames and len([l for l in lines if l.strip()]) <= 2)
    if any(c.relation in ("cause", "context") for c in chain) and fmt == "standard":
        fmt = "chained"
    return Parsed(
        exc_type=final.exc_type,
        message=final.message,
        frames=frames,
        chain=tuple(chain),
        signals=tuple(signals),
        others=tuple(others[-20:]),
        format=fmt,
        lang_hint=lang_hint(text),
        lines=_signal_lines(lines),
    )


SIGNAL_LINES = 400  # the paste's last lines an entry's signals are looked for in
SIGNAL_LINE_CHARS = 500


def _signal_lines(lines: list[str]) -> tuple[str, ...]:
    """Every line of the paste's end (a warning printed early in a log names the cause too)."""
    return tuple(l.strip()[:SIGNAL_LINE_CHARS] for l in lines[-SIGNAL_LINES:] if l.strip())


_FORMAT_ORDER = (
    "jupyter",
    "dataloader_worker",
    "distributed_prefixed",
    "pytest",
    "flattened",
    "debugger",
    "rich",
    "ipython",
    "cpp_frames",
    "chained",
    "group",
)


def _format(hints: set[str], *, last_line: bool) -> str:
    for name in _FORMAT_ORDER:
        if name in hints:
            return name
    if last_line:
        return "last_line_only"
    return "standard"
