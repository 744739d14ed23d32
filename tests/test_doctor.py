"""``tbx doctor`` on environments whose faults are made for real: a fresh virtual environment per test,
its distributions installed as ``.dist-info`` folders (what ``importlib.metadata`` reads, as pip leaves
them), run as that environment's own Python. And on pasted reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from .conftest import ROOT


def _site(env: Path) -> Path:
    return next(env.glob("lib/python3*/site-packages")) if os.name != "nt" else env / "Lib" / "site-packages"


@pytest.fixture
def env(tmp_path):
    """A virtual environment without pip that sees this checkout (a .pth file), nothing else."""
    path = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(path)
    (_site(path) / "tbx-checkout.pth").write_text(str(ROOT) + "\n")
    return path


def install(env: Path, name: str, version: str, requires: tuple[str, ...] = (), where: Path | None = None) -> None:
    """A distribution as pip leaves it: a .dist-info folder with its METADATA."""
    site = where or _site(env)
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    meta = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", *(f"Requires-Dist: {r}" for r in requires)]
    (info / "METADATA").write_text("\n".join(meta) + "\n")
    (info / "RECORD").write_text("")


def doctor(env: Path, *args: str, cwd: Path | None = None, extra_env: dict | None = None) -> tuple[int, dict]:
    python = env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    run_env = {**os.environ, **(extra_env or {})}
    run_env.pop("PYTHONPATH", None)
    out = subprocess.run(
        [str(python), "-m", "explainer", "doctor", "--json", *args],
        capture_output=True,
        text=True,
        cwd=cwd or env,
        env=run_env,
        timeout=60,
    )
    assert out.returncode in (0, 1), out.stderr
    return out.returncode, {c["id"]: c for c in json.loads(out.stdout)["checks"]}


def test_a_companion_built_for_another_torch(env):
    install(env, "torch", "2.4.0")
    install(env, "torchvision", "0.18.0", ("numpy", "torch (==2.3.0)", "pillow (!=8.3.*,>=5.3.0)"))
    install(env, "torchaudio", "2.4.0", ("torch (==2.4.0)",))
    rc, checks = doctor(env)
    assert rc == 1
    assert checks["torchvision-torch"]["status"] == "problem"
    assert "==2.3.0" in checks["torchvision-torch"]["message"] and "2.4.0" in checks["torchvision-torch"]["message"]
    assert checks["torchvision-torch"]["fix"].startswith("pip install")
    assert checks["torchaudio-torch"]["status"] == "ok"


def test_numpy2_under_a_package_built_for_numpy1(env):
    install(env, "numpy", "2.1.0")
    install(env, "torch", "2.1.2")  # built for NumPy 1.x
    install(env, "opencv-python", "4.8.0.76", ("numpy (<2,>=1.21.2)",))
    rc, checks = doctor(env)
    assert rc == 1 and checks["numpy-abi"]["status"] == "problem"
    assert "torch 2.1.2" in checks["numpy-abi"]["message"] and "opencv-python" in checks["numpy-abi"]["message"]
    assert "numpy<2" in checks["numpy-abi"]["fix"]


def test_numpy2_with_builds_for_it_is_fine(env):
    install(env, "numpy", "2.1.0")
    install(env, "torch", "2.5.1")
    _, checks = doctor(env)
    assert checks["numpy-abi"]["status"] == "ok"


def test_two_torch_copies_on_the_path(env, tmp_path):
    install(env, "torch", "2.5.1")
    other = tmp_path / "user-site"
    install(env, "torch", "2.1.0", where=other)
    (_site(env) / "zz-other.pth").write_text(str(other) + "\n")
    rc, checks = doctor(env)
    assert rc == 1 and checks["torch-copies"]["status"] == "problem"
    assert "2 times" in checks["torch-copies"]["message"]


def test_a_folder_that_shadows_an_installed_package(env, tmp_path):
    install(env, "numpy", "1.26.4")
    work = tmp_path / "project"
    (work / "numpy").mkdir(parents=True)
    (work / "numpy" / "__init__.py").write_text("")
    rc, checks = doctor(env, cwd=work)
    assert rc == 1 and checks["shadowing"]["status"] == "problem"
    assert "./numpy" in checks["shadowing"]["message"]
    _, clean = doctor(env, cwd=tmp_path)
    assert clean["shadowing"]["status"] == "ok"


def test_cuda_home_and_path_that_break_extension_builds(env, tmp_path):
    install(env, "torch", "2.5.1")
    path = os.pathsep + os.environ.get("PATH", "")  # a leading separator: an empty entry
    rc, checks = doctor(env, extra_env={"CUDA_HOME": str(tmp_path / "no-cuda"), "PATH": path})
    assert rc == 1
    assert checks["cuda-home"]["status"] == "problem" and "nvcc" in checks["cuda-home"]["message"]
    assert checks["path-empty-entry"]["status"] == "problem"
    toolkit = tmp_path / "cuda"
    (toolkit / "bin").mkdir(parents=True)
    (toolkit / "bin" / "nvcc").write_text("#!/bin/sh\n")
    _, ok = doctor(env, extra_env={"CUDA_HOME": str(toolkit)})
    assert ok["cuda-home"]["status"] == "ok" and "path-empty-entry" not in ok


@pytest.mark.skipif(os.name == "nt", reason="a POSIX shell script stands in for nvidia-smi")
def test_a_driver_too_old_for_the_wheels_cuda(env, tmp_path):
    install(env, "torch", "2.4.0+cu121")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 470.57.02\n")
    smi.chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    rc, checks = doctor(env, extra_env={"PATH": path})
    assert rc == 1 and checks["cuda-driver"]["status"] == "problem"
    assert "12.1" in checks["cuda-driver"]["message"] and "470.57.02" in checks["cuda-driver"]["message"]
    smi.write_text("#!/bin/sh\necho 550.54.14\n")
    _, ok = doctor(env, extra_env={"PATH": path})
    assert ok["cuda-driver"]["status"] == "ok"


def test_no_compiler_on_path(env, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    python = env / "bin" / "python"
    out = subprocess.run(
        [str(python), "-m", "explainer", "doctor", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PATH": str(empty), "CXX": "no-such-compiler"},
        timeout=60,
    )
    checks = {c["id"]: c for c in json.loads(out.stdout)["checks"]}
    assert checks["compiler"]["status"] == "problem" and checks["compiler"]["fix"]


def test_zh_says_the_same_checks(env):
    install(env, "torch", "2.4.0")
    install(env, "torchvision", "0.18.0", ("torch (==2.3.0)",))
    _, en = doctor(env)
    _, zh = doctor(env, "--lang", "zh")
    assert set(zh) == set(en) and [c["status"] for c in zh.values()] == [c["status"] for c in en.values()]
    assert zh["torchvision-torch"]["status"] == "problem" and "要求 torch" in zh["torchvision-torch"]["message"]


# --- pasted reports --------------------------------------------------------------------------------

COLLECT_ENV = """\
PyTorch version: 2.4.0+cu121
Is debug build: False
CUDA used to build PyTorch: 12.1
ROCM used to build PyTorch: N/A

OS: Ubuntu 22.04.4 LTS (x86_64)
GCC version: (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0
Python version: 3.10.14 (main, Mar 21 2024, 16:24:04) [GCC 11.2.0] (64-bit runtime)
Is CUDA available: False
CUDA runtime version: No CUDA
Nvidia driver version: 470.182.03

Versions of relevant libraries:
[pip3] numpy==2.0.1
[pip3] torch==2.4.0
[pip3] torchvision==0.18.1
[conda] numpy                     2.0.1                    pypi_0    pypi
"""


def test_a_collect_env_report(tmp_path):
    report = tmp_path / "env.txt"
    report.write_text(COLLECT_ENV)
    out = subprocess.run(
        [sys.executable, "-m", "explainer", "doctor", str(report), "--json"], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 1, out.stderr
    checks = {c["id"]: c for c in json.loads(out.stdout)["checks"]}
    assert checks["cuda-driver"]["status"] == "problem"  # CUDA 12.1 needs a 525+ driver
    assert checks["numpy-abi"]["status"] == "ok"  # torch 2.4 is built for NumPy 2
    assert "torch-copies" not in checks and "shadowing" not in checks  # not knowable from a report


def test_pip_list_and_freeze_reports_read_alike():
    from explainer.surfaces.doctor import report_env

    listed = report_env(
        "Package    Version\n---------- -------\nnumpy      1.26.4\ntorch      2.1.0\ntorchvision 0.16.0\n"
    )
    frozen = report_env("numpy==1.26.4\ntorch==2.1.0\ntorchvision==0.16.0\n")
    conda = report_env(
        "# Name  Version  Build  Channel\nnumpy  1.26.4  py310h  conda-forge\ntorch  2.1.0  pypi_0  pypi\ntorchvision 0.16.0 pypi_0 pypi\n"
    )
    assert (
        listed.versions
        == frozen.versions
        == conda.versions
        == {"numpy": "1.26.4", "torch": "2.1.0", "torchvision": "0.16.0"}
    )


def test_a_report_without_versions_is_one_line():
    out = subprocess.run(
        [sys.executable, "-m", "explainer", "doctor", "-"], input="hello\n", capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and out.stderr.startswith("tbx: no package versions")


def test_doctor_does_not_import_the_packages_it_checks(env):
    """It reads metadata: a torch whose import would fail (and take seconds) is never imported."""
    site = _site(env)
    install(env, "torch", "2.5.1")
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text("raise SystemExit('torch was imported')\n")
    rc, checks = doctor(env)
    assert "torch-copies" in checks


REPORTS = ROOT / "tests" / "fixtures" / "reports"  # real reports from public threads (SOURCES.md)


@pytest.mark.parametrize(
    "name, expect",
    [
        # torch 1.5 built for CUDA 10.1 on a 426 driver (needs 418.39 on Linux; no Windows figure recorded)
        ("pytorch-39133.txt", {"cuda-driver": ("ok", "skip")}),
        # torch 1.1 for CUDA 9.0 on a 418.67 driver (needs 384.81); torchvision 0.2.0 is older than the pins
        ("torch-points3d-66.txt", {"cuda-driver": ("ok",), "numpy-abi": ("ok",), "torchvision-torch": ("skip",)}),
    ],
)
def test_real_reports_get_no_false_problem(name, expect):
    from explainer.surfaces.doctor import report_env, run_checks

    checks = {c["id"]: c for c in run_checks(report_env((REPORTS / name).read_text()))}
    for cid, allowed in expect.items():
        assert checks[cid]["status"] in allowed, checks[cid]
    assert not [c for c in checks.values() if c["status"] == "problem"]


def test_the_scripts_folder_not_on_path(env, tmp_path):
    """A package's command (a console script in the environment's bin/) is "not found" when that folder
    is not on PATH: made for real by running the environment's Python with a PATH without it."""
    install(env, "accelerate", "1.0.0")
    info = next(_site(env).glob("accelerate-1.0.0.dist-info"))
    (info / "entry_points.txt").write_text("[console_scripts]\naccelerate = accelerate.commands.accelerate_cli:main\n")
    scripts = env / ("Scripts" if os.name == "nt" else "bin")
    (scripts / "accelerate").write_text("#!/bin/sh\n")
    without = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if Path(p).resolve() != scripts.resolve())
    _, checks = doctor(env, extra_env={"PATH": without})
    bad = checks["scripts-on-path"]
    assert bad["status"] == "problem" and "accelerate" in bad["message"] and str(scripts) in bad["fix"]
    _, checks = doctor(env, extra_env={"PATH": str(scripts) + os.pathsep + without})
    assert checks["scripts-on-path"]["status"] == "ok"
