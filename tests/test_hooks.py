"""The IPython extension, a real Jupyter kernel, and the script hook."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time

import pytest

from .conftest import ROOT

SEED_CELL = "import torch\nx = torch.tensor([2.0, 3.0], requires_grad=True)\nloss = x ** 2 + 3 * x\nloss.backward()"
SHAPE_CELL = "import torch\na = torch.ones(4, 20)\nw = torch.ones(10, 5)\nout = a @ w"
OTHER_CELL = "d = {}\nd['missing']"


@pytest.fixture()
def shell(capsys):
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    sh = InteractiveShell.instance()
    yield sh
    sh.run_line_magic("unload_ext", "explainer") if "explainer" in sh.extension_manager.loaded else None
    InteractiveShell.clear_instance()


def run_cell(shell, capsys, code: str) -> str:
    capsys.readouterr()  # only what this cell prints
    shell.run_cell(code)
    out = capsys.readouterr()
    # captured, not a terminal: the answer is plain Markdown; its words are what these tests read
    return re.sub(r"\*\*|`", "", out.out + out.err)


def test_ipython_shows_traceback_then_answer_and_unloads(shell, capsys):
    shell.run_line_magic("load_ext", "explainer")
    shell.run_line_magic("explainer", "lang en")
    text = run_cell(shell, capsys, SEED_CELL)
    assert "grad can be implicitly created only for scalar outputs" in text
    assert "backward-non-scalar-output" in text
    assert text.index("RuntimeError") < text.index("traceback-explainer")  # traceback first
    assert "loss.mean().backward()" in text
    assert "loss: shape [2]" in text  # a live value a paste cannot give
    assert re.search(r"Where: Cell In\[\d+\], line \d+", text), text  # the cell as IPython names it
    assert "ipython-input" not in text.split("traceback-explainer")[1]
    assert "%explainer detail full" in text and "tbx explain --full" not in text  # this surface's own way

    text = run_cell(shell, capsys, SHAPE_CELL)
    assert "mat1 and mat2 shapes cannot be multiplied" in text and "matmul-shape-mismatch" in text
    assert "a: shape [4, 20]" in text and "w: shape [10, 5]" in text

    text = run_cell(shell, capsys, OTHER_CELL)  # not a PyTorch error: nothing is added
    assert "KeyError" in text and "traceback-explainer" not in text and "No known PyTorch error" not in text
    shell.run_line_magic("explainer", "verbose")
    text = run_cell(shell, capsys, OTHER_CELL)
    assert "KeyError" in text and "not a PyTorch error it knows" in text
    shell.run_line_magic("explainer", "quiet")

    shell.run_line_magic("explainer", "lang zh")
    text = run_cell(shell, capsys, SEED_CELL)
    assert "对非标量张量调用 backward()" in text

    shell.run_cell_magic(
        "explain",
        "",
        'Traceback (most recent call last):\n  File "t.py", line 3, in <module>\n    loss.backward()\n'
        "RuntimeError: grad can be implicitly created only for scalar outputs\n",
    )
    assert "backward-non-scalar-output" in capsys.readouterr().out

    shell.run_line_magic("unload_ext", "explainer")
    text = run_cell(shell, capsys, SEED_CELL)
    assert "grad can be implicitly created" in text and "traceback-explainer" not in text
    assert shell.custom_exceptions == ()
    magics = shell.magics_manager.magics
    assert "explain" not in magics["line"] and "explainer" not in magics["line"] and "explain" not in magics["cell"]


def test_explain_magic_on_demand(shell, capsys):
    shell.run_line_magic("load_ext", "explainer")
    shell.run_line_magic("explainer", "off")
    text = run_cell(shell, capsys, SEED_CELL)
    assert "traceback-explainer" not in text
    shell.run_line_magic("explainer", "lang en")
    shell.run_line_magic("explain", "")
    assert "backward-non-scalar-output" in capsys.readouterr().out
    shell.run_line_magic("explain", "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x20 and 10x5)")
    assert "matmul-shape-mismatch" in capsys.readouterr().out
    shell.run_line_magic("explainer", "on")


def test_internal_failure_keeps_the_original_traceback(shell, capsys, monkeypatch):
    from explainer.surfaces import hook

    shell.run_line_magic("load_ext", "explainer")

    def boom(*a, **k):
        raise RuntimeError("index exploded")

    monkeypatch.setattr(hook, "explanation_markdown", boom)
    text = run_cell(shell, capsys, SEED_CELL)
    assert "grad can be implicitly created only for scalar outputs" in text
    assert "could not explain this error" in text


def test_time_added_per_cell(shell, capsys):
    """Added time: none for a cell that does not fail, and measured for one that does."""
    import statistics

    def median_time(code, n=5):
        times = []
        for _ in range(n):
            t = time.thread_time()
            shell.run_cell(code)
            times.append(time.thread_time() - t)
            capsys.readouterr()
        return statistics.median(times)

    ok_cell, bad_cell = "y = sum(range(1000))", SEED_CELL
    base_ok, base_bad = median_time(ok_cell), median_time(bad_cell)
    shell.run_line_magic("load_ext", "explainer")
    median_time(bad_cell, 1)  # first explanation opens the index
    with_ok, with_bad = median_time(ok_cell), median_time(bad_cell)
    print(
        f"\nper cell: ok {base_ok * 1e3:.2f} -> {with_ok * 1e3:.2f} ms, failing {base_bad * 1e3:.1f} -> {with_bad * 1e3:.1f} ms"
    )
    assert with_ok < base_ok + 0.005  # a cell that does not fail pays nothing measurable
    assert with_bad - base_bad < 1.0


@pytest.mark.slow
def test_jupyter_kernel_shows_traceback_and_html_answer(monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext explainer\n%explainer lang both"),
        nbformat.v4.new_code_cell(SEED_CELL),
    ]
    client = nbclient.NotebookClient(nb, timeout=180, kernel_name="python3", allow_errors=True)
    # the kernel inherits this process's environment; monkeypatch restores it (a leaked PYTHONPATH once made
    # the packaging test's fresh venv see the source tree's egg-info and skip installing the wheel)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    client.execute()
    outputs = nb.cells[1].outputs
    kinds = [o["output_type"] for o in outputs]
    assert "error" in kinds, kinds
    err = next(o for o in outputs if o["output_type"] == "error")
    assert err["ename"] == "RuntimeError"
    html = "".join(o.get("data", {}).get("text/html", "") for o in outputs if o["output_type"] == "display_data")
    assert "backward-non-scalar-output" in html and "标量" in html and "<code>" in html
    assert "Cell In[2], line 4" in html and "ipykernel_" not in html, html  # the cell as Jupyter names it
    assert kinds.index("error") < kinds.index("display_data")


SCRIPT = textwrap.dedent(
    """\
    import sys
    import torch
    print("training")
    x = torch.tensor([2.0, 3.0], requires_grad=True)
    loss = x ** 2 + 3 * x
    loss.backward()
    """
)


def _run(args, tmp_path, env=None):
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=180,
        env={**os.environ, **(env or {}), "PYTHONPATH": str(ROOT)},
    )


def test_run_script_keeps_exit_code_and_traceback(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    plain = _run([str(script)], tmp_path)
    hooked = _run(["-m", "explainer", "run", str(script)], tmp_path, env={"TBX_LANG": "en"})
    assert plain.returncode == hooked.returncode == 1
    assert hooked.stdout == plain.stdout
    assert hooked.stderr.startswith(plain.stderr.rstrip("\n").rsplit("\n", 1)[0].split("\n", 1)[0])
    assert plain.stderr.strip() in hooked.stderr  # the original traceback, untouched
    assert "backward-non-scalar-output" in hooked.stderr and "loss.mean().backward()" in hooked.stderr
    # named relative to the current folder, the traceback is still exactly Python's own, first
    plain = _run(["train.py"], tmp_path)
    hooked = _run(["-m", "explainer", "run", "train.py"], tmp_path, env={"TBX_LANG": "en"})
    assert hooked.stderr.startswith(plain.stderr), (plain.stderr, hooked.stderr[: len(plain.stderr) + 200])
    exit_code = tmp_path / "exit3.py"
    exit_code.write_text("import sys\nsys.exit(3)\n")
    assert _run(["-m", "explainer", "run", str(exit_code)], tmp_path).returncode == 3


def test_install_returns_previous_hook_and_failures_stay_quiet(tmp_path):
    script = tmp_path / "inst.py"
    script.write_text(
        "import sys, explainer\n"
        "prev = explainer.install()\n"
        "assert prev is sys.__excepthook__\n"
        "import explainer.surfaces.hook as h\n"
        "if len(sys.argv) > 1:\n"
        "    h.explanation_markdown = lambda *a, **k: 1 / 0\n" + SCRIPT.replace("import sys\n", "")
    )
    ok = _run([str(script)], tmp_path, env={"TBX_LANG": "zh"})
    assert ok.returncode == 1 and "对非标量张量调用" in ok.stderr
    broken = _run([str(script), "break"], tmp_path)
    assert broken.returncode == 1
    assert "RuntimeError: grad can be implicitly created only for scalar outputs" in broken.stderr
    assert "could not explain this error: ZeroDivisionError" in broken.stderr
    uninstall = _run(
        [
            "-c",
            "import sys, explainer; p = sys.excepthook; explainer.install(); explainer.uninstall(); assert sys.excepthook is p",
        ],
        tmp_path,
    )
    assert uninstall.returncode == 0, uninstall.stderr


def test_importing_explainer_is_free():
    code = "import sys, time; t=time.perf_counter(); import explainer; d=time.perf_counter()-t; bad=[m for m in ('torch','rich','sqlite3','rapidfuzz','markdown_it') if m in sys.modules]; print(bad, d)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.stdout.startswith("[]"), out.stdout + out.stderr
