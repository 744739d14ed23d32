"""The line that must change (``explainer/advise/defuse.py``): rewrites with ``target def`` follow a
name of the failing line to the statement that defined it, in the user's file, read with ``ast``."""

from __future__ import annotations

import time

from explainer.advise.defuse import candidate_lines, holds_objects, module_name
from explainer.advise.rewrite import apply, apply_at, parse_ops, structural

MODEL = """\
import torch
from torch import nn

device = "cuda"


class Net(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.sizes = [16, 32]
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Linear(16 * 8 * 8, n_classes)
        self.blocks = []
        for _ in range(2):
            self.blocks.append(nn.Linear(10, 10))

    def forward(self, x):
        x = self.features(x).flatten(1)
        return self.head(x)


def make_params(n_in, n_out):
    weight = torch.randn(n_out, n_in, requires_grad=True) * 0.01
    bias = torch.zeros(n_out, requires_grad=True)
    return [weight, bias]


def step(model, batch, dev):
    x = batch.to(dev)
    return model(x)


model = Net().to("cpu")
out = step(model, torch.randn(2, 3, 16, 16), device)
params = make_params(4, 2)
opt = torch.optim.SGD(params, lr=0.1)
opt2 = torch.optim.SGD(model.parameters(), lr=0.1)
"""
LINES = MODEL.split("\n")


def _line(text: str) -> int:
    return next(i for i, ln in enumerate(LINES, 1) if ln.strip() == text)


def _apply(fence: str, failing: str, values=None):
    return apply_at(parse_ops(fence), failing, _line(failing), values or {}, LINES)


def test_a_layer_called_in_forward_is_changed_where_init_builds_it():
    got = _apply("target def callee\narg Linear 0 -> {m1_cols}", "return self.head(x)", {"m1_cols": "4096"})
    assert got == (
        "replace_line",
        "self.head = nn.Linear(4096, n_classes)",
        _line("self.head = nn.Linear(16 * 8 * 8, n_classes)"),
    )


def test_a_parameter_is_followed_to_what_the_caller_passes():
    got = _apply(
        'target def device,dev\nvalue const -> ({} if torch.cuda.is_available() else "cpu")', "x = batch.to(dev)"
    )
    assert got == ("replace_line", 'device = ("cuda" if torch.cuda.is_available() else "cpu")', 4)


def test_a_value_returned_by_a_function_of_the_file_is_followed_into_it():
    fence = "target def args\ndrop * requires_grad=\nvalue binop,chain -> {}.requires_grad_()"
    got = _apply(fence, "opt = torch.optim.SGD(params, lr=0.1)")
    # the bias is a leaf already (its value is the call itself): only the weight's line is changed
    assert got == (
        "replace_line",
        "weight = (torch.randn(n_out, n_in) * 0.01).requires_grad_()",
        _line("weight = torch.randn(n_out, n_in, requires_grad=True) * 0.01"),
    )
    assert structural(parse_ops(fence))
    assert not structural(parse_ops("target def callee\narg Linear 0 -> {m1_cols}"))


def test_a_model_instance_leads_to_its_classes_init_and_only_a_list_of_layers_is_wrapped():
    got = _apply(
        "target def args\nvalue objects -> {nn}.ModuleList({})", "opt2 = torch.optim.SGD(model.parameters(), lr=0.1)"
    )
    # self.sizes = [16, 32] comes first in __init__ but holds numbers; self.blocks starts empty and
    # gets layers appended
    assert got == ("replace_line", "self.blocks = nn.ModuleList([])", _line("self.blocks = []"))
    assert not holds_objects(LINES, _line("self.sizes = [16, 32]"))
    assert holds_objects(LINES, _line("self.blocks = []"))


def test_nothing_applies_without_a_definition_of_the_right_shape():
    # the conditions are the preconditions: no Linear in the definition, no list of layers, no binop
    assert _apply("target def callee\narg Linear 0 -> {m1_cols}", "x = batch.to(dev)", {"m1_cols": "4"}) is None
    assert _apply("target def args\nvalue objects -> nn.ModuleList({})", "x = batch.to(dev)") is None
    # the failing line must read as the file shows it (the file changed since the traceback)
    assert (
        apply_at(
            parse_ops("target def callee\narg Linear 0 -> 1"),
            "return self.fc(y)",
            _line("return self.head(x)"),
            {},
            LINES,
        )
        is None
    )


def test_module_name_follows_the_files_imports():
    assert module_name(LINES) == "nn"
    assert module_name(["import torch", "import torch.nn as nn"]) == "nn"
    assert module_name(["import torch"]) == "torch.nn"


def test_drop_and_value_kinds():
    ops = parse_ops("drop * requires_grad=\nvalue binop,chain -> {}.requires_grad_()")
    assert (
        apply(ops, "w = torch.randn(requires_grad=True, size=(2,)) * 2", {})[1]
        == "w = (torch.randn(size=(2,)) * 2).requires_grad_()"
    )
    assert (
        apply(ops, "b = torch.zeros(3, requires_grad=True).to(dev)", {})[1]
        == "b = torch.zeros(3).to(dev).requires_grad_()"
    )
    assert apply(ops, "w = torch.randn(3, requires_grad=True)", {}) is None  # a leaf already
    assert apply(ops, "w = torch.randn(3) * 2", {}) is None  # nothing to drop


def test_bad_files_and_huge_files_give_nothing_quickly():
    assert candidate_lines(["def f(:", "  x = 1"], 2, ["x"]) == []
    many = ["def f(a):", "    return g(a)", "def g(b):", "    return f(b)"] + [f"f(v{i})" for i in range(3000)]
    started = time.process_time()
    candidate_lines(many, 2, ["a"])
    assert time.process_time() - started < 5  # bounded work (the walk's step budget), not a timing ratio
    assert candidate_lines(["x = 1"] * 6000, 3, ["x"]) == []


MASK_SCRIPT = """\
import torch

ids = torch.tensor([[3, 9, 4, 0], [8, 0, 0, 0]])
{mask_line}
scores = torch.zeros(2, 4)
weights = scores.masked_fill(mask, float("-inf")).softmax(-1)
"""
MASK_PASTE = """\
Traceback (most recent call last):
  File "/home/u/attn.py", line 6, in <module>
    weights = scores.masked_fill(mask, float("-inf")).softmax(-1)
RuntimeError: masked_fill_ only supports boolean masks, but got mask with dtype long int
"""


def _first_fix(index, mask_line: str | None):
    from explainer.match.explain import explain_text
    from explainer.render import advice_for

    answer = explain_text(MASK_PASTE, index)
    assert answer.matches and answer.matches[0].id == "masked-fill-non-bool-mask"
    lines = MASK_SCRIPT.format(mask_line=mask_line).split("\n") if mask_line else None
    advice = advice_for(answer, index, answer.matches[0], source=lambda _f: lines)
    return advice["causes"][0]["id"], advice["fixes"][0]


def test_where_the_mask_is_made_decides_which_value_marks_what(index):
    # 1 marks the padding (the positions to fill): .bool() keeps the meaning, and is safe
    cause, fix = _first_fix(index, "mask = (ids == 0).long()")
    assert (cause, fix["id"], fix["applicability"], fix["code"]) == (
        "int-fill-mask",
        "to-bool",
        "safe",
        'weights = scores.masked_fill(mask.bool(), float("-inf")).softmax(-1)',
    )
    # 1 marks the real tokens (the positions to keep): fill where it is 0, and say to check it
    cause, fix = _first_fix(index, "mask = (ids != 0).long()")
    assert (cause, fix["id"], fix["applicability"]) == ("keep-mask", "fill-where-zero", "review")
    assert "mask == 0" in fix["code"]
    # without the file nothing says which: the rewrite that may change the meaning is not safe
    _cause, fix = _first_fix(index, None)
    assert fix["applicability"] != "safe"


TBPTT = """\
import torch
import torch.nn as nn

rnn = nn.{cell}(3, 5, batch_first=True)
h = {start}
total = 0
for step in range(3):
    out, h = rnn(torch.randn(2, 4, 3), h)
    loss = out.pow(2).mean()
    total = total + loss
    loss.backward()
    total.backward()
"""


def test_the_state_a_loop_hands_to_a_call_is_detached_where_it_is_passed():
    fence = "target def carried\nbefore {carried} = {detached}"
    for cell, start, want in (
        ("GRU", "torch.zeros(1, 2, 5)", "h = h.detach()"),
        ("GRU", "None", "h = None if h is None else h.detach()"),
        ("LSTM", "None", "h = None if h is None else tuple(s.detach() for s in h)"),
    ):
        lines = TBPTT.format(cell=cell, start=start).split("\n")
        assert apply_at(parse_ops(fence), "loss.backward()", 11, {}, lines) == ("insert_before", want, 8)
    # a running sum is not a state handed to a call: nothing is carried into total's graph that way
    lines = TBPTT.format(cell="GRU", start="None").split("\n")
    got = apply_at(parse_ops(fence), "total.backward()", 12, {}, lines)
    assert got == ("insert_before", "h = None if h is None else h.detach()", 8)  # total <- loss <- out <- h
    flat = ["import torch", "total = 0", "for x in range(3):", "    total = total + x", "    total.backward()"]
    assert apply_at(parse_ops(fence), "total.backward()", 5, {}, flat) is None


LOADER = """\
import torch
from torch.utils.data import DataLoader


def collate_batch(batch):
    return batch


data = [torch.ones(n) for n in (3, 2, 1)]
loader = DataLoader(data, batch_size=3)
for batch in loader:
    pass
"""


def test_a_collate_function_the_file_defines_is_passed_where_the_loader_is_made():
    lines = LOADER.split("\n")
    fence = "target def value\nkwarg DataLoader collate_fn={collate_fn}"
    got = apply_at(parse_ops(fence), "for batch in loader:", 11, {"collate_fn": "1"}, lines)
    assert got == ("replace_line", "loader = DataLoader(data, batch_size=3, collate_fn=collate_batch)", 10)
    # once it is passed (or where the file has none), the file gives no value: the rewrite does not apply
    passed = [ln.replace("batch_size=3)", "batch_size=3, collate_fn=collate_batch)") for ln in lines]
    assert apply_at(parse_ops(fence), "for batch in loader:", 11, {"collate_fn": "1"}, passed) is None
    # the loader made on the failing line itself
    inline = lines[:9] + ["for batch in DataLoader(data, batch_size=3):", "    pass"]
    got = apply_at(parse_ops(fence), "for batch in DataLoader(data, batch_size=3):", 10, {}, inline)
    assert got == ("replace_line", "for batch in DataLoader(data, batch_size=3, collate_fn=collate_batch):", 10)


def test_a_statement_inserted_before_may_span_lines():
    ops = parse_ops("before def pad(b):\\n    return b\nkwarg DataLoader collate_fn=pad")
    assert apply(ops, "loader = DataLoader(data)", {}) == (
        "replace_line",
        "def pad(b):\n    return b\nloader = DataLoader(data, collate_fn=pad)",
    )


def test_following_many_names_reads_each_scope_once(monkeypatch):
    # a long script whose failing line reads 50 names: the walk indexes each scope's assignments once
    # instead of scanning the file again for every name (which took a second on 5 000 lines)
    import explainer.advise.defuse as defuse

    lines = ["v0 = 1"] + [f"v{i} = v{i - 1} + {i}" for i in range(1, 4900)]
    names = [f"v{i}" for i in range(0, 4900, 98)]
    lines.append("y = f(" + ", ".join(names) + ")")
    scans = []
    real = defuse._own_statements
    monkeypatch.setattr(defuse, "_own_statements", lambda scope: scans.append(scope) or real(scope))
    assert len(defuse.definition_texts(lines, len(lines), names)) == 79
    assert defuse.carried_state(lines, len(lines), names) is None
    assert len(scans) <= 2, len(scans)


SERVE = """\
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(8)

    def forward(self, x):
        return self.bn(x)


scorer = Scorer()
for batch in torch.randn(3, 16, 8):
    scorer(batch).sum().backward()
with torch.no_grad():
    score = scorer(torch.randn(1, 8))
"""


def test_the_model_is_switched_where_it_is_called_outside_a_loop():
    lines = SERVE.split("\n")
    fence = parse_ops("target caller\nbefore {model}.eval()")
    # the traceback's calling line, or without one the calls outside a loop: never the training loop's
    assert apply_at(fence, "return self.bn(x)", 11, {}, lines, caller=18) == ("insert_before", "scorer.eval()", 18)
    assert apply_at(fence, "return self.bn(x)", 11, {}, lines) == ("insert_before", "scorer.eval()", 18)
    assert apply_at(fence, "return self.bn(x)", 11, {}, lines, caller=16) is None
    assert structural(fence)
