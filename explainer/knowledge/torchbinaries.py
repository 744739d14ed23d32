"""Which torch releases raise a C++ message: the text of every minor release's compiled libraries.

A C++ check's message is a string literal in the shared library that raises it, whatever the
release's source looked like. For each minor release from 1.0 to the current one this reads the
Linux x86_64 wheel on the package index (its CPU, CUDA and cuDNN code: ``libtorch_cpu``,
``libtorch_cuda``, ``libc10_cuda``, ...) and, from 1.12 on, the macOS arm64 wheel (its MPS code),
keeps every printable string of those libraries that holds a space (a sentence, not a symbol), its
whitespace folded, and answers :func:`ReleaseTexts.releases_of`: the releases whose libraries hold
every sentence-like literal piece of a template. The wheels are read at build time only (the data
files carry the result as each record's ``vs``: first and last release); their names and sha256 are
the provenance. Used by :mod:`explainer.knowledge.torchhistory_build`.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import sys
import tempfile
import urllib.request
import zipfile
from pathlib import Path

from explainer.facts import version_key
from explainer.match.longtail import minor_floor

SIMPLE = "https://pypi.org/simple/torch/"
_LINUX = re.compile(r"torch-(\d+)\.(\d+)\.(\d+)(?:\.post\d+)?-(?:\d+-)?cp(\d+)-cp\d+m?-manylinux[\w.]*_x86_64\.whl$")
_MAC = re.compile(r"torch-(\d+)\.(\d+)\.(\d+)(?:\.post\d+)?-(?:\d+-)?cp(\d+)-(?:none|cp\d+)-macosx_\d+_\d+_arm64\.whl$")
MPS_FROM = (1, 12)  # the first release with an MPS backend
# torch's own libraries; the CUDA, cuDNN, NCCL and OpenMP libraries some wheels bundle are not torch's words
_OWN_LIB = re.compile(r"^torch/(?:lib/)?(?:lib)?(?:c10|torch|caffe2|shm|_C)[\w.-]*\.(?:so(?:\.\d+)*|dylib)$")
_TEXT = re.compile(rb"[\x20-\x7e\t\n\r]{6,}")
_SPACE = re.compile(r"\s+")
MIN_PIECE = 6  # a literal piece shorter than this, or without a space, is not looked for
DEFAULT_CACHE = Path(tempfile.gettempdir()) / "tbx-torch-binaries"  # each wheel's strings, kept
CHUNK = 64 << 20


def release_wheels(first=(1, 0)) -> list[dict]:
    """The last patch release of every minor release from ``first``: its Linux x86_64 wheel (the
    newest Python tag) and, from 1.12, its macOS arm64 wheel; each with URL and the index's sha256."""
    req = urllib.request.Request(SIMPLE, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        files = json.load(r)["files"]
    best: dict[tuple, dict[str, tuple]] = {}
    for f in files:
        if f.get("yanked"):
            continue
        for plat, rx in (("linux", _LINUX), ("mac", _MAC)):
            m = rx.match(f["filename"])
            if m:
                major, minor, patch, cp = (int(g) for g in m.groups())
                rank = (patch, cp)
                mine = best.setdefault((major, minor), {})
                if plat not in mine or rank > mine[plat][0]:
                    mine[plat] = (rank, f)
    out = []
    for (major, minor), mine in sorted(best.items()):
        if (major, minor) < first or "linux" not in mine:
            continue
        patch = mine["linux"][0][0]
        wheels = [mine["linux"][1]]
        if (major, minor) >= MPS_FROM and "mac" in mine and mine["mac"][0][0] == patch:
            wheels.append(mine["mac"][1])
        out.append(
            {
                "version": f"{major}.{minor}.{patch}",
                "wheels": [
                    {"file": w["filename"], "url": w["url"], "sha256": w.get("hashes", {}).get("sha256")}
                    for w in wheels
                ],
            }
        )
    return out


def _strings_of_zip_member(zf: zipfile.ZipFile, name: str, out: set[str]) -> None:
    with zf.open(name) as f:
        carry = b""
        while True:
            block = f.read(CHUNK)
            if not block:
                break
            data = carry + block
            # a run that reaches the block's end may go on in the next one
            cut = len(data)
            while cut > 0 and 0x20 <= data[cut - 1] <= 0x7E or cut > 0 and data[cut - 1] in b"\t\n\r":
                cut -= 1
                if len(data) - cut > 1 << 16:  # a very long printable run: keep it whole, start afresh
                    cut = len(data)
                    break
            for m in _TEXT.finditer(data, 0, cut):
                s = m.group()
                if b" " in s:
                    out.add(_SPACE.sub(" ", s.decode("ascii")).strip())
            carry = data[cut:]
        for m in _TEXT.finditer(carry):
            s = m.group()
            if b" " in s:
                out.add(_SPACE.sub(" ", s.decode("ascii")).strip())


def wheel_strings(wheel: dict, cache: Path) -> list[str]:
    """The sentence-like strings of torch's own libraries in ``wheel`` (downloaded, checked against its
    sha256 and dropped; the strings are kept in ``cache``)."""
    cache.mkdir(parents=True, exist_ok=True)
    done = cache / (wheel["file"] + ".strings.gz")
    if done.is_file():
        with gzip.open(done, "rt", encoding="ascii") as f:
            return f.read().split("\x00")
    with tempfile.NamedTemporaryFile(dir=cache, suffix=".whl", delete=False) as tmp:
        h = hashlib.sha256()
        with urllib.request.urlopen(wheel["url"], timeout=1800) as r:
            for block in iter(lambda: r.read(1 << 20), b""):
                h.update(block)
                tmp.write(block)
    try:
        if wheel.get("sha256") and h.hexdigest() != wheel["sha256"]:
            raise ValueError(f"{wheel['file']}: the download does not have the index's sha256")
        found: set[str] = set()
        with zipfile.ZipFile(tmp.name) as zf:
            for name in sorted(zf.namelist()):
                if _OWN_LIB.match(name):
                    _strings_of_zip_member(zf, name, found)
    finally:
        os.unlink(tmp.name)
    strings = sorted(found)
    part = done.with_name(done.name + f".tmp{os.getpid()}")
    with gzip.open(part, "wt", encoding="ascii") as f:
        f.write("\x00".join(strings))
    os.replace(part, done)
    return strings


def significant(pieces) -> list[str]:
    """The literal pieces of a template that a release's libraries must hold: whitespace folded,
    with a space and at least :data:`MIN_PIECE` characters."""
    out = []
    for p in pieces:
        if p is None:
            continue
        q = _SPACE.sub(" ", p).strip()
        if len(q) >= MIN_PIECE and " " in q:
            out.append(q)
    return out


_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


class ReleaseTexts:
    """The strings of one release's libraries, indexed by word for fast substring tests."""

    def __init__(self, version: str, strings: list[str]):
        self.version = version
        self.strings = strings
        self.postings: dict[str, list[int]] = {}
        for i, s in enumerate(strings):
            for w in set(_TOKEN.findall(s)):
                self.postings.setdefault(w, []).append(i)
        self._blob: str | None = None

    def holds(self, piece: str) -> bool:
        words = _TOKEN.findall(piece)
        # a word cut by the piece's edge ("nd" of "...and") is no word of the string: inner words only
        inner = [w for w in words if piece.find(w) > 0 and piece.find(w) + len(w) < len(piece)] or words
        if not inner:
            if self._blob is None:
                self._blob = "\x00".join(self.strings)
            return piece in self._blob
        rarest = min(inner, key=lambda w: len(self.postings.get(w, ())))
        return any(piece in self.strings[i] for i in self.postings.get(rarest, ()))

    def holds_all(self, need: list[str]) -> bool:
        """Whether the release holds every piece of ``need`` (:func:`significant`; none: False)."""
        return bool(need) and all(_held(self, p) for p in need)


_JOINED = re.compile(r"(?<=[.:;!?])(?=[A-Z`'\"])")  # "...13.0+.Current OS ...": two literals the source wrote apart


def _held(texts: ReleaseTexts, piece: str) -> bool:
    """The piece is in the release's strings, whole or as the literals it was joined from (adjacent
    string arguments of one check, ``"... 13.0+.", "Current OS ..."``, are two strings in a library)."""
    if texts.holds(piece):
        return True
    parts = [p.strip() for p in _JOINED.split(piece)]
    return len(parts) > 1 and all(texts.holds(p) for p in parts if len(p) >= MIN_PIECE and " " in p)


def releases_of(pieces, texts: list[ReleaseTexts]) -> list[str] | None:
    """``[first, last]``: the oldest and newest release whose libraries hold the template's pieces
    (``texts`` oldest first), or None when none does or the template has no piece to look for."""
    need = significant(pieces)
    if not need:
        return None
    having = [t.version for t in texts if t.holds_all(need)]
    return [having[0], having[-1]] if having else None


def ranges(templates: list[list], releases: list[dict], cache: Path, log=None) -> list[list[str] | None]:
    """For each template (pieces), ``[first, last]`` release whose libraries hold it, or None; one
    release's strings in memory at a time."""
    log = log or (lambda s: print(s, file=sys.stderr))
    need = [significant(p) for p in templates]
    first: list[str | None] = [None] * len(templates)
    last: list[str | None] = [None] * len(templates)
    for rel in sorted(releases, key=lambda r: version_key(r["version"])):
        texts = release_texts(rel, cache)
        held = 0
        for i, pieces in enumerate(need):
            if texts.holds_all(pieces):
                first[i] = first[i] or rel["version"]
                last[i] = rel["version"]
                held += 1
        log(f"torch {rel['version']}: {len(texts.strings)} strings, {held} of {len(templates)} templates held")
    return [[minor_floor(a), b] if a and b else None for a, b in zip(first, last)]


# what c10 writes for a failed TORCH_INTERNAL_ASSERT, file and line compiled in (torch 1.6 on)
_ASSERT_AT = re.compile(r'INTERNAL ASSERT FAILED at "?([^"]{1,400}?)"?:(\d{1,7}), please report a bug to PyTorch')


def asserts(releases: list[dict], cache: Path) -> dict:
    """Where each release's internal asserts are (their strings name the file and line): ``{"releases":
    [...], "files": {repo path: "dline:first:last dline:first:last ..."}}``, lines delta-encoded in
    order, first and last the indexes of the releases that have an assert at that line."""
    from explainer.match.longtail import repo_path

    rels = sorted(releases, key=lambda r: version_key(r["version"]))
    at: dict[tuple[str, int], list[int]] = {}
    for i, rel in enumerate(rels):
        for w in rel["wheels"]:
            for s in wheel_strings(w, cache):
                if "INTERNAL ASSERT FAILED at" in s:
                    m = _ASSERT_AT.search(s)
                    if m:
                        span = at.setdefault((repo_path(m.group(1)), int(m.group(2))), [i, i])
                        span[0], span[1] = min(span[0], i), max(span[1], i)
    files: dict[str, list[str]] = {}
    last: dict[str, int] = {}
    for (file, line), (a, b) in sorted(at.items()):
        files.setdefault(file, []).append(f"{line - last.get(file, 0)}:{a}:{b}")
        last[file] = line
    return {
        "releases": [r["version"] for r in rels],
        "wheels": [w for r in rels for w in r["wheels"]],
        "files": {f: " ".join(v) for f, v in sorted(files.items())},
    }


def release_texts(rel: dict, cache: Path) -> ReleaseTexts:
    """One release's strings, its wheels' together."""
    strings: set[str] = set()
    for w in rel["wheels"]:
        strings.update(wheel_strings(w, cache))
    return ReleaseTexts(rel["version"], sorted(strings))


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m explainer.knowledge.torchbinaries")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = ap.parse_args(argv)
    for rel in release_wheels():  # download each wheel once and keep its strings
        for w in rel["wheels"]:
            print(
                f"torch {rel['version']}: {len(wheel_strings(w, args.cache))} strings from {w['file']}", file=sys.stderr
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
