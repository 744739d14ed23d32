"""Execute every entry's reproducer and fixes and check that they do what their labels say.

Snippets run in worker processes (``explainer._worker``) that import torch once each; a snippet
labelled ``isolated`` gets a fresh interpreter of its own. A snippet that outlives its timeout kills
its worker (and the worker's children); the next snippet gets a new one.
"""

from __future__ import annotations

import functools
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from explainer.knowledge.kb import Entry, Snippet
from explainer.patterns import compile_pattern

START_TIMEOUT = 120.0


@dataclass
class Result:
    id: str
    snippet: str  # e.g. "repro", "fix:reduce#1"
    role: str
    status: str  # pass | fail | skip
    reason: str = ""
    seconds: float = 0.0
    paste: str = field(default="", repr=False)  # what the snippet printed as its error, for matching

    def as_json(self) -> dict:
        d = asdict(self)
        d.pop("paste")
        return d


class Worker:
    def __init__(self, *, lazy: bool = False) -> None:
        self.lazy = lazy
        self.proc: subprocess.Popen | None = None

    def _start(self) -> None:
        args = [sys.executable, "-m", "explainer._worker"] + (["--lazy"] if self.lazy else [])
        env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONWARNINGS="default")
        src = str(Path(__file__).resolve().parent.parent)
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
            start_new_session=True,
        )
        ready = self._read(START_TIMEOUT)
        if not ready or not ready.get("ready"):
            self.close()
            raise RuntimeError("the snippet worker did not start")

    def _read(self, timeout: float) -> dict | None:
        assert self.proc and self.proc.stdout
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        line = self.proc.stdout.readline()
        return json.loads(line) if line else None

    def run(self, request: dict, timeout: float) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        assert self.proc and self.proc.stdin
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            res = self._read(timeout)
        except (BrokenPipeError, OSError, ValueError):
            res = None
        if res is None:
            crashed = self.proc.poll() is not None
            self.close()
            return {
                "status": "error",
                "reason": "the snippet crashed its interpreter" if crashed else f"timed out after {timeout:g} s",
            }
        return res

    def close(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream and stream.close()
            except OSError:
                pass
        self.proc = None


def snippet_label(entry: Entry, s: Snippet) -> str:
    if s.role == "repro":
        n = entry.repros.index(s) + 1 if s in entry.repros else 1
        return "repro" if n == 1 else f"repro#{n}"
    n = sum(1 for x in entry.snippets if x.group == s.group and x.role == s.role and x.line < s.line) + 1
    return f"{s.role}:{s.group}#{n}"


def executable(entry: Entry) -> list[Snippet]:
    return [s for s in entry.snippets if s.role in ("repro", "fix")]


def _request(entry: Entry, s: Snippet, code: str | None = None) -> dict:
    name = f"{entry.id.replace('-', '_')}_{s.role}_{s.line}"
    return {"code": s.code if code is None else code, "name": name, "requires": s.requires}


def _full(pattern: str, text: str) -> bool:
    try:
        return bool(compile_pattern(pattern).fullmatch(text))
    except (ValueError, TypeError):
        return False


def _matches_entry(entry: Entry, text: str) -> bool:
    """Whether ``text`` is this entry's error (any of its patterns found in it)."""
    for p in entry.meta.get("patterns", []):
        try:
            if compile_pattern(p).search(text[:4000]):
                return True
        except (ValueError, TypeError):
            continue
    return False


def check_reverted(entry: Entry, res: dict) -> tuple[str, str]:
    """A fix with its marked lines reverted must fail: the entry's error (or warning, or log line)
    comes back, or the fix's own assertion fails. Anything else means the fix lines are not what
    makes it work."""
    if res["status"] == "skip":
        return "skip", res["reason"]
    if res["status"] != "ok":
        return "fail", f"reverted: {res['reason']}"
    exc = res.get("exc")
    if exc:
        if exc["type"] == "AssertionError" or _matches_entry(entry, exc["message"]):
            return "pass", ""
        return (
            "fail",
            f"reverted, it raised {exc['qualname']}: {exc['message'][:200]} instead of the entry's error or an assertion",
        )
    for w in res.get("warnings", []):
        if _matches_entry(entry, w["message"]):
            return "pass", ""
    if any(_matches_entry(entry, line) for line in res.get("output", "").splitlines() + res.get("logs", [])):
        return "pass", ""
    return "fail", "it still passes with its '# fix' lines reverted: they are not what makes it work"


@functools.cache
def _torch_here() -> str | None:
    """The installed torch release (no local part), read once; None without torch."""
    from importlib import metadata

    try:
        return metadata.version("torch").split("+", 1)[0]
    except metadata.PackageNotFoundError:
        return None


def _on_own_release(entry: Entry) -> bool:
    """Whether the torch here is the entry's own release (the first of its ``torch_verified``), or
    either is unknown."""
    own = (entry.meta.get("torch_verified") or [None])[0]
    here = _torch_here()
    return own is None or here is None or here == own


def check(entry: Entry, s: Snippet, res: dict) -> tuple[str, str, str]:
    """(status, reason, paste) for a worker result."""
    if res["status"] == "skip":
        return "skip", res["reason"], ""
    if res["status"] != "ok":
        return "fail", res["reason"], ""
    exc = res.get("exc")
    output = res.get("output", "")
    if s.role == "fix":
        if exc:
            return "fail", f"raised {exc['qualname']}: {exc['message'][:300]}", exc["traceback"]
        return "pass", "", ""
    first = compile_pattern(entry.meta["patterns"][0])
    # the first reproducer shows the first pattern's wording on the entry's own release (the first of
    # torch_verified); a variant, or any reproducer on another release, may show another of its wordings
    strict = s is (entry.repros or [s])[0] and _on_own_release(entry)
    if "raises" in s.options:
        want = s.options["raises"]
        if not exc:
            return "fail", f"expected {want}, but nothing was raised", ""
        if want not in (exc["type"], exc["qualname"]):
            return "fail", f"expected {want}, got {exc['qualname']}: {exc['message'][:300]}", exc["traceback"]
        # as raised, or without its outer whitespace, which pastes lose (torch ends some messages with ". ")
        messages = (exc["message"], exc["message"].strip())
        if strict:
            if not any(first.fullmatch(m) for m in messages):
                return (
                    "fail",
                    f"message does not fully match the first pattern: {exc['message'][:300]!r}",
                    exc["traceback"],
                )
        elif not any(_full(p, m) for p in entry.meta["patterns"] for m in messages):
            # a variant may show another wording (an older one, another device's): one of the patterns
            return "fail", f"message does not fully match any pattern: {exc['message'][:300]!r}", exc["traceback"]
        return "pass", "", exc["traceback"]
    if exc:
        return "fail", f"raised {exc['qualname']}: {exc['message'][:300]}", exc["traceback"]
    if "warns" in s.options:
        want = s.options["warns"]
        for w in res.get("warnings", []):
            text = w["message"].strip()
            if w["category"] == want and (
                first.fullmatch(text) if strict else any(_full(p, text) for p in entry.meta["patterns"])
            ):
                return "pass", "", f"{w['file']}:1: {w['category']}: {w['message']}"
        seen = "; ".join(f"{w['category']}: {w['message'][:120]}" for w in res.get("warnings", [])) or "none"
        which = "the first pattern" if strict else "any pattern"
        return "fail", f"no {want} matching {which} (warnings seen: {seen})", ""
    lines = output.splitlines() + res.get("logs", [])
    for line in lines:
        if first.search(line):
            return "pass", "", output or line
    return "fail", "no output line matches the first pattern", ""


def run_snippet(entry: Entry, s: Snippet, worker: Worker, explain_check=None) -> Result:
    """Execute one snippet in ``worker`` and check it against its label."""
    started = time.perf_counter()
    res = _run(worker, entry, s)
    status, reason, paste = check(entry, s, res)
    if status == "pass" and s.role == "repro" and explain_check is not None:
        problem = explain_check(entry, paste)
        if problem:
            status, reason = "fail", problem
    return Result(
        entry.id, snippet_label(entry, s), s.role, status, reason, round(time.perf_counter() - started, 3), paste
    )


def _run(worker: Worker, entry: Entry, s: Snippet, code: str | None = None) -> dict:
    try:
        return worker.run(_request(entry, s, code), s.timeout)
    except RuntimeError as exc:
        return {"status": "error", "reason": str(exc)}
    finally:
        if "isolated" in s.options:
            worker.close()


def run_checks(entry: Entry, s: Snippet, worker: Worker, index=None) -> list[Result]:
    """Every check of one snippet. A fix: it runs clean, and fails with its ``# fix`` lines reverted.
    A reproducer: it raises as declared and (with ``index``) its real traceback is explained as this
    entry; then each rewrite tested on it is applied to its ``# error`` line as the answer would
    apply it and must make it run to the end, and so must the first fix the answer shows for it."""
    from explainer.match.explain import explain_check

    first = run_snippet(entry, s, worker, explain_check(index) if index is not None else None)
    results = [first]
    if s.role == "fix" and s.fix_lines and first.status != "skip":
        started = time.perf_counter()
        status, reason = check_reverted(entry, _run(worker, entry, s, s.reverted()))
        results.append(
            Result(
                entry.id, "revert:" + first.snippet, "revert", status, reason, round(time.perf_counter() - started, 3)
            )
        )
    if s.role == "repro" and index is not None and first.status == "pass" and "raises" in s.options:
        results += _rewrite_checks(entry, s, worker, index, first)
    return results


def _rewrite_checks(entry: Entry, s: Snippet, worker: Worker, index, repro: Result) -> list[Result]:
    from explainer.advise.rewrite import apply_to_source
    from explainer.match.explain import explain_text
    from explainer.render import advice_for

    out: list[Result] = []
    lines = s.code.split("\n")
    answer = explain_text(repro.paste, index, top=3)
    uf = answer.parsed.user_frame
    if uf is None or uf.line != s.error_line:
        got = f"line {uf.line}" if uf and uf.line else "no line of the snippet"
        return [
            Result(
                entry.id,
                "mark@" + repro.snippet,
                "rewrite",
                "fail",
                f"'# error' is on line {s.error_line}, but its traceback fails at {got}",
            )
        ]
    advice = advice_for(answer, index, answer.matches[0], source=lambda _file: lines)  # the snippet is the user's file
    by_id = {f["id"]: f for f in advice["fixes"]}
    tested = {f["slug"] for f in entry.fixes if any(x is s for x, *_ in entry.exercising(f))}
    first = next((f for f in advice["fixes"] if f["applies"]), None)
    runs = [(slug, "rewrite") for slug in sorted(tested)]
    if first and first["id"] not in tested:
        runs.append((first["id"], "first-fix"))
    for slug, role in runs:
        started = time.perf_counter()
        label = f"{role}:{slug}@{repro.snippet}"
        fix = by_id.get(slug)
        if not fix or not fix["applies"]:
            out.append(
                Result(entry.id, label, role, "fail", "the rewrite does not apply to this reproducer's real traceback")
            )
            continue
        at = fix["applies"]["line"] or s.error_line
        assert at is not None  # the traceback failed at the '# error' line (checked above), so there is one
        patched = apply_to_source(s.code, at, fix["applies"]["kind"], fix["code"])
        res = _run(worker, entry, s, patched)
        exc = res.get("exc")
        if res["status"] == "skip":
            status, reason = "skip", res["reason"]
        elif res["status"] != "ok":
            status, reason = "fail", res["reason"]
        elif exc:
            status, reason = (
                "fail",
                f"with {fix['code']!r} at line {at} it raised {exc['qualname']}: {exc['message'][:200]}",
            )
        else:
            status, reason = "pass", ""
        if role == "first-fix" and status == "fail":
            reason = "the first fix the answer shows for this reproducer does not fix it: " + reason
        out.append(Result(entry.id, label, role, status, reason, round(time.perf_counter() - started, 3)))
    return out


def verify(
    entries: Iterable[Entry],
    *,
    jobs: int = 2,
    on_result: Callable[[Result], None] | None = None,
    index=None,
) -> list[Result]:
    """Run every check of every executable snippet of ``entries`` (see :func:`run_checks`); with
    ``index``, reproducers are also explained and the rewrites applied to them."""
    tasks = [(e, s) for e in entries for s in executable(e)]
    local = threading.local()
    workers: list[Worker] = []
    lock = threading.Lock()

    def worker_for(s: Snippet) -> Worker:
        if "isolated" in s.options:
            return Worker(lazy=True)
        if not hasattr(local, "worker"):
            local.worker = Worker()
            with lock:
                workers.append(local.worker)
        return local.worker

    def run(task: tuple[Entry, Snippet]) -> list[Result]:
        entry, s = task
        results = run_checks(entry, s, worker_for(s), index)
        if on_result:
            for r in results:
                on_result(r)
        return results

    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            return [r for rs in pool.map(run, tasks) for r in rs]
    finally:
        for w in workers:
            w.close()
