"""Raise sites of the libraries around torch (``data/libsites.jsonl.gz``): built from their wheels by
the long tail's extractor, looked up only when torch's own sources hold no site for the message."""

from __future__ import annotations

import zipfile

from explainer.knowledge.libsites_build import sites_of_wheel

SOURCE = """
class AutoThing:
    def load(self, key):
        if key not in self._mapping:
            raise KeyError(f"Unknown thing type {key}, check the release")
"""


def test_sites_come_from_the_wheels_python_files(tmp_path):
    whl = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr("demo/auto.py", SOURCE)
        z.writestr("demo/tests/test_auto.py", "raise ValueError('a test, not the library')")
        z.writestr("demo-1.0.dist-info/METADATA", "Name: demo")
    sites = sites_of_wheel(whl, "demo", "1.0")
    assert [(s["o"], s["v"], s["f"], s["fn"], s["c"]) for s in sites] == [
        ("demo", "1.0", "demo/auto.py", "AutoThing.load", "key not in self._mapping")
    ]


def _answer(text):
    from explainer.knowledge.index import open_index
    from explainer.match.explain import explain_text
    from explainer.render import answer_json

    index = open_index()
    return answer_json(explain_text(text, index, budget=None), index)


def test_a_library_message_names_the_library_its_file_and_function():
    paste = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/run.py", line 9, in <module>\n    out = model()\n'
        '  File "/opt/conda/lib/python3.10/site-packages/transformers/models/bert/modeling_bert.py", line 960, in forward\n'
        '    raise ValueError("You have to specify either input_ids or inputs_embeds")\n'
        "ValueError: You have to specify either input_ids or inputs_embeds\n"
    )
    out = _answer(paste)
    assert out["matches"] == []
    site = out["raised_at"][0]
    assert site["library"] == "transformers" and site["file"].endswith("models/bert/modeling_bert.py")
    assert site["function"] == "BertModel.forward" and site["version"]
    assert out["raised_by"] == {"kind": "library", "library": "transformers"}


def test_torchs_own_messages_stay_with_torch():
    out = _answer("RuntimeError: Expected all tensors to be on the same device, but found at least two devices")
    assert all(not r.get("library") for r in out["raised_at"])


def test_a_raise_site_without_file_or_function_gives_no_raised_at_line():
    from explainer.match.explain import Answer
    from explainer.model import Candidate, Parsed
    from explainer.render.markdown import raised_at_markdown

    parsed = Parsed("RuntimeError", "boom")
    site = {"file": None, "line": None, "function": None, "template": "boom", "strength": "exact", "origin": "binary"}
    answer = Answer(parsed, (Candidate("x", 0.9, (), {}, 1),), None, False, (site,))
    assert "Raised at" not in raised_at_markdown(answer, lang="en")
    site["function"] = "at::native::boom"
    assert "Raised at: `at::native::boom`" in raised_at_markdown(answer, lang="en")
