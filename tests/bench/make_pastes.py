"""Write data/bench_pastes.jsonl: real tracebacks raised by the knowledge base's own reproducers,
each turned into the paste formats of tests/formats.py. Needs torch (the test extra).

Usage: python tests/bench/make_pastes.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from formats import FORMATS  # noqa: E402

from explainer.knowledge.kb import read_all  # noqa: E402
from explainer.knowledge.verify import verify  # noqa: E402


def main() -> None:
    entries = [e for e in read_all(ROOT / "kb")]
    repros = []
    for e in entries:
        e.snippets = [s for s in e.snippets if s.role == "repro" and "raises" in s.options]
        repros.append(e)
    results = verify(repros, jobs=2)
    out = ROOT / "data" / "bench_pastes.jsonl"
    n = 0
    with out.open("w", encoding="utf-8") as f:
        for r in results:
            if r.status != "pass" or not r.paste:
                continue
            for name in ("standard", "flattened", "ipython8", "commentary_zh", "last_line", "rank_prefixed"):
                f.write(
                    json.dumps({"id": r.id, "format": name, "text": FORMATS[name](r.paste)}, ensure_ascii=False) + "\n"
                )
                n += 1
    print(f"wrote {n} pastes from {sum(r.status == 'pass' for r in results)} reproducers to {out}")


if __name__ == "__main__":
    main()
