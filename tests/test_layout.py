"""The layout shows the pipeline: no import cycle, no import up the stages (tests/import_graph.py)."""

from __future__ import annotations

import subprocess
import sys

from .conftest import ROOT


def test_imports_flow_one_way():
    out = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "import_graph.py")], capture_output=True, text=True, timeout=60
    )
    print(out.stdout)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_graph_finds_a_cycle_and_an_upward_edge(monkeypatch):
    sys.path.insert(0, str(ROOT / "tests"))
    import import_graph as g

    graph = {"explainer.parse.a": {"explainer.render"}, "explainer.render": {"explainer.parse.a"}}
    assert g.cycles(graph) == [["explainer.parse.a", "explainer.render"]]
    assert g.upward(graph) == [("explainer.parse.a", "explainer.render")]
    assert g.stage("explainer.surfaces.cli") == "surfaces" and g.stage("explainer.textio") == "base"
    assert g.stage("explainer.api.app") == "api" and g.stage("explainer") == "face"


def test_the_answer_is_plain_data(index):
    """No index, connection or function in an answer: the renderer joins it with the entries."""
    import json

    from explainer.match.explain import explain_text

    answer = explain_text("RuntimeError: grad can be implicitly created only for scalar outputs", index)
    for name, value in answer._asdict().items():
        assert not callable(value) and "sqlite" not in type(value).__module__, name
    json.dumps([answer.parsed.as_json(), [c._asdict() for c in answer.candidates], list(answer.raised_at)])


def test_every_package_of_the_source_is_in_the_wheel():
    """pyproject.toml lists the packages a wheel carries: each folder of explainer/ with an __init__.py
    is listed (the render package was not, and only the slow wheel test found it)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "explainer").rglob("__init__.py")
        if "_data" not in p.parts and "__pycache__" not in p.parts
    }
    assert found - listed == set(), f"add to [tool.setuptools] packages: {sorted(found - listed)}"
    assert "explainer.api" in listed
