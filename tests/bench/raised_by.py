"""How often the answer's ``raised_by`` agrees with a labelled corpus's (``raised_by`` on each line, as
in ../shared/eval/population.jsonl): the kind, and for library/environment the distribution (by
normalised name). Also counts confident wrong "who" (a kind given that differs from the label).

Usage: python tests/bench/raised_by.py CORPUS.jsonl [--misses]
"""

from __future__ import annotations

import argparse
import collections
import json
import re


def _norm(name: str | None) -> str:
    return re.sub(r"[-_.]+", "-", (name or "").lower())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--misses", action="store_true")
    args = ap.parse_args()
    from explainer.knowledge.index import open_index
    from explainer.match.explain import explain_text
    from explainer.render import answer_json

    index = open_index()
    rows = [json.loads(line) for line in open(args.corpus, encoding="utf-8") if line.strip()]
    rows = [r for r in rows if r.get("raised_by")]
    stats: collections.Counter = collections.Counter()
    for r in rows:
        want = r["raised_by"]
        got = answer_json(explain_text(r["text"], index), index)["raised_by"]
        stats["n"] += 1
        if got["kind"] is None:
            stats["none"] += 1
        elif got["kind"] == want["kind"]:
            stats["kind_ok"] += 1
            if want["kind"] in ("library", "environment"):
                stats["lib_n"] += 1
                stats["lib_ok"] += _norm(got["library"]) == _norm(want["library"])
        else:
            stats["kind_wrong"] += 1
        if (
            args.misses
            and got["kind"] is not None
            and (got["kind"], _norm(got["library"]))
            != (
                want["kind"],
                _norm(want["library"]) if want["kind"] in ("library", "environment") else "",
            )
        ):
            print(f"{r.get('id')}: want {want} got {got}")
    n = stats["n"]
    print(
        f"n {n}: kind right {stats['kind_ok']} ({stats['kind_ok'] / n:.1%}), wrong {stats['kind_wrong']} "
        f"({stats['kind_wrong'] / n:.1%}), none {stats['none']}; library right {stats['lib_ok']} of {stats['lib_n']}"
    )


if __name__ == "__main__":
    main()
