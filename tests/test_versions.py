"""The torch release a paste shows (the answer's ``torch_version``)."""

from __future__ import annotations

import pytest

from explainer.match.versions import torch_version


@pytest.mark.parametrize(
    "text, low, high",
    [
        ("PyTorch version: 2.1.0+cu121\nIs debug build: False\n", "2.1.0", "2.1.0"),
        (
            "[pip3] numpy==1.26.4\n[pip3] torch==1.13.1\n[conda] torch  1.12.0  py3.9_cuda11.3  pytorch\n",
            "1.12.0",
            "1.13.1",
        ),
        ("torch                     2.4.0+cu121\ntorchvision 0.19.0\n", "2.4.0", "2.4.0"),
        (">>> print(torch.__version__)\n2.0.1 hmm\n>>> torch.__version__ '2.3.1'\n", "2.3.1", "2.3.1"),
        ("Downloading torch-2.2.2-cp311-cp311-manylinux1_x86_64.whl (755.5 MB)\n", "2.2.2", "2.2.2"),
        ("2024-08-06 15:47:00,910 - modelscope - INFO - PyTorch version 2.0.1+cu118 Found.\n", "2.0.1", "2.0.1"),
    ],
)
def test_release_lines(text, low, high):
    got = torch_version(text)
    assert got is not None and got["range"] == [low, high] and got["evidence"]


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: grad can be implicitly created only for scalar outputs",
        "torchvision 0.19.0\ntorchaudio 2.4.0\n",  # a companion's version is not torch's
        'File "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl',
    ],
)
def test_no_release_without_a_line_that_says_it(text):
    assert torch_version(text) is None


def test_the_answer_carries_it(tmp_path):
    from explainer.knowledge.index import open_index
    from explainer.match.explain import explain_text
    from explainer.render import answer_json

    index = open_index()
    paste = "PyTorch version: 1.13.1+cu117\n\nRuntimeError: grad can be implicitly created only for scalar outputs\n"
    out = answer_json(explain_text(paste, index, budget=None), index)
    assert out["torch_version"]["range"] == ["1.13.1", "1.13.1"]
    assert answer_json(explain_text("RuntimeError: boom", index, budget=None), index)["torch_version"] is None


def test_in_a_hook_the_live_release_decides():
    import torch

    from explainer.surfaces.hook import explanation_markdown

    try:
        torch.ones(2, requires_grad=True).mul(2).backward()
    except RuntimeError as exc:
        _, answer = explanation_markdown(exc, lang="en")
    v = torch.__version__.split("+")[0]
    assert answer.torch_version["range"] == [v, v] and "live" in answer.torch_version["evidence"][0]


def test_the_hook_pauses_the_collector_and_restores_it(monkeypatch):
    import gc

    from explainer.surfaces import hook

    seen = []
    real = hook._explanation_markdown

    def spy(exc, **kw):
        seen.append(gc.isenabled())
        return real(exc, **kw)

    monkeypatch.setattr(hook, "_explanation_markdown", spy)
    assert gc.isenabled()
    try:
        raise KeyError("x")
    except KeyError as exc:
        hook.explanation_markdown(exc, lang="en")
    assert seen == [False] and gc.isenabled()
    monkeypatch.setattr(hook, "_explanation_markdown", lambda exc, **kw: 1 / 0)
    try:
        hook.explanation_markdown(KeyError("y"), lang="en")
    except ZeroDivisionError:
        pass
    assert gc.isenabled()  # restored after an error too
