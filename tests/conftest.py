from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KB = ROOT / "kb"
SHARED = ROOT.parent / "shared"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def needs_shared(*parts: str) -> Path:
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs ../shared/{'/'.join(parts)} (present in CI, absent on a user's machine)")
    return path


@pytest.fixture(scope="session", autouse=True)
def _long_tail_compiled():
    """The long tail's SQLite files compiled from the checkout's data files, as ``open_index`` does on a
    fresh clone's first command. An explanation never compiles them (no request waits seconds for it),
    so without this a test that names raise sites passes or fails by whether an earlier test in the
    shuffled order happened to open the real index first."""
    from explainer.knowledge.index import _compile_longtail

    _compile_longtail()


@pytest.fixture(scope="session")
def index(tmp_path_factory):
    """The real knowledge base, built once into a temporary index."""
    from explainer.knowledge.index import Index, build_index

    out = tmp_path_factory.mktemp("index") / "index.sqlite"
    build_index(KB, out)
    return Index(out)


def read_cases(path: Path) -> list[tuple[str, str, dict]]:
    """Fixture files: '=== title' opens a case, '--- paste' and '--- expect' (JSON) follow."""
    cases, title, section, buf = [], None, None, {}
    current: list[str] = []

    def flush():
        if title is not None:
            buf[section] = "\n".join(current)
            cases.append((title, buf.get("paste", "").strip("\n"), json.loads(buf.get("expect", "{}"))))

    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.startswith("=== "):
            flush()
            title, section, buf, current = line[4:].strip(), None, {}, []
        elif line in ("--- paste", "--- expect"):
            if section:
                buf[section] = "\n".join(current)
            section, current = line[4:], []
        else:
            current.append(line)
    flush()
    return cases


def pytest_collection_modifyitems(config, items):
    """``TBX_TEST_SHUFFLE=<seed>`` runs the tests in an order shuffled by that seed (the same on every
    xdist worker, which must collect the same order): a test that passes only after, or only without,
    another one shows up. ``.ci/run`` runs the quick loop once this way. (Shuffled across modules, the
    whole suite rebuilt module-scoped fixtures at every switch and ran for hours.)"""
    import os
    import random

    seed = os.environ.get("TBX_TEST_SHUFFLE")
    if seed:
        # the modules in a shuffled order, and the tests in each: a module's tests stay together, so
        # a module-scoped fixture (the kb attack's takes minutes) is built once, not at every switch
        rnd = random.Random(seed)
        modules: dict[str, list] = {}
        for item in items:
            modules.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
        groups = list(modules.values())
        rnd.shuffle(groups)
        for group in groups:
            rnd.shuffle(group)
        items[:] = [item for group in groups for item in group]
