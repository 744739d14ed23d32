"""The API server's memory under a stream of distinct pastes: ``POST /v1/explain`` answered for N
pastes that are all different (the bench pastes with the user's paths and a few numbers changed per
request, as real users' pastes differ), its resident set read from /proc at marks along the way.

    python tests/bench/bench_api_rss.py [--requests 20000] [--connections 16] [--record]

What it shows: the server's caches (the long tail's decoded rows, the rendered HTML of entries'
pieces, the parsed code lines) fill and then stop growing; the figure is the growth from the first
thousand requests to the last (goal: within 10 %). Every answer must be a 200 with an explanation.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

from bench_api import free_port, start_server  # noqa: E402

_USER_FILE = re.compile(r'File "([^"]*?)([^"/\\]+\.py)"')
_NUMBER = re.compile(r"\b(\d{2,4})\b")


def distinct(texts: list[str], i: int, rnd: random.Random) -> bytes:
    text = _USER_FILE.sub(lambda m: f'File "/home/u{i}/proj{i % 97}/{m.group(2)}"', texts[i % len(texts)])
    text = _NUMBER.sub(lambda m: str(int(m.group(1)) + rnd.randrange(1, 9)), text, count=3)
    return json.dumps({"text": text, "lang": "en"}).encode()


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


async def drive(port: int, pid: int, total: int, connections: int, marks: list[int]) -> dict[int, float]:
    rows = [json.loads(l)["text"] for l in (ROOT / "data" / "bench_pastes.jsonl").read_text().splitlines() if l]
    rnd = random.Random(5)
    sent, seen = 0, {}
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", timeout=60, limits=httpx.Limits(max_connections=connections)
    ) as client:

        async def one() -> None:
            nonlocal sent
            while sent < total:
                i, sent = sent, sent + 1
                r = await client.post(
                    "/v1/explain", content=distinct(rows, i, rnd), headers={"content-type": "application/json"}
                )
                if r.status_code != 200 or "matches" not in r.json():
                    raise SystemExit(f"request {i}: {r.status_code} {r.text[:200]}")
                if i + 1 in marks:
                    seen[i + 1] = rss_mb(pid)

        await asyncio.gather(*(one() for _ in range(connections)))
    return seen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=20_000)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--record", action="store_true", help="store the figure for the README (tests/bench/results.py)")
    args = ap.parse_args()
    port = free_port()
    proc = start_server("explainer.api.app:app_factory", port, factory=True, app_dir=ROOT, cpus=None)
    try:
        start = rss_mb(proc.pid)
        marks = sorted({1000, args.requests // 4, args.requests // 2, args.requests * 3 // 4, args.requests})
        seen = asyncio.run(drive(port, proc.pid, args.requests, args.connections, marks))
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    first, last = seen[marks[0]], seen[marks[-1]]
    growth = (last - first) / first
    print(f"RSS at start {start:.0f} MB; " + ", ".join(f"after {k}: {v:.0f} MB" for k, v in sorted(seen.items())))
    print(f"growth from {marks[0]} to {marks[-1]} distinct requests: {growth:+.1%} (goal within 10 %)")
    if args.record:
        from results import record

        record(
            "api_rss",
            f"API server memory, {args.requests} distinct pastes (paths and numbers changed), {args.connections} connections",
            f"RSS {first:.0f} MB after {marks[0]} requests, {last:.0f} MB after {marks[-1]} ({growth:+.1%}, goal within 10 %)",
        )


if __name__ == "__main__":
    main()
