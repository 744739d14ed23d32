"""Every paste shape of ``tests/bench/shapes.py`` through ``tbx explain --json`` (a new process each,
as a user runs it) and in-process (CPU time of the explanation alone): the end-to-end budget.

    python tests/bench/budget_sweep.py [--runs 3] [--record]

Prints each shape's median wall time through the CLI, the in-process CPU time, and the slowest of
each; the goal is every shape at most 250 ms through the CLI on a 2-core machine.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from explainer.knowledge.index import open_index  # noqa: E402
from explainer.match.explain import explain_text  # noqa: E402
from tests.bench.shapes import shapes  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--record", action="store_true", help="store the figures for the README (tests/bench/results.py)")
    args = ap.parse_args()
    index = open_index()
    explain_text("RuntimeError: warm-up", index)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in shapes().items():
            path = Path(tmp) / "paste.txt"
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
            cli = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                out = subprocess.run(
                    [sys.executable, "-m", "explainer", "explain", "--json", str(path)], capture_output=True, cwd=ROOT
                )
                cli.append(time.perf_counter() - t0)
                assert out.returncode in (0, 1, 2) and b"Traceback" not in out.stderr, (name, out.stderr[-500:])
            cpu = []
            for _ in range(args.runs):
                t0 = time.thread_time()
                explain_text(text, index)
                cpu.append(time.thread_time() - t0)
            rows.append((name, statistics.median(cli), min(cpu)))
            print(f"{name:36} cli {rows[-1][1] * 1000:7.1f} ms   in-process {rows[-1][2] * 1000:7.1f} ms", flush=True)
    worst_cli = max(rows, key=lambda r: r[1])
    worst_cpu = max(rows, key=lambda r: r[2])
    print(
        f"{len(rows)} shapes: slowest through the CLI {worst_cli[1] * 1000:.1f} ms ({worst_cli[0]}), "
        f"in-process {worst_cpu[2] * 1000:.1f} ms ({worst_cpu[0]})"
    )
    if args.record:
        sys.path.insert(0, str(HERE))
        from results import record

        record(
            "budget_sweep",
            f"budget: {len(rows)} paste shapes at the size limit through tbx explain --json (median of {args.runs})",
            f"slowest {worst_cli[1] * 1000:.0f} ms ({worst_cli[0]}); in-process slowest {worst_cpu[2] * 1000:.1f} ms",
        )
    return 0 if worst_cli[1] <= 0.25 else 1


if __name__ == "__main__":
    raise SystemExit(main())
