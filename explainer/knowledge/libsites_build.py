"""Build ``data/libsites.jsonl.gz``: the raise sites of the libraries around torch, found in their own
Python sources by the long tail's extractor (:func:`explainer.knowledge.longtail_build.python_sites`).

For each release of :data:`RELEASES`, the wheel is downloaded (``pip download --no-deps``, build time
only) and every ``raise``, ``assert`` and warning of its ``.py`` files becomes a record: template,
exception type, file, line, function, failed condition, with ``o`` the library and ``v`` its release.
The data file's first line is its metadata (releases, wheel file names and sha256). Rebuild::

    python -m explainer.knowledge.libsites_build            # writes data/libsites.jsonl.gz
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from explainer.knowledge.longtail_build import python_sites

# the libraries whose errors reach users most (the population's raised_by), at the releases the
# project pins for its tests and the last release of the previous major where users still are
RELEASES = (
    ("transformers", "5.25.0"),
    ("transformers", "4.57.6"),
    ("huggingface-hub", "2.4.0"),
    ("huggingface-hub", "0.36.0"),
    ("diffusers", "0.42.1"),
    ("accelerate", "1.16.0"),
    ("peft", "0.21.2"),
    ("safetensors", "0.8.0"),
    ("pytorch-lightning", "2.6.6"),
    ("ultralytics", "8.4.190"),
    ("sentence-transformers", "6.3.0"),
    ("gradio", "6.31.0"),
    ("nnunetv2", "2.8.1"),
    ("timm", "1.0.31"),
    ("mmengine", "0.10.7"),
)
SKIP = ("/tests/", "/test_", "/examples/", "/benchmark", "/commands/", "/_vendor/")


def _download(dist: str, version: str, into: Path) -> Path:
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", str(into),
         "--python-version", "3.12", f"{dist}=={version}"],
        check=True, capture_output=True, env=env, timeout=600,
    )  # fmt: skip
    norm = dist.replace("-", "_").lower()
    return next(p for p in into.glob("*.whl") if p.name.lower().startswith(norm + "-" + version))


def sites_of_wheel(whl: Path, library: str, version: str) -> list[dict]:
    out = []
    with zipfile.ZipFile(whl) as z:
        for name in sorted(z.namelist()):
            if not name.endswith(".py") or ".dist-info/" in name or any(s in "/" + name for s in SKIP):
                continue
            try:
                source = z.read(name).decode("utf-8")
            except (UnicodeDecodeError, KeyError):
                continue
            for r in python_sites(source, name, version):
                out.append({**r, "o": library})
    return out


def build(out: Path, releases=RELEASES) -> dict:
    meta: dict = {"kind": "libraries", "releases": []}
    records: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for dist, version in releases:
            whl = _download(dist, version, Path(tmp))
            library = {"huggingface-hub": "huggingface_hub"}.get(dist, dist)
            found = sites_of_wheel(whl, library, version)
            records += found
            meta["releases"].append(
                {"library": library, "version": version, "file": whl.name,
                 "sha256": hashlib.sha256(whl.read_bytes()).hexdigest(), "sites": len(found)}
            )  # fmt: skip
    records.sort(key=lambda r: (r["o"], r["v"], r["f"], r["l"] or 0, r["t"]))
    with open(out, "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as gz:
        gz.write((json.dumps({"meta": meta}, sort_keys=True) + "\n").encode())
        for r in records:
            gz.write((json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n").encode())
    return meta


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
