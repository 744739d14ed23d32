"""The paste's decoders, run first by the clean pass (:mod:`explainer.parse.clean`): a notebook's error
output (JSON, whole or cut), an error object as VS Code copies it, a traceback logged with escaped line
breaks, HTML entities, a browser's translation into Chinese, the ``collect_env`` report; each returns
text the rest of the parser reads as a pasted terminal's (or None when the paste is not its shape)."""

from __future__ import annotations

from explainer.parse.state import (
    MAX_NOTEBOOK_STRINGS,
)
from explainer.textio import (
    Lazy,
)


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


_TB_KEY = Lazy(r'"traceback"\s*+:\s*+\[')


_JSON_STRING = Lazy(r'"((?:[^"\\\n]|\\.)*+)(")?')
