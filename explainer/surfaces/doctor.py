"""``tbx doctor``: what is wrong with a PyTorch environment, and the one command that fixes each.

Two sources, the same checks where they apply:

- the live environment: installed distributions' own metadata (:mod:`importlib.metadata`; no package is
  imported, so it takes a fraction of a second even where torch is installed), the current folder,
  ``CUDA_HOME``/``PATH``, the compiler, ``nvidia-smi`` where it exists;
- a pasted report (``python -m torch.utils.collect_env``, ``pip list``, ``pip freeze``, ``conda list``):
  the versions it prints, checked against ``data/facts.json`` (the companions' torch pins, the CUDA of
  torch's wheels, NVIDIA's minimum drivers).

Each check is ``{"id", "status": "ok" | "problem" | "skip", "message", "fix"}`` in the chosen language.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig

from explainer.facts import (
    CUDA_MIN_DRIVER_SOURCE,
    companion_for,
    distributions_of,
    min_driver,
    satisfies,
    torch_for,
    version_key,
)

COMPANIONS = ("torchvision", "torchaudio", "xformers")
MAX_REPORT = 2_000_000  # characters of a pasted report read


def _check(cid: str, status: str, en: str, zh: str, fix: str | None = None, lang: str = "en") -> dict:
    return {"id": cid, "status": status, "message": zh if lang == "zh" else en, "fix": fix}


# --- what an environment is, from either source -------------------------------------------------


class Env:
    """Versions by normalised distribution name, plus what a report or the machine says of CUDA."""

    def __init__(self) -> None:
        self.versions: dict[str, str] = {}
        self.locations: dict[str, list[str]] = {}  # distribution -> the folders it is installed in (live only)
        self.requires: dict[str, list[str]] = {}  # distribution -> its Requires-Dist (live only)
        self.torch_cuda: str | None = None  # the CUDA torch was built with ("12.1"), None for a CPU build
        self.driver: str | None = None
        self.windows = os.name == "nt"
        self.live = False
        self.source = ""


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def live_env() -> Env:
    from importlib import metadata

    env = Env()
    env.live, env.source = True, "this Python (" + sys.executable + ")"
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if not name:
            continue
        n = _norm(name)
        env.locations.setdefault(n, []).append(str(getattr(dist, "_path", "")))
        if n in env.versions:
            continue  # the first on sys.path is the one Python imports
        env.versions[n] = dist.version
        env.requires[n] = dist.requires or []
    tv = env.versions.get("torch")
    if tv:
        m = re.search(r"\+cu(\d+)(\d)$", tv)
        if m:
            env.torch_cuda = f"{m.group(1)}.{m.group(2)}"
        else:
            for req in env.requires.get("torch", []):
                m = re.match(r"nvidia-cuda-runtime-cu\d+\s*\(?==\s*(\d+\.\d+)", req)
                if m and "extra ==" not in req:
                    env.torch_cuda = m.group(1)
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run(
                [smi, "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True, text=True, timeout=10
            ).stdout
            env.driver = out.strip().splitlines()[0].strip() if out.strip() else None
        except (OSError, subprocess.SubprocessError, IndexError):
            env.driver = None
    return env


_PIP_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]{0,100})(?:==|\s{1,40})(\d[\w.+!-]{0,60})(?:\s|$)")
_COLLECT = {
    "torch": re.compile(r"^PyTorch version:\s*(\S{1,60})", re.M),
    "cuda": re.compile(r"^CUDA used to build PyTorch:\s*(\S{1,20})", re.M),
    "driver": re.compile(r"^Nvidia driver version:\s*(\S{1,30})", re.M),
    "os": re.compile(r"^OS:\s*(.{1,100})$", re.M),
}


def report_env(text: str) -> Env:
    """The environment a pasted report describes."""
    text = text[:MAX_REPORT]
    env = Env()
    env.source = "the pasted report"
    for line in text.splitlines():
        s = line.strip()
        s = re.sub(r"^\[(?:pip3?|conda)\]\s*", "", s)  # collect_env's package lines
        m = _PIP_LINE.match(s)
        if m and not s.lower().startswith(("python version", "pytorch version", "cuda", "os:", "gcc")):
            env.versions.setdefault(_norm(m.group(1)), m.group(2))
    if m := _COLLECT["torch"].search(text):
        env.versions["torch"] = m.group(1)
    if (m := _COLLECT["cuda"].search(text)) and re.match(r"\d", m.group(1)):
        env.torch_cuda = m.group(1)
    elif tv := env.versions.get("torch"):
        if m := re.search(r"\+cu(\d+)(\d)$", tv):
            env.torch_cuda = f"{m.group(1)}.{m.group(2)}"
    if m := _COLLECT["driver"].search(text):
        env.driver = m.group(1)
    if (m := _COLLECT["os"].search(text)) and "windows" in m.group(1).lower():
        env.windows = True
    return env


# --- the checks -------------------------------------------------------------------------------


def check_companions(env: Env, lang: str) -> list[dict]:
    """torchvision / torchaudio / xformers built for another torch than the one installed."""
    out = []
    tv = env.versions.get("torch")
    for dist in COMPANIONS:
        v = env.versions.get(dist)
        if not v:
            continue
        spec = None
        if env.live:
            spec = next(
                (
                    re.sub(r"[()\s]", "", r[5:].split(";")[0])
                    for r in env.requires.get(dist, [])
                    if re.match(r"torch\b(?!\w|-)", r) and "extra ==" not in r
                ),
                None,
            )
        spec = spec or torch_for(dist, v)
        if not tv:
            out.append(_check(f"{dist}-torch", "problem", f"{dist} {v} is installed but torch is not.",
                              f"装了 {dist} {v}，却没有装 torch。", "pip install torch", lang))  # fmt: skip
            continue
        if not spec or spec == "*":
            out.append(_check(f"{dist}-torch", "skip", f"{dist} {v}: its torch requirement is not known here.",
                              f"{dist} {v}：这里不知道它要求的 torch 版本。", None, lang))  # fmt: skip
            continue
        ok = satisfies(tv, spec)
        if ok:
            out.append(_check(f"{dist}-torch", "ok", f"{dist} {v} is built for torch {spec}; torch {tv} is installed.",
                              f"{dist} {v} 对应 torch {spec}，已安装 torch {tv}。", None, lang))  # fmt: skip
            continue
        want = companion_for(dist, tv)
        fix = f'pip install "{dist}=={want[-1]}"' if want else f"pip install --upgrade torch {dist}"
        out.append(
            _check(
                f"{dist}-torch",
                "problem",
                f"{dist} {v} requires torch {spec}, but torch {tv} is installed: its compiled operators "
                f"(and pip's resolver) expect the other release."
                + (f" The {dist} built for torch {tv.split('+')[0]} is {', '.join(want)}." if want else ""),
                f"{dist} {v} 要求 torch {spec}，但安装的是 torch {tv}：它编译好的算子（以及 pip 的依赖解析）"
                f"都按另一个版本来。"
                + (f"与 torch {tv.split('+')[0]} 配套的 {dist} 是 {', '.join(want)}。" if want else ""),
                fix,
                lang,
            )
        )
    return out


def check_numpy(env: Env, lang: str) -> list[dict]:
    """NumPy 2 under a torch (or another package) built for NumPy 1."""
    nv, tv = env.versions.get("numpy"), env.versions.get("torch")
    if not nv:
        return [_check("numpy-abi", "skip", "NumPy is not installed.", "没有安装 NumPy。", None, lang)]
    if version_key(nv) < version_key("2"):
        return [_check("numpy-abi", "ok", f"NumPy {nv} (1.x): every build for NumPy 1 works with it.",
                       f"NumPy {nv}（1.x）：按 NumPy 1 编译的包都能用。", None, lang)]  # fmt: skip
    bad = []
    if tv and version_key(tv) < version_key("2.3"):
        bad.append(f"torch {tv}")
    for dist, reqs in env.requires.items():
        for r in reqs:
            m = re.match(r"numpy\s*\(?([^;)]*)\)?\s*(;.*)?$", r)
            if m and "extra ==" not in (m.group(2) or "") and m.group(1).strip():
                spec = m.group(1).strip()
                if satisfies(nv, spec) is False and re.search(r"<\s*2\b|<=\s*1\.", spec):
                    bad.append(f"{dist} {env.versions.get(dist, '')} (numpy{spec})")
    if not bad:
        return [_check("numpy-abi", "ok", f"NumPy {nv}: no installed package says it needs NumPy 1.",
                       f"NumPy {nv}：已安装的包里没有声明需要 NumPy 1 的。", None, lang)]  # fmt: skip
    return [
        _check(
            "numpy-abi",
            "problem",
            f"NumPy {nv} is installed, but {', '.join(bad[:5])} {'is' if len(bad) == 1 else 'are'} built for NumPy 1.x: "
            "importing them fails with '_ARRAY_API not found' or 'compiled using NumPy 1.x'.",
            f"安装的是 NumPy {nv}，但 {'、'.join(bad[:5])} 是按 NumPy 1.x 编译的：导入时会报 "
            "'_ARRAY_API not found' 或 'compiled using NumPy 1.x'。",
            'pip install "numpy<2"  (or upgrade the packages named to releases built for NumPy 2)',
            lang,
        )
    ]


def check_torch_copies(env: Env, lang: str) -> list[dict]:
    places = [p for p in env.locations.get("torch", []) if p]
    if not env.live or not places:
        return []
    if len(places) > 1:
        return [
            _check(
                "torch-copies",
                "problem",
                f"torch is installed {len(places)} times on this Python's path ({'; '.join(places)}): "
                "Python imports the first, pip may upgrade another.",
                f"这个 Python 的路径上装了 {len(places)} 份 torch（{'; '.join(places)}）：Python 导入的是第一份，"
                "pip 升级的可能是另一份。",
                "python -m pip uninstall -y torch  (repeat until none is left), then install one",
                lang,
            )
        ]
    return [_check("torch-copies", "ok", "One torch on the path.", "路径上只有一份 torch。", None, lang)]


def check_shadowing(env: Env, lang: str, cwd: str | None = None) -> list[dict]:
    """A file or folder in the current folder named like an installed package hides it (the script's
    folder comes first on ``sys.path``)."""
    if not env.live:
        return []
    cwd = cwd or os.getcwd()
    try:
        names = os.listdir(cwd)
    except OSError:
        return []
    hits = []
    for name in sorted(names)[:5000]:
        stem = name[:-3] if name.endswith(".py") else name
        if not stem.isidentifier() or stem.startswith("_"):
            continue
        path = os.path.join(cwd, name)
        is_module = name.endswith(".py") or (
            os.path.isdir(path) and not os.path.exists(os.path.join(path, "setup.py"))
            and not os.path.exists(os.path.join(path, "pyproject.toml"))
        )  # fmt: skip
        dists = [d for d in distributions_of(stem) if _norm(d) in env.versions]
        if stem in ("torch", "numpy", "torchvision") and _norm(stem) in env.versions:
            dists = dists or [stem]
        if is_module and dists:
            hits.append((name, dists[0]))
    if not hits:
        return [_check("shadowing", "ok", "Nothing in this folder hides an installed package.",
                       "当前目录里没有同名文件或文件夹遮住已安装的包。", None, lang)]  # fmt: skip
    what = ", ".join(f"./{n} hides {d}" for n, d in hits[:5])
    what_zh = "，".join(f"./{n} 遮住了 {d}" for n, d in hits[:5])
    return [
        _check(
            "shadowing",
            "problem",
            f"{what}: run from here, `import` finds this folder's copy first "
            '("cannot import name ... (unknown location)", "has no attribute").',
            f"{what_zh}：在这里运行时，`import` 会先找到当前目录里的同名文件或文件夹"
            '（报 "cannot import name ... (unknown location)" 或 "has no attribute"）。',
            f"rename or move ./{hits[0][0]} (or run from another folder)",
            lang,
        )
    ]


def check_cuda_home(env: Env, lang: str) -> list[dict]:
    if not env.live:
        return []
    out = []
    path = os.environ.get("PATH", "")
    if path.startswith(os.pathsep) or path.endswith(os.pathsep) or (os.pathsep * 2) in path:
        out.append(
            _check(
                "path-empty-entry",
                "problem",
                "PATH has an empty entry (a leading, trailing or doubled separator): the current folder is "
                "searched for programs, and build tools that split PATH get an empty folder.",
                "PATH 里有空项（开头、结尾或连续的分隔符）：程序会在当前目录里查找，拆分 PATH 的编译工具会拿到空目录。",
                'export PATH="$(echo "$PATH" | sed -e "s/^://" -e "s/:$//" -e "s/::/:/g")"',
                lang,
            )
        )
    for var in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(var)
        if home is None:
            continue
        nvcc = os.path.join(home, "bin", "nvcc.exe" if os.name == "nt" else "nvcc")
        if not home.strip() or not os.path.isdir(home) or not os.path.exists(nvcc):
            out.append(
                _check(
                    var.lower().replace("_", "-"),
                    "problem",
                    f"{var}={home!r} does not hold a CUDA toolkit (no {nvcc}): extension builds "
                    "(DeepSpeed ops, flash-attn, mmcv) fail.",
                    f"{var}={home!r} 下面没有 CUDA toolkit（找不到 {nvcc}）：编译扩展（DeepSpeed 算子、flash-attn、mmcv）会失败。",
                    f"export {var}=/usr/local/cuda  (the folder whose bin/ holds nvcc), or unset {var}",
                    lang,
                )
            )
        else:
            out.append(
                _check(var.lower().replace("_", "-"), "ok", f"{var} holds nvcc.", f"{var} 下有 nvcc。", None, lang)
            )
    return out


def check_compiler(env: Env, lang: str) -> list[dict]:
    if not env.live:
        return []
    if os.name == "nt":
        found = shutil.which("cl")
        fix = "install the Visual Studio Build Tools (workload: Desktop development with C++) and use its prompt"
    else:
        found = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++") or shutil.which("clang++")
        fix = "apt-get install -y build-essential  (or your system's C++ compiler package)"
    out = [
        _check("compiler", "ok", f"A C++ compiler: {found}.", f"有 C++ 编译器：{found}。", None, lang)
        if found
        else _check(
            "compiler",
            "problem",
            "No C++ compiler on PATH: packages that compile an extension on install "
            "(flash-attn, DeepSpeed ops, mmcv, torch.compile's CPU code) fail.",
            "PATH 上没有 C++ 编译器：安装时需要编译扩展的包（flash-attn、DeepSpeed 算子、mmcv，以及 torch.compile 的 CPU 代码）会失败。",
            fix,
            lang,
        )  # fmt: skip
    ]
    include = sysconfig.get_paths().get("include") or ""
    if os.name != "nt" and include and not os.path.exists(os.path.join(include, "Python.h")):
        ver = f"{sys.version_info.major}.{sys.version_info.minor}"
        out.append(
            _check(
                "python-headers",
                "problem",
                f"Python.h is missing ({include}): C extensions cannot be compiled for this Python.",
                f"缺少 Python.h（{include}）：无法为这个 Python 编译 C 扩展。",
                f"apt-get install -y python{ver}-dev",
                lang,
            )
        )
    return out


def _scripts_folders() -> list[str]:
    """Where this Python's installs put their commands: its scripts folder, and the user's (``pip
    install --user``: ``~/.local/bin``, ``%APPDATA%\\Python\\Python3x\\Scripts``) outside a venv."""
    import site

    out = [sysconfig.get_path("scripts")]
    if sys.prefix == sys.base_prefix and site.ENABLE_USER_SITE:
        try:
            out.append(sysconfig.get_path("scripts", f"{os.name}_user"))
        except KeyError:
            pass
    return [f for i, f in enumerate(out) if f and f not in out[:i]]


def check_scripts_on_path(env: Env, lang: str) -> list[dict]:
    """The commands installed packages bring (torchrun, accelerate, ...) are found only where their
    scripts folder is on ``PATH`` ("command not found" otherwise)."""
    if not env.live:
        return []
    from importlib import metadata

    names = {ep.name for ep in metadata.entry_points(group="console_scripts")}
    on_path = {os.path.normcase(os.path.realpath(p)) for p in os.environ.get("PATH", "").split(os.pathsep) if p}
    out = []
    for folder in _scripts_folders():
        if not os.path.isdir(folder) or os.path.normcase(os.path.realpath(folder)) in on_path:
            continue
        here = set(os.listdir(folder))
        cmds = sorted(n for n in names if n in here or f"{n}.exe" in here)
        if not cmds:
            continue
        shown = ", ".join(cmds[:6]) + (", ..." if len(cmds) > 6 else "")
        fix = (
            f'setx PATH "%PATH%;{folder}"'
            if os.name == "nt"
            else f'export PATH="{folder}:$PATH"  (in ~/.bashrc to keep it)'
        )
        out.append(
            _check(
                "scripts-on-path",
                "problem",
                f"{folder} holds commands of installed packages ({shown}) but is not on PATH: the shell says "
                "they are not found; run them as `python -m <module>` or put the folder on PATH.",
                f"{folder} 里有已安装的包带的命令（{shown}），但它不在 PATH 上：shell 会说找不到这些命令；"
                "用 `python -m <模块>` 运行，或者把这个目录加进 PATH。",
                fix,
                lang,
            )
        )
    return out or [
        _check("scripts-on-path", "ok", "The scripts folder is on PATH.", "scripts 目录在 PATH 上。", None, lang)
    ]


def check_driver(env: Env, lang: str) -> list[dict]:
    if not env.torch_cuda:
        return [_check("cuda-driver", "skip", "torch is a CPU build (or its CUDA is not known).",
                       "torch 是 CPU 版本（或不知道它的 CUDA 版本）。", None, lang)]  # fmt: skip
    if not env.driver:
        if env.live:
            return [
                _check(
                    "cuda-driver",
                    "problem",
                    f"torch is built for CUDA {env.torch_cuda}, but nvidia-smi is not here: no NVIDIA driver "
                    "(or, in a container, the GPU was not passed in).",
                    f"torch 是按 CUDA {env.torch_cuda} 编译的，但这里没有 nvidia-smi：没有装 NVIDIA 驱动"
                    "（或者容器启动时没有把 GPU 传进来）。",
                    "install the NVIDIA driver (in Docker: run with --gpus all and the NVIDIA Container Toolkit), "
                    "or install the CPU build of torch",
                    lang,
                )
            ]
        return [
            _check("cuda-driver", "skip", "The report shows no driver version.", "报告里没有驱动版本。", None, lang)
        ]
    need = min_driver(env.torch_cuda, env.windows)
    if need is None:
        return [_check("cuda-driver", "skip", f"No minimum driver is recorded for CUDA {env.torch_cuda} here.",
                       f"这里没有记录 CUDA {env.torch_cuda} 所需的最低驱动版本。", None, lang)]  # fmt: skip
    if version_key(env.driver) >= version_key(need):
        return [_check("cuda-driver", "ok", f"Driver {env.driver} runs CUDA {env.torch_cuda} (needs ≥ {need}).",
                       f"驱动 {env.driver} 能跑 CUDA {env.torch_cuda}（需要 ≥ {need}）。", None, lang)]  # fmt: skip
    return [
        _check(
            "cuda-driver",
            "problem",
            f"torch is built for CUDA {env.torch_cuda}, which needs an NVIDIA driver ≥ {need}; this one is "
            f"{env.driver} ({CUDA_MIN_DRIVER_SOURCE}).",
            f"torch 是按 CUDA {env.torch_cuda} 编译的，需要 NVIDIA 驱动 ≥ {need}；当前驱动是 {env.driver}。",
            f"upgrade the driver to ≥ {need}, or install a torch built for an older CUDA "
            "(pip install torch --index-url https://download.pytorch.org/whl/cu118)",
            lang,
        )
    ]


CHECKS = (
    check_companions,
    check_numpy,
    check_torch_copies,
    check_shadowing,
    check_cuda_home,
    check_compiler,
    check_scripts_on_path,
    check_driver,
)


def run_checks(env: Env, lang: str = "en") -> list[dict]:
    out: list[dict] = []
    for check in CHECKS:
        out += check(env, lang)
    return out


def render(checks: list[dict], source: str, lang: str) -> str:
    mark = {"ok": "ok     ", "problem": "PROBLEM", "skip": "skip   "}
    head = f"tbx doctor: {source}" if lang != "zh" else f"tbx doctor：{source}"
    lines = [head]
    for c in sorted(checks, key=lambda c: {"problem": 0, "ok": 1, "skip": 2}[c["status"]]):
        lines.append(f"  {mark[c['status']]} {c['id']}: {c['message']}")
        if c["fix"] and c["status"] == "problem":
            lines.append(f"          {'fix' if lang != 'zh' else '修复'}: {c['fix']}")
    n = sum(c["status"] == "problem" for c in checks)
    lines.append(
        (f"{n} problem(s) found." if n else "No problem found.")
        if lang != "zh"
        else (f"发现 {n} 个问题。" if n else "没有发现问题。")
    )
    return "\n".join(lines)
