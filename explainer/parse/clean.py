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
    MAX_NOTEBOOK_STRINGS,
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
