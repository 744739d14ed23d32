"""The user's own file, read where the surface runs on the user's machine (never executed).

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
