"""Golden files: what the parser and the matcher make of a fixed set of real pastes, so that a change
to either shows in review exactly what moved and why.

``tests/golden/matrix.jsonl`` holds, for the first standard-format paste of each entry in
``data/bench_pastes.jsonl`` (reproducers' real tracebacks) turned into every paste format of
``tests/formats.py`` (the robustness matrix), the parsed model's essentials and the top three
candidates with their scores. A change that moves any of it fails here, listing what moved; after
reviewing that the moves are the intended ones, regenerate the file in the same commit:

    TBX_UPDATE_GOLDEN=1 python -m pytest -q -n 0 tests/test_golden.py
"""

from __future__ import annotations

import json
import os

from explainer.match.explain import explain_text

from .conftest import ROOT
from .formats import FORMATS

GOLDEN = ROOT / "tests" / "golden" / "matrix.jsonl"


def _cases() -> list[tuple[str, str]]:
    rows = [
        json.loads(line) for line in (ROOT / "data" / "bench_pastes.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    seen: dict[str, str] = {}
    for r in rows:
        if r["format"] == "standard" and r["id"] not in seen:
            seen[r["id"]] = r["text"]
    return sorted(seen.items())


def _snapshot(index) -> list[dict]:
    out = []
    for entry_id, text in _cases():
        for name, transform in FORMATS.items():
            answer = explain_text(transform(text), index, top=3, budget=None)  # no deadline: the same on any machine
            p = answer.parsed
            uf = p.user_frame
            out.append(
                {
                    "case": f"{entry_id}/{name}",
                    "type": p.exc_type,
                    "message": (p.message or "").split("\n")[0][:120],
                    "where": f"{uf.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{uf.line}" if uf else None,
                    "format": p.format,
                    "top": [[c.id, round(c.score, 2)] for c in answer.candidates[:3]],
                    "ambiguous": answer.ambiguous,
                }
            )
    return out


def _moved(before: dict, after: dict) -> str:
    keys = [k for k in after if before.get(k) != after.get(k)]
    return f"{after['case']}: " + "; ".join(f"{k} {before.get(k)!r} -> {after.get(k)!r}" for k in keys)


def test_the_parser_and_matcher_agree_with_the_golden_file(index):
    now = _snapshot(index)
    if os.environ.get("TBX_UPDATE_GOLDEN") == "1" or not GOLDEN.exists():
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in now), encoding="utf-8")
    golden = {r["case"]: r for r in map(json.loads, GOLDEN.read_text(encoding="utf-8").splitlines())}
    moved = [_moved(golden.get(r["case"], {}), r) for r in now if golden.get(r["case"]) != r]
    gone = sorted(set(golden) - {r["case"] for r in now})
    assert not moved and not gone, (
        f"{len(moved)} cases moved, {len(gone)} gone (review, then regenerate: TBX_UPDATE_GOLDEN=1):\n"
        + "\n".join(moved[:40] + [f"{g}: no longer a case" for g in gone[:10]])
    )
