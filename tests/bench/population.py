"""What the tool does on real pastes sampled by community, not by error kind: the shared population
(``../shared/eval/population.jsonl``, when present) and the project's own samples
(``tests/fixtures/population_own*.jsonl``). Per set: abstention where no entry fits, the right entry
first where one does, confident wrong answers, and ``raised_by`` (right kind, wrong kind, none); for the
pastes labelled as the environment's or a library's, the right distribution named with no wrong entry.

Usage: python tests/bench/population.py [--misses] [--record] [FILES]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def _norm(name: str | None) -> str:
    return re.sub(r"[-_.]+", "-", (name or "").lower())


def measure(path: Path, index, misses: bool = False) -> dict:
    from explainer.match.explain import explain_text
    from explainer.render import answer_json

    c: dict[str, int] = dict.fromkeys(
        ("n", "none_n", "none_ok", "fit_n", "fit_ok", "wrong", "who_ok", "who_wrong", "who_none"), 0
    )
    by_kind: dict[str, list[int]] = {"environment": [0, 0], "library": [0, 0]}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        out = answer_json(explain_text(r["text"], index, budget=None), index)
        top = out["matches"][0]["id"] if out["matches"] else "none"
        want, also = r.get("expected_id", "none"), set(r.get("also_ok") or ())
        ok = top == want or top in also
        c["n"] += 1
        if want == "none":
            c["none_n"] += 1
            c["none_ok"] += top == "none" or top in also
        else:
            c["fit_n"] += 1
            c["fit_ok"] += ok
        c["wrong"] += top != "none" and not ok
        label, got = r.get("raised_by") or {}, out["raised_by"]
        if got["kind"] is None:
            c["who_none"] += 1
        elif got["kind"] == label.get("kind"):
            c["who_ok"] += 1
        else:
            c["who_wrong"] += 1
        kind = label.get("kind")
        if kind in by_kind:
            by_kind[kind][1] += 1
            right = got["kind"] == kind and _norm(got["library"]) == _norm(label.get("library"))
            by_kind[kind][0] += right and (top == "none" or ok)
        if misses and (not ok or got["kind"] not in (None, label.get("kind"))):
            print(f"  {r['id']}: entry {want} -> {top}; raised_by {label} -> {got}")
    c["env_ok"], c["env_n"] = by_kind["environment"]
    c["lib_ok"], c["lib_n"] = by_kind["library"]
    return c


def line(name: str, c: dict) -> str:
    return (
        f"{name} ({c['n']}): abstain {c['none_ok']}/{c['none_n']}, top-1 {c['fit_ok']}/{c['fit_n']}, "
        f"confident wrong {c['wrong']}; raised_by right/wrong/none {c['who_ok']}/{c['who_wrong']}/{c['who_none']}; "
        f"environment {c['env_ok']}/{c['env_n']}, library {c['lib_ok']}/{c['lib_n']}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--misses", action="store_true")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    from explainer.knowledge.index import open_index

    files = args.files or [
        p
        for p in [
            ROOT.parent / "shared" / "eval" / "population.jsonl",
            *sorted((ROOT / "tests" / "fixtures").glob("population_own*.jsonl")),
        ]
        if p.exists()
    ]
    index = open_index()
    lines = []
    for path in files:
        c = measure(path, index, args.misses)
        lines.append(line(path.name, c))
        print(lines[-1])
    if args.record:
        from results import record

        record("population", "real pastes sampled by community (shared population and own samples)", "; ".join(lines))


if __name__ == "__main__":
    main()
