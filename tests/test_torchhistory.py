"""torch's other releases (``data/torchhistory.jsonl.gz``): the Python raise sites of every other minor
release from 1.9 to the current one that the long tail's own release does not raise, each with the
first and last indexed release that raise it."""

from __future__ import annotations

import random

import pytest

from explainer.match.longtail import HOLE, from_text, open_torchhistory, read_data

from .conftest import ROOT

DATA = ROOT / "data" / "torchhistory.jsonl.gz"
pytestmark = pytest.mark.skipif(not DATA.exists(), reason="no torch history data file")


def _explain(text):
    from explainer.knowledge.index import open_index
    from explainer.match.explain import explain_text

    return explain_text(text, open_index(), budget=None)


def test_the_data_names_each_release_and_its_file():
    meta, records = read_data(DATA)
    versions = [r["version"] for r in meta["releases"]]
    assert "2.15.0" in versions and "1.9.0" in versions
    assert all(r["file"].endswith(".whl") and len(r["sha256"]) == 64 for r in meta["releases"])
    from explainer.facts import version_key

    python = [r for r in records if r["o"] == "python"]
    assert python and all(version_key(r["vs"][0]) <= version_key(r["vs"][1]) for r in python)
    gpu = [r for r in records if r["o"] == "gpu-source"]
    assert gpu and all("vs" not in r and r["v"] == meta["gpu_source"]["version"] for r in gpu)
    assert len(meta["gpu_source"]["sha256"]) == 64


def test_cuda_and_mps_code_is_a_site_only_for_a_paste_from_a_gpu_run():
    """MPS's "Placeholder storage" check lives in an .mm file no CPU build holds; the CUDA and MPS
    copies of CPU checks ("number of dims don't match in permute") are not where a CPU run raised it."""
    site = _explain("RuntimeError: Placeholder storage has not been allocated on MPS device!").raised_at[0]
    assert site["origin"] == "gpu-source" and site["file"].endswith(".mm") and site["versions"] is None
    assert site["url"].startswith("https://github.com/pytorch/pytorch/blob/v2.6.0/") and site["line"]
    cpu = _explain("RuntimeError: number of dims don't match in permute")
    assert all(r["origin"] != "gpu-source" for r in cpu.raised_at)
    gpu = _explain("x = x.to('mps')\nRuntimeError: number of dims don't match in permute")
    assert gpu.raised_at and gpu.raised_at[0]["origin"] == "gpu-source"


def test_a_message_only_older_releases_raise_gives_its_releases_and_a_version_range():
    """The TorchScript-era ONNX exporter (``symbolic_opset11.py``) is gone from the long tail's release."""
    answer = _explain("NotImplementedError: Unknown aten::arange signature taking 7 arguments.")
    site = answer.raised_at[0]
    assert site["origin"] == "python" and site["file"] == "torch/onnx/symbolic_opset11.py"
    assert site["versions"] == ["1.9.0", "1.11.0"] and site["torch_version"] == "1.11.0"
    assert site["url"].startswith("https://github.com/pytorch/pytorch/blob/v1.11.0/")
    assert answer.torch_version["range"] == ["1.9.0", "1.11.0"]
    assert "wording" in answer.torch_version["evidence"][0]
    from explainer.knowledge.index import open_index
    from explainer.render.markdown import raised_at_markdown

    md = raised_at_markdown(answer, lang="both")
    assert "torch 1.9.0 to 1.11.0" in md and "torch 1.9.0 到 1.11.0" in md
    assert open_index() is not None


def test_a_printed_release_outranks_the_wording():
    answer = _explain(
        "PyTorch version: 1.10.2\n\nTraceback (most recent call last):\n"
        "NotImplementedError: Unknown aten::arange signature taking 7 arguments.\n"
    )
    assert answer.torch_version["range"] == ["1.10.2", "1.10.2"]


def test_self_retrieval_over_a_sample_of_the_history():
    """Each template, its holes filled with a token, finds its own group first (or a group with the
    same template text: the same words raised from another file)."""
    _, records = read_data(DATA)
    hist = open_torchhistory()
    rng = random.Random(7)
    from explainer.match.longtail import _pieces, is_builtin, is_generic

    sample = [r for r in records if not is_generic(_pieces(r["t"])) and not is_builtin(r["t"].replace("{}", "Q7"))]
    sample = rng.sample(sample, min(800, len(sample)))
    misses = []
    for r in sample:
        text = "".join("Q7" if p is HOLE else p for p in from_text(r["t"]))
        got = hist.lookup(text, r["x"] or None)
        if not got or "".join((got[0]["template"] or "").split()).lower() != "".join(r["t"].split()).lower():
            misses.append(r["t"][:80])
    assert 1 - len(misses) / len(sample) >= 0.98, misses[:10]
