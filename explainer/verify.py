"""Execute every entry's reproducer and fixes and check that they do what their labels say.

Snippets run in worker processes (``explainer._worker``) that import torch once each; a snippet
labelled ``isolated`` gets a fresh interpreter of its own. A snippet that outlives its timeout kills
its worker (and the worker's children); the next snippet gets a new one.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from .kb import Entry, Snippet
from .patterns import compile_pattern

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
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, env=env, start_new_session=True,
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
            return {"status": "error", "reason": "the snippet crashed its interpreter" if crashed else f"timed out after {timeout:g} s"}
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
        return "repro"
    n = sum(1 for x in entry.snippets if x.group == s.group and x.role == s.role and x.line < s.line) + 1
    return f"{s.role}:{s.group}#{n}"


def executable(entry: Entry) -> list[Snippet]:
    return [s for s in entry.snippets if s.role in ("repro", "fix")]


def _request(entry: Entry, s: Snippet) -> dict:
    name = f"{entry.id.replace('-', '_')}_{s.role}_{s.line}"
    return {"code": s.code, "name": name, "requires": s.requires}


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
    if "raises" in s.options:
        want = s.options["raises"]
        if not exc:
            return "fail", f"expected {want}, but nothing was raised", ""
        if want not in (exc["type"], exc["qualname"]):
            return "fail", f"expected {want}, got {exc['qualname']}: {exc['message'][:300]}", exc["traceback"]
        if not first.fullmatch(exc["message"]):
            return "fail", f"message does not fully match the first pattern: {exc['message'][:300]!r}", exc["traceback"]
        return "pass", "", exc["traceback"]
    if exc:
        return "fail", f"raised {exc['qualname']}: {exc['message'][:300]}", exc["traceback"]
    if "warns" in s.options:
        want = s.options["warns"]
        for w in res.get("warnings", []):
            if w["category"] == want and first.fullmatch(w["message"].strip()):
                return "pass", "", f"{w['file']}:1: {w['category']}: {w['message']}"
        seen = "; ".join(f"{w['category']}: {w['message'][:120]}" for w in res.get("warnings", [])) or "none"
        return "fail", f"no {want} matching the first pattern (warnings seen: {seen})", ""
    lines = output.splitlines() + res.get("logs", [])
    for line in lines:
        if first.search(line):
            return "pass", "", output or line
    return "fail", "no output line matches the first pattern", ""


def run_snippet(entry: Entry, s: Snippet, worker: Worker, explain_check=None) -> Result:
    """Execute one snippet in ``worker`` and check it against its label."""
    started = time.perf_counter()
    try:
        res = worker.run(_request(entry, s), s.timeout)
    except RuntimeError as exc:
        res = {"status": "error", "reason": str(exc)}
    finally:
        if "isolated" in s.options:
            worker.close()
    status, reason, paste = check(entry, s, res)
    if status == "pass" and s.role == "repro" and explain_check is not None:
        problem = explain_check(entry, paste)
        if problem:
            status, reason = "fail", problem
    return Result(entry.id, snippet_label(entry, s), s.role, status, reason, round(time.perf_counter() - started, 3), paste)


def verify(
    entries: Iterable[Entry],
    *,
    jobs: int = 2,
    on_result: Callable[[Result], None] | None = None,
    explain_check: Callable[[Entry, str], str | None] | None = None,
) -> list[Result]:
    """Run every executable snippet of ``entries``. ``explain_check(entry, paste)`` returns a failure
    reason when the reproducer's real output is not explained as its own entry."""
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

    def run(task: tuple[Entry, Snippet]) -> Result:
        entry, s = task
        result = run_snippet(entry, s, worker_for(s), explain_check)
        if on_result:
            on_result(result)
        return result

    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            return list(pool.map(run, tasks))
    finally:
        for w in workers:
            w.close()
