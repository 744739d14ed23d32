"""The project's failing scripts, end to end (issue 13, item 7; harness: ``tests/fixscripts.py``).

Each script of ``tests/fix_scripts/`` is run, its real traceback explained, the first fix that applies
put at its failing line, and the script run again: it must now reach its end, its assertions of the
intended result included. The figure is in the README (``python tests/bench/fix_scripts.py --markdown``).

Every script runs twice in its own interpreter (torch imported each time), two at a time: the module
takes minutes (about 10 on two busy cores), and all its tests share one run of the set. To try a few:
``TBX_FIX_SCRIPTS=attention_merge_heads,mlp_image_batch pytest tests/test_fix_scripts.py``.
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from tests.fixscripts import GOAL, expected_id, pass_rate, run_all, scripts  # noqa: E402

# the whole set runs in the first test's setup: more than the project's default 300 s per test
pytestmark = [pytest.mark.timeout(1800), pytest.mark.slow]

ALL = scripts()
_ONLY = {n.strip().removesuffix(".py") for n in os.environ.get("TBX_FIX_SCRIPTS", "").split(",") if n.strip()}
SCRIPTS = [p for p in ALL if p.stem in _ONLY] if _ONLY else ALL
IDS = [p.stem for p in SCRIPTS]


@pytest.fixture(scope="module")
def results(index):
    return {r["script"]: r for r in run_all(index, SCRIPTS, jobs=2)}


def test_the_set_is_large_and_varied():
    assert len(ALL) >= 32
    expected = [expected_id(p) for p in ALL]
    assert None not in expected, [p.name for p, e in zip(ALL, expected) if e is None]
    assert len(set(expected)) >= 20


def test_expected_ids_are_entries(index):
    unknown = sorted({expected_id(p) for p in ALL} - set(index.entries))
    assert not unknown, f"'# expect:' names no entry of the knowledge base: {unknown}"


@pytest.mark.parametrize("path", SCRIPTS, ids=IDS)
def test_script(results, path):
    r = results[path.name]
    assert r["top"] is not None, r["reason"]
    assert r["id_ok"], r["reason"]
    assert r["first_fix_parses"], f"the first fix's code does not parse: {r['fixes']}"
    assert r["codes_parse"], f"a fix's code does not parse: {[f for f in r['fixes'] if not f['parses']]}"
    assert not r["placeholders"], f"placeholders left in a fix's code: {r['placeholders']}"


def test_pass_rate(results):
    if _ONLY:
        pytest.skip("TBX_FIX_SCRIPTS runs part of the set: the pass rate is over all of it")
    rs = list(results.values())
    failing = "\n".join(f"{r['script']}: {r['reason']}" for r in rs if not r["passed"])
    # measured 45/50 on 2026-12-01 (41/50 before rewrites could 'target' another line of the user's
    # file); the five left need a change the paste cannot locate: the carried RNN state's name, a
    # second in-place init line, a layer's size in __init__, the collate_fn of a tuple dataset, the
    # parameters frozen by a loop. The goal is the floor.
    floor = GOAL
    assert pass_rate(rs) >= floor, f"{sum(r['passed'] for r in rs)}/{len(rs)} pass (goal {GOAL:.0%}):\n{failing}"
