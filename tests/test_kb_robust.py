"""A damaged knowledge base or index is one clear line, never a traceback, and never leaves files behind."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import subprocess
import sys

import pytest

from explainer.knowledge.index import IndexError_, build_index, open_index
from explainer.knowledge.lint import lint
from explainer.render.markdown import rendered_json

from .conftest import KB, ROOT

SEED = KB / "backward-non-scalar-output.md"
PASTE = "RuntimeError: grad can be implicitly created only for scalar outputs"


@pytest.fixture()
def bad_kb(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    shutil.copy(SEED, kb / SEED.name)
    seed = SEED.read_text(encoding="utf-8")
    (kb / "not-utf8.md").write_bytes(
        seed.replace('id = "backward-non-scalar-output"', 'id = "not-utf8"').encode("utf-8") + b"\xff\xfe bad"
    )
    (kb / "a-folder.md").mkdir()
    os.symlink(tmp_path / "nowhere.md", kb / "dangling.md")
    (kb / "int-pattern.md").write_text(
        seed.replace('id = "backward-non-scalar-output"', 'id = "int-pattern"').replace(
            "patterns = [", "patterns = [1, "
        ),
        encoding="utf-8",
    )
    (kb / "str-title.md").write_text(
        seed.replace('id = "backward-non-scalar-output"', 'id = "str-title"').split("\n", 3)[0]
        + '\nid = "str-title"\ntitle = "x"\n'
        + seed.split("\n", 3)[3],
        encoding="utf-8",
    )
    (kb / "bad-signal.md").write_text(
        seed.replace('id = "backward-non-scalar-output"', 'id = "bad-signal"').replace(
            "frames = [", 'signals = ["(unclosed"]\nframes = ['
        ),
        encoding="utf-8",
    )
    return kb


def test_lint_reports_each_malformed_entry_by_file_and_field(bad_kb):
    report = lint(bad_kb)
    assert not report["backward-non-scalar-output"]
    expect = {
        "not-utf8": "not UTF-8",
        "a-folder": "cannot be read",
        "dangling": "cannot be read",
        "int-pattern": "every item of 'patterns' must be a string",
        "str-title": "title",
        "bad-signal": "signals",
    }
    for eid, text in expect.items():
        assert any(text in p for p in report[eid]), (eid, report[eid])


def test_build_skips_malformed_entries_with_one_warning_each_and_explain_still_answers(bad_kb, tmp_path, capsys):
    out = tmp_path / "data" / "index.sqlite"
    info = build_index(bad_kb, out)
    err = capsys.readouterr().err
    assert info["entries"] == 1 and info["skipped"] == 6
    assert err.count("tbx: warning:") == 6 and "Traceback" not in err
    from explainer.match.explain import explain_text

    answer = explain_text(PASTE, open_index(path=out, kb=bad_kb, rebuild_ok=False))
    assert answer.matches[0].id == "backward-non-scalar-output"
    proc = subprocess.run(
        [sys.executable, "-m", "explainer", "explain", "-", "--json"],
        input=PASTE,
        text=True,
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, "TBX_KB": str(bad_kb), "TBX_INDEX": str(tmp_path / "other.sqlite")},
        timeout=120,
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    lint_proc = subprocess.run(
        [sys.executable, "-m", "explainer", "lint"],
        text=True,
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, "TBX_KB": str(bad_kb)},
        timeout=120,
    )
    assert lint_proc.returncode == 1 and "Traceback" not in lint_proc.stderr + lint_proc.stdout
    assert "not-utf8.md" in lint_proc.stdout and "dangling.md" in lint_proc.stdout


def test_an_interrupted_build_leaves_no_temporary_file(tmp_path, monkeypatch):
    import explainer.knowledge.index as ix

    kb = tmp_path / "kb"
    kb.mkdir()
    shutil.copy(SEED, kb / SEED.name)
    out = tmp_path / "data" / "index.sqlite"

    def interrupted(entries, tmp, *args):
        tmp.write_bytes(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(ix, "_write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_index(kb, out)
    assert list(out.parent.iterdir()) == []
    assert "data/index.sqlite.tmp*" in (ROOT / ".gitignore").read_text()


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root ignores file permissions")
def test_a_read_only_data_folder_with_a_stale_index_still_answers(tmp_path, capsys):
    _read_only_case(tmp_path, capsys)


def test_a_stale_index_that_cannot_be_rebuilt_still_answers(tmp_path, capsys, monkeypatch):
    # the same as a read-only folder, for machines where tests run as root: the rebuild fails with OSError
    import explainer.knowledge.index as ix

    kb, out = _stale(tmp_path)

    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(ix, "build_index", refuse)
    index = open_index(path=out, kb=kb)
    assert "cannot be rebuilt here" in capsys.readouterr().err
    assert index.entry("backward-non-scalar-output")
    (out.parent / "gone.sqlite").unlink(missing_ok=True)
    with pytest.raises(IndexError_):
        open_index(path=out.parent / "gone.sqlite", kb=kb)


def _stale(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    shutil.copy(SEED, kb / SEED.name)
    out = tmp_path / "data" / "index.sqlite"
    build_index(kb, out)
    (kb / SEED.name).write_text(SEED.read_text(encoding="utf-8") + "\n", encoding="utf-8")  # now stale
    os.utime(kb / SEED.name, ns=(1, 1))
    return kb, out


def _read_only_case(tmp_path, capsys):
    kb, out = _stale(tmp_path)
    out.parent.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        index = open_index(path=out, kb=kb)
        assert "cannot be rebuilt here" in capsys.readouterr().err
        assert index.entry("backward-non-scalar-output")
    finally:
        out.parent.chmod(stat.S_IRWXU)


def test_a_damaged_index_row_is_one_warning(tmp_path, capsys):
    kb = tmp_path / "kb"
    kb.mkdir()
    shutil.copy(SEED, kb / SEED.name)
    out = tmp_path / "index.sqlite"
    build_index(kb, out)
    con = sqlite3.connect(out)
    con.execute("update entries set doc = '{not json' where id = 'backward-non-scalar-output'")
    con.commit()
    con.close()
    from explainer.knowledge.index import Index
    from explainer.match.explain import explain_text

    index = Index(out)
    answer = explain_text(PASTE, index)
    data = rendered_json(answer, index, lang="en")
    assert data["matches"][0]["id"] == "backward-non-scalar-output"
    assert "damaged" in capsys.readouterr().err
    con = sqlite3.connect(out)
    con.execute("update meta set value = 'garbage' where key = 'matcher'")
    con.commit()
    con.close()
    with pytest.raises(IndexError_):
        open_index(path=out, kb=kb, rebuild_ok=False)


def test_requirements_name_their_reason_when_unmet(monkeypatch):
    from explainer._worker import unmet

    assert unmet("linux") is None if sys.platform.startswith("linux") else unmet("linux") == "needs linux"
    assert unmet("no-such-thing") == "unknown requirement no-such-thing"
    monkeypatch.setenv(
        "PATH", ""
    )  # no compiler, no ninja: the snippets that build an extension are skipped, saying why
    assert unmet("c-compiler") == "needs a C/C++ compiler on PATH" and unmet("ninja") == "needs ninja on PATH"
    assert unmet("conda") == "needs conda (or mamba) on PATH"
