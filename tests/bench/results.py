"""The README's table of figures, produced by the benchmark scripts instead of typed by hand.

Each script run with ``--record`` stores what it measured in ``tests/bench/results.json`` (one row
per figure: what was measured, the figure, the command that measured it, the date and the machine's
load average at the end); the README's table between ``<!-- figures:start -->`` and
``<!-- figures:end -->`` is this file rendered (``tests/test_cli.py`` checks that it is):

    python tests/bench/results.py --markdown     # print the table
    python tests/bench/results.py --write        # rewrite the README's table from results.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results.json"
README = HERE.parents[1] / "README.md"
START, END = "<!-- figures:start -->", "<!-- figures:end -->"


def load() -> dict[str, dict]:
    try:
        return json.loads(RESULTS.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def record(key: str, what: str, figure: str, argv: list[str] | None = None) -> None:
    """Store one figure under ``key`` (replacing the previous one), with the command that measured it."""
    args = [a for a in (sys.argv if argv is None else argv) if a != "--record"]
    script: Path | str = args[0]
    if args[0] != "-m":
        try:
            script = Path(args[0]).resolve().relative_to(HERE.parents[1])
        except ValueError:
            pass
    rows = load()
    rows[key] = {
        "what": what,
        "figure": figure,
        "command": " ".join(["python", str(script), *args[1:]]),
        "date": datetime.date.today().isoformat(),
        "load": round(os.getloadavg()[0], 1),
    }
    RESULTS.write_text(json.dumps(rows, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    print(f"recorded {key} in {RESULTS.name}")


def record_if_asked(key: str, what: str, figure: str, test: str) -> None:
    """From a test: record its measured figure when ``TBX_RECORD=1`` (the command shown runs that test)."""
    if os.environ.get("TBX_RECORD") == "1":
        record(key, what, figure, argv=["-m", "pytest", "-s", "-n", "0", test])


def markdown(rows: dict[str, dict] | None = None) -> str:
    rows = load() if rows is None else rows
    out = ["| what | figure | measured by | when (load average) |", "|---|---|---|---|"]
    for _key, r in sorted(rows.items()):
        out.append(f"| {r['what']} | {r['figure']} | `{r['command']}` | {r['date']} ({r['load']}) |")
    return "\n".join(out)


def readme_block() -> str:
    return f"{START}\n{markdown()}\n{END}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--markdown", action="store_true", help="print the table")
    ap.add_argument("--write", action="store_true", help="rewrite the README's table")
    args = ap.parse_args()
    if args.write:
        text = README.read_text(encoding="utf-8")
        head, sep, rest = text.partition(START)
        _, sep2, tail = rest.partition(END)
        if not sep or not sep2:
            print(f"README.md has no {START} ... {END} block", file=sys.stderr)
            return 1
        README.write_text(head + readme_block() + tail, encoding="utf-8")
        print("README.md: figures table rewritten")
    else:
        print(markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
