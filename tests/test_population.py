"""The project's own population samples (``tests/fixtures/population_own*.jsonl``): real pastes gathered
by community, not by error kind, from public issue threads (how: ``tests/fixtures/POPULATION_OWN*.md``),
labelled before the tool ran. What the tool meets in the wild, where a confident wrong answer is the
worst outcome: floors on abstaining where no entry fits, on the right entry where one does, and on
``raised_by`` naming the wrong kind of source. The floors are the figures measured when each set was
added or last moved (the sets' notes say which labels are arguable); they guard against regressions."""

from __future__ import annotations

import json

import pytest

from explainer.knowledge.evaluate import evaluate
from explainer.match.explain import explain_text
from explainer.render import answer_json

from .conftest import FIXTURES

# set -> (pastes no entry fits that abstain, pastes an entry fits answered top-1, raised_by of another kind)
FLOORS = {
    "population_own.jsonl": (26, 16, 3),
    "population_own2.jsonl": (45, 26, 10),
    "population_own3.jsonl": (50, 27, 8),
    "population_own4.jsonl": (51, 28, 4),
    "population_own5.jsonl": (43, 26, 6),
    "population_own6.jsonl": (34, 19, 7),
    "population_own7.jsonl": (14, 10, 4),
    "population_own8.jsonl": (55, 17, 11),
    "population_own9.jsonl": (36, 16, 7),
    "population_own10.jsonl": (35, 12, 7),
    "population_own11.jsonl": (61, 28, 4),
    "population_own12.jsonl": (70, 28, 9),
}


@pytest.fixture(scope="module")
def index():
    from explainer.knowledge.index import open_index

    return open_index()


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_own_population_sample_keeps_its_floors(index, name):
    path = FIXTURES / name
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    abstain_floor, top1_floor, wrong_ceiling = FLOORS[name]
    rep = evaluate(path, index)
    assert rep["n"] == len(rows)
    none_ok = round(rep["none_abstain"] * rep["none_n"])
    top1_ok = round(rep["covered_top1"] * rep["covered_n"])
    misses = "\n".join(f"{m['id']}: want {m['expected_id']} got {m['got']} {m['score']}" for m in rep["misses"])
    assert none_ok >= abstain_floor, f"{none_ok} of {rep['none_n']} abstain\n{misses}"
    assert top1_ok >= top1_floor, f"{top1_ok} of {rep['covered_n']} top-1\n{misses}"
    wrong = []
    for r in rows:
        got = answer_json(explain_text(r["text"], index, budget=None), index)["raised_by"]["kind"]
        if got is not None and got != r["raised_by"]["kind"]:
            wrong.append(f"{r['id']}: want {r['raised_by']['kind']} got {got}")
    assert len(wrong) <= wrong_ceiling, "\n".join(wrong)


def test_own_population_samples_are_documented_and_distinct():
    """Each sample has its notes, ids are unique, and no thread is in two samples."""
    seen: dict[str, str] = {}
    for name in FLOORS:
        doc = FIXTURES / name.replace("population_own", "POPULATION_OWN").replace(".jsonl", ".md")
        assert doc.exists(), doc
        for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            assert (
                r["text"]
                and r["expected_id"]
                and r["raised_by"]["kind"] in ("torch", "library", "environment", "python")
            )
            key = r["source"].lower().rstrip("/")
            assert key not in seen, f"{key} in {name} and {seen[key]}"
            seen[key] = name
