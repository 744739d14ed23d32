"""Every artifact installs and works: ``python -m build`` makes the sdist and a wheel from that sdist,
the wheel goes into a fresh virtual environment, and the installed ``tbx`` explains the seed paste
from a folder that has its own ``api/`` package (which must never be imported). Nothing named
``api`` is installed: the project's ``api/`` folder ships as ``explainer.api``.

Needs the package registry (the fresh environment installs the dependencies); skipped without it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "tests" / "fixtures" / "pastes" / "seed_flat_windows.txt"

pytestmark = pytest.mark.slow


def _sources(dest: Path) -> Path:
    """The project's tracked files (what a clean clone has), copied so the build writes nothing here."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False)
    if listed.returncode != 0:
        pytest.skip("not a git checkout: the artifact test builds from the tracked files")
    for name in filter(None, listed.stdout.decode().split("\0")):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


# what would make the fresh environment's Python or pip look at, or install into, somewhere else
_REDIRECTS = ("PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PIP_TARGET", "PIP_PREFIX", "PIP_ROOT", "PIP_USER")


def _run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory):
    pytest.importorskip("build", reason="the test extra installs 'build'")
    src = _sources(tmp_path_factory.mktemp("src"))
    dist = tmp_path_factory.mktemp("dist")
    # no arguments: the sdist, then a wheel built from the unpacked sdist (what an installer does with it)
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(src)], capture_output=True, text=True, timeout=900
    )
    if proc.returncode != 0 and "Could not find a version" in proc.stdout + proc.stderr:
        pytest.skip("no package registry reachable for the isolated build")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    return sdist, wheel


def test_sdist_carries_the_knowledge_base(artifacts):
    sdist, _ = artifacts
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
    kb = [n for n in names if "/kb/" in n and n.endswith(".md") and not n.endswith("README.md")]
    assert len(kb) == len(list((ROOT / "kb").glob("*.md"))) - 1
    assert any(n.endswith("/LICENSE") for n in names) and any("/api/static/" in n for n in names)
    assert any(n.endswith(".jsonl.gz") and "/data/longtail-" in n for n in names)


def test_wheel_built_from_the_sdist_ships_the_index_and_no_top_level_api(artifacts):
    _, wheel = artifacts
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    tops = {n.split("/", 1)[0] for n in names if not n.split("/", 1)[0].endswith((".dist-info", ".data"))}
    assert tops == {"explainer"}, tops
    assert "explainer/_data/index.sqlite" in names and "explainer/api/app.py" in names
    assert any(n.startswith("explainer/api/static/") for n in names)
    assert any(n.startswith("explainer/_data/longtail-") and n.endswith(".sqlite") for n in names)
    # the facts answers need: packages and pins, names per release, the libraries' raise sites
    assert {
        "explainer/_data/facts.json",
        "explainer/_data/names.json.gz",
        "explainer/_data/libsites.sqlite",
        "explainer/_data/torchhistory.sqlite",
        "explainer/_data/torchasserts.json.gz",
    } <= set(names)


@pytest.fixture(scope="module")
def installed(artifacts, tmp_path_factory):
    """A fresh virtual environment with the wheel (and the API extra) installed."""
    _, wheel = artifacts
    venv = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", str(venv)])
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    # -I and an environment without the variables that point Python or pip elsewhere: with the source tree
    # on PYTHONPATH, pip saw its egg-info as the project already installed and installed nothing
    env = {k: v for k, v in os.environ.items() if k not in _REDIRECTS}
    proc = subprocess.run(
        [str(bindir / "python"), "-I", "-m", "pip", "install", f"{wheel}[api]"],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    if proc.returncode != 0 and "Could not find a version" in proc.stdout + proc.stderr:
        pytest.skip("no package registry reachable to install the wheel's dependencies")
    assert proc.returncode == 0, proc.stderr[-3000:]
    tbx = bindir / ("tbx.exe" if os.name == "nt" else "tbx")
    assert tbx.exists(), f"pip succeeded but installed no tbx:\n{proc.stdout[-3000:]}"
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    # a folder with its own `api` package: what `tbx serve` must never import
    (elsewhere / "api").mkdir()
    (elsewhere / "api" / "__init__.py").write_text("raise SystemExit('the folder api/ was imported')\n")
    (elsewhere / "api" / "app.py").write_text("raise SystemExit('the folder api/app.py was imported')\n")
    return bindir, elsewhere


def test_installed_wheel_explains_the_seed_paste_from_another_folder(installed):
    bindir, elsewhere = installed
    env = {k: v for k, v in os.environ.items() if k not in ("TBX_KB", "TBX_INDEX", *_REDIRECTS)}
    proc = _run([str(bindir / "tbx"), "explain", "--json", str(SEED)], cwd=elsewhere, env=env)
    answer = json.loads(proc.stdout)
    assert answer["matches"][0]["id"] == "backward-non-scalar-output", answer["matches"][:2]
    version = _run([str(bindir / "tbx"), "--version"], cwd=elsewhere, env=env).stdout
    from explainer import __version__

    assert __version__ in version
    # -I: the current folder is not on the path, so only what was installed can answer
    no_api = subprocess.run(
        [str(bindir / "python"), "-I", "-c", "import api"], cwd=ROOT, capture_output=True, text=True
    )
    assert no_api.returncode != 0 and "No module named 'api'" in no_api.stderr


def test_installed_tbx_serve_answers_and_ignores_the_folders_api(installed):
    from explainer.api.threaded import free_port

    bindir, elsewhere = installed
    port = free_port()
    proc = subprocess.Popen(
        [str(bindir / "tbx"), "serve", "--port", str(port)],
        cwd=elsewhere,
        env={k: v for k, v in os.environ.items() if k not in ("TBX_KB", "TBX_INDEX", *_REDIRECTS)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                    assert r.status == 200
                    break
            except OSError:
                assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
                assert time.monotonic() < deadline, "tbx serve did not answer"
                time.sleep(0.2)
        body = json.dumps({"text": SEED.read_text(encoding="utf-8")}).encode()
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/explain", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=10) as r:
            assert json.loads(r.read())["matches"][0]["id"] == "backward-non-scalar-output"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_tbx_build_on_an_installed_package_writes_to_the_users_cache(installed, tmp_path):
    """Never into site-packages: the index goes to $XDG_CACHE_HOME/traceback-explainer/, and the
    reader then prefers it (newer than the packaged one)."""
    bindir, elsewhere = installed
    site = _run(
        [str(bindir / "python"), "-I", "-c", "import explainer, os; print(os.path.dirname(explainer.__file__))"]
    ).stdout
    packaged = Path(site.strip()) / "_data" / "index.sqlite"
    before = packaged.stat().st_mtime_ns
    env = {k: v for k, v in os.environ.items() if k not in ("TBX_KB", "TBX_INDEX", *_REDIRECTS)}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    out = _run([str(bindir / "tbx"), "build"], cwd=elsewhere, env=env).stdout
    built = next((tmp_path / "cache" / "traceback-explainer").glob("index-*.sqlite"))
    assert str(built) in out and packaged.stat().st_mtime_ns == before
    where = _run(
        [str(bindir / "python"), "-c", "from explainer.paths import index_path; print(index_path())"],
        cwd=elsewhere,
        env=env,
    ).stdout.strip()
    assert where == str(built)
    answer = json.loads(_run([str(bindir / "tbx"), "explain", "--json", str(SEED)], cwd=elsewhere, env=env).stdout)
    assert answer["matches"][0]["id"] == "backward-non-scalar-output"
