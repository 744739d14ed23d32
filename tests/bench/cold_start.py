"""Cold start of `tbx explain --json` against `python -c "import sqlite3, rapidfuzz"`, side by side.

Runs both commands alternately (so drift on a shared machine hits both alike) and prints the medians
and their ratio. ``--terminal``: `tbx explain` (no --json) on a pseudo-terminal, as a user types it,
so the answer is drawn with styles; the baseline runs on one too. Usage:
python tests/bench/cold_start.py [PASTE] [--runs N] [--terminal] [--corpus FILE.jsonl]

Measure an installed copy (``pip install .`` in a fresh venv, then that venv's python runs this
file from outside the checkout): a checkout run with ``PYTHONDONTWRITEBYTECODE`` set and stale
``.pyc`` files recompiles every changed module on every run.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def timed(cmd: list[str], stdin: bytes | None) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def timed_on_a_terminal(cmd: list[str], stdin: bytes | None = None) -> float:
    """``cmd`` with its output on a pseudo-terminal (what a user's shell gives it), read to the end;
    a paste goes in as a file argument (a terminal's stdin would be a prompt)."""
    import os
    import pty

    t = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(cmd[0], cmd)
    while True:
        try:
            if not os.read(fd, 65536):
                break
        except OSError:
            break
    os.waitpid(pid, 0)
    os.close(fd)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("paste", nargs="?", default=str(HERE.parent / "fixtures" / "pastes" / "backward_flat_windows.txt"))
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--record", action="store_true", help="store the figures for the README (tests/bench/results.py)")
    ap.add_argument("--terminal", action="store_true", help="`tbx explain` drawn on a pseudo-terminal, not --json")
    ap.add_argument(
        "--against", help="another checkout of the project: its `python -m explainer` is timed in the same loop"
    )
    ap.add_argument(
        "--corpus",
        help="a JSON-lines corpus (../shared/eval/dev.jsonl): each paste's cold start against the baseline, "
        "--runs alternating runs each (default 3); the share of pastes at most 1.5 times the baseline",
    )
    args = ap.parse_args()
    if args.corpus:
        corpus(args)
        return
    paste = Path(args.paste).read_bytes()
    script = Path(sys.executable).with_name("tbx")  # the console script, as users run it
    tbx = (
        [str(script), "explain", "--json"]
        if script.exists()
        else [sys.executable, "-m", "explainer", "explain", "--json"]
    )
    base = [sys.executable, "-c", "import sqlite3, rapidfuzz"]
    other = (
        [
            sys.executable,
            "-c",
            "import sys; sys.path.insert(0, sys.argv[1])\n"
            "try: from explainer.cli import main  # a checkout from before the stage packages\n"
            "except ImportError: from explainer.surfaces.cli import main\n"
            "sys.argv = ['tbx', 'explain', '--json']; sys.exit(main())",
            args.against,
        ]
        if args.against
        else None
    )
    run = timed
    if args.terminal:  # as typed in a terminal: the paste as a file argument, the answer drawn
        run = timed_on_a_terminal
        tbx = [c for c in tbx if c != "--json"] + [args.paste]
        paste = None
    run(tbx, paste)  # build the index if it is stale, warm the file cache
    if other:
        run(other, paste)
    a, b, c = [], [], []
    for _ in range(args.runs):
        b.append(run(base, None))
        a.append(run(tbx, paste))
        if other:
            c.append(run(other, paste))
    ma, mb = statistics.median(a), statistics.median(b)
    what = "tbx explain (terminal)" if args.terminal else "tbx explain --json"
    print(f"{what:23} median {ma * 1000:7.1f} ms  (runs {args.runs})")
    print(f"import sqlite3,rapidfuzz median {mb * 1000:7.1f} ms")
    print(f"ratio {ma / mb:.2f}")
    if other:
        mc = statistics.median(c)
        print(f"{args.against}: median {mc * 1000:7.1f} ms, ratio {mc / mb:.2f}; this one / that one {ma / mc:.2f}")
    if args.record:
        from results import record

        figure = f"{ma * 1000:.1f} ms vs {mb * 1000:.1f} ms (ratio {ma / mb:.2f}; goal {1.5 if args.terminal else 1.2})"
        if other:
            figure += f"; the other version {mc * 1000:.1f} ms (this one / that one {ma / mc:.2f})"
        shown = "`tbx explain` in a terminal (pty)" if args.terminal else "`tbx explain --json`"
        record(
            "cold_start_terminal" if args.terminal else "cold_start",
            f"cold start, installed with `pip install .` in a fresh venv, {shown} vs "
            f'`python -c "import sqlite3, rapidfuzz"`, alternating, {args.runs} runs',
            figure,
        )


def corpus(args) -> None:
    import json

    script = Path(sys.executable).with_name("tbx")
    tbx = (
        [str(script), "explain", "--json"]
        if script.exists()
        else [sys.executable, "-m", "explainer", "explain", "--json"]
    )
    base = [sys.executable, "-c", "import sqlite3, rapidfuzz"]
    rows = [json.loads(line) for line in Path(args.corpus).read_text(encoding="utf-8").splitlines() if line.strip()]
    runs = args.runs if args.runs != 21 else 3  # (21 is the single paste's default)
    timed(tbx, rows[0]["text"].encode())  # the index built if stale, the file cache warm
    ratios = []
    for r in rows:
        paste = r["text"].encode()
        a, b = [], []
        for _ in range(runs):
            b.append(timed(base, None))
            a.append(timed(tbx, paste))
        ratios.append(statistics.median(a) / statistics.median(b))
    within = sum(x <= 1.5 for x in ratios)
    print(
        f"{len(ratios)} pastes, {runs} alternating runs each: ratio median {statistics.median(ratios):.2f}, "
        f"p90 {statistics.quantiles(ratios, n=10)[-1]:.2f}, max {max(ratios):.2f}; "
        f"at most 1.5x the baseline: {within}/{len(ratios)} ({within / len(ratios):.0%}, goal 90%)"
    )
    if args.record:
        from results import record

        record(
            "cold_start_corpus",
            "cold start, installed with `pip install .` in a fresh venv, per real paste, `tbx explain --json` vs "
            f'`python -c "import sqlite3, rapidfuzz"`, '
            f"{Path(args.corpus).name} ({len(ratios)} pastes, {runs} alternating runs each)",
            f"ratio median {statistics.median(ratios):.2f}, p90 {statistics.quantiles(ratios, n=10)[-1]:.2f}; "
            f"{within}/{len(ratios)} at most 1.5x (goal 90%)",
        )


if __name__ == "__main__":
    main()
