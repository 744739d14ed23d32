"""Build ``data/torchhistory.jsonl.gz``: the Python raise sites of the torch releases people run, besides
the one the long tail is built from (``data/longtail-*.jsonl.gz``).

For each release of :data:`RELEASES` (every other minor release from 1.9 to the current one), the ``.py``
members of its macOS arm64 wheel on the package index (the smallest wheel of a release; the Python
sources are the same on every platform) are read by range requests and go through the long tail's
extractor (:func:`explainer.knowledge.longtail_build.python_sites`). A site is one record however many
releases raise it (a template in a file): kept at the newest release that has it (its line,
function and condition are that release's), with ``vs`` = the first and last indexed release that
raise it. Templates the long tail's own release raises from the same file are left out (the long tail
answers them). The first line is the metadata: each
release's file name and sha256 as the index gives them. Besides, the C++ raise sites of torch's CUDA, cuDNN and MPS code (``.cu``, ``.cuh``, ``.mm`` and the
``cuda``/``cudnn``/``mps`` folders of :data:`GPU_SOURCE`, Debian's source package of 2.6.0, checked
against its sha256), which a CPU wheel holds none of: ``origin`` "gpu-source", lines exact for that
release, no release range. Rebuild::

    python -m explainer.knowledge.torchhistory_build        # writes data/torchhistory.jsonl.gz
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import urllib.request
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from explainer.facts import version_key
from explainer.knowledge.longtail_build import _PY_SKIP, python_sites

RELEASES = (  # every other minor release: 2.14.1 adds 112 sites to 2.15.0's 17 838 (0.6 %), measured
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
)
SIMPLE = "https://pypi.org/simple/torch/"
# the CUDA, cuDNN and MPS code no CPU build holds: the .cu/.cuh/.mm files and the cuda/cudnn/mps folders
# of a source release; Debian's source package of 2.6.0 (its .dsc gives this sha256)
GPU_SOURCE = (
    "2.6.0",
    "http://deb.debian.org/debian/pool/main/p/pytorch/pytorch_2.6.0+dfsg.orig.tar.xz",
    "099a9601bc40d67656e75735c44abedb0fbe92d08817852ab7472eebb7e6ddff",
)
_GPU_DIRS = ("/cuda/", "/cudnn/", "/mps/", "/miopen/", "/hip/", "/sparse/cuda/", "/quantized/cuda/")
_GPU_SUFFIXES = (".cu", ".cuh", ".mm")


def _wanted(name: str) -> bool:
    return name.startswith("torch/") and name.endswith(".py") and not _PY_SKIP.search(name) and "/include/" not in name


def wheel_files(releases=RELEASES) -> dict[str, dict]:
    """release -> the index's macOS arm64 wheel of it (file name, URL, sha256)."""
    req = urllib.request.Request(SIMPLE, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        files = json.load(r)["files"]
    out = {}
    for v in releases:
        mine = sorted(
            f["filename"]
            for f in files
            if re.match(
                rf"torch-{re.escape(v)}(?:-\d+)?-cp\d+-(?:none|cp\d+)-macosx_\d+_\d+_arm64\.whl$", f["filename"]
            )
        )
        if not mine:
            raise RuntimeError(f"torch {v}: no macOS arm64 wheel on the index")
        f = next(f for f in files if f["filename"] == mine[0])
        out[v] = {"file": f["filename"], "url": f["url"], "sha256": f.get("hashes", {}).get("sha256")}
    return out


def _sites(item: tuple[str, bytes], version: str) -> list[dict]:
    name, blob = item
    try:
        return python_sites(blob.decode("utf-8"), name, version)
    except UnicodeDecodeError:
        return []


def gpu_sites(version: str, url: str, sha256: str) -> list[dict]:
    """The C++ raise sites of the GPU code of a source release (``origin`` "gpu-source"; lines exact
    for that release): what the long tail, built from a CPU wheel, cannot see."""
    import hashlib
    import io
    import tarfile

    from explainer.knowledge.longtail_cpp import cpp_sites

    with urllib.request.urlopen(url, timeout=600) as r:
        blob = r.read()
    if hashlib.sha256(blob).hexdigest() != sha256:
        raise ValueError(f"{url}: not the sha256 of the source package")
    out = []
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:xz") as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            rel = m.name.split("/", 1)[1] if "/" in m.name else m.name
            if not m.isfile() or not rel.startswith(("aten/src/ATen/", "c10/", "torch/csrc/")):
                continue
            if "/test/" in rel or "/tests/" in rel or "third_party" in rel or "/benchmarks/" in rel:
                continue
            gpu = rel.endswith(_GPU_SUFFIXES) or (
                rel.endswith((".cpp", ".cc", ".h", ".hpp")) and any(d in "/" + rel for d in _GPU_DIRS)
            )
            f = tar.extractfile(m) if gpu else None
            if f is None:
                continue
            for rec in cpp_sites(f.read().decode("utf-8", "replace"), rel, version, "gpu-source", True):
                out.append(rec)
    return out


def _key(r: dict) -> tuple:
    """One site per template and file: a refactored function or condition raising the same words
    from the same file is the same answer."""
    return (r["t"], r["f"])


def build(out: Path, current: Path | None, releases=RELEASES, gpu=GPU_SOURCE) -> dict:
    from explainer.knowledge.libsites_build import sources, write_data
    from explainer.match.longtail import read_data

    known: set[tuple] = set()
    if current is not None:  # the long tail's own release answers what it raises word for word
        _, records = read_data(current)
        known = {_key(r) for r in records}
    wheels = wheel_files(releases)
    meta: dict = {"kind": "torch-history", "releases": []}
    newest: dict[tuple, dict] = {}
    span: dict[tuple, list[str]] = {}
    for v in sorted(releases, key=version_key, reverse=True):
        rec = wheels[v]
        files = sorted(sources(rec["url"], wanted=_wanted).items())
        with ProcessPoolExecutor(os.cpu_count() or 1) as pool:  # parsing, not reading, is the cost
            found = [r for part in pool.map(_sites, files, [v] * len(files), chunksize=64) for r in part]
        new = 0
        for r in found:
            k = _key(r)
            if k in known:
                continue
            if k not in newest:
                newest[k] = r
                span[k] = [v, v]
                new += 1
            else:
                span[k][0] = v  # releases go from newest to oldest: this one is the earliest so far
        meta["releases"].append(
            {"version": v, "file": rec["file"], "sha256": rec["sha256"], "sites": len(found), "new": new}
        )
        print(f"torch {v}: {len(found)} sites, {new} new", file=sys.stderr)
    if gpu is not None:
        version, url, sha256 = gpu
        found = gpu_sites(version, url, sha256)
        new = 0
        for r in found:
            k = _key(r)
            if k not in known and k not in newest:
                newest[k] = r  # no release range: one source release says nothing of the others
                new += 1
        meta["gpu_source"] = {"version": version, "url": url, "sha256": sha256, "sites": len(found), "new": new}
        print(f"torch {version} GPU sources: {len(found)} sites, {new} new", file=sys.stderr)
    records = [dict(r, vs=span[k]) if k in span else r for k, r in newest.items()]
    records.sort(key=lambda r: (r["f"], r["l"] or 0, r["t"], r["v"]))
    write_data(out, meta, records)
    return meta


def main(argv: list[str] | None = None) -> int:
    root = Path(__file__).resolve().parents[2]
    ap = argparse.ArgumentParser(prog="python -m explainer.knowledge.torchhistory_build")
    ap.add_argument("--out", type=Path, default=root / "data" / "torchhistory.jsonl.gz")
    ap.add_argument(
        "--current", type=Path, default=next(iter(sorted((root / "data").glob("longtail-*.jsonl.gz"))), None)
    )
    args = ap.parse_args(argv)
    meta = build(args.out, args.current)
    print(f"{args.out}: {args.out.stat().st_size} bytes, {sum(r['new'] for r in meta['releases'])} sites")
    return 0


if __name__ == "__main__":
    sys.exit(main())
