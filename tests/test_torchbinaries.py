"""Which releases raise a C++ message, from their compiled libraries' text (explainer.knowledge.torchbinaries):
the strings read from a wheel's libraries and the range a template gets; no download."""

from __future__ import annotations

import zipfile

from explainer.knowledge import torchbinaries as tb
from explainer.match.longtail import HOLE


def _wheel(tmp_path, name, libs: dict[str, bytes]):
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as zf:
        for member, blob in libs.items():
            zf.writestr(member, blob)
    return {"file": name, "url": path.as_uri(), "sha256": None}


def test_a_wheel_gives_the_sentences_of_torchs_own_libraries(tmp_path, monkeypatch):
    junk = bytes(range(0, 32)) * 3
    lib = junk + b"CUDA error: \x00" + junk + b"Expected a proper\n  Tensor but got {}\x00_ZN3c105ErrorC2Ev\x00"
    other = junk + b"cuDNN internal words that are not torch's\x00"
    monkeypatch.setattr(tb, "CHUNK", 16)  # runs cut by the reading block are joined again
    w = _wheel(
        tmp_path,
        "torch-9.9.0-cp311-cp311-manylinux_2_28_x86_64.whl",
        {"torch/lib/libtorch_cuda.so": lib, "torch/lib/libcudnn.so.9": other, "torch/__init__.py": b"x = 'a b c d'"},
    )
    got = tb.wheel_strings(w, tmp_path / "cache")
    assert "CUDA error:" in got and "Expected a proper Tensor but got {}" in got
    assert not [s for s in got if "cuDNN internal" in s or "_ZN3c10" in s or "a b c d" in s]
    # kept: a second call reads the cache, not the wheel
    (tmp_path / w["file"]).unlink()
    assert tb.wheel_strings(w, tmp_path / "cache") == got


def test_a_template_gets_the_releases_whose_libraries_hold_its_words():
    old = tb.ReleaseTexts("1.4.0", ["CUDA error:", "sparse tensors do not have strides"])
    mid = tb.ReleaseTexts("1.13.1", ["CUDA error:", "sparse tensors do not have strides", "cuFFT error:"])
    new = tb.ReleaseTexts("2.6.0", ["CUDA error:", "Sparse CSR tensors do not have strides", "cuFFT error:"])
    texts = [old, mid, new]
    assert tb.releases_of(["CUDA error: ", HOLE], texts) == ["1.4.0", "2.6.0"]
    assert tb.releases_of(["sparse tensors do not have strides"], texts) == ["1.4.0", "1.13.1"]
    assert tb.releases_of(["Sparse ", HOLE, " tensors do not have strides"], texts) == ["1.4.0", "2.6.0"]
    assert tb.releases_of(["cuFFT error: ", HOLE], texts) == ["1.13.1", "2.6.0"]
    assert tb.releases_of(["no such words here", HOLE], texts) is None
    # nothing long enough to look for: no range rather than every release
    assert tb.releases_of([HOLE, "ab", HOLE], texts) is None


def test_a_piece_cut_inside_a_word_is_still_found():
    t = tb.ReleaseTexts("2.0.1", ["expected scalar type Float but found Half"])
    assert t.holds("pected scalar type") and t.holds("but found") and not t.holds("but found Double")


def test_literals_a_check_wrote_apart_are_found_apart():
    """``TORCH_CHECK(ok, "The MPS backend is supported on MacOS 13.0+.", "Current OS version ...")``: the
    template joins them, the library holds two strings."""
    t = tb.ReleaseTexts("2.6.0", ["The MPS backend is supported on MacOS 13.0+.", "Current OS version can be queried"])
    pieces = ["The MPS backend is supported on MacOS 13.0+.Current OS version can be queried"]
    assert tb.releases_of(pieces, [t]) == ["2.6.0", "2.6.0"]
    assert tb.releases_of(["The MPS backend is supported on MacOS 13.0+.Current OS version is gone"], [t]) is None
