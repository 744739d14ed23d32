"""Fixes as rewrites of the user's line, evidence, ranking, and the checks ``tbx verify`` runs on them."""

from __future__ import annotations

import textwrap
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explainer.advise.advise import advise, code_span, fill_text
from explainer.advise.evidence import Context, EvidenceError, assess, check_expression, evaluate, validate
from explainer.advise.rewrite import RewriteError, apply, apply_to_source, is_valid, parse_ops
from explainer.knowledge.kb import read_entry
from explainer.model import Frame, Parsed
from explainer.render import answer_json
from explainer.render.markdown import markdown_to_html

from .conftest import KB

CASES = [
    ("method view -> reshape", "y = x.transpose(1, 2).view(2, 5, 32)", "y = x.transpose(1, 2).reshape(2, 5, 32)"),
    ("receiver backward -> {}.mean()", "loss.backward()", "loss.mean().backward()"),
    ("receiver backward -> {}.mean()", "(a * b).backward()", "((a * b).mean()).backward()"),
    (
        "arg cross_entropy 1 -> {}.long()",
        "loss = F.cross_entropy(logits, labels)",
        "loss = F.cross_entropy(logits, labels.long())",
    ),
    ("arg * 1 -> {}.long()", "loss = criterion(out, y + 1)", "loss = criterion(out, (y + 1).long())"),
    (
        "arg Linear in_features= -> {m1_cols}",
        "fc = nn.Linear(in_features=28, out_features=10)",
        "fc = nn.Linear(in_features=784, out_features=10)",
    ),
    ("kwarg backward retain_graph=True", "loss.backward()", "loss.backward(retain_graph=True)"),
    ("kwarg backward retain_graph=True", "loss.backward(retain_graph=False)", "loss.backward(retain_graph=True)"),
    (
        "method view -> flatten\nargs view -> 1",
        "out = self.fc(x.view(x.size(0), 16 * 5 * 5))",
        "out = self.fc(x.flatten(1))",
    ),
    ("args * -> {}, dim=0", "y = torch.cat((a, b))", "y = torch.cat((a, b), dim=0)"),
    (
        "arg * 0 -> {}[:, :3]",
        "feats = self.pool(self.stem(x)).flatten(1)",
        "feats = self.pool(self.stem(x)[:, :3]).flatten(1)",
    ),
    ("value -> ({}).any()", "if torch.isnan(out):", "if (torch.isnan(out)).any():"),
    ("bitwise", "mask = x > 0 and x < 1", "mask = (x > 0) & (x < 1)"),
    ("bitwise", "keep = not done", "keep = ~(done)"),
    (
        "value -> DataLoader({}.dataset, collate_fn=pad)",
        "for batch in loader:",
        "for batch in DataLoader(loader.dataset, collate_fn=pad):",
    ),
    (
        "arg * {pos}-1 -> torch.as_tensor({})",
        "loss = F.cross_entropy(logits, labels)",
        "loss = F.cross_entropy(logits, torch.as_tensor(labels))",
    ),
    ("kwarg sum dim=1", "s = x.sum(0, keepdim=True)", "s = x.sum(0, keepdim=True, dim=1)"),
    ("call from_numpy -> {}.float()", "x = torch.from_numpy(features)", "x = torch.from_numpy(features).float()"),
    ("value -> {}.float()", "h = model(x) + 1", "h = (model(x) + 1).float()"),
    ("line -> {target|y} = None", "a.b = foo(3)", "a.b = None"),
    (
        "before {arg0} = {arg0}.flatten(1)\nvalue -> {}.squeeze(1)",
        "out = self.fc(x)",
        "x = x.flatten(1)\nout = self.fc(x).squeeze(1)",
    ),
    ("method view -> reshape", "y = x.view(3)  # a comment with .view(", "y = x.reshape(3)"),
    ("method view -> reshape", "s = '数据'.strip(); y = x.view(-1)", None),  # two statements: not one line to rewrite
    (
        "name mean,std -> {}[:, None, None]",
        "img = (img - MEAN) / STD",
        "img = (img - MEAN[:, None, None]) / STD[:, None, None]",
    ),
    (
        "name mean,std -> {}[:, None, None]",
        "x = (x - self.pixel_mean) / self.pixel_std",
        "x = (x - self.pixel_mean[:, None, None]) / self.pixel_std[:, None, None]",
    ),
    ("name mean -> {}[:, None]", "y = mean(x) + meaning", None),  # a called function and a longer word are not the name
]


@pytest.mark.parametrize("ops,line,expected", CASES)
def test_rewrite_operations(ops, line, expected):
    res = apply(parse_ops(ops), line, {"m1_cols": "784", "arg0": "x", "target": "a.b", "pos": "2"})
    if expected is None:
        assert res is None
        return
    assert res is not None and res[1] == expected
    assert res[0] == "replace_line"


def test_a_rewrite_that_finds_nothing_does_not_apply():
    assert apply(parse_ops("method view -> reshape"), "y = x + 1", {}) is None
    assert apply(parse_ops("arg cross_entropy 1 -> {}.long()"), "loss = F.cross_entropy(logits)", {}) is None
    assert apply(parse_ops("arg Linear 0 -> {m1_cols}"), "fc = nn.Linear(28, 10)", {}) is None  # value missing
    assert apply(parse_ops("value -> {}.long()"), "del x", {}) is None
    assert apply(parse_ops("method view -> reshape"), "y = x.view(", {}) is None  # not Python


def test_insert_before_and_apply_to_source_keep_indentation():
    kind, code = apply(
        parse_ops("before {arg0} = {arg0}.flatten(1)"), "return self.fc(x)", code_values_of("return self.fc(x)")
    )
    assert (kind, code) == ("insert_before", "x = x.flatten(1)")
    src = "class M:\n    def forward(self, x):\n        return self.fc(x)\n"
    assert (
        apply_to_source(src, 3, kind, code)
        == "class M:\n    def forward(self, x):\n        x = x.flatten(1)\n        return self.fc(x)\n"
    )
    assert (
        apply_to_source(src, 3, "replace_line", "a = 1\nreturn a")
        == "class M:\n    def forward(self, x):\n        a = 1\n        return a\n"
    )


def code_values_of(line):
    from explainer.advise.rewrite import code_values

    return code_values(line)


def test_carets_point_the_rewrite_at_the_call_that_failed():
    from explainer.parse.parser import parse_text

    paste = (
        "Traceback (most recent call last):\n"
        '  File "model.py", line 6, in forward\n'
        "    return torch.relu(self.hidden(x).float())\n"
        "                      ^^^^^^^^^^^^^^\n"
        "RuntimeError: mat1 and mat2 must have the same dtype, but got Double and Float\n"
    )
    uf = parse_text(paste).user_frame
    assert uf.focus == "self.hidden(x)"
    from explainer.advise.rewrite import code_values

    values = code_values(uf.code, uf.focus)
    assert values["call"] == "self.hidden" and values["arg0"] == "x"
    assert (
        apply(parse_ops("arg * 0 -> {}.float()"), uf.code, values)[1]
        == "return torch.relu(self.hidden(x.float()).float())"
    )
    # without carets: the outermost call of a named callee
    assert (
        apply(parse_ops("arg * 0 -> {}.float()"), uf.code, code_values(uf.code))[1]
        == "return torch.relu(self.hidden(x).float().float())"
    )


def test_malformed_rewrites_are_rejected():
    for bad in (
        "rename view reshape",
        "method view reshape",
        "",
        "kwarg backward",
        "arg x -> y",
        "target backward",
        "kwarg backward retain_graph=True\ntarget backward",
        "name Mean -> {}",
    ):
        with pytest.raises(RewriteError):
            parse_ops(bad)


LINES = st.sampled_from(
    [
        "loss.backward()",
        "y = x.view(2, -1)",
        "out = model(x)",
        "loss = F.cross_entropy(out, y)",
        "x = torch.from_numpy(a)",
        "for i in range(3): pass",
        "return self.fc(x.view(x.size(0), -1))",
        "a, b = f(x), g(y)",
        "x[0] = y",
        "print('`x`')",
        "y = x.transpose(1, 2).view(2, 5, 32)",
        "with torch.no_grad(): y = m(x)",
        "lambda: 0",
        "x = ",
        "@@@",
        "",
    ]
)
OPS = st.sampled_from(
    [
        "method view -> reshape",
        "receiver backward -> {}.mean()",
        "arg * 0 -> {}.float()",
        "arg cross_entropy 1 -> {}.long()",
        "kwarg * dim=1",
        "call from_numpy -> {}.float()",
        "value -> {}.detach()",
        "before {arg0} = {arg0}.flatten(1)",
        "line -> {target|y} = {call|f}()",
        "receiver view -> {}.contiguous()",
    ]
)


@settings(max_examples=300, deadline=None)
@given(line=LINES, ops=st.lists(OPS, min_size=1, max_size=3), junk=st.text(max_size=20))
def test_a_rewrite_either_gives_valid_python_or_does_not_apply(line, ops, junk):
    from explainer.advise.rewrite import code_values

    for text in (line, line + junk, junk):
        res = apply(parse_ops("\n".join(ops)), text, code_values(text))
        if res is not None:
            assert res[0] in ("replace_line", "insert_before")
            assert is_valid(res[1]), res
            assert "{" not in res[1] or "{" in text


def test_evidence_expressions_are_a_small_safe_language():
    assert (
        evaluate(check_expression("m2_rows % m1_cols == 0 and m2_rows > m1_cols"), {"m1_cols": "28", "m2_rows": "784"})
        is True
    )
    assert evaluate(check_expression("a != b"), {"a": "3", "b": "3"}) is False
    for bad in ("__import__('os')", "a.b", "f(1)", "[1, 2]", "a ** 99999", "lambda: 1"):
        with pytest.raises(EvidenceError):
            check_expression(bad)
    assert validate({"if": [{"when": "open('x')", "en": "a", "zh": "一"}]})
    assert validate({"if": [{"code": "(", "en": "a", "zh": "一"}]})
    assert validate({"if": [{"code": "x", "lines": "y", "en": "a", "zh": "一"}]})  # one test per table
    assert validate({"if": [{"code": "x"}]})  # an 'if' needs the sentences
    assert not validate({"if": [{"code": "x", "en": "a", "zh": "一"}], "unless": [{"when": "a == 1"}]})


def _parsed(code="loss.backward()", message="grad can be implicitly created only for scalar outputs", frames=()):
    return Parsed("RuntimeError", message, frames=(*frames, Frame("train.py", 12, "<module>", code, False)))


DOC = {
    "causes": [
        {"slug": "first", "title_en": "First", "title_zh": "第一", "en": "", "zh": "", "evidence": None},
        {
            "slug": "second",
            "title_en": "Second",
            "title_zh": "第二",
            "en": "",
            "zh": "",
            "evidence": {
                "if": [{"code": r"\.view\(", "en": "your line calls `.view()`", "zh": "你这一行调用了 `.view()`"}]
            },
        },
        {
            "slug": "third",
            "title_en": "Third",
            "title_zh": "第三",
            "en": "",
            "zh": "",
            "evidence": {"unless": [{"when": "n == 3"}]},
        },
    ],
    "fixes": [
        {"slug": "for-first", "causes": ["first"], "template": "x = 1", "rewrite": None},
        {"slug": "for-third", "causes": ["third"], "rewrite": "method view -> reshape", "example_lines": []},
        {"slug": "for-second", "causes": ["second"], "rewrite": "method view -> reshape", "example_lines": []},
        {"slug": "for-second-advice", "causes": ["second"], "template": "y = x.contiguous()", "rewrite": None},
    ],
}


def test_causes_and_fixes_are_ranked_by_the_paste():
    a = advise(DOC, _parsed("y = x.transpose(0, 1).view(-1)"), {"n": "3"})
    assert [c["id"] for c in a["causes"]] == ["second", "first", "third"]  # found first, ruled out last
    assert a["causes"][0]["evidence"][0]["en"] == "your line calls `.view()`"
    assert [f["id"] for f in a["fixes"]] == ["for-second", "for-second-advice", "for-first", "for-third"]
    first = a["fixes"][0]
    assert first["code"] == "y = x.transpose(0, 1).reshape(-1)"
    assert first["applies"] == {"kind": "replace_line", "file": "train.py", "line": 12}
    # a fix whose causes the paste rules out is never first, and is not offered as a change of the line
    assert a["fixes"][-1]["id"] == "for-third" and a["fixes"][-1]["applies"] is None
    # without evidence the knowledge base's order stands
    b = advise(DOC, _parsed("z = f(x)"), {})
    assert [c["id"] for c in b["causes"]] == ["first", "second", "third"]
    assert all(f["applies"] is None for f in b["fixes"])


def test_prose_values_go_in_as_code_and_cannot_inject_markup():
    values = {"m1_cols": "784", "name": "x](https://evil.example/a.png) ![i](https://evil.example/i.png) `` ` ``"}
    text = fill_text("a left operand with {m1_cols|its columns} columns; {name|a name}; {missing|the default}", values)
    assert text.startswith("a left operand with `784` columns;") and text.endswith("; the default")
    html = markdown_to_html(text)
    assert "<a " not in html and "<img" not in html
    for hostile in ("`", "``x``", "a`b", "`` ` ``"):
        assert "<code>" in markdown_to_html(code_span(hostile)) and "<a" not in markdown_to_html(
            code_span(hostile + "](http://x)")
        )


def test_evidence_context_is_capped():
    long = "x" * 100_000
    ctx = Context(_parsed(long, long), {})
    assert len(ctx.code) <= 2000 and len(ctx.message) <= 2000
    found, out = assess({"if": [{"code": "x$", "en": "e", "zh": "中"}]}, ctx)
    assert found and not out


# -- what tbx verify runs ---------------------------------------------------------------------------

slow = pytest.mark.slow


@pytest.fixture(scope="module")
def worker():
    pytest.importorskip("torch")
    from explainer.knowledge.verify import Worker

    w = Worker()
    yield w
    w.close()


def _entry_with(tmp_path, old: str, new: str):
    src = (KB / "backward-non-scalar-output.md").read_text(encoding="utf-8")
    assert old in src
    path = tmp_path / "backward-non-scalar-output.md"
    path.write_text(src.replace(old, new, 1), encoding="utf-8")
    return read_entry(path)


@slow
def test_verify_catches_a_rewrite_that_does_not_fix_the_reproducers(tmp_path, worker, index):
    from explainer.knowledge.verify import run_checks

    entry = _entry_with(tmp_path, "receiver backward -> {}.mean()", "receiver backward -> {}.abs()")
    doc = index.entry(entry.id)
    # the index the answer is built from must carry the broken rewrite too
    broken = dict(
        doc,
        fixes=[dict(f, rewrite="receiver backward -> {}.abs()") if f["slug"] == "reduce" else f for f in doc["fixes"]],
    )
    index._docs[entry.id] = broken
    try:
        repro = entry.repros[0]
        results = run_checks(entry, repro, worker, index)
    finally:
        index._docs.pop(entry.id, None)
    bad = [r for r in results if r.snippet.startswith("rewrite:reduce")]
    assert bad and bad[0].status == "fail" and "grad can be implicitly created" in bad[0].reason
    assert any(r.snippet.startswith("rewrite:gradient-argument") and r.status == "pass" for r in results)


@slow
def test_necessity_check_fails_a_fix_that_works_without_its_fix_lines(tmp_path, worker):
    from explainer.knowledge.verify import run_checks

    entry = read_entry(KB / "backward-non-scalar-output.md")
    fix = next(s for s in entry.snippets if s.role == "fix" and s.group == "reduce")
    assert all(r.status == "pass" for r in run_checks(entry, fix, worker))
    # a marked line that does not matter: the snippet still passes reverted, so the check fails
    useless = replace(fix, code=fix.code.replace("import torch\n", "import torch\nunused = 1  # fix\n", 1))
    useless = replace(useless, code=useless.code.replace("  # fix: loss.backward()", ""))
    results = run_checks(entry, useless, worker)
    revert = [r for r in results if r.role == "revert"]
    assert revert and revert[0].status == "fail" and "still passes" in revert[0].reason


@slow
def test_a_broken_fix_fails_also_under_pythonoptimize(monkeypatch):
    pytest.importorskip("torch")
    from explainer.knowledge.verify import Worker, run_snippet

    entry = read_entry(KB / "backward-non-scalar-output.md")
    fix = next(s for s in entry.snippets if s.role == "fix")
    broken = replace(fix, code=fix.code.replace("[3.5, 4.5]", "[3.0, 4.5]"))
    monkeypatch.setenv("PYTHONOPTIMIZE", "1")
    w = Worker()
    try:
        assert run_snippet(entry, broken, w).status == "fail"
    finally:
        w.close()


@slow
def test_the_worker_restores_the_environment(worker):
    from explainer.knowledge.kb import Snippet

    entry = read_entry(KB / "backward-non-scalar-output.md")
    # (the first torch.compile of a process turns distributions' validation off for good: a snippet
    # of another entry did, and every distributions reproducer after it in that worker failed)
    setter = Snippet(
        "fix",
        "import os, torch\nos.environ['TBX_LEAK'] = '1'\ntorch.set_default_dtype(torch.float64)\n"
        "torch.distributions.Distribution.set_default_validate_args(False)\nassert True\n",
        {},
        1,
        "x",
    )
    checker = Snippet(
        "fix",
        "import os, torch\nassert 'TBX_LEAK' not in os.environ\nassert torch.get_default_dtype() == torch.float32\n"
        "assert torch.distributions.Distribution._validate_args is __debug__\n",
        {},
        2,
        "x",
    )
    from explainer.knowledge.verify import run_snippet

    assert run_snippet(entry, setter, worker).status == "pass"
    res = run_snippet(entry, checker, worker)
    assert res.status == "pass", res.reason


def test_json_answer_carries_ranked_causes_and_fixes(index):
    from explainer.match.explain import explain_text

    paste = textwrap.dedent("""\
        Traceback (most recent call last):
          File "train.py", line 40, in <module>
            loss.backward()
          File "/usr/lib/python3/site-packages/torch/_tensor.py", line 626, in backward
            torch.autograd.backward(
          File "/usr/lib/python3/site-packages/torch/autograd/__init__.py", line 340, in backward
            grad_tensors_ = _make_grads(tensors, grad_tensors_, is_grads_batched=False)
          File "/usr/lib/python3/site-packages/torch/autograd/__init__.py", line 198, in _make_grads
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        RuntimeError: grad can be implicitly created only for scalar outputs
        """)
    for lang in ("en", "zh"):
        m = answer_json(explain_text(paste, index, budget=None), index, lang=lang)["matches"][0]
        assert m["id"] == "backward-non-scalar-output"
        first = m["fixes"][0]
        assert set(first) == {"id", "title", "causes", "code", "applies", "applicability", "verified"}
        assert first["applicability"] == "safe"  # the rewrite of the cause the paste points to
        assert {f["applicability"] for f in m["fixes"][1:]} <= {"safe", "review", "example", "advice"}
        assert first["code"] == "loss.mean().backward()" and first["applies"] == {
            "kind": "replace_line",
            "file": "train.py",
            "line": 40,
        }
        assert first["verified"] is True
        assert m["causes"][0]["id"] == "per-sample-loss" and m["causes"][0]["evidence"]
        assert all(isinstance(e, str) for c in m["causes"] for e in c["evidence"])
        if lang == "zh":
            assert "损失" in m["causes"][0]["evidence"][0]


@pytest.mark.timeout(1200)
def test_every_evidence_expression_is_fast_at_its_cap():
    """Evidence regexes run on the user's line and the message (capped): none can backtrack."""
    import re

    from explainer.advise.evidence import MAX_TEXT
    from explainer.knowledge.attack import adversarial_inputs, worst_time
    from explainer.knowledge.kb import read_all
    from explainer.knowledge.lint import ATTACK_BOUND_S, ATTACK_INPUTS, evidence_regexes

    found = evidence_regexes(read_all(KB))
    assert len(found) > 300
    slow = []
    for eid, label, src in found:
        t, s = worst_time(re.compile(src), adversarial_inputs(src, MAX_TEXT, limit=ATTACK_INPUTS), ("search",))
        if t > ATTACK_BOUND_S:
            slow.append(f"{eid} {label}: {t * 1000:.1f} ms on {s[:50]!r}")
    assert not slow, "\n".join(slow)


# --- fixes that change another line than the failing one ('target') -----------------------------------

TRAIN = textwrap.dedent("""\
    import torch


    def evaluate(m, x):
        with torch.no_grad():
            return m(x).sum()


    def step(m, x, opt):
        with torch.no_grad():  # copied from evaluate
            out = m(x)
        loss = out.sum()
        loss.backward()
        opt.step()
    """).split("\n")


def test_a_target_is_the_nearest_call_above_in_the_same_function():
    from explainer.advise.rewrite import apply_at, find_target

    fail = TRAIN.index("    loss.backward()") + 1
    assert find_target(TRAIN, fail, "no_grad") == TRAIN.index("    with torch.no_grad():  # copied from evaluate") + 1
    assert find_target(TRAIN, fail, "backward") is None  # the failing line itself is never its own target
    inner = TRAIN.index("        return m(x).sum()") + 1
    assert find_target(TRAIN, inner, "opt.step") is None  # never outside the enclosing function
    res = apply_at(parse_ops("target no_grad\ncall no_grad -> torch.enable_grad()"), "loss.backward()", fail, {}, TRAIN)
    assert res == ("replace_line", "with torch.enable_grad():", fail - 3)
    assert apply_to_source("\n".join(TRAIN), res[2], res[0], res[1]).count("with torch.enable_grad():") == 1


def test_a_target_rewrite_needs_the_file_the_traceback_ran():
    from explainer.advise.rewrite import apply_at

    ops = parse_ops("target no_grad\ncall no_grad -> torch.enable_grad()")
    fail = TRAIN.index("    loss.backward()") + 1
    assert apply_at(ops, "loss.backward()", fail, {}) is None  # no file: advice
    assert apply_at(ops, "loss.backward()", fail - 1, {}, TRAIN) is None  # the file's line differs: another file
    assert apply_at(ops, "out.backward()", fail, {}, TRAIN) is None


def test_the_cli_reads_the_users_file_and_the_api_never_does(tmp_path, index):
    """A fix of another line is offered where the user's file can be read (the CLI, the hooks), never
    by the HTTP API, which must not open a path that came in a paste."""
    import json
    import os
    import subprocess
    import sys

    from .conftest import ROOT

    script = tmp_path / "train.py"
    script.write_text("\n".join(TRAIN), encoding="utf-8")
    fail = TRAIN.index("    loss.backward()") + 1
    paste = (
        f'Traceback (most recent call last):\n  File "{script}", line {fail}, in step\n    loss.backward()\n'
        "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "explainer", "explain", "-", "--json"],
        input=paste,
        text=True,
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        env={**os.environ},
    )
    fixes = {f["id"]: f for f in json.loads(out.stdout)["matches"][0]["fixes"]}
    assert fixes["enable-grad"]["applies"] == {
        "kind": "replace_line",
        "file": str(script),
        "line": fail - 3,
        "fails_at": fail,
    }
    assert fixes["enable-grad"]["code"] == "with torch.enable_grad():"

    from fastapi.testclient import TestClient

    from explainer.api.app import create_app

    with TestClient(create_app(lambda: index, cors_origins=[])) as client:
        body = client.post("/v1/explain", json={"text": paste}).json()
    api_fix = next(f for f in body["matches"][0]["fixes"] if f["id"] == "enable-grad")
    assert api_fix["applies"] is None and "enable_grad" in (api_fix["code"] or "")  # the template, as advice


def _tokenize_strip(line: str) -> str:
    import io
    import tokenize

    try:
        for tok in tokenize.generate_tokens(io.StringIO(line).readline):
            if tok.type == tokenize.COMMENT:
                return line[: tok.start[1]].rstrip()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return line.rstrip()


def test_strip_comment_agrees_with_tokenize():
    """The comment stripper scans strings as Python does: on every line of every snippet of the
    knowledge base and on hard cases it gives what tokenize gives."""
    from explainer.advise.rewrite import strip_comment
    from explainer.knowledge.kb import read_all

    from .conftest import KB

    lines = {line for e in read_all(KB) for s in e.snippets for line in s.code.split("\n") if "#" in line}
    lines |= {
        "x = '#' # c",
        'x = "a\\"#" # c',
        "x = r'\\'#' # c",
        "s = '''#''' # c",
        's = """# still a string',
        "f'{x}#' + y  # c",
        "x = 1#c",
        "'unterminated # c",
        "a = b'#'[0]  # c",
        "# only a comment",
    }
    assert len(lines) > 300
    for line in sorted(lines):
        assert strip_comment(line) == _tokenize_strip(line), line


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab #'\"\\rf{}=", max_size=30))
def test_strip_comment_agrees_with_tokenize_on_any_line(line):
    from explainer.advise.rewrite import strip_comment

    assert strip_comment(line) == _tokenize_strip(line)
