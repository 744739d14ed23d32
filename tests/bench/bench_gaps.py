"""The gap log under load: 64 connections for 30 s, recording on, every gap counted exactly once.

    python tests/bench/bench_gaps.py [--seconds 30] [--concurrency 64] [--postgres URL]

Two runs of the API server (one uvicorn worker), the same payloads, recording off then on: half the
requests are pastes no entry answers (each one distinct, so each is one gap signature), half are
known errors (not gaps). After the recording run the server is stopped (it flushes its queue) and
the store is read: the count of gap rows must equal the number of gap requests that were answered
200. Prints errors, requests/s and p50/p99 for both runs, the added p50, and the counts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE))

from bench_api import free_port, start_server  # noqa: E402

GOOD = 'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    loss.backward()\nRuntimeError: grad can be implicitly created only for scalar outputs\n'


def gap_paste(i: int) -> str:
    return (
        f'Traceback (most recent call last):\n  File "job{i}.py", line 9, in <module>\n    run()\n'
        f"ValueError: the frobnicator stage {chr(97 + i % 26)}{chr(97 + i // 26 % 26)}{chr(97 + i // 676 % 26)} refused its quota of widgets\n"
    )


async def drive(url: str, seconds: float, concurrency: int) -> dict:
    import httpx

    n = 0
    lat: list[float] = []
    gaps_ok = errors = 0
    stop = time.perf_counter() + seconds

    async def conn() -> None:
        nonlocal n, gaps_ok, errors
        async with httpx.AsyncClient(timeout=60) as client:
            while time.perf_counter() < stop:
                i = n
                n += 1
                gap = i % 2 == 0
                text = gap_paste(i // 2) if gap else GOOD
                t0 = time.perf_counter()
                try:
                    r = await client.post(
                        url, content=json.dumps({"text": text}), headers={"content-type": "application/json"}
                    )
                    ok = r.status_code == 200
                except httpx.HTTPError:
                    ok = False
                lat.append(time.perf_counter() - t0)
                if not ok:
                    errors += 1
                elif gap:
                    gaps_ok += 1

    await asyncio.gather(*(conn() for _ in range(concurrency)))
    lat.sort()
    return {
        "requests": len(lat),
        "rps": round(len(lat) / seconds, 1),
        "errors": errors,
        "gaps_answered": gaps_ok,
        "p50_ms": round(statistics.median(lat) * 1000, 1),
        "p99_ms": round(lat[int(0.99 * (len(lat) - 1))] * 1000, 1),
    }


def run(record: bool, seconds: float, concurrency: int, env: dict) -> dict:
    port = free_port()
    saved = dict(os.environ)
    os.environ.update(env)
    os.environ["TBX_RECORD_GAPS"] = "1" if record else ""
    try:
        proc = start_server("explainer.api.app:app_factory", port, factory=True, app_dir=HERE.parent.parent, cpus=None)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    try:
        return asyncio.run(drive(f"http://127.0.0.1:{port}/v1/explain", seconds, concurrency))
    finally:
        proc.send_signal(signal.SIGINT)  # a clean shutdown: the lifespan flushes the recorder
        proc.wait(timeout=120)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--postgres", help="a postgresql:// URL: record there instead of SQLite")
    ap.add_argument("--record", action="store_true", help="store the figures for the README (tests/bench/results.py)")
    args = ap.parse_args()
    from explainer.surfaces.gaps import Store

    with tempfile.TemporaryDirectory() as tmp:
        env = {"TBX_GAPS_PATH": str(Path(tmp) / "gaps.sqlite"), "TBX_GAPS_URL": args.postgres or ""}
        if args.postgres:
            import psycopg

            with psycopg.connect(args.postgres, autocommit=True) as con:
                con.execute("drop table if exists gaps")
        off = run(False, args.seconds, args.concurrency, env)
        on = run(True, args.seconds, args.concurrency, env)
        store = Store(url=args.postgres or "", path=env["TBX_GAPS_PATH"])
        rows = store.rows()
        counted = sum(r["count"] for r in rows)
        store.close()
    print(
        f"store: {'PostgreSQL' if args.postgres else 'SQLite'}; {args.concurrency} connections, {args.seconds:g} s each"
    )
    print(f"recording off: {off}")
    print(f"recording on:  {on}")
    print(
        f"added p50: {on['p50_ms'] - off['p50_ms']:+.1f} ms; gap requests answered {on['gaps_answered']}, "
        f"counted in the store {counted} ({len(rows)} signatures): {'exactly once each' if counted == on['gaps_answered'] else 'MISMATCH'}"
    )
    if args.record:
        from results import record

        store_name = "PostgreSQL" if args.postgres else "SQLite"
        record(
            f"gaps_{store_name.lower()}",
            f"gap log on ({store_name}), {args.concurrency} connections, {args.seconds:g} s: errors, gaps counted",
            f"{on['errors']} errors; {counted} of {on['gaps_answered']} counted "
            f"{'exactly once' if counted == on['gaps_answered'] else '(MISMATCH)'}; p50 {on['p50_ms'] - off['p50_ms']:+.1f} ms",
        )
    return 0 if counted == on["gaps_answered"] and on["errors"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
