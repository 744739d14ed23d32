"""The project's failing scripts, end to end (issue 13, item 7, and issue 37's second set; harness:
``tests/fixscripts.py``).

Each script of ``tests/fix_scripts/`` and ``tests/fix_scripts2/`` is run, its real traceback explained, the first fix that applies
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

from tests.fixscripts import (  # noqa: E402
    GOAL,
    GOAL_ELSEWHERE,
    GOAL_HERE,
    SCRIPTS2,
    change_at,
    expected_id,
    pass_rate,
    run_all,
    scripts,
)

# the whole set runs in the first test's setup: more than the project's default 300 s per test
pytestmark = [pytest.mark.timeout(2400), pytest.mark.slow]

ALL = scripts()
ALL2 = scripts(SCRIPTS2)
_ONLY = {n.strip().removesuffix(".py") for n in os.environ.get("TBX_FIX_SCRIPTS", "").split(",") if n.strip()}
SCRIPTS = [p for p in (*ALL, *ALL2) if p.stem in _ONLY] if _ONLY else [*ALL, *ALL2]
IDS = [f"{p.parent.name}/{p.stem}" for p in SCRIPTS]


def _key(path) -> str:
    return f"{path.parent.name}/{path.name}"


@pytest.fixture(scope="module")
def results(index):
    return {_key(p): r for p, r in zip(SCRIPTS, run_all(index, SCRIPTS, jobs=2))}


def test_the_sets_are_large_and_varied():
    assert len(ALL) >= 32
    expected = [expected_id(p) for p in (*ALL, *ALL2)]
    assert None not in expected, [p.name for p, e in zip((*ALL, *ALL2), expected) if e is None]
    assert len(set(expected[: len(ALL)])) >= 20
    # the second set (issue 37): at least 40 scripts, a quarter of them fixed on another line than the
    # failing one, and every script saying which
    assert len(ALL2) >= 40 and len({expected_id(p) for p in ALL2}) >= 25
    where = [change_at(p) for p in ALL2]
    assert None not in where, [p.name for p, w in zip(ALL2, where) if w is None]
    assert where.count("elsewhere") * 4 >= len(ALL2)


def test_expected_ids_are_entries(index):
    unknown = sorted({expected_id(p) for p in (*ALL, *ALL2)} - set(index.entries))
    assert not unknown, f"'# expect:' names no entry of the knowledge base: {unknown}"


@pytest.mark.parametrize("path", SCRIPTS, ids=IDS)
def test_script(results, path):
    r = results[_key(path)]
    assert r["top"] is not None, r["reason"]
    assert r["id_ok"], r["reason"]
    assert r["first_fix_parses"], f"the first fix's code does not parse: {r['fixes']}"
    assert r["codes_parse"], f"a fix's code does not parse: {[f for f in r['fixes'] if not f['parses']]}"
    assert not r["placeholders"], f"placeholders left in a fix's code: {r['placeholders']}"


def test_no_safe_fix_leaves_a_script_silently_wrong(results):
    wrong = [(name, f) for name, r in results.items() for f in r["safe_wrong"]]
    assert not wrong, f"fixes labelled safe that run and fail the script's assertions: {wrong}"


# measured 2026-12-07: 18/21 where the fix belongs on the failing line, 17/23 elsewhere (16/21 and 8/23
# before the def-use walk, keepdim, the @ operand, the collate_fn and the model's caller)
FLOOR_HERE, FLOOR_ELSEWHERE = 18 / 21, 17 / 23


def test_second_set_pass_rates(results):
    if _ONLY:
        pytest.skip("TBX_FIX_SCRIPTS runs part of the set: the pass rate is over all of it")
    rs = [r for name, r in results.items() if name.startswith(SCRIPTS2.name + "/")]
    failing = "\n".join(f"{r['script']} ({r['change']}): {r['reason']}" for r in rs if not r["passed"])
    here, elsewhere = pass_rate(rs, "here"), pass_rate(rs, "elsewhere")
    # the floors are what was measured (see the README); the goals are GOAL_HERE, GOAL_ELSEWHERE
    assert here >= FLOOR_HERE and elsewhere >= FLOOR_ELSEWHERE, (
        f"fix on the failing line {here:.0%} (goal {GOAL_HERE:.0%}), elsewhere {elsewhere:.0%} "
        f"(goal {GOAL_ELSEWHERE:.0%}):\n{failing}"
    )


def test_pass_rate(results):
    if _ONLY:
        pytest.skip("TBX_FIX_SCRIPTS runs part of the set: the pass rate is over all of it")
    rs = [r for name, r in results.items() if not name.startswith(SCRIPTS2.name + "/")]
    failing = "\n".join(f"{r['script']}: {r['reason']}" for r in rs if not r["passed"])
    # measured 47/50 on 2026-12-07 (the carried RNN state and the padding collate_fn now found by the def-use walk; 45/50 on
    # 2026-12-01, 41/50 before rewrites could 'target' another line of the user's file); the four left
    # need: a second in-place init line, a layer's size in __init__ behind a view, the collate_fn of a
    # dataset of tensors, the parameters frozen by a loop. The goal is the floor.
    floor = GOAL
    assert pass_rate(rs) >= floor, f"{sum(r['passed'] for r in rs)}/{len(rs)} pass (goal {GOAL:.0%}):\n{failing}"
