"""The user's own code, never executed: their file, read where the surface runs on the user's
machine, and their failing line, read with ``ast`` (the names a fix is written with: the assignment's
target, the call, its receiver and arguments, the call Python's carets point at).

A few fixes change another line than the failing one (``target`` in :mod:`explainer.advise.rewrite`: the
earlier ``backward()``, the ``with torch.no_grad():`` around the forward pass, the ``DataLoader``
call). A paste shows only the failing line, so these need the file the traceback names. The CLI
reads it when it exists on this machine, the hooks take it from :mod:`linecache` (notebook cells
included); the HTTP API never reads a path that came in a paste. The file is used only when its line
at the traceback's line number is the failing line the traceback shows (the same file, unchanged).
"""

from __future__ import annotations

import os
import stat
from functools import lru_cache

from explainer.textio import USER_CODE

TYPE_CHECKING = False  # the annotations are strings: typing and ast are not imported at start-up
if TYPE_CHECKING:
    import ast

MAX_SOURCE = 2 * 1024 * 1024  # a larger file is not a user's script


_SPECIAL_ROOTS = ("/proc/", "/sys/", "/dev/")  # kernel files report size 0 and may block on read


def local_lines(path: str) -> list[str] | None:
    """The lines of the local Python file ``path`` (a traceback frame's), or None. Only a regular
    file on a real file system is opened, never a FIFO, a device or a kernel file (a ``.py`` link to
    ``/proc/kmsg`` would block the reader), and the file opened is checked to be the one looked at."""
    if not path or path.startswith("<") or not path.endswith((".py", ".pyw")):
        return None
    try:
        real = os.path.realpath(path)
        if real.startswith(_SPECIAL_ROOTS):
            return None
        st = os.stat(real)
        if not stat.S_ISREG(st.st_mode) or not 0 < st.st_size <= MAX_SOURCE:
            return None
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        with open(fd, "rb", closefd=True) as fh:
            now = os.fstat(fh.fileno())
            if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                return None  # replaced between the look and the open
            data = fh.read(MAX_SOURCE)
    except (OSError, ValueError):
        return None
    return data.decode("utf-8", "replace").split("\n")


def cached_lines(path: str) -> list[str] | None:
    """The lines of ``path`` as the running interpreter knows them (the hooks: files and notebook
    cells alike), or None."""
    import linecache

    lines = linecache.getlines(path)
    return [l.rstrip("\n") for l in lines] if lines else local_lines(path)


# --- the failing line, read with ast (never executed): the names a fix is written with


def code_values(line: str | None, focus: str | None = None) -> dict[str, str]:
    """Names in the user's code line, read with ``ast`` (never executed)."""
    return dict(_code_values(line, focus))


@lru_cache(maxsize=2048)
def _code_values(line: str | None, focus: str | None) -> dict[str, str]:
    import ast  # not on the start-up path: only an answer with advice reads the line

    out: dict[str, str] = {}
    if not line:
        return out
    text = line.strip()
    out["code"] = text
    if len(text) > 500:
        return out
    try:
        tree = ast.parse(text, USER_CODE)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return out
    if not tree.body:
        return out
    stmt = tree.body[0]
    value = getattr(stmt, "value", None)
    if isinstance(stmt, ast.Assign) and stmt.targets:
        out["target"] = ast.unparse(stmt.targets[0])
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        out["target"] = ast.unparse(stmt.target)
    call = focused_call(stmt, focus) if focus else None
    if call is not None:
        assert focus is not None  # a focused call comes from a focus
        out["focus"] = focus
    else:
        call = (
            value if isinstance(value, ast.Call) else next((n for n in ast.walk(stmt) if isinstance(n, ast.Call)), None)
        )
    try:
        if call is not None:
            out["call"] = ast.unparse(call.func)
            if isinstance(call.func, ast.Attribute):
                out["receiver"] = ast.unparse(call.func.value)
            for i, arg in enumerate(call.args[:2]):
                out[f"arg{i}"] = ast.unparse(arg)
    except (RecursionError, MemoryError, ValueError):
        pass
    return out


def focused_call(stmt: ast.stmt, focus: str) -> ast.Call | None:
    import ast

    """The call of the statement that Python's carets point at (the one that failed), if any."""
    try:
        want = ast.unparse(ast.parse(focus.strip(), USER_CODE, mode="eval").body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call):
            try:
                if ast.unparse(node) == want:
                    return node
            except (ValueError, RecursionError):
                return None
    return None
