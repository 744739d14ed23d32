"""How long the checks take: the quick loop, the full test suite and the whole knowledge base's
verification, each run once here and timed (wall clock), with their own summary lines.

    python tests/bench/suite_times.py [quick] [full] [verify] [--record]

With no names, all three (about 25 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNS = {
    "quick": (
        'quick loop, `python -m pytest -q -m "not slow"`',
        [sys.executable, "-m", "pytest", "-q", "-m", "not slow"],
    ),
    "full": ("full test suite, `python -m pytest -q` (README's test command)", [sys.executable, "-m", "pytest", "-q"]),
    "verify": (
        "`tbx verify --jobs 2`, the whole knowledge base",
        [sys.executable, "-m", "explainer", "verify", "--jobs", "2"],
    ),
}


def summary(name: str, out: str) -> str:
    """The run's own summary: pytest's last line, or verify's totals."""
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    if name == "verify":
        found = [ln for ln in lines if re.search(r"\d+ passed", ln)]
        return found[-1] if found else (lines[-1] if lines else "")
    found = [ln.strip("= ") for ln in lines if re.search(r"\d+ (passed|failed)", ln)]
    return found[-1] if found else (lines[-1] if lines else "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help=f"any of {', '.join(RUNS)} (default: all)")
    ap.add_argument("--record", action="store_true", help="store the figures for the README (tests/bench/results.py)")
    args = ap.parse_args()
    if unknown := [n for n in args.names if n not in RUNS]:
        ap.error(f"unknown run {unknown[0]!r}: choose from {', '.join(RUNS)}")
    failed = 0
    for name in args.names or list(RUNS):
        what, cmd = RUNS[name]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        took = time.perf_counter() - t0
        line = summary(name, proc.stdout + proc.stderr)
        minutes, seconds = divmod(round(took), 60)
        figure = f"{minutes} min {seconds:02d} s; {line}"
        print(f"{name}: exit {proc.returncode}, {figure}", flush=True)
        failed |= proc.returncode != 0
        if args.record and proc.returncode == 0:
            from results import record

            record(f"time_{name}", what, figure, argv=[sys.argv[0], name])
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
