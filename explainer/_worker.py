"""Snippet worker: imports torch once, then executes snippets sent as JSON lines on stdin.

Started by :mod:`explainer.knowledge.verify`; never imported by the core. Each snippet runs as ``__main__``
of a real file in a temporary directory, so its traceback shows its own source lines. Output the
snippet writes (also from child processes) is captured at the file-descriptor level.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import sys
import tempfile
import traceback
import warnings

_PLATFORMS = {"linux": "linux", "windows": "win32", "macos": "darwin"}
# a command a snippet runs: the names it goes by, and what the skip reason calls it
_TOOLS = {
    "c-compiler": (("c++", "g++", "clang++", "cc", "gcc"), "a C/C++ compiler"),
    "ninja": (("ninja",), "ninja"),
    "conda": (("conda", "mamba", "micromamba"), "conda (or mamba)"),
}


def _version_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v.split("+")[0])[:3])


def unmet(requirement: str) -> str | None:
    """None when the requirement holds here, else the reason it does not."""
    if requirement in _PLATFORMS:
        return None if sys.platform.startswith(_PLATFORMS[requirement]) else f"needs {requirement}"
    if requirement in _TOOLS:
        import shutil

        tools, what = _TOOLS[requirement]
        return None if any(shutil.which(t) for t in tools) else f"needs {what} on PATH"
    if requirement in ("torchvision", "triton"):
        return None if importlib.util.find_spec(requirement) else f"needs {requirement} installed"
    m = re.match(r"pkg:([A-Za-z0-9][A-Za-z0-9_.-]*)((?:>=|<=|==|<|>)[0-9][0-9.]*)?$", requirement)
    if m:  # an installed distribution, optionally of some releases: pkg:transformers>=4.40
        from importlib import metadata

        from explainer.facts import satisfies

        try:
            installed = metadata.version(m.group(1))
        except metadata.PackageNotFoundError:
            return f"needs {m.group(1)} installed"
        if m.group(2) and not satisfies(installed, m.group(2)):
            return f"needs {m.group(1)}{m.group(2)} (have {installed})"
        return None
    try:
        import torch
    except ImportError:
        return "needs torch"
    if requirement in ("old-cuda-driver", "broken-cuda-driver"):
        # a CUDA build on a machine with an NVIDIA driver it cannot use: the only place the error arises
        has_driver = os.path.exists("/proc/driver/nvidia/version") or sys.platform == "win32"
        if torch.version.cuda and has_driver and not torch.cuda.is_available():
            return None
        if requirement == "broken-cuda-driver":
            return "needs a CUDA build of torch on a machine whose loaded NVIDIA driver cannot start CUDA"
        return "needs a CUDA build of torch on a machine whose NVIDIA driver is older than that build's CUDA"
    if requirement == "cuda":
        return None if torch.cuda.is_available() else "needs a CUDA GPU"
    if requirement == "cpu-build":  # what a CPU-only build raises (a CUDA build without a GPU says otherwise)
        built = torch.version.cuda or getattr(torch.version, "hip", None)
        return None if not built else f"needs a CPU-only build of torch (this {torch.__version__} is built for a GPU)"
    if requirement == "multi-gpu":
        return None if torch.cuda.is_available() and torch.cuda.device_count() > 1 else "needs two or more CUDA GPUs"
    if requirement == "mps":
        return None if torch.backends.mps.is_available() else "needs Apple MPS"
    if requirement == "numpy<2":
        import numpy

        return None if _version_tuple(numpy.__version__) < (2,) else "needs numpy<2"
    m = re.match(r"torch(>=|<|==)([0-9.]+)$", requirement)
    if m:
        have, want = _version_tuple(torch.__version__), _version_tuple(m.group(2))
        ok = {">=": have >= want, "<": have < want, "==": have[: len(want)] == want}[m.group(1)]
        return None if ok else f"needs torch{m.group(1)}{m.group(2)} (have {torch.__version__})"
    return f"unknown requirement {requirement}"


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(f"{record.levelname}:{record.name}:{record.getMessage()}")
        except Exception:  # a broken log call must not break the worker
            pass


def run_one(req: dict, workdir: str) -> dict:
    for requirement in req.get("requires", []):
        reason = unmet(requirement)
        if reason:
            return {"status": "skip", "reason": reason}
    path = os.path.join(workdir, f"{req.get('name', 'snippet')}.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(req["code"])
    result: dict = {"status": "ok", "exc": None}
    records = _Records()
    root = logging.getLogger()
    root.addHandler(records)
    capture = tempfile.TemporaryFile(mode="w+b")
    saved = os.dup(1), os.dup(2)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(capture.fileno(), 1)
    os.dup2(capture.fileno(), 2)
    namespace = {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__}
    old_cwd = os.getcwd()
    os.chdir(workdir)
    sys.path.insert(0, workdir)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                # optimize=0: asserts are compiled whatever the interpreter's -O level, so a fix
                # whose assertion fails can never pass under PYTHONOPTIMIZE
                exec(
                    compile(req["code"], path, "exec", optimize=0, dont_inherit=True), namespace
                )  # not this module's __future__ flags
            except BaseException as exc:  # noqa: BLE001 - reporting it is the point
                tb = exc.__traceback__.tb_next if exc.__traceback__ else None
                exc = exc.with_traceback(tb)
                cls = type(exc)
                result["exc"] = {
                    "type": cls.__name__,
                    "qualname": f"{cls.__module__}.{cls.__qualname__}".removeprefix("builtins."),
                    "message": str(exc),
                    "traceback": "".join(traceback.format_exception(exc)),
                }
        result["warnings"] = [
            {"category": w.category.__name__, "message": str(w.message), "file": w.filename} for w in caught
        ]
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])
        os.chdir(old_cwd)
        sys.path.remove(workdir)
        root.removeHandler(records)
    capture.seek(0)
    output = capture.read().decode("utf-8", "replace")
    capture.close()
    result["output"] = output[-20000:]
    result["logs"] = records.lines[-200:]
    return result


def _reset_state(environ: dict[str, str]) -> None:
    """What a snippet may have changed for the next one: environment variables, the default dtype
    and device, grad mode, anomaly detection, distributions' argument validation (the first
    ``torch.compile`` of a process switches it off for good) (the working directory is restored by
    ``run_one``)."""
    if os.environ != environ:
        os.environ.clear()
        os.environ.update(environ)
    torch = sys.modules.get("torch")
    if torch is None:
        return
    for reset in (
        lambda: torch.set_grad_enabled(True),
        lambda: torch.set_default_dtype(torch.float32),
        lambda: torch.set_default_device(None),
        lambda: torch.autograd.set_detect_anomaly(False),
        lambda: (
            "torch.distributions" in sys.modules
            and torch.distributions.Distribution.set_default_validate_args(__debug__)
        ),
    ):
        try:
            reset()
        except Exception:
            pass


def main() -> None:
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # nothing a snippet prints can corrupt the protocol stream
    if "--lazy" not in sys.argv:
        try:
            import torch  # noqa: F401 - imported once for every snippet this worker runs
        except ImportError:
            pass
    with tempfile.TemporaryDirectory(prefix="tbx-snippet-") as workdir:
        proto.write(json.dumps({"ready": True}) + "\n")
        proto.flush()
        environ = dict(os.environ)
        for line in sys.stdin:
            if not line.strip():
                continue
            req = json.loads(line)
            try:
                res = run_one(req, workdir)
            except BaseException as exc:  # noqa: BLE001
                res = {"status": "error", "reason": f"worker failure: {exc!r}"}
            _reset_state(environ)
            proto.write(json.dumps(res) + "\n")
            proto.flush()


if __name__ == "__main__":
    main()
