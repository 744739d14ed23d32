"""Load benchmark: ``POST /v1/explain`` against a minimal FastAPI echo route, one uvicorn worker each.

    python tests/bench/bench_api.py [--seconds 10] [--concurrency 64] [--pastes data/bench_pastes.jsonl] [--json]

1. Real tracebacks: every entry's reproducer in ``kb/`` is executed (needs torch, as ``tbx verify``
   does) and its traceback kept; each is also pasted as a distributed ``[rank0]:`` log and as a
   Windows console copy, with the user's file renamed per copy, so every payload is distinct (at
   least 50; the core keeps no result cache, and none could serve a repeat anyway).
2. Two servers in subprocesses, the same uvicorn flags: the API (``explainer.api.app:app_factory``) and the
   echo app below (``POST /echo`` answers the JSON it got). On a machine with two or more cores the
   servers run on one core and this load generator on the others.
3. An asyncio + httpx load generator keeps ``--concurrency`` connections busy for ``--seconds`` on
   each side, rotating the payloads, after a short warm-up; it prints requests/s, the ratio, p50 and
   p99 latency and error counts (an error: a non-200 answer, a failed request, or, for the API, an
   answer that is not an explanation).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from fastapi import FastAPI

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
MIN_PAYLOADS = 50

echo_app = FastAPI()


@echo_app.post("/echo")
async def echo(payload: dict[str, Any]) -> dict[str, Any]:
    return payload


# --- payloads ---------------------------------------------------------------------------------


def real_tracebacks(*, cache: bool = True) -> list[tuple[str, str]]:
    """(entry id, traceback) for every reproducer that runs here, kept in a temporary file per
    version of ``kb/`` so that a second run does not execute them again."""
    import tempfile

    sys.path.insert(0, str(ROOT))
    from explainer.knowledge.index import content_hash
    from explainer.knowledge.kb import read_all
    from explainer.knowledge.verify import Worker, run_snippet
    from explainer.paths import kb_dir

    cache_file = Path(tempfile.gettempdir()) / f"tbx-bench-tracebacks-{content_hash(kb_dir())[:12]}.json"
    if cache and cache_file.exists():
        return [tuple(x) for x in json.loads(cache_file.read_text(encoding="utf-8"))]
    out: list[tuple[str, str]] = []
    worker = Worker()
    try:
        for entry in read_all(kb_dir()):
            for s in entry.snippets:
                if s.role != "repro":
                    continue
                r = run_snippet(entry, s, worker)
                if r.status == "pass" and r.paste.strip():
                    out.append((entry.id, r.paste))
    finally:
        worker.close()
    if cache:
        cache_file.write_text(json.dumps(out), encoding="utf-8")
    return out


_SNIPPET_FILE = re.compile(r'File "([^"]*tbx-snippet-[^"]*/)([^"/]+)\.py"')


def variants(tracebacks: list[tuple[str, str]], extra: dict | None = None) -> list[dict]:
    payloads = []
    for i, (entry_id, tb) in enumerate(tracebacks):
        plain = _SNIPPET_FILE.sub(lambda m, i=i: f'File "/home/dev/project{i}/{m.group(2)}.py"', tb)
        ranked = "\n".join(
            f"[rank{i % 8}]: {line}"
            for line in _SNIPPET_FILE.sub(
                lambda m, i=i: f'File "/workspace/job{i}/train_{m.group(2)}.py"', tb
            ).splitlines()
        )
        windows = _SNIPPET_FILE.sub(lambda m, i=i: f'File "C:\\\\Users\\\\dev\\\\proj{i}\\\\{m.group(2)}.py"', tb)
        windows = re.sub(r'File "/[^"]*/site-packages/', r'File "C:\\Python311\\Lib\\site-packages\\', windows).replace(
            "\n", "\r\n"
        )
        for variant, text in (("plain", plain), ("rank-prefixed", ranked), ("windows", windows)):
            payloads.append(
                {
                    "id": entry_id,
                    "variant": variant,
                    "body": json.dumps({"text": text, "lang": "en", **(extra or {})}).encode(),
                }
            )
    return payloads


# --- servers ----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(target: str, port: int, *, factory: bool, app_dir: Path, cpus: set[int] | None) -> subprocess.Popen:
    args = [
        sys.executable,
        "-m",
        "uvicorn",
        target,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        "1",
        "--log-level",
        "warning",
        "--no-access-log",
        "--app-dir",
        str(app_dir),
    ]
    if factory:
        args.append("--factory")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(
        args, env=env, cwd=ROOT, preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{target} exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"{target} did not start")


# --- load -------------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc; NaN elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")


async def drive(
    url: str,
    payloads: list[dict],
    *,
    seconds: float,
    concurrency: int,
    check_api: bool,
    server_pid: int,
    warmup: float = 1.0,
) -> dict:
    """Keep ``concurrency`` connections busy; count the requests that complete inside the window.

    One ``httpx.AsyncClient`` per connection: a single client's pool shared by 64 tasks spends more
    time managing the pool than the server spends answering (85 requests/s against an echo route).
    """
    import httpx

    counter = itertools.count()
    latencies: list[float] = []
    errors = {"status": 0, "transport": 0, "content": 0}
    headers = {"content-type": "application/json"}
    begin = time.perf_counter()
    window = (begin + warmup, begin + warmup + seconds)
    cpu: dict[str, float] = {}

    async def one_connection() -> None:
        async with httpx.AsyncClient(
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1), timeout=30
        ) as client:
            while time.perf_counter() < window[1]:
                payload = payloads[next(counter) % len(payloads)]
                t0 = time.perf_counter()
                try:
                    r = await client.post(url, content=payload["body"], headers=headers)
                    kind = None if r.status_code == 200 else "status"
                    if kind is None and check_api and "matches" not in r.json():
                        kind = "content"
                except (httpx.HTTPError, ValueError):
                    kind = "transport"
                t1 = time.perf_counter()
                if window[0] <= t1 <= window[1]:
                    if kind:
                        errors[kind] += 1
                    else:
                        latencies.append(t1 - t0)

    async def sample_cpu() -> None:
        await asyncio.sleep(max(0.0, window[0] - time.perf_counter()))
        cpu["start"] = cpu_seconds(server_pid)
        await asyncio.sleep(max(0.0, window[1] - time.perf_counter()))
        cpu["end"] = cpu_seconds(server_pid)

    await asyncio.gather(sample_cpu(), *(one_connection() for _ in range(concurrency)))
    lat = sorted(latencies)

    def pct(p: float) -> float:
        return round(lat[min(len(lat) - 1, int(p * len(lat)))] * 1000, 1) if lat else float("nan")

    used = cpu["end"] - cpu["start"]
    return {
        "requests": len(lat),
        "seconds": seconds,
        "rps": round(len(lat) / seconds, 1),
        "p50_ms": pct(0.50),
        "p99_ms": pct(0.99),
        "mean_ms": round(statistics.fmean(lat) * 1000, 1) if lat else None,
        "errors": sum(errors.values()),
        "error_kinds": errors,
        "server_cpu_busy": round(used / seconds, 2),  # 1.0 = the worker's core was saturated
        "server_cpu_ms_per_request": round(used * 1000 / len(lat), 2) if lat else None,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--json", action="store_true", help="print one JSON object at the end")
    ap.add_argument("--record", action="store_true", help="store the figures for the README (tests/bench/results.py)")
    ap.add_argument("--no-cache", action="store_true", help="execute the reproducers again")
    ap.add_argument(
        "--pastes",
        type=Path,
        help="JSON lines with `id` and `text` (e.g. data/bench_pastes.jsonl from "
        "tests/bench/make_pastes.py) instead of running the reproducers here",
    )
    ap.add_argument(
        "--render",
        default=None,
        help="the request's `render` (comma-separated formats, '' for none); default: left out (both)",
    )
    args = ap.parse_args(argv)
    extra = {} if args.render is None else {"render": [f for f in args.render.split(",") if f]}

    t0 = time.perf_counter()
    if args.pastes:
        rows = [json.loads(line) for line in args.pastes.read_text(encoding="utf-8").splitlines() if line.strip()]
        tracebacks = [(r["id"], r["text"]) for r in rows]
        payloads = [
            {
                "id": r["id"],
                "variant": r.get("format", "?"),
                "body": json.dumps({"text": r["text"], "lang": "en", **extra}).encode(),
            }
            for r in rows
        ]
    else:
        tracebacks = real_tracebacks(cache=not args.no_cache)
        payloads = variants(tracebacks, extra)
    if len({p["body"] for p in payloads}) < MIN_PAYLOADS:
        raise SystemExit(f"only {len(payloads)} distinct payloads (need {MIN_PAYLOADS}): is torch installed?")
    print(
        f"{len(payloads)} distinct payloads from {len(tracebacks)} real tracebacks "
        f"({len({i for i, _ in tracebacks})} entries) in {time.perf_counter() - t0:.0f} s",
        flush=True,
    )

    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    server_cpus = {cpus[0]} if len(cpus) >= 2 else None
    if server_cpus:
        os.sched_setaffinity(0, set(cpus[1:]))
        print(f"servers on CPU {cpus[0]}, load generator on {cpus[1:]}", flush=True)

    api_port, echo_port = free_port(), free_port()
    procs = [
        start_server("explainer.api.app:app_factory", api_port, factory=True, app_dir=ROOT, cpus=server_cpus),
        start_server("bench_api:echo_app", echo_port, factory=False, app_dir=HERE, cpus=server_cpus),
    ]
    try:
        import httpx

        sample = httpx.post(
            f"http://127.0.0.1:{api_port}/v1/explain",
            content=payloads[0]["body"],
            headers={"content-type": "application/json"},
            timeout=30,
        ).json()
        assert "matches" in sample, sample
        misses = []
        for p in payloads:
            m = httpx.post(
                f"http://127.0.0.1:{api_port}/v1/explain",
                content=p["body"],
                headers={"content-type": "application/json"},
                timeout=30,
            ).json()["matches"]
            if not m or m[0]["id"] != p["id"]:
                misses.append(f"{p['id']} ({p['variant']}) -> {m[0]['id'] if m else 'abstained'}")
        print(f"payloads explained top-1 as their own entry: {len(payloads) - len(misses)}/{len(payloads)}", flush=True)
        for line in misses[:15]:
            print(f"  miss: {line}")
        if len(misses) > 15:
            print(f"  … and {len(misses) - 15} more")
        echo = asyncio.run(
            drive(
                f"http://127.0.0.1:{echo_port}/echo",
                payloads,
                seconds=args.seconds,
                concurrency=args.concurrency,
                check_api=False,
                server_pid=procs[1].pid,
            )
        )
        api = asyncio.run(
            drive(
                f"http://127.0.0.1:{api_port}/v1/explain",
                payloads,
                seconds=args.seconds,
                concurrency=args.concurrency,
                check_api=True,
                server_pid=procs[0].pid,
            )
        )
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()

    ratio = round(api["rps"] / echo["rps"], 3) if echo["rps"] else None
    cpu_ratio = (
        round(echo["server_cpu_ms_per_request"] / api["server_cpu_ms_per_request"], 3)
        if echo["server_cpu_ms_per_request"] and api["server_cpu_ms_per_request"]
        else None
    )
    print(
        f"\n{'':<14}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}{'server CPU':>12}{'CPU ms/req':>12}"
        f"   ({args.concurrency} connections, {args.seconds:g} s each, 1 worker)"
    )
    for name, r in (("echo", echo), ("/v1/explain", api)):
        print(
            f"{name:<14}{r['rps']:>9}{r['p50_ms']:>9}{r['p99_ms']:>9}{r['errors']:>8}"
            f"{r['server_cpu_busy']:>12}{r['server_cpu_ms_per_request']:>12}"
        )
    print(f"ratio explain/echo, requests/s: {ratio}  (goal >= 0.7)")
    print(
        f"ratio explain/echo, server CPU per request: {cpu_ratio}  (the ratio when neither side waits on the load generator)"
    )
    if echo["server_cpu_busy"] < 0.9:
        print("note: the echo server was not saturated: its figure is bounded by this load generator")
    if args.json:
        print(
            json.dumps(
                {
                    "payloads": len(payloads),
                    "concurrency": args.concurrency,
                    "echo": echo,
                    "explain": api,
                    "ratio": ratio,
                    "cpu_ratio": cpu_ratio,
                }
            )
        )
    if args.record:
        from results import record

        record(
            "api",
            f"`POST /v1/explain` vs a minimal FastAPI echo route, one uvicorn worker each, {args.concurrency} connections",
            f"{api['rps']} vs {echo['rps']} req/s (ratio {ratio}, goal 0.7); server CPU per request ratio {cpu_ratio}; "
            f"errors {api['errors']}",
        )
    return 0 if api["errors"] == 0 and echo["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
