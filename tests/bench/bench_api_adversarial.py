"""Load benchmark with adversarial pastes mixed in: does one crafted paste slow everybody down?

    python tests/bench/bench_api_adversarial.py [--seconds 10] [--concurrency 64] [--pastes data/bench_pastes.jsonl]

One API server (``explainer.api.app:app_factory``, one uvicorn worker, as ``tests/bench/bench_api.py`` starts
it); two runs of ``--concurrency`` connections: the real tracebacks alone (clean), then the same
with one request in 20 replaced by an adversarial paste (mixed): the shapes that took seconds before
the parser, normaliser and patterns were made linear (a message followed by a long run of spaces,
an unclosed tuple, a rich border line of spaces, lines of tabs, a near miss of a long pattern, a
notebook's cut JSON), and every shape of ``tests/bench/shapes.py`` at 300 000 characters (one
line of that length, 150 000 short lines, each decoder's JSON, ...). Meanwhile a separate process asks ``/healthz`` every 50 ms. Prints errors,
p50 and p99 of each run, and the worst ``/healthz`` latency during the mixed run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

from bench_api import drive, free_port, start_server  # noqa: E402
from shapes import shapes  # noqa: E402

ADVERSARIAL = [
    "RuntimeError: element" + " " * 1000 + "x",
    "RuntimeError: shape mismatch (" + "1, " * 40,
    "RuntimeError: expected (" + "1, " * 400 + "1)"[:800],
    "│" + " " * 2000 + "x\nRuntimeError: boom",
    ("\t" * 900 + "x\n") * 50 + "RuntimeError: boom",
    "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: ["
    + "of " * 300,
    '{"ename": "RuntimeError", "traceback": [' + '"\\"' * 3000,
    "Traceback (most recent call last):\n" + '  File "x.py", line 1, in f\n' * 200 + "RuntimeError: " + "(0, " * 200,
]


PROBE = """
import sys, time, httpx
url, seconds = sys.argv[1], float(sys.argv[2])
end = time.monotonic() + seconds
with httpx.Client(timeout=30) as client:
    while time.monotonic() < end:
        t0 = time.perf_counter()
        try:
            ok = client.get(url).status_code == 200
        except httpx.HTTPError:
            ok = False
        print(time.perf_counter() - t0 if ok else "inf", flush=True)
        time.sleep(0.05)
"""


def healthz_probe(url: str, seconds: float) -> subprocess.Popen:
    """Ask /healthz every 50 ms from a process of its own: in the load generator's process its
    latency would include waiting for that process's own lock (the GIL), not the server's."""
    return subprocess.Popen([sys.executable, "-c", PROBE, url, str(seconds)], stdout=subprocess.PIPE, text=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--record", action="store_true", help="store the figures for the README (tests/bench/results.py)")
    ap.add_argument("--pastes", type=Path, default=ROOT / "data" / "bench_pastes.jsonl")
    args = ap.parse_args()

    rows = [json.loads(line) for line in args.pastes.read_text(encoding="utf-8").splitlines() if line.strip()]
    clean = [
        {"id": r["id"], "variant": r.get("format", "?"), "body": json.dumps({"text": r["text"], "lang": "en"}).encode()}
        for r in rows
    ]
    bodies = [json.dumps({"text": t, "lang": "en"}, ensure_ascii=False).encode() for t in ADVERSARIAL]
    bodies += [
        json.dumps({"text": t, "lang": "en"}, ensure_ascii=False).encode("utf-8", "replace") for t in shapes().values()
    ]
    bad = [{"id": "adversarial", "variant": "adversarial", "body": b} for b in bodies if len(b) <= 1 << 20]
    mixed = [bad[(i // 20) % len(bad)] if i % 20 == 19 else p for i, p in enumerate(clean)]
    print(
        f"{len(clean)} real tracebacks; mixed: {sum(p is not None and p['id'] == 'adversarial' for p in mixed)} adversarial in {len(mixed)}"
    )

    port = free_port()
    proc = start_server("explainer.api.app:app_factory", port, factory=True, app_dir=ROOT, cpus=None)
    url = f"http://127.0.0.1:{port}"
    try:
        import httpx

        for p in bad:  # each adversarial paste alone, answered and timed
            t0 = time.perf_counter()
            r = httpx.post(
                f"{url}/v1/explain", content=p["body"], headers={"content-type": "application/json"}, timeout=60
            )
            print(
                f"  adversarial alone: {r.status_code} in {(time.perf_counter() - t0) * 1000:.1f} ms, partial={r.json().get('partial', False)}"
            )
        results = {}
        health: dict[str, list[float]] = {}
        for name, payloads in (("clean", clean), ("mixed", mixed)):
            probe = healthz_probe(f"{url}/healthz", args.seconds)
            results[name] = asyncio.run(
                drive(
                    f"{url}/v1/explain",
                    payloads,
                    seconds=args.seconds,
                    concurrency=args.concurrency,
                    check_api=True,
                    server_pid=proc.pid,
                )
            )
            out, _ = probe.communicate(timeout=60)
            health[name] = [float(v) for v in out.split()]
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    print(
        f"\n{'':<8}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}{'healthz max ms':>16}{'healthz p50 ms':>16}"
        f"   ({args.concurrency} connections, {args.seconds:g} s each)"
    )
    for name, r in results.items():
        h = sorted(health[name])
        print(
            f"{name:<8}{r['rps']:>9}{r['p50_ms']:>9}{r['p99_ms']:>9}{r['errors']:>8}"
            f"{h[-1] * 1000 if h else float('nan'):>16.1f}{h[len(h) // 2] * 1000 if h else float('nan'):>16.1f}"
        )
    ratio = results["mixed"]["p99_ms"] / results["clean"]["p99_ms"]
    throughput = results["mixed"]["rps"] / results["clean"]["rps"]
    print(
        f"p99 mixed / clean: {ratio:.2f}  (goal <= 2);  req/s mixed / clean: {throughput:.2f} (goal >= 0.5);  "
        f"errors: {results['clean']['errors'] + results['mixed']['errors']} (goal 0)"
    )
    if args.record:
        from results import record

        worst = max(health["mixed"], default=float("nan")) * 1000
        record(
            "api_adversarial",
            f"API, {args.concurrency} connections, {args.seconds:g} s each: clean vs 1 request in 20 adversarial",
            f"errors {results['clean']['errors']} / {results['mixed']['errors']}; req/s {results['clean']['rps']} / "
            f"{results['mixed']['rps']} (ratio {throughput:.2f}, goal 0.5); p99 {results['clean']['p99_ms']} / "
            f"{results['mixed']['p99_ms']} ms (ratio {ratio:.2f}, goal 2); `/healthz` worst {worst:.1f} ms (goal 50)",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
