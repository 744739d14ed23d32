"""``tbx fix``: the chosen fix as a diff of the user's file, written only with ``--apply``, only when
safe (unless ``--unsafe``) and only while the line still reads as the traceback shows it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.slow  # runs scripts that import torch


def _run_script(tmp_path, source: str) -> tuple:
    script = tmp_path / "train.py"
    script.write_text(source)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode != 0
    tb = tmp_path / "tb.txt"
    tb.write_text(out.stderr)
    return script, tb


def _tbx(*args):
    return subprocess.run(
        [sys.executable, "-m", "explainer", *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


SCRIPT = "import torch\n\nx = torch.randn(4, 3, requires_grad=True)\nloss = x * 2\nif True:\n    loss.backward()\n"


def test_diff_then_apply_then_the_script_runs(tmp_path):
    script, tb = _run_script(tmp_path, SCRIPT)
    shown = _tbx("fix", str(tb))
    assert shown.returncode == 0, shown.stderr
    assert "-    loss.backward()" in shown.stdout and "+    loss.mean().backward()" in shown.stdout
    assert script.read_text() == SCRIPT  # a diff only: nothing written
    applied = _tbx("fix", str(tb), "--apply")
    assert applied.returncode == 0 and "applied to" in applied.stdout
    assert script.read_text() == SCRIPT.replace("loss.backward()", "loss.mean().backward()")
    assert (tmp_path / "train.py.tbx-orig").read_text() == SCRIPT
    assert subprocess.run([sys.executable, str(script)], cwd=tmp_path, timeout=120).returncode == 0
    # the same traceback again: the line no longer reads as it shows, nothing is written
    again = _tbx("fix", str(tb), "--apply")
    assert again.returncode == 1 and "no longer reads" in again.stderr
    assert script.read_text() == SCRIPT.replace("loss.backward()", "loss.mean().backward()")


def test_a_review_fix_needs_unsafe(tmp_path):
    # an integer mask whose making says nothing of which value marks what: filling where it is 0 is
    # a guess (review); the same mask made as a future mask (triu) gets .bool(), a safe fix
    source = (
        "import torch\n\nscores = torch.zeros(2, 3)\n"
        "mask = torch.tensor([[0, 1, 1], [0, 0, 1]])\n"
        'scores = scores.masked_fill(mask, float("-inf"))\n'
    )
    script, tb = _run_script(tmp_path, source)
    refused = _tbx("fix", str(tb), "--apply")
    assert refused.returncode == 1 and "--unsafe" in refused.stderr
    assert script.read_text() == source
    shown = _tbx("fix", str(tb), "--unsafe")
    assert shown.returncode == 0 and "(review)" in shown.stdout and script.read_text() == source

    safe_source = source.replace(
        "torch.tensor([[0, 1, 1], [0, 0, 1]])", "torch.triu(torch.ones(3, 3, dtype=torch.long), 1)[:2]"
    )
    script, tb = _run_script(tmp_path, safe_source)
    applied = _tbx("fix", str(tb), "--apply")
    assert applied.returncode == 0 and "(safe)" in applied.stdout
    assert "masked_fill(mask.bool()" in script.read_text()


def test_no_fix_for_a_paste_without_a_file_here():
    out = subprocess.run(
        [sys.executable, "-m", "explainer", "fix", "-"],
        input="RuntimeError: grad can be implicitly created only for scalar outputs\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert out.returncode == 1 and out.stderr.startswith("tbx fix: no fix")


NON_LEAF = """\
import torch

torch.manual_seed(0)
X = torch.randn(32, 3)
y = X @ torch.tensor([[1.0], [-2.0], [0.5]])
w = torch.randn(3, 1, requires_grad=True) * 0.01
b = torch.zeros(1, requires_grad=True)
opt = torch.optim.SGD([w, b], lr=0.1)
for _ in range(100):
    opt.zero_grad()
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    opt.step()
assert loss.item() < 0.1
"""


def test_check_fix_runs_a_copy_and_leaves_the_file_alone(tmp_path):
    script = tmp_path / "fit.py"
    script.write_text(NON_LEAF)
    out = _tbx("run", "--check-fix", str(script))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "can't optimize a non-leaf Tensor" in out.stderr  # the first run's error
    assert "+w = (torch.randn(3, 1) * 0.01).requires_grad_()" in out.stdout
    assert "the error is gone" in out.stdout and "tbx run --check-fix --apply" in out.stdout
    assert script.read_text() == NON_LEAF and sorted(p.name for p in tmp_path.iterdir()) == ["fit.py"]
    applied = _tbx("run", "--check-fix", "--apply", str(script))
    assert applied.returncode == 0 and "applied to" in applied.stdout
    assert "w = (torch.randn(3, 1) * 0.01).requires_grad_()\n" in script.read_text()
    assert _tbx("run", "--check-fix", str(script)).stdout.startswith("tbx: ")  # nothing left to fix


def test_check_fix_says_when_the_error_remains_and_writes_nothing(tmp_path):
    # two in-place updates: the fix of the first one leaves the second failing the same way
    source = (
        "import torch\n\nw = torch.ones(3, requires_grad=True)\nb = torch.ones(1, requires_grad=True)\n"
        "loss = (w.sum() + b.sum()) ** 2\nloss.backward()\nw -= 0.1 * w.grad\nb -= 0.1 * b.grad\n"
    )
    script = tmp_path / "sgd.py"
    script.write_text(source)
    out = _tbx("run", "--check-fix", "--apply", str(script))
    assert out.returncode == 1
    assert "the same error remains (now at line 8)" in out.stdout
    assert script.read_text() == source and not (tmp_path / "sgd.py.tbx-orig").exists()


def test_the_script_hook_ends_with_the_command_that_checks_and_applies_the_fix(tmp_path):
    script = tmp_path / "fit.py"
    script.write_text(NON_LEAF)
    out = subprocess.run(
        [sys.executable, "-m", "explainer", "run", str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert out.returncode == 1
    assert "`tbx run --check-fix --apply fit.py`" in out.stderr
    assert script.read_text() == NON_LEAF
