"""The user's own file, read where the surface runs on the user's machine (never executed).

A few fixes change another line than the failing one (``target`` in :mod:`explainer.rewrite`: the
earlier ``backward()``, the ``with torch.no_grad():`` around the forward pass, the ``DataLoader``
call). A paste shows only the failing line, so these need the file the traceback names. The CLI
reads it when it exists on this machine, the hooks take it from :mod:`linecache` (notebook cells
included); the HTTP API never reads a path that came in a paste. The file is used only when its line
at the traceback's line number is the failing line the traceback shows (the same file, unchanged).
"""

from __future__ import annotations

import os
import stat

MAX_SOURCE = 2 * 1024 * 1024  # a larger file is not a user's script


def local_lines(path: str) -> list[str] | None:
    """The lines of the local Python file ``path`` (a traceback frame's), or None."""
    if not path or path.startswith("<") or not path.endswith((".py", ".pyw")):
        return None
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SOURCE:
            return None
        with open(path, "rb") as fh:
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
