"""Build ``data/names.json.gz``: which release of a library has which module and public name, read
from the libraries' own wheels.

For each library of :data:`LIBRARIES` and each of its minor releases (the first release of every
``x.y``, plus the newest), the wheel's zip directory gives its modules, and its top-level
``__init__.py`` the names it exports (read with ``ast``: names bound at top level, imported, listed
in ``__all__`` or in the lazy-import tables these libraries keep, e.g. huggingface_hub's
``_SUBMOD_ATTRS``, transformers' ``_import_structure``). For transformers, the model types its auto
classes know (``models/auto/configuration_auto.py``'s ``CONFIG_MAPPING_NAMES``). Only the zip
directory and those files are fetched, by HTTP range requests; each release records its wheel file
and the sha256 the index gives for it.

A name or module is stored with the ranges of release indexes that have it, so the answer can say
"present up to 0.25.2, removed in 0.26.0". Like :mod:`explainer.knowledge.facts_build`, a ``fetch``
step stores the raw answers and a ``build`` step is a pure function of them::

    python -m explainer.knowledge.names_build fetch --cache DIR
    python -m explainer.knowledge.names_build build --cache DIR     # writes data/names.json.gz
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import gzip
import json
import re
import sys
import zlib
from pathlib import Path

from explainer.knowledge.facts_build import PLATFORMS, _version_key, report, versions, zip_directory, zip_read

# library -> (distribution, top-level package, oldest release worth knowing)
LIBRARIES = {
    "transformers": ("transformers", "transformers", "4.0.0"),
    "huggingface_hub": ("huggingface-hub", "huggingface_hub", "0.10.0"),
    "diffusers": ("diffusers", "diffusers", "0.10.0"),
    "accelerate": ("accelerate", "accelerate", "0.15.0"),
    "peft": ("peft", "peft", "0.3.0"),
    "torchvision": ("torchvision", "torchvision", "0.9.0"),
    "torchaudio": ("torchaudio", "torchaudio", "0.8.0"),
    "timm": ("timm", "timm", "0.4.0"),
    "lightning": ("pytorch-lightning", "pytorch_lightning", "1.5.0"),
    "numpy": ("numpy", "numpy", "1.20.0"),
    "Pillow": ("Pillow", "PIL", "8.0.0"),
    "mmengine": ("mmengine", "mmengine", "0.5.0"),
    "tokenizers": ("tokenizers", "tokenizers", "0.10.0"),
    "safetensors": ("safetensors", "safetensors", "0.3.0"),
    "sentence_transformers": ("sentence-transformers", "sentence_transformers", "2.0.0"),
    "gradio": ("gradio", "gradio", "3.30.0"),
    # the libraries whose moved modules the population samples show next (ultralytics.yolo,
    # torchtext.legacy, fastchat.protocol, TTS.tts.models.*), and the fine-tuning and serving stack
    "ultralytics": ("ultralytics", "ultralytics", "8.0.0"),
    "torchtext": ("torchtext", "torchtext", "0.6.0"),
    "fastchat": ("fschat", "fastchat", "0.2.0"),
    "TTS": ("coqui-tts", "TTS", "0.22.1"),
    "trl": ("trl", "trl", "0.4.0"),
    "datasets": ("datasets", "datasets", "2.0.0"),
    "vllm": ("vllm", "vllm", "0.2.0"),
}


def exported_names(source: str) -> list[str]:
    """Names a package's ``__init__.py`` offers: bound at top level (assignments, defs, classes,
    imports), in ``__all__``, or in the lazy tables (every identifier string in a top-level dict,
    list or tuple literal: ``{"file_download": ["cached_download", ...]}``)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if a.name != "*":
                    names.add((a.asname or a.name).split(".")[0])
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Dict, ast.List, ast.Tuple, ast.Set)):
            for c in ast.walk(node):
                if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value.isidentifier():
                    names.add(c.value)
    return sorted(n for n in names if not n.startswith("__") or n == "__version__")


# the modules that define what users pass keyword options to (the configs, trainers, loaders and
# hub calls whose options come and go between releases); read in every indexed release
PARAM_MODULES = {
    "transformers": (
        "transformers/training_args.py",
        "transformers/training_args_seq2seq.py",
        "transformers/trainer.py",
        "transformers/trainer_seq2seq.py",
        "transformers/tokenization_utils_base.py",
        "transformers/generation/configuration_utils.py",
        "transformers/pipelines/__init__.py",
    ),
    "accelerate": ("accelerate/accelerator.py",),
    "huggingface_hub": (
        "huggingface_hub/file_download.py",
        "huggingface_hub/_snapshot_download.py",
        "huggingface_hub/hf_api.py",
    ),
    "peft": ("peft/tuners/lora.py", "peft/tuners/lora/config.py", "peft/peft_model.py", "peft/mapping.py"),
    "lightning": ("pytorch_lightning/trainer/trainer.py",),
    "sentence_transformers": ("sentence_transformers/SentenceTransformer.py",),
    "diffusers": ("diffusers/pipelines/pipeline_utils.py",),
    # the UI components whose options and methods gradio 4 removed (Textbox(...).style())
    "gradio": ("gradio/components.py", "gradio/components/*.py"),
}


_PLAIN_DECORATORS = frozenset({"staticmethod", "classmethod", "property", "abstractmethod", "overload", "wraps"})


def _arg_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The keyword-able parameters, and marks: ``**`` when the callable takes ``**kwargs`` (any
    keyword passes its signature) and ``@name`` for each decorator that wraps it (one may take
    keywords the signature lacks: an old name it still translates)."""
    a = fn.args
    out = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs) if x.arg not in ("self", "cls")]
    if a.kwarg is not None:
        out.append("**")
    for d in fn.decorator_list:
        name = ast.unparse(d.func if isinstance(d, ast.Call) else d).rsplit(".", 1)[-1]
        if name not in _PLAIN_DECORATORS:
            out.append("@" + name)
    return out


def callables(source: str) -> list[str]:
    """The public callables a module defines and the keyword arguments each accepts, as
    ``"Name.__init__:arg"`` (a class: its ``__init__``, or a dataclass's fields), ``"Name.method:arg"``
    and ``"function:arg"``, plus ``"Name.__init__:"`` for the callable itself (so a release that has
    the callable but not the argument is told apart from one that lacks both)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            out.update([f"{node.name}:", *(f"{node.name}:{a}" for a in _arg_names(node))])
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            init = None
            fields = []
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if item.name == "__init__":
                        init = item
                    elif not item.name.startswith("_"):
                        key = f"{node.name}.{item.name}"
                        out.update([f"{key}:", *(f"{key}:{a}" for a in _arg_names(item))])
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    if not item.target.id.startswith("_") and "ClassVar" not in ast.unparse(item.annotation):
                        fields.append(item.target.id)
            args = _arg_names(init) if init else fields
            if init or fields:
                out.update([f"{node.name}.__init__:", *(f"{node.name}.__init__:{a}" for a in args)])
    return sorted(out)


def _index_files(dist: str) -> dict[str, str]:
    """File name -> URL of every file the index holds for ``dist`` (its simple API, read once)."""
    import urllib.request

    from explainer.knowledge.libsites_build import SIMPLE

    name = re.sub(r"[-_.]+", "-", dist).lower()
    req = urllib.request.Request(SIMPLE.format(name=name), headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return {f["filename"]: f["url"] for f in json.load(r)["files"]}


def fetch_params(cache: Path, only: list[str] | None = None) -> None:
    """For every release the names data indexes (``names-raw.json``: the same wheel files), the
    callables of :data:`PARAM_MODULES` and their keyword arguments, into ``params-raw.json``."""
    from concurrent.futures import ThreadPoolExecutor

    raw = json.loads((cache / "names-raw.json").read_text())
    out_path = cache / "params-raw.json"
    out = json.loads(out_path.read_text()) if out_path.exists() else {}
    for lib, paths in PARAM_MODULES.items():
        if only and lib not in only or lib not in raw:
            continue
        urls = _index_files(LIBRARIES[lib][0])
        done = out.setdefault(lib, {})
        todo = [v for v in raw[lib] if v not in done]

        def one(v: str, lib=lib, paths=paths, urls=urls):
            rec = raw[lib][v]
            url = urls.get(rec["file"])
            if not url:
                return v, None
            entries = zip_directory(url)
            found: set[str] = set()
            for name in sorted(entries):
                if any(fnmatch.fnmatchcase(name, path) for path in paths):
                    found.update(callables(zip_read(url, entries[name]).decode("utf-8", "replace")))
            return v, {"file": rec["file"], "sha256": rec["sha256"], "params": sorted(found)}

        with ThreadPoolExecutor(8) as pool:
            for v, rec in pool.map(one, todo):
                if rec is None:
                    print(f"{lib} {v}: file not on the index", file=sys.stderr)
                    continue
                done[v] = rec
                print(f"{lib} {v}: {len(rec['params'])} callables and arguments", file=sys.stderr)
        out_path.write_text(json.dumps(out, sort_keys=True))


def model_types(source: str) -> list[str]:
    """transformers' model types: the keys of ``CONFIG_MAPPING_NAMES`` (``OrderedDict`` of string
    pairs, from 4.10; ``models/auto/auto_mappings.py`` from 5.x, with more added by
    ``CONFIG_MAPPING_NAMES.update({...})``) or, before 4.10, of ``CONFIG_MAPPING``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found: set[str] = set()
    for node in ast.walk(tree):
        value = None
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in ("CONFIG_MAPPING_NAMES", "CONFIG_MAPPING") for t in node.targets
        ):
            value = node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "update"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "CONFIG_MAPPING_NAMES"
        ):
            value = node
        if value is None:
            continue
        for e in ast.walk(value):
            if isinstance(e, ast.Tuple) and len(e.elts) == 2 and isinstance(e.elts[0], ast.Constant):
                if isinstance(e.elts[0].value, str):
                    found.add(e.elts[0].value)
            elif isinstance(e, ast.Dict):
                found.update(k.value for k in e.keys if isinstance(k, ast.Constant) and isinstance(k.value, str))
    return sorted(found)


def _modules(names: list[str], package: str) -> list[str]:
    out = set()
    for name in names:
        if not name.startswith(package + "/") or not name.endswith((".py", ".so", ".pyd")):
            continue
        parts = name.rsplit(".", 1)[0].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        elif parts[-1].endswith(("-linux-gnu", "-darwin")) or "." in parts[-1]:
            parts[-1] = parts[-1].split(".", 1)[0]
        if all(p.isidentifier() for p in parts):
            out.add(".".join(parts))
    return sorted(out)


def minor_releases(all_versions: list[str], since: str) -> list[str]:
    """The first final release of every ``x.y`` from ``since``, and the newest."""
    finals = [v for v in all_versions if re.fullmatch(r"\d+(\.\d+)*", v) and _version_key(v) >= _version_key(since)]
    out, seen = [], set()
    for v in finals:
        key = tuple(v.split(".")[:2])
        if key not in seen:
            seen.add(key)
            out.append(v)
    if finals and finals[-1] not in out:
        out.append(finals[-1])
    # the last release of each minor too, so "present up to" is exact at minor granularity
    lasts = {}
    for v in finals:
        lasts[tuple(v.split(".")[:2])] = v
    return sorted(set(out) | set(lasts.values()), key=_version_key)


def fetch(cache: Path, only: list[str] | None = None) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    raw_path = cache / "names-raw.json"
    raw = json.loads(raw_path.read_text()) if raw_path.exists() else {}
    for lib, (dist, package, since) in LIBRARIES.items():
        if only and lib not in only:
            continue
        rels = raw.setdefault(lib, {})
        for v in minor_releases(versions(dist), since):
            if v in rels:
                continue
            rec = next((r for p in PLATFORMS if (r := report(dist, v, p))), None)
            if not rec:
                print(f"{lib} {v}: no wheel", file=sys.stderr)
                continue
            try:
                entries = zip_directory(rec["url"])
                init = entries.get(f"{package}/__init__.py")
                names = exported_names(zip_read(rec["url"], init).decode("utf-8", "replace")) if init else []
                types: set[str] = set()
                for path in ("configuration_auto.py", "auto_mappings.py"):
                    cfg = entries.get(f"transformers/models/auto/{path}")
                    if lib == "transformers" and cfg:
                        types.update(model_types(zip_read(rec["url"], cfg).decode("utf-8", "replace")))
            except (OSError, ValueError, zlib.error) as exc:
                print(f"{lib} {v}: {exc}", file=sys.stderr)
                continue
            rels[v] = {
                "file": rec["file"],
                "sha256": rec["sha256"],
                "modules": _modules(list(entries), package),
                "names": names,
                "model_types": sorted(types),
            }
            print(
                f"{lib} {v}: {len(rels[v]['modules'])} modules, {len(names)} names, {len(types)} types", file=sys.stderr
            )
            raw_path.write_text(json.dumps(raw, sort_keys=True))


def _ranges(indexes: list[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for i in indexes:
        if out and out[-1][1] == i - 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return out


UNREADABLE_SHARE = 0.5  # a release whose __init__ yields under half the names of the releases before it


def build(raw: dict, params: dict | None = None) -> dict:
    """The data file's content (a pure function of the fetched answers).

    A release whose ``__init__.py`` builds its exports at run time (transformers from 4.5x reads
    them from its files) shows far fewer names than the releases before it: its names are unknown,
    not removed, and that release is left out of the names' axis (``known``)."""
    libs = {}
    raw = {lib: {v: dict(rec) for v, rec in rels.items()} for lib, rels in raw.items()}
    for lib, rels in (params or {}).items():  # the keyword arguments, read from the same wheel files
        for v, rec in rels.items():
            if v in raw.get(lib, {}) and raw[lib][v]["sha256"] == rec["sha256"]:
                raw[lib][v]["params"] = rec["params"]
    for lib in sorted(raw):
        rels = sorted(raw[lib], key=_version_key)
        if not rels:
            continue
        known: dict[str, list[int]] = {kind: [] for kind in ("modules", "names", "model_types", "params")}
        most = 0
        for i, v in enumerate(rels):
            rec = raw[lib][v]
            for kind in known:
                if not rec.get(kind):
                    continue
                if kind == "names":
                    if len(rec[kind]) < UNREADABLE_SHARE * most:
                        continue
                    most = max(most, len(rec[kind]))
                known[kind].append(i)
        tables: dict[str, dict[str, list[int]]] = {kind: {} for kind in known}
        for kind, indexes in known.items():
            for pos, i in enumerate(indexes):
                for item in raw[lib][rels[i]].get(kind, ()):
                    tables[kind].setdefault(item, []).append(pos)
        libs[lib] = {
            "distribution": LIBRARIES.get(lib, (lib,))[0],
            "package": LIBRARIES.get(lib, (lib, lib))[1],
            "releases": rels,
            "provenance": [[raw[lib][v]["file"], raw[lib][v]["sha256"]] for v in rels],
            "known": {kind: ix for kind, ix in known.items() if ix},
            **{kind: {k: _ranges(ix) for k, ix in sorted(t.items())} for kind, t in tables.items() if t},
        }
    return {
        "about": "Modules, exported names, (transformers) model types and the keyword arguments of the "
        "callables users configure, per release, read from each release's wheel; rebuild: python -m "
        "explainer.knowledge.names_build fetch --cache DIR && python -m explainer.knowledge.names_build "
        "fetch-params --cache DIR && python -m explainer.knowledge.names_build build --cache DIR",
        "libraries": libs,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m explainer.knowledge.names_build")
    ap.add_argument("step", choices=("fetch", "fetch-params", "build"))
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--only", nargs="*", help="fetch only these libraries")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[2] / "data" / "names.json.gz")
    args = ap.parse_args(argv)
    if args.step == "fetch":
        fetch(args.cache, args.only)
        return 0
    if args.step == "fetch-params":
        fetch_params(args.cache, args.only)
        return 0
    params = args.cache / "params-raw.json"
    data = build(
        json.loads((args.cache / "names-raw.json").read_text()),
        json.loads(params.read_text()) if params.exists() else None,
    )
    blob = json.dumps(data, separators=(",", ":"), sort_keys=True).encode()
    with open(args.out, "wb") as f:  # mtime 0: the same input gives the same bytes
        with gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as gz:
            gz.write(blob)
    print(f"{args.out}: {args.out.stat().st_size} bytes ({len(blob)} uncompressed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
