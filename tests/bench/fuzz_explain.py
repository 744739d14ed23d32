"""Explain many mutated tracebacks (tests/fuzz.py) and report the slowest, with the real index.

    python tests/bench/fuzz_explain.py [COUNT] [--seed N]

Each answer is also encoded as the CLI and the API write it (JSON, UTF-8), so an exception anywhere,
output encoding included, counts. Prints the count, the exceptions (there must be none), how many
took over 50 ms and over 200 ms, how many were cut by the 200 ms budget (partial), and the five
slowest with their time measured again.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from explainer.knowledge.index import open_index  # noqa: E402
from explainer.match.explain import explain_text  # noqa: E402
from explainer.render.markdown import answer_json  # noqa: E402
from tests.fuzz import mutations  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("count", nargs="?", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--record", action="store_true", help="store the figures for the README (tests/bench/results.py)")
    args = ap.parse_args()
    index = open_index()
    explain_text("RuntimeError: warm-up", index)
    worst: list[tuple[float, int, str]] = []
    over, over_budget, partial, errors = 0, 0, 0, 0
    t_all = time.perf_counter()
    for i, text in enumerate(mutations(args.count, args.seed)):
        t0 = time.perf_counter()
        try:
            answer = explain_text(text, index)
            json.dumps(answer_json(answer, index), ensure_ascii=False).encode("utf-8")
        except Exception as exc:  # noqa: BLE001 - counted and shown
            errors += 1
            print(f"exception on input {i}: {type(exc).__name__}: {exc}"[:300])
            continue
        dt = time.perf_counter() - t0
        partial += answer.partial
        if dt > 0.05:
            # timed again: on a shared machine a pause of the process is not a slow input
            t1 = time.perf_counter()
            explain_text(text, index)
            dt = min(dt, time.perf_counter() - t1)
            over += dt > 0.05
            over_budget += dt > 0.2
        worst = sorted(worst + [(dt, i, text)], reverse=True)[:5]
        if (i + 1) % 10_000 == 0:
            print(f"{i + 1} done, worst {worst[0][0] * 1000:.1f} ms, over 50 ms: {over}", flush=True)
    print(
        f"{args.count} mutated tracebacks in {time.perf_counter() - t_all:.0f} s: {errors} exceptions, "
        f"{over} over 50 ms, {over_budget} over 200 ms, {partial} partial (budget reached)"
    )
    for dt, i, text in worst:
        print(f"  {dt * 1000:7.1f} ms  input {i}  {len(text)} chars  {text[:60]!r}")
    if args.record:
        from results import record

        record(
            "fuzz",
            f"fuzz: {args.count:,} mutated tracebacks explained".replace(",", " "),
            f"{errors} exceptions, {over} over 50 ms, {over_budget} over 200 ms, {partial} partial; "
            f"worst {worst[0][0] * 1000:.1f} ms",
        )
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
