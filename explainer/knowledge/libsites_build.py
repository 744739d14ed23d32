"""Build ``data/libsites.jsonl.gz``: the raise sites of the libraries around torch, found in their own
Python sources by the long tail's extractor (:func:`explainer.knowledge.longtail_build.python_sites`).

For each release of :data:`RELEASES` the package index's simple API names the file and its sha256 (no
download); a wheel's ``.py`` members are read out of it by HTTP range requests (a vLLM
or bitsandbytes wheel is hundreds of megabytes of binaries), a source archive (DeepSpeed and mmcv publish
only those) is read whole. Every ``raise``, ``assert`` and warning becomes a record: template, exception
type, file, line, function, failed condition, with ``o`` the library and ``v`` its release. A site that
an older release of the same library has word for word (same template, type, file, function and
condition) is kept once, at the newest release. The data file's first line is its metadata (releases,
file names and their sha256 as the index gives them). Rebuild::

    python -m explainer.knowledge.libsites_build            # writes data/libsites.jsonl.gz
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import re
import sys
import tarfile
import urllib.request
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from explainer.knowledge.longtail_build import python_sites

# the libraries whose errors reach users most (the population's raised_by), newest release first:
# the releases the project pins for its tests, and earlier ones whose wordings users still paste
RELEASES = (
    ("transformers", "5.25.0"),
    ("transformers", "4.57.6"),
    ("transformers", "4.36.2"),
    ("huggingface-hub", "2.4.0"),
    ("huggingface-hub", "0.36.0"),
    ("diffusers", "0.42.1"),
    ("accelerate", "1.16.0"),
    ("peft", "0.21.2"),
    ("safetensors", "0.8.0"),
    ("datasets", "5.2.0"),
    ("trl", "1.16.0"),
    ("lightning", "2.6.6"),
    ("pytorch-lightning", "2.6.6"),
    ("pytorch-lightning", "1.9.5"),
    ("pytorch-lightning", "1.5.10"),
    ("pytorch-lightning", "1.4.9"),
    ("vllm", "0.34.0"),
    ("vllm", "0.6.3"),
    ("deepspeed", "0.19.8"),
    ("deepspeed", "0.14.4"),
    ("bitsandbytes", "0.50.2"),
    ("bitsandbytes", "0.41.3"),
    ("xformers", "0.0.35"),
    ("torchvision", "0.29.2"),
    ("torchaudio", "2.11.1"),
    ("ultralytics", "8.4.190"),
    ("sentence-transformers", "6.3.0"),
    ("gradio", "6.31.0"),
    ("nnunetv2", "2.8.1"),
    ("timm", "1.0.31"),
    ("mmengine", "0.10.7"),
    ("mmcv", "2.2.0"),
    ("mmcv", "1.7.2"),
    ("mmdet", "3.3.0"),
    ("mmdet", "2.28.2"),
    ("mmsegmentation", "1.2.2"),
    # the long tail of the communities the population samples come from (Python raise sites only:
    # what a library's compiled code says is not here)
    ("monai", "1.6.1"),
    ("torch-geometric", "2.8.1"),
    ("librosa", "0.11.0"),
    ("openai-whisper", "20250625"),
    ("faster-whisper", "1.2.1"),
    ("soundfile", "0.14.0"),
    ("einops", "0.8.2"),
    ("open-clip-torch", "3.3.0"),
    ("torchmetrics", "1.9.0"),
    ("kornia", "0.9.2"),
    ("hydra-core", "1.3.8"),
    ("omegaconf", "2.4.0"),
    ("llamafactory", "0.9.5"),
    ("lmdeploy", "0.18.0"),
    ("stable-baselines3", "2.9.2"),
    ("gymnasium", "1.4.0"),
    ("basicsr", "1.4.2"),
    ("funasr", "1.4.16"),
    # measured again on eleven community samples: fine-tuning and evaluation, model compression and
    # export, science, pathology, recommendation, OCR, speech, graphs
    ("xtuner", "0.2.0"),
    ("ms-swift", "4.6.0"),
    ("lm-eval", "0.4.13"),
    ("colossalai", "0.5.0"),
    ("smolagents", "1.26.0"),
    ("flagembedding", "1.4.2"),
    ("nni", "3.0"),
    ("coremltools", "9.0"),
    ("fastai", "2.8.12"),
    ("anomalib", "2.7.0"),
    ("sahi", "0.12.8"),
    ("easyocr", "1.7.2"),
    ("deepxde", "1.15.0"),
    ("pennylane", "0.45.1"),
    ("tabpfn", "9.2.0"),
    ("openslide-python", "1.4.7"),
    ("recbole", "1.2.1"),
    ("pyannote-audio", "4.0.7"),
    ("dgl", "2.2.1"),
)
SKIP = ("/tests/", "/test_", "/examples/", "/benchmark", "/commands/", "/_vendor/", "/setup.py", "/docs/")
LIBRARY = {"huggingface-hub": "huggingface_hub"}  # the name the answers use, where it is not the distribution's


def _wanted(name: str) -> bool:
    return name.endswith(".py") and ".dist-info/" not in name and not any(s in "/" + name for s in SKIP)


def sources(url: str, sha256: str | None = None, wanted=_wanted) -> dict[str, bytes]:
    """The library's ``.py`` files in the release file at ``url``: a wheel's read by range requests,
    an sdist's (``.tar.gz``) downloaded whole and checked against the index's sha256; an sdist's top
    folder (``mmcv-2.2.0/``) dropped."""
    from explainer.knowledge.facts_build import RemoteZip

    if url.endswith(".whl"):
        wheel = RemoteZip(url)
        entries = {n: e for n, e in wheel.directory().items() if wanted(n)}

        def read(name: str) -> bytes:
            try:
                return wheel.member(entries[name])
            except ValueError:  # larger than any source file: generated data
                return b""

        with ThreadPoolExecutor(6) as pool:
            return dict(zip(sorted(entries), pool.map(read, sorted(entries))))
    with urllib.request.urlopen(url, timeout=300) as r:
        blob = r.read()
    if sha256 and hashlib.sha256(blob).hexdigest() != sha256:
        raise ValueError(f"{url}: the download does not have the index's sha256")
    out = {}
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
        for m in tar.getmembers():
            name = m.name.split("/", 1)[1] if "/" in m.name else m.name
            if m.isfile() and wanted(name):
                f = tar.extractfile(m)
                out[name] = f.read() if f else b""
    return out


def sites_of_sources(files: dict[str, bytes], library: str, version: str) -> list[dict]:
    out = []
    for name in sorted(files):
        try:
            source = files[name].decode("utf-8")
        except UnicodeDecodeError:
            continue
        for r in python_sites(source, name, version):
            out.append({**r, "o": library})
    return out


def sites_of_wheel(whl: Path, library: str, version: str) -> list[dict]:
    with zipfile.ZipFile(whl) as z:
        return sites_of_sources({n: z.read(n) for n in z.namelist() if _wanted(n)}, library, version)


SIMPLE = "https://pypi.org/simple/{name}/"


def _release_file(dist: str, version: str) -> dict:
    """The index's file for one release (its simple API's JSON: file names, URLs, sha256): a pure
    Python wheel, else a Linux x86-64 wheel (its ``.py`` files are the same on every platform), else
    the source archive (DeepSpeed and mmcv publish nothing else for some releases)."""
    name = re.sub(r"[-_.]+", "-", dist).lower()
    req = urllib.request.Request(SIMPLE.format(name=name), headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        files = json.load(r)["files"]
    stem = re.sub(r"[-_.]+", "_", dist).lower() + "-" + version
    mine = [
        f for f in files if f["filename"].lower().startswith(stem + "-") or f["filename"].lower() == stem + ".tar.gz"
    ]

    def rank(f):
        fn = f["filename"]
        if fn.endswith("-none-any.whl"):
            return 0
        if fn.endswith(".whl") and "x86_64" in fn and "linux" in fn:
            return 1 if ("cp312" in fn or "abi3" in fn) else 2
        if fn.endswith(".whl"):
            return 3
        return 4 if fn.endswith(".tar.gz") else 9

    mine = sorted((f for f in mine if rank(f) < 9), key=lambda f: (rank(f), f["filename"]))
    if not mine:
        raise RuntimeError(f"{dist}=={version}: no wheel or source archive on the index")
    f = mine[0]
    return {"file": f["filename"], "url": f["url"], "sha256": f.get("hashes", {}).get("sha256")}


def _key(r: dict) -> tuple:
    return (r["o"], r["t"], r["x"], r["f"], r["fn"], r["c"])


def build(out: Path, releases=RELEASES) -> dict:
    meta: dict = {"kind": "libraries", "releases": []}
    records: list[dict] = []
    seen: set[tuple] = set()
    for dist, version in releases:
        rec = _release_file(dist, version)
        library = LIBRARY.get(dist, dist)
        found = sites_of_sources(sources(rec["url"], rec["sha256"]), library, version)
        kept = [r for r in found if _key(r) not in seen]  # RELEASES lists each library newest first
        seen.update(_key(r) for r in found)
        records += kept
        meta["releases"].append(
            {"library": library, "version": version, "file": rec["file"], "sha256": rec["sha256"],
             "sites": len(found), "kept": len(kept)}
        )  # fmt: skip
        print(f"{library} {version}: {len(found)} sites, {len(kept)} new", file=sys.stderr)
    records.sort(key=lambda r: (r["o"], r["v"], r["f"], r["l"] or 0, r["t"]))
    write_data(out, meta, records)
    return meta


def write_data(out: Path, meta: dict, records: list[dict]) -> None:
    """A raise-site data file: gzipped JSON lines, the metadata first, no timestamp (the same
    inputs give the same bytes)."""
    with open(out, "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as gz:
        gz.write((json.dumps({"meta": meta}, sort_keys=True) + "\n").encode())
        for r in records:
            gz.write((json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n").encode())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m explainer.knowledge.libsites_build")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[2] / "data" / "libsites.jsonl.gz")
    args = ap.parse_args(argv)
    meta = build(args.out)
    print(
        f"{args.out}: {args.out.stat().st_size} bytes; "
        + ", ".join(f"{r['library']} {r['version']}: {r['sites']}" for r in meta["releases"])
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
