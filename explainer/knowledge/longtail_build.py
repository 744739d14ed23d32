"""Extract every message PyTorch itself can raise: the long-tail index's data file.

Sources, each exact for the version it comes from (``meta`` records which):

- the installed torch's Python sources (``ast``): ``raise X(...)``, ``assert c, msg``,
  ``torch._check*(c, lambda: msg)``, ``warnings.warn(msg, Category)``; f-strings, ``%``, ``.format``,
  concatenation and messages assigned earlier in the function become templates;
- its C++ headers (``torch/include``): the ``TORCH_CHECK`` family, ``TORCH_WARN``, ``AT_ERROR``,
  ``C10_THROW_ERROR`` and ``throw``, arguments joined into a template (``c10::str``, ``fmt::format``,
  stringization), with the failed condition and the enclosing function;
- the string tables of its shared libraries: the internal asserts (condition, file and line, exact),
  the checks without a message (their condition), and which literal pieces this build holds;
- ``torch/_dynamo/graph_break_registry.json``: every graph break with its explanation and hints;
- optionally a PyTorch source tree (``--source``: ``aten/src/ATen``, ``c10``, ``torch/csrc``) of another
  release: a ``.cpp`` template is kept only when its literal text is present in this build's binaries,
  and its line, not exact for this release, is not kept.

A template is a list of literal pieces with holes between them (``None``); the data file writes it as
text with ``{}`` for a hole and ``{{``/``}}`` for literal braces. Output: gzip-compressed JSON lines,
sorted, with a first ``meta`` line; byte-identical for the same inputs.
"""

from __future__ import annotations

import ast
import bisect
import gzip
import hashlib
import io
import json
import mmap
import os
import re
from pathlib import Path

from explainer.match.longtail import HOLE, from_text, literal_len, read_data, repo_path, to_text

EXTRACTOR_VERSION = "1"
MAX_ARGS_CHARS = 6000

# ---------------------------------------------------------------------------------------------
# templates


def tidy(pieces) -> list:
    """Join adjacent literals, fold whitespace, collapse adjacent holes."""
    out: list = []
    for p in pieces:
        if p is HOLE:
            if out and out[-1] is HOLE:
                continue
            out.append(HOLE)
        else:
            p = re.sub(r"\s+", " ", p)
            if not p:
                continue
            if out and out[-1] is not HOLE:
                out[-1] += p
            else:
                out.append(p)
    return out


# ---------------------------------------------------------------------------------------------
# Python sources

_CHECKS = {
    "_check": "RuntimeError",
    "_check_index": "IndexError",
    "_check_value": "ValueError",
    "_check_type": "TypeError",
    "_check_not_implemented": "NotImplementedError",
    "_check_is_size": "RuntimeError",
    "_check_with": None,
}
_PERCENT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[diouxXeEfFgGcrsa%]")
_FORMAT_FIELD = re.compile(r"\{\{|\}\}|\{[^{}]*\}")


def _percent_pieces(s: str) -> list:
    out: list[str | None]
    out, last = [], 0
    for m in _PERCENT.finditer(s):
        out.append(s[last : m.start()])
        out.append("%" if m.group() == "%%" else HOLE)
        last = m.end()
    out.append(s[last:])
    return out


def _format_pieces(s: str) -> list:
    out: list[str | None]
    out, last = [], 0
    for m in _FORMAT_FIELD.finditer(s):
        out.append(s[last : m.start()])
        g = m.group()
        out.append(g[0] if g in ("{{", "}}") else HOLE)
        last = m.end()
    out.append(s[last:])
    return out


class _PyFunction:
    """The simple assignments of one function body, for messages assigned before they are raised."""

    def __init__(self, node):
        self.assign: dict[str, list[tuple[int, ast.AST, bool]]] = {}
        for n in _own_nodes(node):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                self.assign.setdefault(n.targets[0].id, []).append((n.lineno, n.value, False))
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and isinstance(n.op, ast.Add):
                self.assign.setdefault(n.target.id, []).append((n.lineno, n.value, True))

    def value(self, name: str, line: int):
        """Pieces of the last assignment of ``name`` before ``line`` (``+=`` after it appends)."""
        rows = sorted((r for r in self.assign.get(name, []) if r[0] < line), key=lambda r: r[0])
        start = max((i for i, r in enumerate(rows) if not r[2]), default=None)
        if start is None:
            return None
        return rows[start:]


def _own_nodes(fn):
    """The nodes of a function body, not descending into nested functions or classes."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(n))


def py_pieces(node, fn: _PyFunction | None = None, line: int = 0, depth: int = 0) -> list:
    if depth > 6:
        return [HOLE]
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else [HOLE]
    if isinstance(node, ast.JoinedStr):
        out: list = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                out.append(v.value)
            else:
                out.append(HOLE)
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return py_pieces(node.left, fn, line, depth + 1) + py_pieces(node.right, fn, line, depth + 1)
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Mod)
        and isinstance(node.left, ast.Constant)
        and isinstance(node.left.value, str)
    ):
        return _percent_pieces(node.left.value)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
    ):
        return _format_pieces(node.func.value.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str" and node.args:
        return py_pieces(node.args[0], fn, line, depth + 1)
    if isinstance(node, ast.Name) and fn is not None:
        rows = fn.value(node.id, line)
        if rows:
            out = []
            for r in rows:
                out += py_pieces(r[1], fn, r[0], depth + 1)
            return out
    return [HOLE]


def _call_name(func) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _dotted(func) -> str:
    try:
        return ast.unparse(func)
    except Exception:  # pragma: no cover - unparse handles every expression ast produces
        return ""


def _cond_text(node) -> str:
    if node is None:
        return ""
    try:
        text = ast.unparse(node)
    except Exception:  # pragma: no cover
        return ""
    return text if len(text) <= 300 else text[:297] + "..."


def _may_hold_call(node) -> bool:
    return not isinstance(node, (ast.Constant, ast.Name, ast.JoinedStr))


def python_sites(source: str, rel: str, version: str) -> list[dict]:
    """The raise, assert, check and warn sites of one Python file."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out: list[dict] = []
    envs: dict[int, _PyFunction] = {}

    def env(fn_node):
        if fn_node is None:
            return None
        if id(fn_node) not in envs:
            envs[id(fn_node)] = _PyFunction(fn_node)
        return envs[id(fn_node)]

    def add(node, qual, fn_node, kind, exc, msg_node, form, cond):
        pieces = tidy(py_pieces(msg_node, env(fn_node), node.lineno)) if msg_node is not None else []
        if not pieces or literal_len(pieces) == 0:
            return
        out.append(
            {
                "t": to_text(pieces),
                "k": kind,
                "x": exc,
                "f": rel,
                "l": node.lineno,
                "fn": qual,
                "c": _cond_text(cond),
                "m": form,
                "o": "python",
                "v": version,
            }
        )

    # one walk, carrying the qualified name, the enclosing function and the test of an enclosing `if`
    stack: list[tuple[ast.AST, str, ast.FunctionDef | ast.AsyncFunctionDef | None, ast.expr | None]]
    stack = [(tree, "", None, None)]
    while stack:
        node, qual, fn_node, if_test = stack.pop()
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            exc: str | None = _call_name(node.exc.func)
            msg = node.exc.args[0] if node.exc.args else None
            if msg is None:
                for kw in node.exc.keywords:
                    if kw.arg in ("msg", "message"):
                        msg = kw.value
            if exc and msg is not None:
                add(node, qual, fn_node, "error", exc, msg, "raise", if_test)
        elif isinstance(node, ast.Assert) and node.msg is not None:
            add(node, qual, fn_node, "error", "AssertionError", node.msg, "assert", node.test)
        elif isinstance(node, ast.Call):
            name = _call_name(node.func)
            if name in _CHECKS and _dotted(node.func) in (name, f"torch.{name}"):
                args = list(node.args)
                exc = _CHECKS[name]
                if name == "_check_with":
                    if not args:
                        continue
                    exc = _call_name(args.pop(0)) or "RuntimeError"
                cond = args[0] if args else None
                msg = args[1] if len(args) > 1 else next((k.value for k in node.keywords if k.arg == "message"), None)
                if isinstance(msg, ast.Lambda):
                    msg = msg.body
                if msg is not None:
                    add(node, qual, fn_node, "error", exc, msg, name, cond)
            elif (
                name in ("warn", "warn_once")
                and _dotted(node.func) in ("warnings.warn", "warn", "warn_once")
                and node.args
            ):
                cat = (
                    node.args[1]
                    if len(node.args) > 1
                    else next((k.value for k in node.keywords if k.arg == "category"), None)
                )
                exc = _call_name(cat) if cat is not None else "UserWarning"
                add(node, qual, fn_node, "warning", exc or "UserWarning", node.args[0], "warn", if_test)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            child_qual = f"{qual}.{node.name}" if qual else node.name
            child_fn = fn_node if isinstance(node, ast.ClassDef) else node
            for c in ast.iter_child_nodes(node):
                stack.append((c, child_qual, child_fn, None))
        elif isinstance(node, ast.If):
            stack.append((node.test, qual, fn_node, None))
            for c in node.body:
                stack.append((c, qual, fn_node, node.test))
            for c in node.orelse:
                stack.append((c, qual, fn_node, None))
        elif (
            isinstance(node, (ast.stmt, ast.Module, ast.ExceptHandler, ast.match_case))
            or isinstance(node, ast.expr)
            and _may_hold_call(node)
        ):
            for c in ast.iter_child_nodes(node):
                stack.append(
                    (
                        c,
                        qual,
                        fn_node,
                        None if isinstance(node, ast.stmt) and not isinstance(node, ast.Expr) else if_test,
                    )
                )
    return out


_PY_SKIP = re.compile(r"(^|/)(testing/_internal|test|tests|_vendor)(/|$)")


def python_tree(torch_dir: Path, version: str) -> list[dict]:
    out = []
    for path in sorted(torch_dir.rglob("*.py")):
        rel = "torch/" + path.relative_to(torch_dir).as_posix()
        if _PY_SKIP.search(rel) or "/include/" in rel:
            continue
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        out += python_sites(source, rel, version)
    return out


# ---------------------------------------------------------------------------------------------
# C++ sources


_CPP_TOKEN = re.compile(
    r'R"([^()\\\s]{0,16})\((.*?)\)\1"|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|//[^\n]*|/\*.*?\*/', re.S
)
_MACROS = {
    "TORCH_CHECK": ("error", "RuntimeError"),
    "TORCH_CHECK_INDEX": ("error", "IndexError"),
    "TORCH_CHECK_VALUE": ("error", "ValueError"),
    "TORCH_CHECK_TYPE": ("error", "TypeError"),
    "TORCH_CHECK_NOT_IMPLEMENTED": ("error", "NotImplementedError"),
    "TORCH_CHECK_LINALG": ("error", "torch._C._LinAlgError"),
    "TORCH_CHECK_ALWAYS_SHOW_CPP_STACKTRACE": ("error", "RuntimeError"),
    "TORCH_WARN": ("warning", "UserWarning"),
    "TORCH_WARN_ONCE": ("warning", "UserWarning"),
    "TORCH_WARN_DEPRECATION": ("warning", "UserWarning"),
    "AT_ERROR": ("error", "RuntimeError"),
    "C10_THROW_ERROR": ("error", None),
    "TORCH_CHECK_MSG": ("error", "RuntimeError"),
}
_SITE = re.compile(
    r"\b(TORCH_CHECK(?:_INDEX|_VALUE|_TYPE|_NOT_IMPLEMENTED|_LINALG|_ALWAYS_SHOW_CPP_STACKTRACE)?|TORCH_WARN(?:_ONCE|_DEPRECATION)?"
    r"|AT_ERROR|C10_THROW_ERROR)\s*\(|\bthrow\s+(?:::)?(?:std|c10|torch|py)::(\w+)\s*\("
)
_THROW_TYPES = {
    "runtime_error": "RuntimeError",
    "invalid_argument": "ValueError",
    "out_of_range": "IndexError",
    "value_error": "ValueError",
    "type_error": "TypeError",
    "index_error": "IndexError",
    "key_error": "KeyError",
    "attribute_error": "AttributeError",
    "TypeError": "TypeError",
    "ValueError": "ValueError",
    "IndexError": "IndexError",
    "NotImplementedError": "NotImplementedError",
    "AttributeError": "AttributeError",
    "Error": "RuntimeError",
    "LinAlgError": "torch._C._LinAlgError",
    "OutOfMemoryError": "torch.OutOfMemoryError",
    "EnforceFiniteError": "RuntimeError",
    "DistBackendError": "torch.distributed.DistBackendError",
    "DistError": "torch.distributed.DistError",
}
_NO_MESSAGE = "Expected {} to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)"
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)", re.S)
_SIMPLE = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "0": "\0",
    "\\": "\\",
    '"': '"',
    "'": "'",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "?": "?",
}
_CONTROL = {
    "if",
    "for",
    "while",
    "switch",
    "catch",
    "return",
    "sizeof",
    "namespace",
    "struct",
    "class",
    "union",
    "enum",
    "decltype",
    "static_assert",
    "else",
    "do",
    "try",
    "case",
    "default",
    "alignas",
    "noexcept",
    "defined",
}
_LITERAL_ARG = re.compile(r'\s*(?:(?:u8|u|U|L)?"(?:[^"\\\n]|\\.)*"\s*)+', re.S)
_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"', re.S)


def _unescape(s: str) -> str:
    def one(m):
        g = m.group(1)
        if g[0] == "x":
            return chr(int(g[1:], 16))
        if g[0] in "01234567":
            return chr(int(g, 8))
        return _SIMPLE.get(g, g)

    return _ESCAPE.sub(one, s)


def _blank(text: str) -> str:
    """Comments become spaces (newlines kept, so offsets and lines hold); strings stay."""

    def keep(m):
        g = m.group(0)
        if g.startswith("//") or g.startswith("/*"):
            return re.sub(r"[^\n]", " ", g)
        return g

    return _CPP_TOKEN.sub(keep, text)


def _splice(text: str) -> tuple[str, list[int]]:
    """Remove backslash-newline line splices; return the text and each original line's start offset."""
    starts, parts, pos = [], [], 0
    for line in text.splitlines(keepends=True):
        starts.append(pos)
        if line.endswith("\\\n"):
            line = line[:-2]
        elif line.endswith("\\\r\n"):
            line = line[:-3]
        parts.append(line)
        pos += len(line)
    return "".join(parts), starts


def _args(text: str, start: int) -> tuple[list[str], int] | None:
    """Top-level comma-separated arguments of the call whose '(' is at ``start``."""
    depth, args, cur, i, n = 0, [], start + 1, start, min(len(text), start + MAX_ARGS_CHARS)
    tok = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|R"([^()\\\s]{0,16})\(.*?\)\1"|[()\[\]{},]', re.S)
    while True:
        m = tok.search(text, i, n)
        if not m:
            return None
        g = m.group(0)
        if g in "([{":
            depth += 1
        elif g in ")]}":
            depth -= 1
            if depth == 0:
                args.append(text[cur : m.start()])
                return args, m.end()
        elif g == "," and depth == 1:
            args.append(text[cur : m.start()])
            cur = m.end()
        i = m.end()


def cpp_pieces(arg: str, depth: int = 0) -> list:
    """A macro argument as template pieces: string literals are text, anything else a hole."""
    a = arg.strip()
    if not a or depth > 4:
        return [HOLE]
    if "#" in a:  # a macro's stringized parameter (#x "must be ...") is a hole between literals
        a = re.sub(r'(?<![\w#"])#\s*[A-Za-z_]\w*', '"\x01"', a)
    m = _LITERAL_ARG.fullmatch(a)
    if m:
        text = "".join(_unescape(s) for s in _STRING.findall(a))
        out: list = []
        for i, part in enumerate(text.split("\x01")):
            if i:
                out.append(HOLE)
            out.append(part)
        return out
    if re.fullmatch(r"'(?:[^'\\\n]|\\.)'", a):
        return [_unescape(a[1:-1])]
    raw = re.fullmatch(r'R"([^()\\\s]{0,16})\((.*)\)\1"', a, re.S)
    if raw:
        return [raw.group(2)]
    call = re.match(
        r"(?:::)?(?:c10::str|c10::Join|std::string|std::string_view|c10::string_view|fmt::format|std::format|str)\s*\(",
        a,
    )
    if call and a.endswith(")"):
        parsed = _args(a, call.end() - 1)
        if parsed and parsed[1] == len(a):
            inner = parsed[0]
            if "format" in call.group(0) and inner:
                first = cpp_pieces(inner[0], depth + 1)
                if len(first) == 1 and first[0] is not HOLE:
                    return _format_pieces(first[0])
                return [HOLE]
            if "Join" in call.group(0):
                return [HOLE]
            out = []
            for x in inner:
                out += cpp_pieces(x, depth + 1)
            return out
    parts = _split_plus(a)
    if len(parts) > 1:
        out = []
        for x in parts:
            out += cpp_pieces(x, depth + 1)
        return out
    return [HOLE]


def _split_plus(a: str) -> list[str]:
    parts, depth, cur = [], 0, 0
    for m in re.finditer(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[()\[\]{}+]', a):
        g = m.group(0)
        if g in "([{":
            depth += 1
        elif g in ")]}":
            depth -= 1
        elif g == "+" and depth == 0:
            prev = a[m.start() - 1 : m.start()]
            nxt = a[m.end() : m.end() + 1]
            if prev != "+" and nxt != "+":
                parts.append(a[cur : m.start()])
                cur = m.end()
    parts.append(a[cur:])
    return parts


def _functions(text: str, upto: int) -> list[tuple[int, int, str, str]]:
    """(start, end, name, op) of the function bodies in ``text`` before ``upto``; innermost found by the caller."""
    out, stack = [], []
    tok = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|R"([^()\\\s]{0,16})\(.*?\)\1"|[{};]', re.S)
    last = 0
    for m in tok.finditer(text):
        g = m.group(0)
        if g == "{":
            head = text[max(last, m.start() - 400) : m.start()]
            stack.append((m.start(), _name_of(head)))
            last = m.end()
        elif g == "}":
            if stack:
                start, (name, op) = stack.pop()
                if name:
                    out.append((start, m.end(), name, op))
            last = m.end()
        elif g == ";":
            last = m.end()
        if m.start() > upto and not stack:
            break
    return out


def _name_of(head: str) -> tuple[str, str]:
    head = head.strip()
    if not head.endswith(")") and not re.search(r"\)\s*(?:const|noexcept|override|final|mutable|->[^()]*|\s)*$", head):
        return "", ""
    m = None
    for m in re.finditer(r"TORCH_(IMPL|META|PRECOMPUTE_META)_FUNC\d?\s*\(\s*(\w+)", head):  # noqa: B007 - the last one
        pass
    if m:
        kind = m.group(1)
        return ("impl" if kind == "IMPL" else "meta"), f"aten::{m.group(2)}"
    if re.search(r"\]\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*(?:mutable\s*)?(?:->\s*[\w:<>,\s*&]+)?$", head):
        return "lambda", ""
    # the identifier before the parameter list that closes the head
    depth, i = 0, len(head) - 1
    while i >= 0 and head[i] != ")":
        i -= 1
    while i >= 0:
        c = head[i]
        if c == ")":
            depth += 1
        elif c == "(":
            depth -= 1
            if depth == 0:
                break
        i -= 1
    if i <= 0:
        return "", ""
    name = re.search(r"((?:\w+::)*~?\w+)\s*(?:<[^<>()]*>)?\s*$", head[:i])
    if not name:
        return "", ""
    word = name.group(1).split("::")[-1]
    if word in _CONTROL or word.isupper() and word.startswith(("C10_", "AT_", "TORCH_")):
        return "", ""
    return name.group(1), ""


def cpp_sites(text: str, rel: str, version: str, origin: str, exact_line: bool) -> list[dict]:
    if not _SITE.search(text):
        return []
    spliced, starts = _splice(text)
    code = _blank(spliced)
    sites = []
    for m in _SITE.finditer(code):
        # skip macro definitions of the family itself
        line_start = code.rfind("\n", 0, m.start()) + 1
        if code[line_start : m.start()].lstrip().startswith("#define") and re.match(
            r"\s*#\s*define\s+" + re.escape(m.group(1) or "") + r"\b", code[line_start:]
        ):
            continue
        parsed = _args(code, m.end() - 1)
        if not parsed:
            continue
        args = parsed[0]
        macro = m.group(1) or "throw"
        exc: str | None  # None for C10_THROW_ERROR in _MACROS; its branch names the type
        if macro == "throw":
            kind, exc = "error", _THROW_TYPES.get(m.group(2), "RuntimeError")
            cond, msg_args = "", args
        elif macro == "C10_THROW_ERROR":
            kind = "error"
            exc = _THROW_TYPES.get(args[0].strip().split("::")[-1], "RuntimeError") if args else "RuntimeError"
            cond, msg_args = "", args[1:]
        elif macro in ("AT_ERROR",):
            kind, exc = _MACROS[macro]
            cond, msg_args = "", args
        elif macro.startswith("TORCH_WARN"):
            kind, exc = _MACROS[macro]
            cond, msg_args = "", args
        else:
            kind, exc = _MACROS[macro]
            cond, msg_args = " ".join(args[0].split()) if args else "", args[1:]
        pieces: list = []
        for a in msg_args:
            pieces += cpp_pieces(a)
        pieces = tidy(pieces)
        if macro.startswith("TORCH_CHECK") and (
            not msg_args or pieces == [HOLE] and all(not a.strip() for a in msg_args)
        ):
            if "#" in cond or "__VA_ARGS__" in cond or not cond:
                continue
            pieces = tidy(_NO_MESSAGE.split("{}")[0:1] + [cond] + _NO_MESSAGE.split("{}")[1:2])
        if not pieces or literal_len(pieces) < 3:
            continue
        line = bisect.bisect_right(starts, m.start())
        sites.append(
            (
                m.start(),
                {
                    "t": to_text(pieces),
                    "k": kind,
                    "x": exc,
                    "f": rel,
                    "l": line if exact_line else None,
                    "fn": "",
                    "c": cond[:300],
                    "m": macro,
                    "o": origin,
                    "v": version,
                    "op": "",
                },
            )
        )
    if sites:
        funcs = _functions(code, sites[-1][0])
        for pos, rec in sites:
            inner = [f for f in funcs if f[0] < pos < f[1]]
            named = [f for f in inner if f[2] != "lambda"]
            if named:
                best = max(named, key=lambda f: f[0])
                rec["fn"] = (
                    best[2] if not any(f[2] == "lambda" and f[0] > best[0] for f in inner) else f"lambda in {best[2]}"
                )
                rec["op"] = next((f[3] for f in sorted(inner, key=lambda f: -f[0]) if f[3]), "")
    return [rec for _, rec in sites]


_WHEEL_GUARD = "#if !defined(TORCH_STABLE_ONLY) && !defined(TORCH_TARGET_VERSION)\n"
_HEADER_MAP = (
    ("ATen/", "aten/src/ATen/"),
    ("c10/", "c10/"),
    ("torch/csrc/", "torch/csrc/"),
    ("torch/headeronly/", "torch/headeronly/"),
)


def header_tree(include: Path, version: str) -> list[dict]:
    out = []
    for prefix, repo in _HEADER_MAP:
        base = include / prefix
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if path.suffix not in (".h", ".hpp", ".cuh") or not path.is_file():
                continue
            rel = repo + path.relative_to(base).as_posix()
            if "/test/" in rel or "third_party" in rel:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            recs = cpp_sites(text, rel, version, "header", True)
            if text.startswith(
                _WHEEL_GUARD
            ):  # the wheel's install step adds this first line: lines as compiled are one less
                for r in recs:
                    r["l"] -= 1
            out += recs
    return out


def source_tree(root: Path, version: str, present, skip_files: set[str]) -> list[dict]:
    """``.cpp``-family files of a source tree of another release, kept where this build holds their text."""
    out = []
    for sub in ("aten/src/ATen", "c10", "torch/csrc"):
        base = root / sub
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if path.suffix not in (".cpp", ".cc", ".cu", ".mm", ".h", ".hpp", ".cuh") or not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            if (
                rel in skip_files
                or "/test/" in rel
                or "/tests/" in rel
                or "third_party" in rel
                or "/benchmarks/" in rel
            ):
                continue
            for rec in cpp_sites(path.read_text(encoding="utf-8", errors="replace"), rel, version, "source", False):
                lits = [p for p in from_text(rec["t"]) if p is not HOLE]
                longest = max(lits, key=len)
                if present(longest[:24]):
                    out.append(rec)
    return out


# ---------------------------------------------------------------------------------------------
# binaries

_TU = re.compile(
    rb"^/__w/pytorch/pytorch/(?:build/)?((?:aten|c10|torch|caffe2)/[\w./+-]+\.(?:cpp|cc|cu|c|mm|h|hpp|cuh))$"
)
_ASSERT = re.compile(
    r'^(.*) INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/([^"]+)":(\d+), please report a bug to PyTorch\. ?(.*)$',
    re.S,
)
_NOMSG = re.compile(
    r"^Expected (.+) to be true, but got false\.  \(Could this error message be improved\?  If so, please report an enhancement request to PyTorch\.\)$",
    re.S,
)
_PRINTABLE = re.compile(rb"[\x20-\x7e\t]{8,}")


def binary_strings(lib_dir: Path):
    """(library, tu, string) for every printable run of 8 or more characters, in file order."""
    for name in ("libc10.so", "libtorch_cpu.so", "libtorch_python.so"):
        path = lib_dir / name
        if not path.is_file():
            continue
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            tu = ""
            for m in _PRINTABLE.finditer(mm):
                s = m.group()
                t = _TU.match(s)
                if t:
                    tu = t.group(1).decode()
                    continue
                yield name, tu, s.decode("ascii")


def binary_sites(lib_dir: Path, version: str) -> tuple[list[dict], list[str]]:
    """Internal asserts and message-less checks (exact), and the sentence-like strings of this build."""
    out, sentences = [], []
    for _lib, tu, s in binary_strings(lib_dir):
        if " " not in s:
            continue
        sentences.append(s)
        if "INTERNAL ASSERT FAILED at" in s:
            m = _ASSERT.match(s)
            if m and "third_party" not in m.group(2):
                cond, file, line, rest = m.groups()
                file = repo_path(file)  # generated files sit under build/
                pieces = tidy(
                    [
                        f'{cond} INTERNAL ASSERT FAILED at "',
                        HOLE,
                        f'{file}":{line}, please report a bug to PyTorch. {rest}',
                        HOLE,
                    ]
                )
                out.append(
                    {
                        "t": to_text(pieces),
                        "k": "internal-assert",
                        "x": "RuntimeError",
                        "f": file,
                        "l": int(line),
                        "fn": "",
                        "c": cond[:300],
                        "m": "TORCH_INTERNAL_ASSERT",
                        "o": "binary",
                        "v": version,
                        "op": "",
                    }
                )
        elif s.startswith("Expected ") and "to be true, but got false" in s:
            m = _NOMSG.match(s)
            if m and tu and "third_party" not in tu:
                out.append(
                    {
                        "t": to_text(tidy([s])),
                        "k": "error",
                        "x": "RuntimeError",
                        "f": tu,
                        "l": None,
                        "fn": "",
                        "c": m.group(1)[:300],
                        "m": "TORCH_CHECK",
                        "o": "binary",
                        "v": version,
                        "op": "",
                    }
                )
    return out, sentences


def graph_breaks(registry: Path, version: str) -> list[dict]:
    data = json.loads(registry.read_text(encoding="utf-8"))
    out = []
    for gb_id in sorted(data):
        for row in data[gb_id]:
            gb_type = row.get("Gb_type", "")
            if not gb_type:
                continue
            pieces = tidy(_format_pieces(gb_type))
            hints = row.get("Hints") or []
            out.append(
                {
                    "t": to_text(pieces),
                    "k": "graph-break",
                    "x": "torch._dynamo.exc.Unsupported",
                    "f": "",
                    "l": None,
                    "fn": "",
                    "c": "",
                    "m": gb_id,
                    "o": "gb-registry",
                    "v": version,
                    "op": "",
                    "gb": {
                        "id": gb_id,
                        "explanation": row.get("Explanation", ""),
                        "hints": [h.strip() for h in hints if h.strip()],
                        "url": f"https://meta-pytorch.github.io/compile-graph-break-site/gb/{gb_id.lower()}.html",
                    },
                }
            )
    return out


# ---------------------------------------------------------------------------------------------
# the whole build


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _sort_key(r: dict):
    return (r["o"], r["f"], r["l"] if r["l"] is not None else -1, r["m"], r["t"])


def extract(
    torch_dir: Path, source: Path | None = None, wheel: Path | None = None, log=lambda s: None
) -> tuple[dict, list[dict]]:
    """(meta, records) for the torch installed at ``torch_dir`` (and a source tree of any release)."""
    version_py = (torch_dir / "version.py").read_text(encoding="utf-8")
    found = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", version_py)
    assert found is not None  # torch's version.py always sets __version__
    version = found.group(1).split("+")[0]
    git = (re.search(r"git_version\s*=\s*['\"]([0-9a-f]+)", version_py) or [None, ""])[1]
    log("python sources")
    records = python_tree(torch_dir, version)
    log("C++ headers")
    records += header_tree(torch_dir / "include", version)
    log("binaries")
    bin_records, sentences = binary_sites(torch_dir / "lib", version)
    records += bin_records
    registry = torch_dir / "_dynamo" / "graph_break_registry.json"
    if registry.is_file():
        records += graph_breaks(registry, version)
    meta = {"torch_version": version, "torch_git": git, "extractor": EXTRACTOR_VERSION}
    if wheel is not None:
        meta["wheel_sha256"] = _sha256(wheel)
    if source is not None:
        log("source tree")
        blob = "\x00".join(sentences) + "\x00" + "\x00".join(r["t"] for r in records)
        src_version = (
            (source / "version.txt").read_text().strip().replace("a0", "")
            if (source / "version.txt").is_file()
            else "unknown"
        )
        headers = {r["f"] for r in records if r["o"] == "header"}
        records += source_tree(source, src_version, lambda s: s in blob, headers)
        meta["source_version"] = src_version
    # one record per (template, file, line, form): a header included twice, a string in two libraries
    seen, unique = set(), []
    for r in sorted(records, key=_sort_key):
        key = (r["t"], r["f"], r["l"], r["m"], r["o"])
        if key not in seen:
            seen.add(key)
            unique.append(r)
    counts: dict[str, int] = {}
    for r in unique:
        counts[r["o"]] = counts.get(r["o"], 0) + 1
    meta["counts"] = dict(sorted(counts.items()))
    meta["records"] = len(unique)
    meta["wheel_part_sha256"] = wheel_part_hash(unique)
    return meta, unique


def wheel_part_hash(records: list[dict]) -> str:
    """A hash of the records derived from the torch install alone (not from a source tree)."""
    h = hashlib.sha256()
    for r in records:
        if r["o"] != "source":
            h.update(json.dumps(r, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
    return h.hexdigest()


def write(meta: dict, records: list[dict], out: Path) -> None:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9, filename="") as gz:
        gz.write(json.dumps({"meta": meta}, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
        for r in records:
            gz.write(json.dumps(r, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    tmp.write_bytes(buf.getvalue())
    os.replace(tmp, out)


read = read_data  # the data file's reader lives with its compiler (explainer.match.longtail)
