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
sorted, with a first ``meta`` line; byte-identical for the same inputs. Each record's releases (``vs``:
the first and last release that raise it) are written in afterwards by
:mod:`explainer.knowledge.torchhistory_build`, which reads every release (``meta.ranges_from``).
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import io
import json
import mmap
import os
import re
from pathlib import Path

from explainer.knowledge.longtail_cpp import _format_pieces, header_tree, source_tree, tidy
from explainer.match.longtail import HOLE, literal_len, read_data, repo_path, to_text

EXTRACTOR_VERSION = "1"


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


def _percent_pieces(s: str) -> list:
    out: list[str | None]
    out, last = [], 0
    for m in _PERCENT.finditer(s):
        out.append(s[last : m.start()])
        out.append("%" if m.group() == "%%" else HOLE)
        last = m.end()
    out.append(s[last:])
    return out


class _PyFunction:
    """The simple assignments of one function body, for messages assigned before they are raised;
    each with the lines of the block it sits in (an ``if`` branch, a loop body, the function's)."""

    def __init__(self, node):
        self.assign: dict[str, list[tuple[int, ast.AST, bool, tuple[int, int]]]] = {}
        self._block(getattr(node, "body", []))

    def _block(self, body: list) -> None:
        if not body:
            return
        span = (body[0].lineno, getattr(body[-1], "end_lineno", None) or body[-1].lineno)
        for n in body:
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                self.assign.setdefault(n.targets[0].id, []).append((n.lineno, n.value, False, span))
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and isinstance(n.op, ast.Add):
                self.assign.setdefault(n.target.id, []).append((n.lineno, n.value, True, span))
            elif not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for field in ("body", "orelse", "finalbody"):
                    inner = getattr(n, field, None)
                    if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                        self._block(inner)
                for h in getattr(n, "handlers", None) or []:
                    self._block(h.body)
                for c in getattr(n, "cases", None) or []:
                    self._block(c.body)

    def branches(self, name: str, line: int) -> list:
        """The values ``name`` may hold at ``line`` when its last assignments sit in branches that closed
        before it (``if ...: msg = "a"`` / ``else: msg = "b"``): each of them, or [] when one holds."""
        rows = sorted((r for r in self.assign.get(name, []) if r[0] < line and not r[2]), key=lambda r: r[0])
        if not rows or rows[-1][3][0] <= line <= rows[-1][3][1]:
            return []  # the last assignment holds for the line
        out = []
        for _at, value, _aug, block in reversed(rows):
            out.append(value)
            if block[0] <= line <= block[1]:
                break  # a value set before the branches: it holds when none of them ran
        return out[::-1] if len(out) > 1 else []

    def value(self, name: str, line: int):
        """The last assignment of ``name`` before ``line`` and the ``+=`` after it, each with whether
        it holds for ``line`` (a ``+=`` in a branch that closed before it may not have run)."""
        rows = sorted((r for r in self.assign.get(name, []) if r[0] < line), key=lambda r: r[0])
        start = max((i for i, r in enumerate(rows) if not r[2]), default=None)
        if start is None:
            return None
        return [(r[0], r[1], not r[2] or r[3][0] <= line <= r[3][1]) for r in rows[start:]]


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
            for at, value, holds in rows:
                out += py_pieces(value, fn, at, depth + 1) if holds else [HOLE]
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
        scope = env(fn_node)
        if isinstance(msg_node, ast.Name) and scope is not None:
            # a message set in each branch of an if before it is raised: one site per branch
            values = scope.branches(msg_node.id, node.lineno)
            if values:
                for v in values:
                    add(node, qual, fn_node, kind, exc, v, form, cond)
                return
        pieces = tidy(py_pieces(msg_node, scope, node.lineno)) if msg_node is not None else []
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
        elif isinstance(node, ast.Call) and _is_super_init(node, qual):
            # class SomethingError(Exception): def __init__(...): ...; super().__init__(msg): the class
            # raises that message wherever it is raised
            msg = node.args[-1] if isinstance(node.func.value, ast.Name) else node.args[0]  # type: ignore[attr-defined]
            add(node, qual, fn_node, "error", qual.split(".")[-2], msg, "raise", if_test)
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


def _is_super_init(node: ast.Call, qual: str) -> bool:
    """``super().__init__(msg)`` (or ``Exception.__init__(self, msg)``) in the ``__init__`` of a class
    whose name says it is an exception."""
    parts = qual.split(".")
    if len(parts) < 2 or parts[-1] != "__init__" or not parts[-2].endswith(("Error", "Exception", "Warning")):
        return False
    f = node.func
    if not (isinstance(f, ast.Attribute) and f.attr == "__init__"):
        return False
    if isinstance(f.value, ast.Call) and _call_name(f.value.func) == "super":
        return len(node.args) == 1
    return isinstance(f.value, ast.Name) and f.value.id.endswith(("Error", "Exception")) and len(node.args) == 2


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
    """A hash of the records derived from the torch install alone (not from a source tree, nor the
    release ranges :mod:`explainer.knowledge.torchhistory_build` adds)."""
    h = hashlib.sha256()
    for r in records:
        if r["o"] != "source":
            r = {k: v for k, v in r.items() if k != "vs"}
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
