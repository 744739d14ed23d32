"""The knowledge base itself: lint, and every snippet executed against its label."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from explainer.knowledge.kb import read_all, read_entry
from explainer.knowledge.lint import lint, lint_entry
from explainer.knowledge.verify import Worker, executable, run_checks, run_snippet, snippet_label
from explainer.match.explain import explain_text
from explainer.render.markdown import rendered_json

from .conftest import KB, ROOT
from .formats import FORMATS

ENTRIES = read_all(KB)
LOSSY = {"last_line", "pytest"}  # formats that keep only the final line(s) of the message
CASES = [(e, s) for e in ENTRIES for s in executable(e)]


def test_tbx_lint_is_clean():
    proc = subprocess.run(
        [sys.executable, "-m", "explainer", "lint"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "no problems" in proc.stdout.strip().splitlines()[-1]


def test_lint_never_imports_torch():
    code = "import sys; from explainer.knowledge.lint import lint; from explainer.paths import kb_dir; lint(kb_dir()); assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)


def test_every_entry_has_a_reproducer_and_a_fix():
    for e in ENTRIES:
        roles = {s.role for s in e.snippets}
        assert "repro" in roles and e.fixes, e.id
        # an entry whose every fix is prose (nothing can run on a CPU: a driver, an install) is honest
        # advice; every other fix shows code that a snippet or a reproducer executes
        for f in e.fixes:
            assert f["rewrites"] or f["templates"] or not f["fix_snippets"], (e.id, f["slug"])


BAD_ENTRY = textwrap.dedent("""\
    +++
    id = "bad-entry"
    title = { en = "Bad", zh = "Bad" }
    category = "autograd"
    kind = "error"
    exception_types = ["RuntimeError"]
    patterns = ["something {x} went {x}", "something else went wrong\\n"]
    frames = []
    excludes = []
    related = []
    torch_verified = ["2.13.0"]
    docs = ["http://example.com"]
    version_dependent = true
    +++

    ## Summary

    ### en
    Something.

    ## Causes

    ### one
    #### en
    No title and no recognise line.
    #### zh
    没有标题。

    ## Fixes

    ### fix-it
    #### en
    **Do it.** Text.
    #### zh
    **做。** 文字。

    ```python template
    {receiver}.mean().backward()
    ```

    ```python fix
    import torch
    print("no assertion")
    ```

    ## Reproducer

    ```python repro
    raise RuntimeError("x")
    ```

    ```python repro raises=RuntimeError
    raise RuntimeError("x")
    ```
    """)


def test_lint_reports_every_problem_with_a_hint(tmp_path):
    path = tmp_path / "bad-entry.md"
    path.write_text(BAD_ENTRY, encoding="utf-8")
    problems = "\n".join(lint_entry(read_entry(path), {"bad-entry"}))
    expected = [
        "unknown key 'version_dependent'",  # a misspelt key is an error, not silently ignored
        "title.zh must be written in Chinese",
        "appears twice",
        "starts or ends with whitespace",
        "must be an https link",
        "missing section '## Explanation'",
        "'### zh' is missing",
        "open with a bold title",
        "Recognise:",
        "needs a default",
        "must assert its effect",
        "declare exactly one of raises=TYPE",
        "is not in any 'python fix' snippet",
        "mark the fix's own lines with '# fix'",
        "mark the one line that raises with a trailing '# error' comment",
    ]
    for text in expected:
        assert text in problems, f"lint did not report {text!r}:\n{problems}"


def test_lint_names_file_line_and_code_of_each_problem(tmp_path):
    """`tbx lint` prints `kb/<id>.md:LINE: CODE message (see kb/README.md: section)`, the line being the
    one the problem is about: a fence's line, a front-matter key, a cause's heading."""
    import os
    import re
    import subprocess
    import sys

    (tmp_path / "bad-entry.md").write_text(BAD_ENTRY, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "explainer", "lint"],
        capture_output=True,
        text=True,
        env={**os.environ, "TBX_KB": str(tmp_path)},
        timeout=120,
    ).stdout
    lines = BAD_ENTRY.split("\n")
    rows = [ln for ln in out.splitlines() if ln.startswith("kb/")]
    assert rows and all(
        re.match(r"kb/bad-entry\.md:\d+: KB[1-6]\d\d \S.* \(see kb/README\.md: [A-Z]", r) for r in rows
    ), out
    by_text = {r.split(": ", 1)[1].split(" ", 1)[1]: int(r.split(":")[1]) for r in rows}

    def line_of(fragment):
        return next(n for text, n in by_text.items() if fragment in text)

    assert lines[line_of("unknown key 'version_dependent'") - 1].startswith("version_dependent")
    assert "```python repro\n" in "\n".join(lines[line_of("declare exactly one of raises=TYPE") - 1 :]) + "\n"
    assert lines[line_of("mark the one line that raises") - 1].startswith("```python repro")
    assert lines[line_of("Recognise:") - 1].startswith("### ")
    codes = {r.split(": ", 1)[1].split(" ", 1)[0] for r in rows}
    assert len(codes) > 5  # each rule its own code


def test_lint_accepts_the_shipped_entries():
    report = lint(KB)
    assert report and not any(report.values()), {k: v for k, v in report.items() if v}


@pytest.fixture(scope="module")
def worker():
    w = Worker()
    yield w
    w.close()


@pytest.fixture(scope="module")
def explain_check(index):
    from explainer.match.explain import explain_check

    return explain_check(index)


@pytest.mark.slow
@pytest.mark.parametrize("entry,snippet", CASES, ids=[f"{e.id}:{snippet_label(e, s)}" for e, s in CASES])
def test_snippet(entry, snippet, worker, index):
    """Every check of ``tbx verify`` for one snippet: reproducers raise what they declare on their
    ``# error`` line, fully matching the first pattern, their real traceback is explained top-1 as
    their own entry, the rewrites tested on them and the first fix shown make them reach their end;
    fixes run clean with their assertions and fail with their fix lines reverted."""
    w = Worker(lazy=True) if "isolated" in snippet.options else worker
    results = run_checks(entry, snippet, w, index)
    result = results[0]
    if result.status == "skip":
        pytest.skip(f"{entry.id} {result.snippet}: {result.reason}")
    failed = [f"{r.snippet}: {r.reason}" for r in results if r.status == "fail"]
    assert not failed, f"{entry.id}:\n" + "\n".join(failed)
    if snippet.role == "repro" and "raises" in snippet.options:
        answer = explain_text(result.paste, index, top=3, budget=None)
        _assert_filled(entry, answer, index)
        # the robustness matrix: the same real traceback, pasted in every format the parser reads
        failures = []
        for name, transform in FORMATS.items():
            pasted = transform(result.paste)
            answer = explain_text(pasted, index, top=3, budget=None)
            top = answer.matches[0].id if answer.matches else None
            if name in LOSSY and top != entry.id:
                # only the first message line survives: an honest answer may be "one of these two,
                # paste the whole traceback", or nothing when that line carries no words at all
                first = (answer.parsed.message or "").split("\n")[0]
                if answer.ambiguous and entry.id in [c.id for c in answer.matches[:2]]:
                    continue
                if top in entry.meta.get("excludes", []):
                    continue  # the telling lines are gone: the entry yields to its declared twin
                if top is None and (
                    len(first.split()) < 3 or entry.meta.get("wraps") or answer.parsed.exc_type is None
                ):
                    # no words to go on, a wrapper whose inner error is all that is left, or only the
                    # message's last lines without its type (torch's generic hints: "Set
                    # TORCHDYNAMO_VERBOSE=1 ...", which many errors print)
                    continue
            if name == "dataloader_worker" and top in entry.meta.get("excludes", []):
                continue  # re-raised by a worker, the error is the worker wrapper's, which names this kind as a cause
            if top != entry.id:
                failures.append(f"{name}: {top} ({', '.join(f'{c.id} {c.score:.2f}' for c in answer.candidates)})")
        assert not failures, f"{entry.id}: not explained first in these formats:\n" + "\n".join(failures)


def _assert_filled(entry, answer, index) -> None:
    """No placeholder left in what the user is shown, in either language, and every code parses."""
    import re

    from explainer.advise.rewrite import is_valid
    from explainer.render.markdown import answer_markdown, short_markdown

    leftover = re.compile(r"(?<!\{)\{[A-Za-z_][A-Za-z0-9_]*(\|[^{}\n]*)?\}(?!\})")
    for lang in ("en", "zh"):
        data = rendered_json(answer, index, lang=lang)
        m = data["matches"][0]
        for fix in m["fixes"]:
            assert fix["code"] is None or not leftover.search(fix["code"]), (entry.id, fix)
            if fix["code"] is not None:
                assert is_valid(fix["code"]), (entry.id, fix)
        for text in (
            m["rendered"]["markdown"],
            answer_markdown(answer, index, lang=lang),
            short_markdown(answer, index, lang=lang),
        ):
            # code blocks and code spans hold the user's own code and values (an f-string's {name})
            # (a span fenced with more backticks holds code with backticks in it: `` a `b` {c} ``)
            prose = re.sub(r"(`+)[^\n]*?(?<!`)\1(?!`)", "", re.sub(r"```.*?```", "", text, flags=re.S))
            assert not leftover.search(prose), (entry.id, lang, leftover.search(prose).group(0))


@pytest.mark.slow
def test_verifier_catches_a_broken_fix_and_a_wrong_message(tmp_path, worker):
    entry = read_entry(KB / "backward-non-scalar-output.md")
    from dataclasses import replace

    fix = next(s for s in entry.snippets if s.role == "fix")
    broken = replace(fix, code=fix.code.replace("[3.5, 4.5]", "[3.0, 4.5]"))
    assert run_snippet(entry, broken, worker).status == "fail"
    repro = next(s for s in entry.snippets if s.role == "repro")
    wrong = replace(repro, code="raise RuntimeError('grad can be implicitly created only for scalar outputs, or so')")
    res = run_snippet(entry, wrong, worker)
    assert res.status == "fail" and "does not fully match" in res.reason
    hang = replace(repro, code="import time\ntime.sleep(30)", options={**repro.options, "timeout": "1"})
    res = run_snippet(entry, hang, worker)
    assert res.status == "fail" and "timed out" in res.reason


def test_on_another_release_a_first_reproducer_may_show_any_of_the_entrys_wordings():
    """torch 2.13 warns "Starting in PyTorch 2.9, calling checkpoint ...", 2.15 "In a future release,
    calling checkpoint ...": both are patterns of the entry; the first must match on the entry's own
    release (the first of torch_verified), any one on another."""
    from dataclasses import replace

    from explainer.knowledge import verify

    entry = read_entry(KB / "checkpoint-use-reentrant-warning.md")
    repro = entry.repros[0]
    later = entry.meta["patterns"][1].replace("\\", "")
    res = {"status": "ok", "exc": None, "warnings": [{"category": "UserWarning", "message": later, "file": "x.py"}]}
    own = replace(entry, meta={**entry.meta, "torch_verified": [_installed_torch(), "2.15.0"]})
    other = replace(entry, meta={**entry.meta, "torch_verified": ["1.0.0"]})
    assert verify.check(own, own.repros[0], res)[0] == "fail"
    assert verify.check(other, other.repros[0], res)[0] == "pass"
    nothing = dict(res, warnings=[{"category": "UserWarning", "message": "something else", "file": "x.py"}])
    assert verify.check(other, repro, nothing)[0] == "fail"


def _installed_torch() -> str:
    from importlib.metadata import version

    return version("torch").split("+", 1)[0]


@pytest.mark.slow
def test_snippets_run_with_their_own_future_flags(worker):
    """A snippet is compiled as its own module: the worker's `from __future__ import annotations`
    never turns its annotations into strings (torch.jit.script reads them)."""
    entry = read_entry(KB / "backward-non-scalar-output.md")
    from dataclasses import replace

    fix = next(s for s in entry.snippets if s.role == "fix")
    probe = replace(fix, code="def f(x: int) -> int:\n    return x\nassert f.__annotations__['x'] is int  # fix\n")
    res = run_snippet(entry, probe, worker)
    assert res.status != "fail" or "necessity" in (res.reason or ""), res.reason


def test_a_toml_addresses_fence_names_the_causes_of_a_prose_fix(tmp_path):
    from explainer.knowledge.kb import read_entry

    entry = read_entry(KB / "cuda-driver-too-old.md")
    fixes = {f["slug"]: f for f in entry.fixes}
    assert fixes["expose-the-gpu"]["causes"] == ["no-visible-gpu"]
    # a stopgap for every cause says so: all of them, in the entry's order
    assert fixes["fallback-device"]["causes"] == [c["slug"] for c in entry.causes]
    bad = tmp_path / "cuda-driver-too-old.md"
    text = (KB / "cuda-driver-too-old.md").read_text(encoding="utf-8")
    bad.write_text(text.replace('causes = ["no-visible-gpu"]', "causes = 3"), encoding="utf-8")
    problems = "\n".join(lint_entry(read_entry(bad), {e.stem for e in KB.glob("*.md")}))
    assert "### expose-the-gpu: 'toml addresses' needs causes" in problems


def test_search_finds_what_users_mean_in_their_words():
    """Queries as users type them, in both languages (tests/fixtures/search/queries.jsonl, written for
    this test: colloquial Chinese, English paraphrases, message fragments): the entry in the first three."""
    import json

    from explainer.knowledge.index import open_index

    from .conftest import FIXTURES

    index = open_index()
    rows = [
        json.loads(line) for line in (FIXTURES / "search" / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    top1 = top3 = 0
    misses = []
    for r in rows:
        got = [x["id"] for x in index.search(r["q"], limit=3)]
        top1 += bool(got) and got[0] in r["want"]
        top3 += any(g in r["want"] for g in got)
        if not any(g in r["want"] for g in got):
            misses.append((r["q"], got))
    assert len(rows) >= 24
    assert top3 >= len(rows) - 1, misses
    assert top1 >= len(rows) * 0.6, top1
