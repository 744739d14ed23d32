"""The terminal renderer (explainer/render/terminal.py): every word of the answer drawn, lines within the
terminal's width, linear on any text, and the terminal answer without rich or markdown-it loaded."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from explainer.render.terminal import CLOSING, print_markdown, to_ansi, width_of

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_ANSI = re.compile(r"\x1b\[[0-9;]*m|\x1b\]8;;[^\x1b]*\x1b\\")


def plain(drawn: str) -> str:
    return _ANSI.sub("", drawn)


def _markup_free(md: str) -> str:
    """The Markdown's text without its markup and whitespace: what a reader must see, in order."""
    out, fenced = [], False
    for line in md.split("\n"):
        if re.match(r"^\s*(```|~~~)", line):
            fenced = not fenced
            continue
        if fenced:
            out.append(line)
            continue
        line = re.sub(r"^\s*#{1,6}\s+", "", line)
        line = re.sub(r"^\s*>\s?", "", line)
        line = re.sub(r"^(\s*>?\s*)[-*+]\s+", r"\1", line)
        line = re.sub(r"\[(`[^`\n]*`)\]\([^)\s]*\)", r"\1", line)  # a link whose text is code
        parts = re.split(r"((`+).+?\2)", line)  # code spans (kept whole) and the text between them
        text = []
        for k, part in enumerate(parts):
            if k % 3 == 2:
                continue  # the split's inner group (the backticks)
            if k % 3 == 0:
                part = re.sub(r"\[([^\]\n]*)\]\(([^)\n]*)\)", r"\1", part)
                part = re.sub(r"<(https?://[^>\s]+)>", r"\1", part)
            text.append(part)
        out.append("".join(text))
    return re.sub(r"\s+", "", "\n".join(out).replace("*", "").replace("`", ""))


def _drawn_text(drawn: str) -> str:
    text = plain(drawn).replace("•", "").replace("▌", "").replace("*", "").replace("`", "")
    return re.sub(r"\s+", "", text)


@pytest.fixture(scope="module")
def index():
    from explainer.knowledge.index import open_index

    return open_index()


def _documents(index):
    from explainer.render.markdown import entry_markdown

    for eid in sorted(index.entries):
        doc = index.entry(eid)
        for lang in ("en", "zh"):
            yield eid, lang, entry_markdown(doc, lang=lang)


def test_every_entry_is_drawn_whole_and_within_the_width(index):
    """Each entry as `tbx show` draws it, in both languages and two widths: no word lost or added, and
    no line wider than the terminal unless it is one piece that cannot break (a long URL) or code."""
    n = 0
    for eid, lang, md in _documents(index):
        for width in (60, 100):
            drawn = to_ansi(md, width)
            assert _drawn_text(drawn) == _markup_free(md).replace("•", ""), (eid, lang, width)
            code = {c.strip() for c in re.findall(r"```[^\n]*\n(.*?)```", md, re.S) for c in c.split("\n")}
            for line in plain(drawn).split("\n"):
                if line.strip() in code:
                    continue  # code keeps its lines
                # closing punctuation may hang past the edge; else only an unbreakable piece is wider
                fits = width_of(line.rstrip("".join(CLOSING))) <= width or " " not in line.strip()
                assert fits, (eid, lang, width, line)
        n += 1
    assert n >= 600


def test_chinese_text_breaks_between_characters_and_keeps_closing_punctuation():
    md = "当输入张量的形状与权重不匹配时，矩阵乘法会报错。" * 6
    lines = plain(to_ansi(md, 30)).split("\n")
    assert len(lines) > 4 and all(width_of(line.rstrip("，。")) <= 30 for line in lines)
    assert not any(line.startswith(("，", "。")) for line in lines)


def test_markup_and_code_are_styled():
    drawn = to_ansi(
        "## Title\n\n**bold** and `x.view(-1)` and [docs](https://example.org)\n\n```python\nimport torch  # c\n```\n"
    )
    assert "\x1b[1;4mTitle" in drawn and "\x1b[1mbold" in drawn and "\x1b[36mx.view(-1)" in drawn
    assert "\x1b]8;;https://example.org\x1b\\" in drawn  # a link the terminal can open
    assert "\x1b[35mimport" in drawn and "\x1b[2m# c" in drawn


@pytest.mark.parametrize(
    "text",
    [
        "`" * 200_000,
        "*a" * 100_000,
        "**" * 100_000,
        "[" * 100_000 + "](",
        "<https://" * 50_000,
        "```python\n" + "'\\" * 100_000 + "\n```",
        "1. " * 100_000,
        "> - " * 100_000,
        "中" * 200_000,
    ],
)
def test_any_text_is_drawn_in_linear_time(text):
    t0 = time.thread_time()
    to_ansi(text, 80)
    small = time.thread_time() - t0
    assert small < 2.0, small


def test_plain_markdown_when_not_a_terminal(capsys, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    print_markdown("**bold** `x`")
    assert capsys.readouterr().out == "**bold** `x`\n"


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_the_terminal_answer_loads_neither_rich_nor_markdown_it(index):
    import pty

    # (the index fixture builds the index first: building it reads kb/ with markdown-it, once)
    paste = os.path.join(ROOT, "tests", "fixtures", "pastes", "backward_flat_windows.txt")
    pid, fd = pty.fork()
    if pid == 0:  # the child: `tbx explain` on a terminal, telling which modules it imported
        os.environ.pop("NO_COLOR", None)
        code = (
            "import sys; sys.argv=['tbx','explain',sys.argv[1]]; from explainer.surfaces.cli import main\n"
            "try: main()\nexcept SystemExit: pass\n"
            "print('HEAVY', [m for m in ('rich', 'markdown_it', 'pygments') if m in sys.modules])"
        )
        os.execv(sys.executable, [sys.executable, "-c", code, paste])
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    text = out.decode("utf-8", "replace")
    assert "\x1b[" in text and "backward" in plain(text)
    assert "HEAVY []" in text, text[-500:]


def test_the_cli_pipes_plain_markdown():
    paste = os.path.join(ROOT, "tests", "fixtures", "pastes", "backward_flat_windows.txt")
    out = subprocess.run(
        [sys.executable, "-m", "explainer", "explain", paste], capture_output=True, text=True, check=True
    ).stdout
    assert "\x1b[" not in out and "**" in out


def test_every_answer_to_the_fixture_pastes_is_drawn_whole(index):
    from pathlib import Path

    from explainer.match.explain import explain_text
    from explainer.render.markdown import answer_markdown, short_markdown

    pastes = sorted((Path(ROOT) / "tests" / "fixtures" / "pastes").glob("*.txt"))
    assert pastes
    for path in pastes:
        answer = explain_text(path.read_text(encoding="utf-8"), index, budget=None)
        for render in (answer_markdown, short_markdown):
            for lang in ("en", "zh"):
                md = render(answer, index, lang=lang)
                assert _drawn_text(to_ansi(md, 72)) == _markup_free(md), (path.name, render.__name__, lang)
