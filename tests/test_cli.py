"""The tbx command line: output shapes, languages, exit codes, bad input, lazy imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from .conftest import FIXTURES, ROOT, needs_shared

PASTE = FIXTURES / "pastes" / "backward_flat_windows.txt"


def tbx(*args, stdin: bytes | None = None, timeout: int = 120):
    return subprocess.run(
        [sys.executable, "-m", "explainer", *args], input=stdin, capture_output=True, cwd=ROOT, timeout=timeout
    )


def test_explain_json_follows_the_interface():
    out = tbx("explain", str(PASTE), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data["parsed"]) >= {
        "exc_type",
        "message",
        "frames",
        "chain",
        "user_frame",
        "signals",
        "others",
        "format",
    }
    top = data["matches"][0]
    assert top["id"] == "backward-non-scalar-output"
    assert set(top) >= {"id", "score", "title", "reasons", "captures"} and 0 <= top["score"] <= 1


def test_reasons_follow_the_answers_language():
    data = json.loads(tbx("explain", str(PASTE), "--json", "--lang", "zh").stdout)
    reasons = data["matches"][0]["reasons"]
    assert data["matches"][0]["title"] == "对非标量张量调用 backward()"
    assert any("模板完全匹配" in r for r in reasons) and not any("template" in r for r in reasons)


def test_explain_in_chinese_and_english():
    zh = tbx("explain", str(PASTE), "--lang", "zh").stdout.decode()
    en = tbx("explain", str(PASTE), "--lang", "en").stdout.decode()
    assert "标量" in zh and "loss.mean().backward()" in zh
    assert "scalar" in en and "loss.mean().backward()" in en


def test_seed_paste_is_explained():
    seed = needs_shared("seeds", "000_e9df479cfb4ea892.txt").read_text(encoding="utf-8").split("<think>")[0]
    data = json.loads(tbx("explain", "--json", stdin=seed.encode()).stdout)
    assert data["matches"][0]["id"] == "backward-non-scalar-output"
    assert all(m["id"] != "backward-complex-output" for m in data["matches"])


@pytest.mark.parametrize(
    "args,stdin",
    [
        (("explain",), b""),
        (("explain",), b"   \n\n"),
        (("explain", "/nonexistent/paste.txt"), None),
        (("explain",), bytes(range(256)) * 50),
        (("show", "no-such-entry"), None),
    ],
    ids=["empty", "blank", "missing-file", "binary", "unknown-id"],
)
def test_bad_input_is_one_line_and_exit_2(args, stdin):
    out = tbx(*args, stdin=stdin)
    assert out.returncode == 2
    err = out.stderr.decode().strip()
    assert err.startswith("tbx: ") and "\n" not in err and "Traceback" not in err


def test_not_a_traceback_abstains_with_exit_0():
    out = tbx("explain", "--json", stdin=b"Hello, how do I install this on Windows?")
    assert out.returncode == 0
    assert json.loads(out.stdout)["matches"] == []


def test_gb18030_input_and_nul_bytes():
    text = "报错了：\nValueError：只能将一个元素张量转换为Python标量\n".encode("gb18030") + b"\x00"
    data = json.loads(tbx("explain", "--json", stdin=text).stdout)
    assert data["parsed"]["exc_type"] == "ValueError"


def test_parse_list_show_search():
    assert json.loads(tbx("parse", str(PASTE), "--json").stdout)["exc_type"] == "RuntimeError"
    ids = {e["id"] for e in json.loads(tbx("list", "--json").stdout)["entries"]}
    assert "backward-non-scalar-output" in ids
    assert "反向传播" in tbx("show", "backward-non-scalar-output", "--lang", "zh").stdout.decode()
    for query, want in (
        ("标量", "backward-non-scalar-output"),
        ("shapes cannot be multiplied", "matmul-shape-mismatch"),
    ):
        results = json.loads(tbx("search", query, "--json").stdout)["results"]
        if want in ids:
            assert want in [r["id"] for r in results[:3]], (query, results[:3])


def test_json_path_imports_no_heavy_modules():
    from explainer.knowledge.index import open_index

    open_index()  # built first: building the index reads kb/ with markdown-it and sqlite-utils, once
    code = (
        "import sys, io; sys.argv=['tbx','explain','--json',%r]; sys.stdout=io.StringIO();"
        "from explainer.surfaces.cli import main; main();"
        "heavy=[m for m in ('torch','fastapi','rich','markdown_it','sqlite_utils','IPython') if m in sys.modules];"
        "sys.stdout=sys.__stdout__; print(','.join(heavy))"
    ).replace("%r", repr(str(PASTE)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"imported on the --json path: {out.stdout}"


def test_readme_figures_are_the_recorded_benchmarks():
    """The README's table of figures is tests/bench/results.json rendered, not typed by hand
    (`python tests/bench/results.py --write` after a benchmark run with --record)."""
    from tests.bench.results import README, load, readme_block

    assert load(), "tests/bench/results.json holds no figures"
    assert readme_block() in README.read_text(encoding="utf-8"), "run: python tests/bench/results.py --write"


def test_readme_documents_every_command_and_route():
    import re

    from explainer.surfaces.cli import build_parser

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = set(build_parser()._subparsers._group_actions[0].choices)
    documented = set(re.findall(r"`tbx (\w+)", readme))
    assert commands <= documented | {"run"} and "python -m explainer run" in readme
    assert documented <= commands, documented - commands
    pytest.importorskip("fastapi")
    from explainer.api.app import create_app

    routes = set(create_app().openapi()["paths"])
    for path in routes:
        assert path.split("{")[0] in readme, f"{path} is not in the README"


def test_missing_index_is_reported_in_one_line(tmp_path):
    import os

    env = {**os.environ, "TBX_INDEX": str(tmp_path / "none" / "index.sqlite"), "TBX_KB": str(tmp_path / "no-kb")}
    out = subprocess.run(
        [sys.executable, "-m", "explainer", "explain", str(PASTE)], capture_output=True, cwd=ROOT, timeout=120, env=env
    )
    assert out.returncode == 2
    err = out.stderr.decode().strip()
    assert "tbx build" in err and "\n" not in err


def test_stale_index_is_rebuilt(tmp_path):
    import os
    import shutil

    kb = tmp_path / "kb"
    kb.mkdir()
    shutil.copy(ROOT / "kb" / "backward-non-scalar-output.md", kb)
    env = {**os.environ, "TBX_INDEX": str(tmp_path / "index.sqlite"), "TBX_KB": str(kb)}
    first = json.loads(
        subprocess.run(
            [sys.executable, "-m", "explainer", "list", "--json"], capture_output=True, cwd=ROOT, timeout=120, env=env
        ).stdout
    )
    assert [e["id"] for e in first["entries"]] == ["backward-non-scalar-output"]
    shutil.copy(ROOT / "kb" / "backward-complex-output.md", kb)  # kb changed: the next start rebuilds
    second = json.loads(
        subprocess.run(
            [sys.executable, "-m", "explainer", "list", "--json"], capture_output=True, cwd=ROOT, timeout=120, env=env
        ).stdout
    )
    assert {e["id"] for e in second["entries"]} == {"backward-non-scalar-output", "backward-complex-output"}


@pytest.mark.parametrize(
    "argv",
    [
        ["explain"],
        ["explain", "-"],
        ["explain", "p.txt", "--json"],
        ["explain", "--lang", "zh", "p.txt"],
        ["explain", "--top", "5", "--json", "--lang", "both"],
        ["explain", "--top", "0"],
        ["explain", "--lang", "fr"],
        ["explain", "--lang=zh"],
        ["explain", "a", "b"],
        ["explain", "-h"],
        ["list"],
    ],
)
def test_quick_explain_arguments_agree_with_argparse(argv):
    """The explain fast path reads exactly what argparse reads, or hands over to argparse."""
    from explainer.surfaces.cli import _quick_explain_args, build_parser

    quick = _quick_explain_args(argv)
    if quick is None:
        return  # argparse decides (and reports errors)
    full = build_parser().parse_args(argv)
    assert (quick.file, quick.json, quick.lang, quick.top) == (full.file, full.json, full.lang, full.top)


def test_new_scaffolds_an_entry_that_lint_rejects_until_written(tmp_path):
    import json as _json

    catalog = tmp_path / "catalog.jsonl"
    catalog.write_text(
        _json.dumps(
            {
                "id": "bmm-shape-mismatch",
                "category": "shape",
                "kind": "error",
                "exc_type": "RuntimeError",
                "message_template": "Expected size for first two dimensions of batch2 tensor to be: {expected} but got: {actual}.",
                "message_variants": ["RuntimeError: batch1 must be a 3D tensor (executed)"],
                "frames": [],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    kb = tmp_path / "kb"
    kb.mkdir()
    env = {**os.environ, "TBX_KB": str(kb)}

    def run(*a):
        return subprocess.run(
            [sys.executable, "-m", "explainer", *a], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
        )

    proc = run("new", "bmm-shape-mismatch", "--catalog", str(catalog))
    assert proc.returncode == 0, proc.stderr
    text = (kb / "bmm-shape-mismatch.md").read_text(encoding="utf-8")
    assert '"batch1 must be a 3D tensor"' in text and "## Reproducer" in text and "### zh" in text
    assert run("new", "bmm-shape-mismatch", "--catalog", str(catalog)).returncode == 2  # no silent overwrite
    assert run("new", "no-such-id", "--catalog", str(catalog)).returncode == 2
    lint = run("lint")
    assert lint.returncode == 1 and "TODO" in lint.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal needs a POSIX system")
def test_a_paste_typed_into_a_terminal_gets_a_prompt_and_ends_at_one_ctrl_d():
    """stdin a real pty: one prompt line on stderr, and a single Ctrl-D (EOF at a line start) ends
    the paste: the answer comes without a second one."""
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "explainer", "explain", "--json"],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "LANGUAGE": "en"},
    )
    os.close(slave)
    try:
        for line in PASTE.read_text(encoding="utf-8").splitlines():
            os.write(master, line.encode() + b"\n")
        os.write(master, b"\x04")  # one Ctrl-D
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert proc.returncode == 0, err
    assert err.decode().strip().splitlines()[0] == "Paste the traceback, then press Ctrl-D on a new line:"
    assert json.loads(out)["matches"][0]["id"] == "backward-non-scalar-output"


def test_a_piped_paste_gets_no_prompt():
    proc = subprocess.run(
        [sys.executable, "-m", "explainer", "explain", "--json"],
        input=PASTE.read_text(encoding="utf-8"),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0 and proc.stderr == ""


def test_every_option_of_every_command_is_explained_in_help():
    import argparse

    from explainer.surfaces.cli import build_parser

    missing = []
    parsers = [("tbx", build_parser())]
    while parsers:
        name, parser = parsers.pop()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers += [(f"{name} {n}", p) for n, p in action.choices.items()]
            elif not isinstance(action, (argparse._HelpAction, argparse._VersionAction)) and not action.help:
                missing.append(f"{name} {action.dest}")
    assert not missing, missing


def test_the_parsed_line_is_cut_at_a_word_boundary():
    from explainer.render.markdown import clip

    long = "RuntimeError " + " ".join(f"word{i}" for i in range(100))
    out = clip(long, 60)
    assert len(out) <= 60 and out.endswith("…") and out[:-1] in long and long[len(out) - 1] == " "
    assert clip("short", 60) == "short"


def test_the_default_answer_fits_a_screen(index):
    """The short answer (what `tbx explain` prints by default) for the reproducers' real tracebacks:
    about 20 lines, never a long scroll, in either language."""
    import statistics

    from explainer.match.explain import explain_text
    from explainer.render.markdown import short_markdown

    rows = [
        json.loads(line) for line in (ROOT / "data" / "bench_pastes.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    counts: dict[tuple[str, str], int] = {}
    for r in rows:
        if r["format"] != "standard" or (r["id"], "en") in counts:
            continue
        answer = explain_text(r["text"], index)
        if answer.matches:
            for lang in ("en", "zh"):
                counts[(r["id"], lang)] = len(short_markdown(answer, index, lang=lang).rstrip("\n").split("\n"))
    assert len(counts) >= 100
    assert statistics.median(counts.values()) <= 22, statistics.median(counts.values())
    assert max(counts.values()) <= 30, sorted(counts.items(), key=lambda kv: -kv[1])[:5]


def test_language_from_the_environment(monkeypatch):
    from explainer.match.explain import detect_lang

    for var in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LC_CTYPE", "LANG"):
        monkeypatch.delenv(var, raising=False)
    assert detect_lang("RuntimeError: boom") == "en"
    assert detect_lang("RuntimeError: boom，请问这个报错怎么解决？谢谢") == "zh"  # the paste's own words first
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert detect_lang("RuntimeError: boom") == "zh"
    monkeypatch.setenv("LANGUAGE", "en_US:zh_CN")  # gettext's priority list comes first
    assert detect_lang("RuntimeError: boom") == "en"
    monkeypatch.delenv("LANGUAGE")
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("LC_CTYPE", "zh_TW.UTF-8")
    assert detect_lang("RuntimeError: boom") == "zh"


@pytest.mark.parametrize("args", [("explain", "--json", "-"), ("explain", "-")])
def test_a_code_line_the_compiler_warns_about_prints_no_warning(args):
    """The user's code line is parsed with ast (never run); the compiler's SyntaxWarning about it
    ("invalid decimal literal" for `1if`) was printed to the user's terminal as if tbx had a problem."""
    paste = (
        b"x = 1if y else 2\n"  # a paste cut at the top: the line above the first frame
        b'Traceback (most recent call last):\n  File "t.py", line 3, in <module>\n    x = 1if y else 2\n'
        b"RuntimeError: grad can be implicitly created only for scalar outputs\n"
    )
    env_warnings = {**os.environ, "PYTHONWARNINGS": "default"}
    out = subprocess.run(
        [sys.executable, "-m", "explainer", *args],
        input=paste,
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        env=env_warnings,
    )
    assert out.returncode == 0 and b"Warning" not in out.stderr, out.stderr.decode()
    assert b"backward-non-scalar-output" in out.stdout or "标量".encode() in out.stdout or b"scalar" in out.stdout


def test_one_shot_exit_keeps_the_whole_answer_and_the_exit_code():
    """``tbx explain`` leaves without the interpreter's teardown (:func:`explainer.surfaces.cli.entry`):
    the answer must still arrive whole on a pipe, however long, and the exit status stay the command's."""
    paste = b"RuntimeError: grad can be implicitly created only for scalar outputs\n"
    out = tbx("explain", "--json", stdin=paste)
    assert out.returncode == 0 and json.loads(out.stdout)["matches"][0]["id"] == "backward-non-scalar-output"
    frames = "".join(
        f'  File "/home/u/project/src/training/loop_{i}.py", line {i}, in step_{i}\n'
        f"    outputs = model_{i}(inputs_{i}, attention_mask=mask_{i}, labels=labels_{i}, return_dict=True)\n"
        for i in range(800)
    )
    long = tbx("explain", "--json", stdin=f"Traceback (most recent call last):\n{frames}".encode() + paste)
    answer = json.loads(long.stdout)  # whole: it parses, however long
    assert long.returncode == 0 and long.stdout.endswith(b"}\n")
    if not answer.get("partial"):
        # twice a pipe's buffer at least; a loaded machine may cut the parse's time budget, and the
        # shorter answer that follows (marked partial) must arrive just as whole
        assert len(long.stdout) > 128 * 1024, len(long.stdout)
        assert len(answer["parsed"]["frames"]) > 100
    missing = tbx("explain", "/nonexistent/paste.txt")
    assert missing.returncode == 2 and missing.stderr.startswith(b"tbx: cannot read")
    empty = tbx("explain", "--json", stdin=b"")
    assert empty.returncode == 2 and b"empty input" in empty.stderr


def test_an_abstention_always_carries_nearest():
    out = tbx("explain", "--json", stdin=b"zzqx wobble frobnicate\n")
    data = json.loads(out.stdout)
    assert data["abstained"] is True and data["nearest"] == []
