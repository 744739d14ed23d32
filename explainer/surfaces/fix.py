"""``tbx fix``: the chosen fix of a traceback as a unified diff of the user's file, and with
``--apply`` the file rewritten (safe fixes only unless ``--unsafe``; only when the line still reads as
the traceback shows it; atomically, keeping a backup).

The fix is the answer's first one that is a rewrite of a line of a file that exists on this machine
(``applies`` in the JSON answer): ``replace_line`` replaces that line (its indentation kept),
``insert_before`` goes before it at the same indentation.
"""

from __future__ import annotations

import difflib
import os
import tempfile

BACKUP_SUFFIX = ".tbx-orig"


class CannotApply(Exception):
    """One line that says why the fix cannot be applied (the file is left as it was)."""


def chosen_fix(answer, index, *, unsafe: bool, source) -> tuple[dict, dict] | None:
    """(the match's fix, the match) of the first match whose fixes hold a rewrite of an existing
    file's line; with ``unsafe`` False only a ``safe`` one."""
    from explainer.render import advice_for

    for cand in answer.matches[:1]:
        advice = advice_for(answer, index, cand, source=source)
        for f in advice["fixes"]:
            a = f.get("applies")
            if not a or not f.get("code") or not a.get("file") or not os.path.isfile(a["file"]):
                continue
            if f["applicability"] != "safe" and not unsafe:
                continue
            return f, {"id": cand.id}
    return None


def rewritten(lines: list[str], fix: dict, expected: str | None) -> list[str]:
    """The file's lines (with their line ends) after ``fix``; ``expected``: the failing line as the
    traceback shows it (stripped), which the file's line must still read as."""
    a = fix["applies"]
    at = (a.get("line") or 0) - 1
    if not 0 <= at < len(lines):
        raise CannotApply(f"{a['file']} has no line {a.get('line')}")
    old = lines[at]
    if expected is not None and a["kind"] == "replace_line" and old.strip() != expected.strip():
        raise CannotApply(
            f"{a['file']}:{at + 1} no longer reads as the traceback shows it "
            f"({old.strip()[:60]!r} vs {expected.strip()[:60]!r}): not applied"
        )
    indent = old[: len(old) - len(old.lstrip())]
    end = "\r\n" if old.endswith("\r\n") else "\n"
    new = [indent + part + end for part in fix["code"].splitlines()]
    if a["kind"] == "replace_line":
        return lines[:at] + new + lines[at + 1 :]
    return lines[:at] + new + lines[at:]


def diff(path: str, before: list[str], after: list[str]) -> str:
    return "".join(difflib.unified_diff(before, after, fromfile=path, tofile=path))


def apply(path: str, after: list[str]) -> str:
    """Write ``after`` to ``path`` atomically, keeping the old file as ``path + BACKUP_SUFFIX``."""
    folder = os.path.dirname(os.path.abspath(path))
    with open(path, "rb") as f:
        original = f.read()
    backup = path + BACKUP_SUFFIX
    with open(backup, "wb") as f:
        f.write(original)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tbx-fix-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write("".join(after))
        os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return backup
