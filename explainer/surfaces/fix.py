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


# -- --check-fix: the fix tried on a copy -----------------------------------------------------------

# the copy runs as the script itself would: named ``__main__``, its ``__file__`` and its traceback lines
# are the script's path (the patched text is compiled under it), its folder first on ``sys.path``;
# the patched text lives in a temporary file, never next to the user's script
_RUNNER = (
    "import os, sys\n"
    "path, patched = sys.argv[1], sys.argv[2]\n"
    "sys.argv = [path, *sys.argv[3:]]\n"
    "sys.path[0] = os.path.dirname(os.path.abspath(path))\n"
    "with open(patched, encoding='utf-8') as f:\n"
    "    code = compile(f.read(), path, 'exec')\n"
    "exec(code, {'__name__': '__main__', '__file__': path, '__builtins__': __builtins__})\n"
)


def _run(cmd: list[str], cwd: str, timeout: float) -> tuple[int | None, str]:
    """(exit code or None on timeout, stderr) of a child Python."""
    import subprocess

    try:
        p = subprocess.run(
            cmd, cwd=cwd, capture_output=True, text=True, encoding="utf-8", errors="replace", timeout=timeout
        )
    except subprocess.TimeoutExpired as exc:
        err = exc.stderr.decode("utf-8", "replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        return None, err
    return p.returncode, p.stderr


def _last_line(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.strip().split("\n") if ln.strip()]
    return lines[-1][:300] if lines else "(no output)"


def _line_in(stderr: str, script: str) -> int | None:
    """The last line of ``script`` that the traceback in ``stderr`` names."""
    import re

    found = None
    for m in re.finditer(r'^\s*File "([^"\n]{1,4096})", line (\d{1,9})', stderr, re.M):
        if os.path.realpath(m.group(1)) == os.path.realpath(script):
            found = int(m.group(2))
    return found


def check_fix(path: str, args: list[str], index, *, timeout: float, unsafe: bool = True) -> dict:
    """Run ``path``, explain its traceback, apply the chosen fix to a copy and run that.

    Keys: ``status`` (``no-error``, ``no-fix``, ``cannot-apply``, ``fixed``, ``same-error``,
    ``other-error``, ``timeout``), ``before`` (the first run's last line), ``after`` (the copy's),
    ``fix`` and ``match`` (what was tried), ``diff``, ``reason``. The user's file is never written."""
    import sys

    from explainer.match.explain import explain_text
    from explainer.source import local_lines

    script = os.path.abspath(path)
    folder = os.path.dirname(script)
    out: dict = {"status": "", "before": "", "after": "", "fix": None, "match": None, "diff": "", "reason": ""}
    rc, err = _run([sys.executable, script, *args], folder, timeout)
    out["before"] = _last_line(err)
    if rc is None:
        out.update(status="timeout", reason=f"the script ran past {timeout:g} s before it failed")
        return out
    if rc == 0:
        out["status"] = "no-error"
        return out
    answer = explain_text(err, index)
    picked = chosen_fix(answer, index, unsafe=unsafe, source=local_lines) if answer.matches else None
    if picked is None:
        out.update(status="no-fix", reason="no fix of the answer is a rewrite of a file on this machine")
        return out
    fix, match = picked
    out["fix"], out["match"] = fix, match
    where = fix["applies"]
    if os.path.realpath(where["file"]) != os.path.realpath(script):
        out.update(status="cannot-apply", reason=f"the fix changes {where['file']}, not the script that was run")
        return out
    frame = answer.parsed.user_frame
    expected = frame.code if frame is not None and frame.file == where["file"] and frame.line == where["line"] else None
    try:
        with open(script, encoding="utf-8", newline="") as f:
            before = f.readlines()
        after = rewritten(before, fix, expected)
    except (OSError, UnicodeDecodeError, CannotApply) as exc:
        out.update(status="cannot-apply", reason=str(exc))
        return out
    out["diff"] = diff(script, before, after)
    fd, patched = tempfile.mkstemp(prefix="tbx-check-", suffix=".py")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write("".join(after))
        rc2, err2 = _run([sys.executable, "-c", _RUNNER, script, patched, *args], folder, timeout)
    finally:
        os.unlink(patched)
    out["after"] = _last_line(err2) if rc2 != 0 else ""
    out["after_line"] = _line_in(err2, script) if rc2 != 0 else None
    out["after_text"], out["before_text"] = after, before
    if rc2 is None:
        out["status"] = "timeout"
        out["reason"] = f"with the fix the script ran past {timeout:g} s"
    elif rc2 == 0:
        out["status"] = "fixed"
    else:
        out["status"] = "same-error" if out["after"] == out["before"] else "other-error"
    return out
