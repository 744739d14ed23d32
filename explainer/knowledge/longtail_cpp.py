"""The long tail's C++ raise sites: ``TORCH_CHECK`` and its family, ``throw``, ``PyErr_*`` and the
other macros in torch's headers and sources, each call's message turned into a template of literal
pieces and holes (:func:`cpp_pieces`), with the function it is in. Used by
:mod:`explainer.knowledge.longtail_build`."""

from __future__ import annotations

import bisect
import re
from pathlib import Path

from explainer.match.longtail import HOLE, from_text, literal_len, to_text

MAX_ARGS_CHARS = 6000


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


_FORMAT_FIELD = re.compile(r"\{\{|\}\}|\{[^{}]*\}")


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
    "TORCH_CHECK_WITH": ("error", None),
}


_SITE = re.compile(
    r"\b(TORCH_CHECK(?:_INDEX|_VALUE|_TYPE|_NOT_IMPLEMENTED|_LINALG|_ALWAYS_SHOW_CPP_STACKTRACE|_WITH)?|TORCH_WARN(?:_ONCE|_DEPRECATION)?"
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
    "DistNetworkError": "torch.distributed.DistNetworkError",
    "DistStoreError": "torch.distributed.DistStoreError",
    "CuDNNError": "RuntimeError",
    "DynamicLibraryError": "OSError",
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
    parts = _split_top(a, "+")
    if len(parts) > 1:
        out = []
        for x in parts:
            out += cpp_pieces(x, depth + 1)
        return out
    return [HOLE]


_SPLIT = {
    "+": re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[()\[\]{}]|\+'),
    "<<": re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[()\[\]{}]|<<'),
}


def _split_top(expr: str, op: str) -> list[str]:
    """The operands of ``op`` (``+`` of a string concatenation, ``<<`` of a stream) outside brackets and
    strings; ``++`` is no ``+``."""
    parts, depth, cur = [], 0, 0
    for m in _SPLIT[op].finditer(expr):
        g = m.group(0)
        if g in "([{":
            depth += 1
        elif g in ")]}":
            depth -= 1
        elif g == op and depth == 0:
            if op == "+" and "+" in (expr[m.start() - 1 : m.start()], expr[m.end() : m.end() + 1]):
                continue
            parts.append(expr[cur : m.start()])
            cur = m.end()
    parts.append(expr[cur:])
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


# a message built before the check: ``std::ostringstream ss; ss << "cuFFT error: " << x; TORCH_CHECK(false, ss.str())``,
# ``std::string msg; msg.append("CUDA error: "); ...; TORCH_CHECK(false, msg)``
_BUILT = re.compile(r"(?:std::move\s*\(\s*)?([A-Za-z_]\w*)(?:\s*\.\s*str\s*\(\s*\))?(?:\s*\.\s*c_str\s*\(\s*\))?\s*\)?")
_BUILDER_DECL = r"(?:std::(?:o?stringstream|string)|c10::string|auto)\s+{name}\s*(?:(=)|(\()|(\{{)|;)"
_BUILDER_STEP = r"\b{name}\s*(?:(<<)|\.\s*(append)\s*(\()|(\+=))"
BUILDER_WINDOW = 4000
_BRACES = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[{};]')


def _statement_end(code: str, start: int) -> int:
    """The offset of the ``;`` that ends the statement going on at ``start`` (outside brackets and strings)."""
    depth, n = 0, min(len(code), start + MAX_ARGS_CHARS)
    for m in re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[()\[\];]').finditer(code, start, n):
        g = m.group(0)
        if g in "([":
            depth += 1
        elif g in ")]":
            depth -= 1
        elif g == ";" and depth <= 0:
            return m.start()
    return -1


def _built_pieces(code: str, name: str, site: int) -> list:
    """The pieces of the string or stream ``name`` as built between its declaration and ``site``: what
    a block that closed before the site adds (one branch of an ``if``) is a hole."""
    lo = max(0, site - BUILDER_WINDOW)
    decls = list(re.finditer(_BUILDER_DECL.format(name=re.escape(name)), code[lo:site]))
    if not decls:
        return [HOLE]
    decl = decls[-1]
    start = lo + decl.start()
    out: list = []
    if decl.group(1) or decl.group(2):  # std::string name = <expr>; / std::string name(<expr>)
        end = _statement_end(code, lo + decl.end())
        if end < 0:
            return [HOLE]
        init = code[lo + decl.end() : end].strip()
        if decl.group(2):
            init = init[:-1] if init.endswith(")") else init
        if not init.startswith("ErrorReport"):  # a TorchScript report starts with its words, not its place
            out += cpp_pieces(init)
    # the brace depth of every position between the declaration and the site
    marks: list[tuple[int, int]] = []
    depth = 0
    for m in _BRACES.finditer(code, start, site):
        if m.group(0) == "{":
            depth += 1
        elif m.group(0) == "}":
            depth -= 1
        marks.append((m.start(), depth))
    for step in re.finditer(_BUILDER_STEP.format(name=re.escape(name)), code[start:site]):
        pos = start + step.start()
        if pos < lo + decl.end():
            continue
        at = next((d for p, d in reversed(marks) if p < pos), 0)
        later = [d for p, d in marks if p > pos]
        conditional = bool(later) and min(later) < at  # its block closed before the site
        if step.group(2):  # name.append(x)
            parsed = _args(code, start + step.start(3))
            got = cpp_pieces(parsed[0][0]) if parsed and parsed[0] else [HOLE]
        else:
            end = _statement_end(code, start + step.end())
            if end < 0:
                return [HOLE]
            rhs = code[start + step.end() : end]
            got = []
            for x in _split_top(rhs, "<<") if step.group(1) else [rhs]:
                got += cpp_pieces(x)
        out += [HOLE] if conditional else got
    return out or [HOLE]


_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+(\"[^\n]*)$", re.M)


def _string_macros(code: str) -> dict[str, list[str]]:
    """The file's object-like macros whose value is string literals (a message, or several
    arguments of one): name -> the value's comma-separated parts."""
    out = {}
    for m in _DEFINE.finditer(code):
        value = m.group(2).strip()
        parts = [p.strip() for p in re.split(r'(?<=")\s*,\s*(?=")', value)]
        if all(_LITERAL_ARG.fullmatch(p) for p in parts):
            out[m.group(1)] = parts
    return out


_AUTOGRAD_ERROR = re.compile(r"(?:[:,]|\bnew)\s*(?:torch::autograd::)?Error\s*\(")
_ERROR_REPORT = re.compile(r"\bthrow\s*(\()?\s*ErrorReport\s*\(")


def cpp_sites(text: str, rel: str, version: str, origin: str, exact_line: bool) -> list[dict]:
    if not _SITE.search(text) and "ErrorReport" not in text and "Error(" not in text:
        return []
    spliced, starts = _splice(text)
    code = _blank(spliced)
    defined = _string_macros(code)
    sites = []

    def site(at: int, pieces: list, kind: str, exc: str | None, cond: str, form: str) -> dict:
        line = bisect.bisect_right(starts, at)
        return {
            "t": to_text(pieces),
            "k": kind,
            "x": exc,
            "f": rel,
            "l": line if exact_line else None,
            "fn": "",
            "c": cond,
            "m": form,
            "o": origin,
            "v": version,
            "op": "",
        }

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
        elif macro == "TORCH_CHECK_WITH":  # TORCH_CHECK_WITH(ErrorType, cond, ...)
            if len(args) < 2:
                continue
            kind = "error"
            exc = _THROW_TYPES.get(args[0].strip().split("::")[-1], "RuntimeError")
            cond, msg_args = " ".join(args[1].split()), args[2:]
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
            if a.strip() in defined:  # #define MPS_ERROR_RUNTIME_TOO_LOW "The MPS backend ...", "Current OS ..."
                for part in defined[a.strip()]:
                    pieces += cpp_pieces(part)
                continue
            built = _BUILT.fullmatch(a.strip())
            pieces += _built_pieces(code, built.group(1), m.start()) if built else cpp_pieces(a)
        pieces = tidy(pieces)
        if macro.startswith("TORCH_CHECK") and (
            not msg_args or pieces == [HOLE] and all(not a.strip() for a in msg_args)
        ):
            if "#" in cond or "__VA_ARGS__" in cond or not cond:
                continue
            pieces = tidy(_NO_MESSAGE.split("{}")[0:1] + [cond] + _NO_MESSAGE.split("{}")[1:2])
        if not pieces or literal_len(pieces) < 3:
            continue
        sites.append((m.start(), site(m.start(), pieces, kind, exc, cond[:300], macro)))
    for m in _AUTOGRAD_ERROR.finditer(code) if "/autograd/" in rel else ():
        # an autograd Error node (NotImplemented : Error("derivative for " + fn + " is not
        # implemented")) raises its message when the backward pass reaches it
        parsed = _args(code, m.end() - 1)
        pieces = tidy(cpp_pieces(parsed[0][0])) if parsed and parsed[0] else []
        if not pieces or literal_len(pieces) < 8:
            continue
        sites.append((m.start(), site(m.start(), pieces, "error", "RuntimeError", "", "Error")))
    for m in _ERROR_REPORT.finditer(code):  # TorchScript: throw ErrorReport(range) << "..." << x;
        parsed = _args(code, m.end() - 1)
        end = _statement_end(code, m.start()) if parsed else -1
        if not parsed or end < 0:
            continue
        chain = code[parsed[1] : end].strip()
        if m.group(1):  # throw(ErrorReport(...) << ...): the closing parenthesis of throw(
            chain = chain[:-1] if chain.endswith(")") else chain
        pieces = []
        if chain.startswith("<<"):
            for x in _split_top(chain[2:], "<<"):
                pieces += cpp_pieces(x)
        elif not chain and len(parsed[0]) == 1 and re.fullmatch(r"\s*[A-Za-z_]\w*\s*", parsed[0][0]):
            # auto error = ErrorReport(loc); error << "Unknown builtin op: " << name; throw ErrorReport(error);
            pieces = _built_pieces(code, parsed[0][0].strip(), m.start())
        pieces = tidy(pieces)
        if not pieces or literal_len(pieces) < 3:
            continue
        sites.append((m.start(), site(m.start(), pieces, "error", "RuntimeError", "", "ErrorReport")))
    sites.sort(key=lambda s: s[0])
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
