"""torch's other releases (``data/torchhistory.jsonl.gz``): the Python raise sites of every other minor
release from 1.1 to the current one and the C++ sites of two source releases that the long tail's own
release does not raise, each with the first and last release that raise it; the long tail's own
records' releases; dating a paste by its wording."""

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
    sources = {s["version"]: s for s in meta["sources"]}
    assert set(sources) == {"2.6.0", "1.13.1"} and all(len(s["sha256"]) == 64 for s in sources.values())
    cpp = [r for r in records if r["o"] in ("gpu-source", "cpp-source")]
    assert cpp and all(r["v"] in sources and r["l"] for r in cpp)
    # a C++ site's releases hold its own source release; a CPU one no build holds is not kept
    ranged = [r for r in cpp if "vs" in r]
    assert all(version_key(r["vs"][0]) <= version_key(r["v"]) <= version_key(r["vs"][1]) for r in ranged)
    assert all("vs" in r for r in cpp if r["o"] == "cpp-source")
    assert len(ranged) > 0.8 * len(cpp)
    # the compiled libraries of every minor release from 1.0 on, each wheel named with its sha256
    minors = [b["version"].rsplit(".", 1)[0] for b in meta["binaries"]]
    assert minors[0] == "1.0" and "1.8" in minors and "2.15" in minors and len(minors) == len(set(minors))
    assert all(len(w["sha256"]) == 64 and w["file"].endswith(".whl") for b in meta["binaries"] for w in b["wheels"])
    assert all(any("macosx" in w["file"] for w in b["wheels"]) for b in meta["binaries"] if b["version"] >= "2.")


def test_the_long_tails_own_records_carry_their_releases():
    """torchhistory_build writes each long-tail record's releases in place: a C++ template's from the
    libraries, a Python site's from the sources; every range holds the long tail's own release."""
    from explainer.facts import version_key
    from explainer.match.longtail import data_file

    meta, records = read_data(data_file())
    assert meta["ranges_from"]["releases"][0] == "1.0.1" and meta["ranges_from"]["releases"][-1] == "2.15.0"
    own = version_key(meta["torch_version"])
    ranged = [r for r in records if r.get("vs")]
    assert all(version_key(r["vs"][0]) <= own <= version_key(r["vs"][1]) for r in ranged)
    for origin in ("python", "header", "source"):
        mine = [r for r in records if r["o"] == origin]
        assert sum(1 for r in mine if r.get("vs")) > 0.7 * len(mine), origin


def test_cuda_and_mps_code_is_a_site_where_only_it_raises_the_words_or_the_paste_shows_a_gpu_run():
    """MPS's "Placeholder storage" check lives in an .mm file no CPU build holds; where CPU code raises
    the same words ("nansum does not support complex inputs"), the CUDA or MPS copy is offered only
    for a paste from a GPU run."""
    site = _explain("RuntimeError: Placeholder storage has not been allocated on MPS device!").raised_at[0]
    assert site["origin"] == "gpu-source" and site["file"].endswith(".mm") and site["line"]
    assert site["url"].startswith("https://github.com/pytorch/pytorch/blob/v2.6.0/")
    assert site["versions"][0] == "1.12.0"  # MPS came with 1.12
    cpu = _explain("RuntimeError: nansum does not support complex inputs")
    assert cpu.raised_at and all(
        r["origin"] != "gpu-source" and "/mps/" not in a["file"] for r in cpu.raised_at for a in [r, *r["also"]]
    )
    gpu = _explain("x = x.to('mps')\nRuntimeError: nansum does not support complex inputs")
    assert any("/mps/" in a["file"] for r in gpu.raised_at for a in [r, *r["also"]])


def test_a_cuda_error_names_cs_check_and_its_releases():
    """``CUDA error: ...`` is built in a string before the check (c10/cuda/CUDAException.cpp): found,
    and every release from 1.0 raises it, so the wording says nothing of the release."""
    answer = _explain(
        'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    loss.backward()\n'
        "RuntimeError: CUDA error: misaligned address\nCUDA kernel errors might be asynchronously reported "
        "at some other API call, so the stacktrace below might be incorrect.\n"
    )
    site = answer.raised_at[0]
    assert site["file"] == "c10/cuda/CUDAException.cpp" and site["versions"] == ["1.0.0", "2.15.0"]
    assert answer.torch_version is None
    files = [r["file"] for r in _explain("RuntimeError: CUDA error: misaligned address").raised_at]
    assert len(files) == len(set(files)), files  # another release's copy of a file already shown is not added


def test_a_message_only_older_releases_raise_gives_its_releases_and_a_version_range():
    """The TorchScript-era ONNX exporter (``symbolic_opset11.py``) is gone from the long tail's release."""
    from explainer.facts import version_key

    answer = _explain("NotImplementedError: Unknown aten::arange signature taking 7 arguments.")
    site = answer.raised_at[0]
    assert site["origin"] == "python" and site["file"] == "torch/onnx/symbolic_opset11.py"
    assert site["versions"] == ["1.5.0", "1.11.0"] and site["torch_version"] == "1.11.0"
    assert site["url"].startswith("https://github.com/pytorch/pytorch/blob/v1.11.0/")
    # every site's releases together (another site of the words reaches back to an older release)
    lo, hi = answer.torch_version["range"]
    assert hi == "1.11.0" and version_key(lo) <= version_key("1.5.0")
    assert "wording" in answer.torch_version["evidence"][0]
    from explainer.knowledge.index import open_index
    from explainer.render.markdown import raised_at_markdown

    md = raised_at_markdown(answer, lang="both")
    assert "torch 1.5.0 to 1.11.0" in md and "torch 1.5.0 到 1.11.0" in md
    # no indexed release after 1.11 raises it: said in both languages
    assert "no indexed release after torch 1.11.0 raises it (the newest is 2.15.0)" in md
    assert "torch 1.11.0 之后都不再这样报错" in md
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


def test_the_way_c10_wraps_a_cpp_error_dates_the_paste():
    """ "Exception raised from F at P:L (most recent call first)" is written from the release whose
    libraries first hold it (measured: 1.6.0); the older "msg (F at P:L)" before it."""
    meta, _ = read_data(DATA)
    since = meta["wordings"]["Exception raised from {} at {} (most recent call first)"]
    assert since == ["1.6.0", "2.15.0"]
    old = _explain(
        "RuntimeError: sparse tensors do not have is_contiguous (is_contiguous at "
        "/opt/conda/work/aten/src/ATen/SparseTensorImpl.cpp:55)"
    )
    assert old.raised_at[0]["file"] == "aten/src/ATen/SparseTensorImpl.cpp"
    assert old.torch_version["range"] == ["1.0.0", "1.5.1"]
    new = _explain(
        "RuntimeError: widget frobnication failed\nException raised from frob at "
        "/pytorch/aten/src/ATen/native/Frob.cpp:12 (most recent call first):\nframe #0: c10::Error::Error()"
    )
    assert new.torch_version["range"] == ["1.6.0", "2.15.0"]


def test_a_pasted_internal_assert_is_dated_by_its_file_and_line():
    """The libraries name each internal assert's file and line (1.6 on): the releases that have one at
    the pasted place are the paste's. MPS's ``[srcBuf length] > 0`` sat at OperationUtils.mm:283 in
    the 2.0 build only (measured in the wheels' strings)."""
    from explainer.match.longtail import assert_releases

    assert assert_releases("aten/src/ATen/native/mps/OperationUtils.mm", 283) == ["2.0.0", "2.0.1"]
    assert assert_releases("aten/src/ATen/native/mps/OperationUtils.mm", 282) is None
    assert assert_releases("no/such/file.cpp", 1) is None
    answer = _explain(
        'RuntimeError: [srcBuf length] > 0 INTERNAL ASSERT FAILED at "/Users/runner/work/pytorch/pytorch/'
        'pytorch/aten/src/ATen/native/mps/OperationUtils.mm":283, please report a bug to PyTorch. '
        "Placeholder tensor is empty!"
    )
    site = answer.raised_at[0]
    assert (site["file"], site["line"], site["versions"]) == (
        "aten/src/ATen/native/mps/OperationUtils.mm",
        283,
        ["2.0.0", "2.0.1"],
    )
    assert answer.torch_version["range"] == ["2.0.0", "2.0.1"]
    assert "internal assert" in answer.torch_version["evidence"][0]


def test_a_module_that_moved_gives_its_older_file_too():
    """torch/onnx/symbolic_opset9.py became torch/onnx/_internal/torchscript_exporter/symbolic_opset9.py:
    the long tail's release names the new file, the older releases' file follows it, and the two
    ranges together say nothing of the release."""
    answer = _explain("RuntimeError: Unsupported: ONNX export of convolution for kernel of unknown shape.")
    files = [r["file"] for r in answer.raised_at]
    new = files.index("torch/onnx/_internal/torchscript_exporter/symbolic_opset9.py")
    assert files[new + 1] == "torch/onnx/symbolic_opset9.py"
    older = answer.raised_at[new + 1]
    assert older["origin"] == "python" and older["versions"][0].startswith("1.")
    assert answer.torch_version is None or answer.torch_version["range"][0].startswith("1.")
