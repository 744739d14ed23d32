"""Build ``data/torchhistory.jsonl.gz``: the Python raise sites of the torch releases people run, besides
the one the long tail is built from (``data/longtail-*.jsonl.gz``).

For each release of :data:`RELEASES` (every other minor release from 1.1 to the current one), the ``.py``
members of its macOS arm64 wheel on the package index (the smallest wheel of a release; the Python
sources are the same on every platform; before 1.9, which has none, its Linux wheel) are read by
range requests and go through the long tail's extractor (:func:`explainer.knowledge.longtail_build.python_sites`). A site is one record however many
releases raise it (a template in a file): kept at the newest release that has it (its line,
function and condition are that release's), with ``vs`` = the first and last indexed release that
raise it. Templates the long tail's own release raises from the same file are left out (the long tail
answers them). The first line is the metadata: each
release's file name and sha256 as the index gives them.

Besides, the C++ raise sites of the source releases of :data:`SOURCES` (Debian's source packages of
2.6.0 and 1.13.1, each checked against its sha256; lines exact for that release), which a CPU
wheel's headers do not show: ``gpu-source`` for the CUDA, cuDNN and MPS code (``.cu``, ``.cuh``,
``.mm`` and the ``cuda``/``cudnn``/``mps`` folders), ``cpp-source`` for the rest, kept where the long
tail's own release does not raise the same words from the same file. Every C++ template, the long
tail's own included, gets its releases from the compiled libraries of every minor release from 1.0
on (:mod:`explainer.knowledge.torchbinaries`): ``vs`` = the first and last release whose libraries
hold its words. A ``cpp-source`` site that no release's libraries hold is dropped (code no build
people run compiles). Beside it, ``data/torchasserts.json.gz``: the file and line of every internal
assert those libraries name (1.6 on), with the releases that have one there, which date a pasted
``INTERNAL ASSERT FAILED at "file":line``. The long tail's data file gets its records' ``vs`` written in place (its
``meta.ranges_from`` says so), so rebuild it first. Rebuild::

    python -m explainer.knowledge.torchhistory_build        # writes data/torchhistory.jsonl.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sys
import urllib.request
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from explainer.facts import version_key
from explainer.knowledge.longtail_build import _PY_SKIP, python_sites
from explainer.match.longtail import is_gpu_file

RELEASES = (  # every other minor release from 1.1: 2.14.1 adds 112 sites to 2.15.0's 17 837 (0.6 %), measured
    "2.15.0",
    "2.14.1",
    "2.12.1",
    "2.10.0",
    "2.8.0",
    "2.6.0",
    "2.4.1",
    "2.2.2",
    "2.0.1",
    "1.13.1",
    "1.11.0",
    "1.9.0",
    "1.7.1",
    "1.5.1",
    "1.3.1",
    "1.1.0",
)
SIMPLE = "https://pypi.org/simple/torch/"
# source releases whose C++ (CPU, CUDA, cuDNN and MPS code) gives the templates of their messages:
# Debian's source packages (each .dsc gives the sha256); the newest first
SOURCES = (
    (
        "2.6.0",
        "http://deb.debian.org/debian/pool/main/p/pytorch/pytorch_2.6.0+dfsg.orig.tar.xz",
        "099a9601bc40d67656e75735c44abedb0fbe92d08817852ab7472eebb7e6ddff",
    ),
    (
        "1.13.1",
        "http://deb.debian.org/debian/pool/main/p/pytorch/pytorch_1.13.1+dfsg.orig.tar.xz",
        "d0355588b8528566d477e6ebf1b4d9d036a6fd75711339f66b27472ce5879dc7",
    ),
)
# what c10 writes around a C++ error's message in some releases only: the releases whose libraries
# hold it are measured, not recalled
WORDINGS = ("Exception raised from {} at {} (most recent call first)",)
_CPP_ORIGINS = ("header", "source", "binary", "gpu-source", "cpp-source")


def _wanted(name: str) -> bool:
    return name.startswith("torch/") and name.endswith(".py") and not _PY_SKIP.search(name) and "/include/" not in name


def wheel_files(releases=RELEASES) -> dict[str, dict]:
    """release -> the index's macOS arm64 wheel of it (file name, URL, sha256); before 1.9, which has
    none, its Linux x86_64 wheel (the Python sources are the same on every platform)."""
    req = urllib.request.Request(SIMPLE, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        files = json.load(r)["files"]
    out = {}
    for v in releases:
        for platform in (r"(?:none|cp\d+)-macosx_\d+_\d+_arm64", r"cp\d+m?-manylinux1_x86_64"):
            mine = sorted(
                f["filename"]
                for f in files
                if re.match(rf"torch-{re.escape(v)}(?:-\d+)?-cp\d+-{platform}\.whl$", f["filename"])
            )
            if mine:
                break
        else:
            raise RuntimeError(f"torch {v}: no macOS arm64 or Linux x86_64 wheel on the index")
        name = mine[0] if "macosx" in mine[0] else mine[-1]  # a Linux wheel of a Python 3 tag
        f = next(f for f in files if f["filename"] == name)
        out[v] = {"file": f["filename"], "url": f["url"], "sha256": f.get("hashes", {}).get("sha256")}
    return out


def _sites(item: tuple[str, bytes], version: str) -> list[dict]:
    name, blob = item
    try:
        return python_sites(blob.decode("utf-8"), name, version)
    except UnicodeDecodeError:
        return []


def source_sites(version: str, url: str, sha256: str, cache: Path | None = None) -> list[dict]:
    """The C++ raise sites of a source release (lines exact for it): ``gpu-source`` for its CUDA,
    cuDNN and MPS code, ``cpp-source`` for the rest."""
    import hashlib
    import io
    import tarfile

    from explainer.knowledge.longtail_cpp import cpp_sites

    kept = cache / url.rsplit("/", 1)[-1] if cache else None
    if kept is not None and kept.is_file():
        blob = kept.read_bytes()
    else:
        with urllib.request.urlopen(url, timeout=600) as r:
            blob = r.read()
    if hashlib.sha256(blob).hexdigest() != sha256:
        raise ValueError(f"{url}: not the sha256 of the source package")
    if kept is not None and not kept.is_file():
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_bytes(blob)
    out = []
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:xz") as tar:
        for m in tar:  # in the archive's order: an xz stream read out of order is decompressed again
            rel = m.name.split("/", 1)[1] if "/" in m.name else m.name
            if not m.isfile() or not rel.startswith(("aten/src/ATen/", "c10/", "torch/csrc/")):
                continue
            if "/test/" in rel or "/tests/" in rel or "third_party" in rel or "/benchmarks/" in rel:
                continue
            if not rel.endswith((".cpp", ".cc", ".h", ".hpp", ".cu", ".cuh", ".mm")):
                continue
            f = tar.extractfile(m)
            if f is None:
                continue
            origin = "gpu-source" if is_gpu_file(rel) else "cpp-source"
            out += cpp_sites(f.read().decode("utf-8", "replace"), rel, version, origin, True)
    out.sort(key=lambda r: (r["f"], r["l"] or 0, r["t"]))
    return out


def _key(r: dict) -> tuple:
    """One site per template and file: a refactored function or condition raising the same words
    from the same file is the same answer."""
    return (r["t"], r["f"])


def _widen(vs: list[str], version: str) -> list[str]:
    """The range ``vs`` made to hold ``version`` (the release whose own source or wheel has the site)."""
    lo, hi = (vs[0], vs[1]) if vs else (version, version)
    return [min(lo, version, key=version_key), max(hi, version, key=version_key)]


def build(
    out: Path,
    current: Path | None,
    releases=RELEASES,
    sources=SOURCES,
    cache: Path | None = None,
    python_from: Path | None = None,
) -> dict:
    """Write the history data file, and the ranges of ``current``'s records (the long tail's own
    release) into it in place. ``python_from``: take the Python sites and their releases from an
    earlier history file instead of reading every release's wheel again (the C++ part is rebuilt;
    ``current``'s Python ranges are kept as they are)."""
    from explainer.knowledge import torchbinaries
    from explainer.knowledge.libsites_build import sources as wheel_sources
    from explainer.knowledge.libsites_build import write_data
    from explainer.match.longtail import from_text, minor_floor, read_data

    bin_cache = cache or torchbinaries.DEFAULT_CACHE
    known: set[tuple] = set()
    current_meta: dict = {}
    current_records: list[dict] = []
    if current is not None:  # the long tail's own release answers what it raises word for word
        current_meta, current_records = read_data(current)
        known = {_key(r) for r in current_records}
    own = current_meta.get("torch_version")
    meta: dict = {"kind": "torch-history", "releases": []}
    newest: dict[tuple, dict] = {}
    span: dict[tuple, list[str]] = {}  # the first and last release of every Python site, the long tail's too
    if python_from is not None:
        if current_records and not any(r.get("vs") for r in current_records if r["o"] == "python"):
            raise SystemExit(
                f"{current} has no Python ranges (a fresh `tbx longtail build`): build without --python-from"
            )
        old_meta, old = read_data(python_from)
        meta["releases"] = old_meta["releases"]
        for r in old:
            if r["o"] == "python" and _key(r) not in known:
                newest[_key(r)] = {k: v for k, v in r.items() if k != "vs"}
                span[_key(r)] = r["vs"]
        for r in current_records:
            if r["o"] == "python" and r.get("vs"):
                span[_key(r)] = r["vs"]
    else:
        wheels = wheel_files(releases)
        for v in sorted(releases, key=version_key, reverse=True):
            rec = wheels[v]
            files = sorted(wheel_sources(rec["url"], wanted=_wanted).items())
            with ProcessPoolExecutor(os.cpu_count() or 1) as pool:  # parsing, not reading, is the cost
                found = [r for part in pool.map(_sites, files, [v] * len(files), chunksize=64) for r in part]
            new = 0
            for r in found:
                k = _key(r)
                if k in span:
                    span[k][0] = v  # releases go from newest to oldest: this one is the earliest so far
                    continue
                span[k] = [v, v]
                if k not in known:
                    newest[k] = r
                    new += 1
            meta["releases"].append(
                {"version": v, "file": rec["file"], "sha256": rec["sha256"], "sites": len(found), "new": new}
            )
            print(f"torch {v}: {len(found)} sites, {new} new", file=sys.stderr)
    span = {k: [minor_floor(a), b] for k, (a, b) in span.items()}
    # the C++ of the source releases, newest first: a site is kept at the newest source that has it
    cpp: dict[tuple, dict] = {}
    meta["sources"] = []
    for version, url, sha256 in sources:
        found = source_sites(version, url, sha256, cache)
        new = 0
        for r in found:
            k = _key(r)
            if k not in known and k not in newest and k not in cpp:
                cpp[k] = r
                new += 1
        meta["sources"].append({"version": version, "url": url, "sha256": sha256, "sites": len(found), "new": new})
        print(f"torch {version} C++ sources: {len(found)} sites, {new} new", file=sys.stderr)
    # which releases' libraries hold each C++ template: its range
    rels = torchbinaries.release_wheels()
    meta["binaries"] = [{"version": r["version"], "wheels": r["wheels"]} for r in rels]
    cpp_list = list(cpp.values())
    current_cpp = [i for i, r in enumerate(current_records) if r["o"] in _CPP_ORIGINS]
    ranges = torchbinaries.ranges(
        [from_text(r["t"]) for r in cpp_list]
        + [from_text(current_records[i]["t"]) for i in current_cpp]
        + [from_text(w) for w in WORDINGS],
        rels,
        bin_cache,
    )
    # the releases of what c10 writes around every C++ error (see explainer.match.longtail.wording_era)
    meta["wordings"] = dict(zip(WORDINGS, ranges[len(ranges) - len(WORDINGS) :]))
    ranges = ranges[: len(ranges) - len(WORDINGS)]
    kept = 0
    for r, vs in zip(cpp_list, ranges):
        if vs is None and r["o"] == "cpp-source":
            continue  # no release's libraries hold its words: not compiled into the builds people run
        newest[_key(r)] = r
        if vs is not None:  # the source release that has it is one of its releases, whatever a build held
            span[_key(r)] = _widen(vs, r["v"])
        kept += 1
    print(f"C++ sites kept: {kept} of {len(cpp_list)}", file=sys.stderr)
    records = [dict(r, vs=span[k]) if k in span else r for k, r in newest.items()]
    records.sort(key=lambda r: (r["f"], r["l"] or 0, r["t"], r["v"]))
    write_data(out, meta, records)
    asserts_out = out.with_name("torchasserts.json.gz")
    with open(asserts_out, "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as gz:
        found_asserts = torchbinaries.asserts(rels, bin_cache)
        gz.write(json.dumps(found_asserts, sort_keys=True, separators=(",", ":")).encode())
    print(f"{asserts_out}: the internal asserts of {len(found_asserts['files'])} files", file=sys.stderr)
    if current is not None:
        range_of = {i: vs for i, vs in zip(current_cpp, ranges[len(cpp_list) :]) if vs}
        for i, r in enumerate(current_records):
            if r["o"] == "python" and _key(r) in span:
                range_of[i] = span[_key(r)]
        range_of = {i: _widen(vs, own) if own else vs for i, vs in range_of.items()}
        annotate(current, current_meta, current_records, range_of, meta["binaries"])
    return meta


def annotate(
    current: Path, meta: dict, records: list[dict], range_of: dict[int, list[str]], binaries: list[dict]
) -> None:
    """Rewrite the long tail's data file (``current``: its ``meta`` and ``records``) with each record's
    first and last release (``range_of``: record number -> releases): a C++ template's from the
    releases' libraries, a Python site's from their sources."""
    from explainer.knowledge.longtail_build import write

    out = []
    for i, r in enumerate(records):
        r = {k: v for k, v in r.items() if k != "vs"}
        out.append(dict(r, vs=range_of[i]) if range_of.get(i) else r)
    meta = dict(
        meta,
        ranges_from={
            "by": "python -m explainer.knowledge.torchhistory_build",
            "releases": [b["version"] for b in binaries],
        },
    )
    write(meta, out, current)


def main(argv: list[str] | None = None) -> int:
    root = Path(__file__).resolve().parents[2]
    ap = argparse.ArgumentParser(prog="python -m explainer.knowledge.torchhistory_build")
    ap.add_argument("--out", type=Path, default=root / "data" / "torchhistory.jsonl.gz")
    ap.add_argument(
        "--current", type=Path, default=next(iter(sorted((root / "data").glob("longtail-*.jsonl.gz"))), None)
    )
    ap.add_argument("--cache", type=Path, default=None, help="keep downloads and the libraries' strings here")
    ap.add_argument(
        "--python-from", type=Path, default=None, help="take the Python sites from this earlier history file"
    )
    args = ap.parse_args(argv)
    meta = build(args.out, args.current, cache=args.cache, python_from=args.python_from)
    print(f"{args.out}: {args.out.stat().st_size} bytes, {sum(r['new'] for r in meta['releases'])} sites")
    return 0


if __name__ == "__main__":
    sys.exit(main())
