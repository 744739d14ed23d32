"""The project's failing scripts run end to end: does the first applicable fix make them pass?

    python tests/bench/fix_scripts.py [--set first|second] [--jobs N] [--markdown] [NAME ...]

For each script of ``tests/fix_scripts/``: run it, explain its real traceback, put the first fix
that applies at its failing line, run it again (see ``tests/fixscripts.py``). Prints a table
(script, expected entry, top entry, first fix, applied, passed, why not) and the pass rate;
``--markdown`` prints one line for the README instead.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fixscripts import (  # noqa: E402
    GOAL,
    GOAL_ELSEWHERE,
    GOAL_HERE,
    SETS,
    build_index,
    pass_rate,
    run_all,
    scripts,
)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="only these scripts (file names, with or without .py)")
    ap.add_argument("--jobs", type=int, default=2, help="scripts run at a time (default 2)")
    ap.add_argument("--set", choices=sorted(SETS), default="first", help="which set of scripts (default first)")
    ap.add_argument("--markdown", action="store_true", help="print the README line only")
    ap.add_argument("--record", action="store_true", help="store the figures for the README (tests/bench/results.py)")
    ap.add_argument("--reasons", action="store_true", help="print why each failing script fails, in full")
    args = ap.parse_args(argv)

    folder = SETS[args.set]
    paths = scripts(folder)
    if args.names:
        wanted = {n if n.endswith(".py") else n + ".py" for n in args.names}
        paths = [p for p in paths if p.name in wanted]
        missing = wanted - {p.name for p in paths}
        if missing:
            print(f"no such script in {folder}: {', '.join(sorted(missing))}", file=sys.stderr)
            return 2
    started = time.perf_counter()
    index = build_index()
    results = run_all(index, paths, jobs=args.jobs)
    took = time.perf_counter() - started
    n, m = sum(r["passed"] for r in results), len(results)
    ids = sum(r["id_ok"] for r in results)
    applied = sum(r["applied"] for r in results)
    bad_code = sum(not r["codes_parse"] for r in results)
    left = sum(bool(r["placeholders"]) for r in results)
    entries = len({r["expected"] for r in results})
    by_change = {
        c: (sum(r["passed"] for r in results if r["change"] == c), sum(r["change"] == c for r in results))
        for c in ("here", "elsewhere")
    }
    split = (
        f"; fix on the failing line {by_change['here'][0]}/{by_change['here'][1]} ({100 * pass_rate(results, 'here'):.0f} %, goal {100 * GOAL_HERE:.0f} %),"
        f" elsewhere {by_change['elsewhere'][0]}/{by_change['elsewhere'][1]} ({100 * pass_rate(results, 'elsewhere'):.0f} %, goal {100 * GOAL_ELSEWHERE:.0f} %)"
        if by_change["here"][1] or by_change["elsewhere"][1]
        else ""
    )
    safe_wrong = [(r["script"], f) for r in results for f in r["safe_wrong"]]
    # the first set's goal is over all of it; the second set's goals are by where the fix belongs
    overall_goal = f", goal {100 * GOAL:.0f} %" if args.set == "first" else ""
    if args.record:
        from results import record

        record(
            "fix_scripts" if args.set == "first" else f"fix_scripts_{args.set}",
            f"failing-scripts {args.set} set ({m} scripts, {entries} entries): right entry first / first applicable fix,"
            " written as `tbx fix --apply` writes it, makes it pass",
            f"{ids}/{m} / {n}/{m} ({100 * pass_rate(results):.0f} %{overall_goal}); a fix applies {applied}/{m}{split};"
            f" safe fixes silently wrong {len(safe_wrong)}",
        )
    if args.markdown:
        print(
            f"| project's failing scripts, {args.set} set ({m}, {entries} entries) | right entry first {ids}/{m}; "
            f"a fix applies {applied}/{m}; the first applicable fix makes {n}/{m} pass "
            f"({100 * pass_rate(results):.0f} %{overall_goal}); every fix's code parses: "
            f"{'yes' if not bad_code else f'no ({bad_code} scripts)'}; placeholders left: {left}{split}; "
            f"safe fixes silently wrong: {len(safe_wrong)} |"
        )
        return 0
    cols = ("script", "expected", "top id", "change", "first fix", "level", "applied", "passed")
    rows = [
        (
            r["script"][:-3],
            r["expected"] or "?",
            r["top"] if r["top"] != r["expected"] else "=",
            r["change"] or "-",
            r["fix"] or "-",
            r["applicability"] or "-",
            "yes" if r["applied"] else "no",
            "PASS" if r["passed"] else "fail",
        )
        for r in results
    ]
    widths = [max(len(c), *(len(str(row[i])) for row in rows)) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(row, widths)))
    print()
    for r in results:
        if not r["passed"]:
            reason = r["reason"] if args.reasons else r["reason"][:220]
            print(f"- {r['script']}: {reason}")
        if not r["codes_parse"] or r["placeholders"]:
            print(f"- {r['script']}: fix code that does not parse or keeps placeholders: {r['fixes']}")
    for script, fix in safe_wrong:
        print(f"- {script}: the safe fix {fix} runs and leaves the script failing its assertions")
    print()
    print(
        f"right entry first: {ids}/{m}; a fix applies: {applied}/{m}; passed: {n}/{m} "
        f"({100 * pass_rate(results):.1f} %{overall_goal}){split}; safe fixes silently wrong: "
        f"{len(safe_wrong)}; over {entries} entries, in {took:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
