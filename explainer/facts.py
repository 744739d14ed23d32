"""Facts about packages, versions and drivers (``data/facts.json``, built by
:mod:`explainer.knowledge.facts_build` from the packages' own metadata), and the small version
arithmetic that reads them. Loaded on first use: an answer about torch never reads this file."""

from __future__ import annotations

import functools
import json
import os
import re

from explainer.paths import data_dir

# NVIDIA's minimum driver for each CUDA major release under minor version compatibility (a torch wheel
# carries its CUDA runtime, so the driver must reach the runtime's major family's minimum). Source:
# https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html (Table 1, checked
# 2026-12-06: 11.x >= 450.80.02 on Linux / 452.39 on Windows, 12.x >= 525, 13.x >= 580; the CUDA 12.0
# and 13.0 release notes give the Linux builds 525.60.13 and 580.65.06).
# Before CUDA 11 each minor release needed its own driver (the release notes' "CUDA Toolkit and Corresponding
# Driver Versions" table, Linux x86-64; the Windows values are not recorded here, so a report from Windows
# with such an old CUDA gets no driver verdict).
CUDA_MIN_DRIVER: dict[str, tuple[str | None, str | None]] = {
    "13": ("580.65.06", "580"),
    "12": ("525.60.13", "525"),
    "11": ("450.80.02", "452.39"),
    "10.2": ("440.33", None),
    "10.1": ("418.39", None),
    "10.0": ("410.48", None),
    "9.2": ("396.26", None),
    "9.0": ("384.81", None),
}
CUDA_MIN_DRIVER_SOURCE = "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html"

_FACTS: dict | None = None


def facts() -> dict:
    """The data file, read once ({} where it is missing: every answer that needs it then says less)."""
    global _FACTS
    if _FACTS is None:
        try:
            with open(os.path.join(data_dir(), "facts.json"), encoding="utf-8") as f:
                _FACTS = json.load(f)
        except (OSError, ValueError):
            _FACTS = {}
    return _FACTS


def version_key(v: str) -> tuple:
    """A sortable key for a release string (``2.3.0+cu121`` -> (2, 3, 0); local parts ignored)."""
    v = v.split("+", 1)[0].strip().lower()
    out = []
    for part in re.findall(r"\d+|[a-z]+", v[:64]):
        out.append((0, int(part)) if part.isdigit() else (-1, part))
    while out and out[-1] == (0, 0):
        out.pop()
    return tuple(out)


def satisfies(version: str, spec: str) -> bool | None:
    """Whether ``version`` meets a requirement such as ``==2.3.0``, ``>=1.8,<2`` or ``==2.3.*``;
    None where the spec cannot be read."""
    v = version_key(version)
    for clause in (c.strip() for c in spec.split(",") if c.strip()):
        m = re.fullmatch(r"(===|==|!=|>=|<=|~=|>|<)\s*([\w.*+!-]+)", clause)
        if not m:
            return None
        op, target = m.groups()
        if target.endswith(".*"):
            prefix = version_key(target[:-2])
            ok = v[: len(prefix)] == prefix
            if (op == "==" and not ok) or (op == "!=" and ok):
                return False
            continue
        t = version_key(target)
        if op == "~=":
            ok = v >= t and v[: max(1, len(t) - 1)] == t[: max(1, len(t) - 1)]
        else:
            ok = {
                "==": v == t,
                "===": v == t,
                "!=": v != t,
                ">=": v >= t,
                "<=": v <= t,
                ">": v > t,
                "<": v < t,
            }[op]
        if not ok:
            return False
    return True


def torch_for(dist: str, version: str) -> str | None:
    """The torch requirement of a companion release (``torchvision`` 0.18.0 -> ``==2.3.0``)."""
    rec = facts().get("pins", {}).get(dist.lower(), {}).get(version.split("+", 1)[0])
    return rec["torch"] if rec else None


def companion_for(dist: str, torch_version: str) -> list[str]:
    """The releases of a companion built for ``torch_version`` (exact pins only)."""
    tv = torch_version.split("+", 1)[0]
    out = []
    for v, rec in facts().get("pins", {}).get(dist.lower(), {}).items():
        spec = rec["torch"]
        if spec.startswith("==") and "," not in spec and version_key(spec[2:]) == version_key(tv):
            out.append(v)
    return out


def distributions_of(import_name: str) -> list[str]:
    """The distributions that provide a top-level import name (``cv2`` -> opencv-python, ...)."""
    return list(facts().get("import_names", {}).get(import_name.split(".", 1)[0], []))


def distributions_of_command(command: str) -> list[str]:
    """The distributions that install a command (``torchrun`` -> torch, ``yolo`` -> ultralytics)."""
    return list(facts().get("commands", {}).get(command, []))


def min_driver(cuda: str, windows: bool = False) -> str | None:
    """The least driver that runs a CUDA ``cuda`` runtime (minor version compatibility)."""
    parts = cuda.split(".")
    rec = CUDA_MIN_DRIVER.get(".".join(parts[:2])) or (
        CUDA_MIN_DRIVER.get(parts[0]) if parts[0].isdigit() and int(parts[0]) >= 11 else None
    )
    return rec[1 if windows else 0] if rec else None


_NAMES: dict | None = None


def names() -> dict:
    """``data/names.json.gz`` (modules, exported names and model types per release), read once."""
    global _NAMES
    if _NAMES is None:
        import gzip

        try:
            with gzip.open(os.path.join(data_dir(), "names.json.gz"), "rt", encoding="utf-8") as f:
                _NAMES = json.load(f).get("libraries", {})
        except (OSError, ValueError, EOFError):
            _NAMES = {}
    return _NAMES


# namespaces a library creates at run time, not found among any wheel's files: transformers copies a
# model's remote code into ``transformers_modules`` (``TRANSFORMERS_DYNAMIC_MODULE_NAME`` in its hub utils)
RUNTIME_NAMESPACES = {"transformers_modules": "transformers"}


def known_module(import_name: str) -> bool:
    """Whether a top-level import name is a known distribution's, the standard library's or a
    library's run-time namespace; an unknown one is as likely a project's own module."""
    import sys

    top = import_name.split(".", 1)[0]
    return bool(top in sys.stdlib_module_names or top in RUNTIME_NAMESPACES or distributions_of(top) or library_of(top))


def library_of(package: str) -> str | None:
    """The library (a key of the names data) whose top-level package is ``package``."""
    for lib, rec in names().items():
        if rec.get("package") == package:
            return lib
    return None


class History:
    """Which indexed releases of a library have something: ``first``/``last`` release that has it,
    ``removed_in`` (the first release after it that lacks it), ``added_in`` (the first that has it,
    when an earlier indexed release lacks it)."""

    def __init__(self, lib: str, releases: list[str], ranges: list[list[int]]) -> None:
        self.lib, self.releases, self.ranges = lib, releases, ranges
        self.first = releases[ranges[0][0]]
        self.last = releases[ranges[-1][1]]
        end = ranges[-1][1]
        self.removed_in = releases[end + 1] if end + 1 < len(releases) else None
        self.added_in = self.first if ranges[0][0] > 0 else None
        self.oldest, self.newest = releases[0], releases[-1]

    def has(self, version: str) -> bool | None:
        """Whether ``version`` has it (None: outside the indexed releases)."""
        k = version_key(version)
        if k < version_key(self.oldest) or k > version_key(self.newest):
            return None
        for a, b in self.ranges:
            if version_key(self.releases[a]) <= k <= version_key(self.releases[b]):
                return True
            # a release between two indexed ones that both have it has it too
            if b + 1 < len(self.releases) and version_key(self.releases[b]) < k < version_key(self.releases[b + 1]):
                return None
        return False


def history(lib: str, kind: str, item: str) -> History | None:
    """The history of a module (``kind="modules"``), an exported name (``"names"``) or a
    transformers model type (``"model_types"``) in ``lib``; None where the data does not know it."""
    rec = names().get(lib)
    if not rec or item not in rec.get(kind, {}):
        return None
    known = rec.get("known", {}).get(kind)  # the releases whose ``kind`` could be read, in order
    releases = [rec["releases"][i] for i in known] if known else rec["releases"]
    return History(lib, releases, rec[kind][item])


_BARE: dict[str, dict[str, list[str]]] = {}  # lib -> callable's last name -> its qualified names
# decorators that may take keywords the signature lacks (transformers' deprecate_kwarg, the hub's
# validate_hf_hub_args, ...), as libraries name them; others (lightning's _defaults_from_env_vars) do not
_TRANSLATES = re.compile(r"deprecat|kwarg|validat|renam|legacy|alias", re.I)


def _decorators(key: str, params: dict) -> list[str]:
    prefix = f"{key}:@"
    return [item[len(prefix) :] for item in params if item.startswith(prefix)]


@functools.lru_cache(maxsize=256)  # the matcher, raised_by and the notes all ask it of one paste
def param_history(callee: str, kw: str) -> tuple[tuple[str, History], ...]:
    """The libraries whose indexed releases know the callable ``callee`` ("Accelerator.__init__",
    "hf_hub_download", or a method's bare name as Python before 3.10 prints it) and the history of
    its keyword argument ``kw`` there (``data/names.json.gz``'s ``params``), where some indexed
    release of that callable lacks the argument (added or removed: a matter of versions)."""
    out = []
    for lib, rec in names().items():
        params = rec.get("params")
        if not params:
            continue
        if "." in callee or f"{callee}:" in params:
            keys = [callee]
        else:  # a bare name: the methods of that name (__init__ alone says nothing)
            if lib not in _BARE:
                table: dict[str, list[str]] = {}
                for item in params:
                    if item.endswith(":"):
                        table.setdefault(item[:-1].rsplit(".", 1)[-1], []).append(item[:-1])
                _BARE[lib] = table
            keys = _BARE[lib].get(callee, []) if callee != "__init__" else []
        for key in keys:
            if f"{key}:**" in params or any(_TRANSLATES.search(d) for d in _decorators(key, params)):
                continue  # its signature does not say which keywords a release rejects
            h = history(lib, "params", f"{key}:{kw}")
            whole = history(lib, "params", f"{key}:")
            if h and whole and (h.first != whole.first or h.last != whole.last or len(h.ranges) > 1):
                out.append((lib, h))
    return tuple(out)
