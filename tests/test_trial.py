"""Checked on your values (``explainer/surfaces/trial.py``): in the hooks, the answer's fix runs on
copies (small CPU tensors) or meta-device stand-ins of the failing frame's tensors and modules,
never on the user's objects."""

from __future__ import annotations

import runpy
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from explainer.surfaces.trial import trial_markdown, try_fix  # noqa: E402

# pytest-timeout's default method arms SIGALRM, and the trial leaves a program's alarm alone (the last
# test): these tests time out with a thread instead
pytestmark = pytest.mark.timeout(300, method="thread")


def _failure(tmp_path, source: str):
    """(the exception, the script's namespace) of a script that fails."""
    script = tmp_path / "train.py"
    script.write_text(source)
    space: dict = {}
    try:
        runpy.run_path(str(script), init_globals=space, run_name="__main__")
    except Exception as exc:  # noqa: BLE001 - the failure under test
        tb, found = exc.__traceback__, None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == str(script):
                found = tb.tb_frame
            tb = tb.tb_next
        assert found is not None
        return exc, found.f_globals, str(script)
    raise AssertionError("the script did not fail")


MLP = """\
import torch
from torch import nn

model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
images = torch.randn(32, 1, 28, 28)
logits = model(images)
"""


def test_a_fix_that_works_says_what_came_out_and_the_users_objects_stay_as_they_were(tmp_path):
    exc, g, path = _failure(tmp_path, MLP)
    weight = g["model"][0].weight
    before = weight.detach().clone()
    fix = {"applies": {"kind": "insert_before", "file": path, "line": 6}, "code": "images = images.flatten(1)"}
    got = try_fix(exc, fix)
    assert got == {
        "status": "ok",
        "inputs": [("images", "[32, 1, 28, 28] float32")],
        "result": "[32, 10] float32",
        "error": None,
        "on": "copies",
    }
    assert (
        "copies of your tensors (same values, shapes and dtypes): `images` [32, 1, 28, 28] float32 → [32, 10] float32"
        in trial_markdown(got, "en")
    )
    assert "副本" in trial_markdown(got, "zh")
    # nothing of the user's changed: the module is still on the CPU with its values, the tensor unflattened
    assert weight.device.type == "cpu" and torch.equal(weight, before) and weight.grad is None
    assert g["images"].shape == (32, 1, 28, 28)


def test_large_or_gpu_values_get_meta_stand_ins_only_where_torch_has_what_they_need(tmp_path, monkeypatch):
    """Past COPY_LIMIT the trial computes on meta tensors, but never pays for importing what the first
    meta operation needs (torch._dynamo, about a second): without it, no trial."""
    from explainer.surfaces import trial

    exc, g, path = _failure(tmp_path, MLP)
    fix = {"applies": {"kind": "insert_before", "file": path, "line": 6}, "code": "images = images.flatten(1)"}
    monkeypatch.setattr(trial, "COPY_LIMIT", 1000)
    with monkeypatch.context() as m:
        m.delitem(sys.modules, "torch._dynamo", raising=False)
        assert try_fix(exc, fix) is None
        assert "torch._dynamo" not in sys.modules
    import torch._dynamo  # noqa: F401 - what a program that compiled has loaded

    got = try_fix(exc, fix)
    assert got["status"] == "ok" and got["on"] == "stand-ins" and got["result"] == "[32, 10] float32"
    assert "stand-ins of your tensors (same shapes and dtypes, no data)" in trial_markdown(got, "en")
    assert g["model"][0].weight.device.type == "cpu"


def test_a_fix_that_still_raises_on_the_users_shapes_is_called_out(tmp_path):
    exc, _g, path = _failure(
        tmp_path, "import torch\na = torch.randn(4, 20)\nb = torch.randn(5, 30)\nc = torch.mm(a, b)\n"
    )
    got = try_fix(exc, {"applies": {"kind": "replace_line", "file": path, "line": 4}, "code": "c = torch.mm(a, b.t())"})
    assert got["status"] == "raises" and got["inputs"] == [("a", "[4, 20] float32"), ("b", "[5, 30] float32")]
    assert "still raises" in trial_markdown(got, "en") and "仍然报错" in trial_markdown(got, "zh")


def test_nothing_is_run_that_could_have_side_effects_or_that_the_fix_does_not_change(tmp_path):
    source = (
        "import torch\n\ndef log(x):\n    open('ran', 'w').write('x')\n    return x\n\n"
        "x = torch.randn(2, 3).t()\ny = x.view(6)\n"
    )
    exc, _g, path = _failure(tmp_path, source)
    # a user function on the new line: not called (it could do anything)
    assert (
        try_fix(exc, {"applies": {"kind": "replace_line", "file": path, "line": 8}, "code": "y = log(x).reshape(6)"})
        is None
    )
    assert not (tmp_path / "ran").exists()
    # a fix for another line, or one that changes another line than the failing one: not tried
    assert try_fix(exc, {"applies": {"kind": "replace_line", "file": path, "line": 7}, "code": "x = x"}) is None
    other = {"kind": "replace_line", "file": path, "line": 7, "fails_at": 8}
    assert try_fix(exc, {"applies": other, "code": "x = torch.randn(3, 2)"}) is None
    ok = try_fix(exc, {"applies": {"kind": "replace_line", "file": path, "line": 8}, "code": "y = x.reshape(6)"})
    assert ok["status"] == "ok" and ok["result"] == "[6] float32"


def test_the_script_hook_shows_the_trial(tmp_path):
    script = tmp_path / "mlp.py"
    script.write_text(MLP)
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "explainer", "run", str(script)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1
    assert "Checked on copies of your tensors" in out.stderr and "→ [32, 10] float32" in out.stderr
    # the trial computed on copies: nothing imported torch._dynamo (a second of the hook's time)
    assert "torch._dynamo" not in out.stderr


def test_a_program_that_uses_the_alarm_keeps_it(tmp_path):
    import signal

    exc, _g, path = _failure(tmp_path, MLP)
    fix = {"applies": {"kind": "insert_before", "file": path, "line": 6}, "code": "images = images.flatten(1)"}
    fired = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append(1))
    try:
        signal.setitimer(signal.ITIMER_REAL, 30)
        assert try_fix(exc, fix) is None  # not tried: the program's timer and handler stay as they were
        assert 25 < signal.getitimer(signal.ITIMER_REAL)[0] <= 30
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert try_fix(exc, fix)["status"] == "ok"
