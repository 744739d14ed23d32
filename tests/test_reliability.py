"""No paste can hang the explainer: every regular expression applied to user text is attacked with
generated adversarial inputs at its cap, mutated tracebacks are explained in bounded time, one
explanation stops at its budget, and nothing a paste holds reaches the terminal.

Bounds are real, on a shared machine: time is the test thread's CPU time (``time.thread_time``), which
another process's load does not inflate, and an input over a bound is timed again (fastest of three
runs, see :mod:`explainer.knowledge.attack`), so a pause of the process is not taken for a slow expression.
"""

from __future__ import annotations

import io
import random
import re
import subprocess
import sys
import time

import pytest

from explainer.budget import Budget
from explainer.knowledge.attack import adversarial_inputs, attack, attack_parser_rules, kb_regexes, worst_time
from explainer.match.explain import explain_text
from explainer.match.matcher import MAX_REGEX_INPUT
from explainer.patterns import to_regex, to_regex_lazy
from explainer.render import answer_json
from explainer.render.markdown import rendered_json
from explainer.textio import decode_bytes, looks_binary, read_tail, strip_controls

from .conftest import FIXTURES, ROOT
from .fuzz import mutations

REGEX_BOUND_S = 0.010  # per input, per expression, at the caps (the goal)
# An expression applied to a whole paste (300 000 characters: removing control characters, reading a
# cut notebook's JSON strings) is linear, but a crafted paste gives it 150 000 matches to create
# (~0.5 us each in CPython): bounded here, and checked to grow linearly below.
WHOLE_TEXT_BOUND_S = 0.250
EXPLAIN_BOUND_S = 0.050  # one explanation of a crafted or mutated paste
FUZZ_COUNT = 3000
KB_INPUTS = 40  # the most telling inputs of each kb expression (tbx lint can afford all of them)


def _retimed(fn, bound: float) -> float:
    t0 = time.thread_time()
    fn()
    t = time.thread_time() - t0
    for _ in range(2):
        if t <= bound:
            break
        t0 = time.thread_time()
        fn()
        t = min(t, time.thread_time() - t0)
    return t


# --- the parser's, normaliser's and matcher's own expressions -------------------------------------


def test_every_parser_and_normaliser_rule_is_fast_at_its_cap():
    results = attack_parser_rules()
    assert len(results) > 60  # every module's expressions were found
    slow = []
    for name, t, s, cap in results:
        bound = WHOLE_TEXT_BOUND_S if cap > 10_000 else REGEX_BOUND_S
        if t > bound:
            slow.append(f"{name}: {t * 1000:.1f} ms on {s[:50]!r} (cap {cap})")
    print("slowest:", [(n, f"{t * 1000:.2f} ms") for n, t, _s, _c in results[:5]])
    assert not slow, "\n".join(slow)


def test_whole_text_rules_grow_linearly():
    from explainer import textio
    from explainer.parse import decode, state

    # CPU time of this thread (worst_time's clock), the fastest of three rounds, small and big
    # alternating: a neighbour's load neither inflates one side nor lands on one side only
    for rx, op in ((textio._CONTROL, "sub"), (decode._JSON_STRING, "findall")):
        small_inputs = adversarial_inputs(rx, state.MAX_CHARS // 10)
        big_inputs = adversarial_inputs(rx, state.MAX_CHARS)
        small = big = float("inf")
        for _ in range(3):
            small = min(small, worst_time(rx, small_inputs, (op,))[0])
            big = min(big, worst_time(rx, big_inputs, (op,))[0])
        small = max(small, 1e-4)
        assert big < 30 * small, (rx.pattern, small, big)  # linear: ~10x; quadratic would be ~100x


OLD_RULES = {  # the expressions the issue reported, as they were: the generator must find them
    "tuple": r"\((?:\s*-?\d+\s*[,x]\s*)+-?\d*\s*\)",
    "rich_border": r"^\s*[│┃|]\s?(.*?)\s*[│┃|]?\s*$",
    "markers": r"^\s*[\^~\s]+$",
}


@pytest.mark.parametrize("name", sorted(OLD_RULES))
def test_the_attack_finds_the_reported_catastrophes(name):
    # at small caps, so that the old expressions end; the new ones are orders of magnitude faster
    cap = {"tuple": 50, "rich_border": 300, "markers": 1500}[name]
    t_old, _ = attack(OLD_RULES[name], cap)
    assert t_old > 0.005, f"the attack did not find the catastrophic input of the old {name} rule"


def test_the_attack_finds_the_cubic_template():
    old = re.compile(to_regex_lazy("element {n} of tensors does not require grad"), re.I)
    new = re.compile(to_regex("element {n} of tensors does not require grad"), re.I)
    t_old, s = attack(old, 300)
    t_new, _ = attack(new, 300)
    assert t_old > 0.005 and t_new < t_old / 10, (t_old, t_new, s[:40])


# --- the knowledge base's patterns and signals ---------------------------------------------------


@pytest.fixture(scope="module")
def kb_attack(index):  # about a thousand expressions: a minute or two
    """(label, compiled expression, worst seconds, worst input) for every kb expression."""
    out = []
    for label, rx, ops in kb_regexes(index):
        t, s = worst_time(rx, adversarial_inputs(rx, MAX_REGEX_INPUT, limit=KB_INPUTS), ops)
        out.append((label, rx, t, s))
    return sorted(out, key=lambda r: -r[2])


@pytest.mark.slow  # the knowledge base's thousand expressions attacked: what `tbx lint --attack` runs
@pytest.mark.timeout(1200)
def test_every_kb_pattern_and_signal_is_fast_at_the_cap(kb_attack):
    assert len(kb_attack) > 500
    print("slowest:", [(label, f"{t * 1000:.2f} ms") for label, _rx, t, _s in kb_attack[:5]])
    slow = [f"{label}: {t * 1000:.1f} ms on {s[:60]!r}" for label, _rx, t, s in kb_attack if t > REGEX_BOUND_S]
    assert not slow, "\n".join(slow)


@pytest.mark.slow  # the knowledge base's thousand expressions attacked: what `tbx lint --attack` runs
@pytest.mark.timeout(1200)
def test_kb_attacks_through_the_real_explain_path(kb_attack, index):
    """The worst input of each pattern, as the message of a paste and as a whole paste, explained."""
    slow = []
    worst = (0.0, "")
    for label, _rx, _t, s in kb_attack:
        for text in (f"RuntimeError: {s}", s):
            t = _retimed(lambda text=text: explain_text(text, index), EXPLAIN_BOUND_S)
            worst = max(worst, (t, label))
            if t > EXPLAIN_BOUND_S:
                slow.append(f"{label}: {t * 1000:.1f} ms on {text[:60]!r}")
    print(f"slowest explanation: {worst[0] * 1000:.2f} ms ({worst[1]})")
    assert not slow, "\n".join(slow[:20])


def _messages():
    from explainer.parse.parser import parse_text

    from .fuzz import seeds

    out = set()
    for paste in seeds():
        p = parse_text(paste)
        out.update(m[:400] for m in [p.message, *(l.message for l in p.chain)] if m)
    return sorted(out)


def test_linear_templates_match_exactly_as_the_lazy_translation(index):
    """Same matches, same spans, same (non-empty) captures as the plain lazy translation, on real
    messages, on each pattern filled with tricky values, and on whitespace variants of both."""
    messages = _messages()
    rnd = random.Random(7)
    values = ["", "x", "a b", "1x2", "(3, 4)", "of x", "a\nb", "  "]
    differences = []
    for p in sorted({row[2] for row in index.patterns}):  # sorted: the same sample on every run
        old, new = re.compile(to_regex_lazy(p), re.I), re.compile(to_regex(p), re.I)
        literal = p.replace("{{", "\0").replace("}}", "\1")
        filled = [
            re.sub(r"\{[A-Za-z_]\w*(?:\.\.\.)?\}", v, literal).replace("\0", "{").replace("\1", "}") for v in values
        ]
        # the lazy reference itself backtracks for seconds on a near miss of a template with several
        # multi-line holes (torchrun's summary: 22 s on a 447-character message): those are compared
        # on their own filled texts only, which is where the two translations could differ
        sampled = rnd.sample(messages, 12)
        for text in (sampled if p.count("...}") < 2 else []) + filled:
            for t in (text, text.replace(" ", "  "), text.replace(" ", "\n"), text + " more", text.split("\n")[0]):
                for op in ("fullmatch", "match", "search"):
                    a, b = getattr(old, op)(t), getattr(new, op)(t)
                    sa = a and (a.span(), {k: v for k, v in a.groupdict().items() if v})
                    sb = b and (b.span(), {k: v for k, v in b.groupdict().items() if v})
                    if sa != sb:
                        differences.append(f"{op} {p[:60]!r} on {t[:80]!r}: {sa} vs {sb}")
    assert not differences, "\n".join(differences[:10])


@pytest.mark.slow  # every pattern of the knowledge base on generated texts
def test_the_search_variant_finds_what_the_lazy_translation_finds(index):
    """On real messages, the search variant finds a template exactly where the plain one does."""
    messages = _messages()
    missed = []
    for p in {row[2] for row in index.patterns}:
        old, new = re.compile(to_regex_lazy(p), re.I), re.compile(to_regex(p, search=True), re.I)
        for m in messages:
            for t in (m, "context: " + m + " more"):
                if bool(old.search(t)) != bool(new.search(t)):
                    missed.append(f"{p[:60]!r} on {t[:80]!r}")
    assert not missed, "\n".join(missed[:10])


# --- mutated tracebacks ----------------------------------------------------------------------------


def test_fuzz_mutated_tracebacks_are_explained_in_bounded_time(index):
    explain_text("RuntimeError: warm-up", index)
    slow, worst = [], 0.0
    for i, text in enumerate(mutations(FUZZ_COUNT, seed=0)):
        t = _retimed(lambda text=text: explain_text(text, index), EXPLAIN_BOUND_S)
        worst = max(worst, t)
        if t > EXPLAIN_BOUND_S:
            slow.append(f"input {i}: {t * 1000:.1f} ms, {len(text)} chars, {text[:60]!r}")
    print(f"{FUZZ_COUNT} mutated tracebacks, slowest {worst * 1000:.2f} ms")
    assert not slow, "\n".join(slow[:10])


def test_every_output_of_a_mutated_or_decoded_paste_encodes(index):
    """Lone surrogates, NUL and every control class, raw or as JSON escapes inside each decoder's
    format: the parse, the answer and its rendering all encode as UTF-8 (a lone surrogate in a str
    is what made ``tbx explain --json`` exit 1 and the API answer 500)."""
    import json
    import random

    from explainer.parse.parser import parse_text

    from .fuzz import seeds, wrap

    rnd = random.Random(5)
    base = seeds()
    texts = [wrap(rnd.choice(base), rnd) for _ in range(400)] + list(mutations(1500, seed=11))
    failed = []
    for i, text in enumerate(texts):
        try:
            parsed = parse_text(text).as_json()
            json.dumps(parsed, ensure_ascii=False).encode("utf-8")
            answered = explain_text(text, index)
            answer = (rendered_json if i % 4 == 0 else answer_json)(answered, index)
            json.dumps(answer, ensure_ascii=False).encode("utf-8")
        except Exception as exc:  # noqa: BLE001 - any failure is the finding
            failed.append(f"input {i}: {type(exc).__name__}: {exc} on {text[:80]!r}")
    assert not failed, "\n".join(failed[:10])


def test_valid_unicode_joins_pairs_and_replaces_lone_surrogates():
    from explainer.textio import valid_unicode

    assert valid_unicode("ok \u4e2d") == "ok \u4e2d"
    assert valid_unicode("a\ud83d\ude00b") == "a\U0001f600b"  # a pair escaped apart is its character
    assert valid_unicode("a\ud800b\udfff") == "a\ufffdb\ufffd"
    assert valid_unicode("\ude00\ud83d") == "\ufffd\ufffd"  # the wrong order is no pair


@pytest.mark.parametrize(
    "paste",
    [
        '{"name": "RuntimeError", "message": "bad \\ud800", "stack": "Traceback (most recent call last):\\nRuntimeError: bad \\ud800"}',
        '{"ename": "ValueError", "evalue": "x\\udfff", "traceback": ["ValueError: x\\udfff"]}',
        'log {"exc_info": "Traceback (most recent call last):\\n  File \\"a.py\\", line 1, in <module>\\nValueError: \\udc00"}',
    ],
)
@pytest.mark.parametrize("cmd", [["explain", "--json"], ["parse", "--json"], ["explain"]])
def test_cli_answers_a_decoded_lone_surrogate(tmp_path, paste, cmd):
    f = tmp_path / "p.txt"
    f.write_text(paste, encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "explainer", *cmd, str(f)], capture_output=True, cwd=ROOT, timeout=60)
    assert out.returncode in (0, 1), out.stderr.decode(errors="replace")
    assert b"Traceback" not in out.stderr, out.stderr.decode(errors="replace")
    out.stdout.decode("utf-8")  # strict: valid UTF-8
    assert b"\xef\xbf\xbd" in out.stdout or b"\\ufffd" in out.stdout or cmd == ["explain"]


# --- the time budget -------------------------------------------------------------------------------


def test_an_explanation_stops_at_its_budget_and_says_so(index):
    paste = "a\n" * 150_000 + (FIXTURES / "pastes" / "backward_flat_windows.txt").read_text(encoding="utf-8")
    _ = index.matcher  # built once per process, outside any budget: not what is timed here
    t0 = time.perf_counter()
    answer = explain_text(paste, index)  # the default budget: 200 ms
    elapsed = time.perf_counter() - t0
    assert answer.partial and answer_json(answer, index)["partial"] is True
    assert elapsed < 0.2 + 0.15, elapsed  # the budget, plus the bounded work between two checks
    # what it has: the end of the paste was read, where the final exception is
    assert answer.matches and answer.matches[0].id == "backward-non-scalar-output"
    full = explain_text(paste, index, budget=None)
    assert not full.partial and "partial" not in answer_json(full, index)


def test_a_spent_budget_still_answers_from_what_it_found(index):
    answer = explain_text(
        "RuntimeError: grad can be implicitly created only for scalar outputs", index, budget=Budget(0)
    )
    assert answer.partial
    assert set(answer_json(answer, index)) >= {"parsed", "matches", "abstained", "ambiguous", "partial"}
    assert "partial" not in answer_json(
        explain_text("RuntimeError: grad can be implicitly created only for scalar outputs", index), index
    )


def test_building_the_matcher_is_no_part_of_the_first_explanations_budget(index, monkeypatch):
    """The first explanation of a process builds the matcher (tens of milliseconds, far more on a
    loaded machine): that one-time cost must not spend the paste's budget. Seen in CI: the IPython
    hook's first answer abstained on the seed error because the build had used the 200 ms up."""
    import explainer.match.matcher as m
    from explainer.knowledge.index import Index

    real = m.Matcher.__init__

    def slow(self, *a, **k):
        time.sleep(0.3)  # longer than the whole default budget
        real(self, *a, **k)

    monkeypatch.setattr(m.Matcher, "__init__", slow)
    fresh = Index(index.path)
    answer = explain_text("RuntimeError: grad can be implicitly created only for scalar outputs", fresh)
    assert not answer.partial and answer.matches[0].id == "backward-non-scalar-output"


def test_past_the_deadline_the_first_candidate_patterns_are_still_tried(index):
    from explainer.model import Parsed

    b = Budget(0)
    found = index.matcher.match(
        Parsed(exc_type="RuntimeError", message="grad can be implicitly created only for scalar outputs"), budget=b
    )
    assert b.cut and found[0].id == "backward-non-scalar-output" and found[0].score >= 0.9


def test_signals_run_on_capped_text(index):
    matcher = index.matcher
    from explainer.model import Parsed

    filler = "x " * 5000
    seen = lambda msg: "amp-unscale-fp16-grads" in matcher._signals(Parsed(exc_type="ValueError", message=msg))  # noqa: E731
    signal = "torch_dtype=torch.float16"
    assert seen(signal + filler) and seen(filler + signal)  # the start and the end are read
    assert not seen(filler + signal + filler)  # the middle of a huge message is not


# --- what reaches the terminal, and reading input ----------------------------------------------------

ESCAPES = (
    "\x1bc\x1b[2J\x1b[31mred\x1b[0m\x1b]0;title\x07\x1b]8;;http://x\x1b\\link\x1bP1$r\x1b\\\x07\x08\x7f\x9b2J\x1b(B"
)


def test_strip_controls_removes_every_escape_and_control():
    out = strip_controls("keep\ttabs\nand lines\r" + ESCAPES + " end\x1b")
    assert out == "keep\ttabs\nand lines\rredlink end"
    assert strip_controls("plain text") == "plain text"


def test_tbx_explain_never_prints_escape_sequences_from_the_paste():
    paste = ("RuntimeError: grad can be implicitly created only for scalar outputs " + ESCAPES + "\n").encode()
    frame = b'  File "/home/u/t\x1b[2Jrain.py", line 3, in <module>\n    loss\x1bc.backward()\n'
    for data in (paste, b"Traceback (most recent call last):\n" + frame + paste):
        out = subprocess.run(
            [sys.executable, "-m", "explainer", "explain", "-", "--lang", "en"],
            input=data,
            capture_output=True,
            cwd=ROOT,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        bad = sorted({hex(b) for b in out.stdout if b < 32 and b not in (9, 10)})
        assert not bad and "\x9b" not in out.stdout.decode("utf-8", "replace"), bad
        assert b"scalar" in out.stdout


def test_utf16_with_a_bom_is_decoded(tmp_path):
    text = (FIXTURES / "pastes" / "backward_flat_windows.txt").read_text(encoding="utf-8")
    for codec, bom in (("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")):
        path = tmp_path / f"{codec}.txt"
        path.write_bytes(bom + text.encode(codec))
        data = path.read_bytes()
        assert not looks_binary(data) and decode_bytes(data) == text
        out = subprocess.run(
            [sys.executable, "-m", "explainer", "explain", str(path), "--json"],
            capture_output=True,
            cwd=ROOT,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        assert b"backward-non-scalar-output" in out.stdout


def test_a_large_utf16_file_keeps_its_tail_decodable(tmp_path):
    path = tmp_path / "big.txt"
    tail = "RuntimeError: grad can be implicitly created only for scalar outputs\n"
    path.write_bytes(b"\xff\xfe" + ("noise line é\n" * 100_000 + tail).encode("utf-16-le"))
    with open(path, "rb") as f:
        data, stopped = read_tail(f)
    assert not stopped and len(data) <= (1 << 20) + 2
    assert decode_bytes(data).endswith(tail)


def test_a_large_file_keeps_its_last_mib(tmp_path):
    path = tmp_path / "big.log"
    path.write_bytes(b"x" * 100 + b"\n" + b"log line\n" * 400_000 + b"the end\n")
    with open(path, "rb") as f:
        data, stopped = read_tail(f)
    assert not stopped and data.endswith(b"the end\n") and len(data) <= 1 << 20
    assert data.startswith(b"log line\n")  # the partial first line was dropped


class _Endless(io.RawIOBase):
    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        b[:] = b"RuntimeError: again\n" * (len(b) // 20) + b"R" * (len(b) % 20)
        return len(b)


def test_an_endless_stream_is_read_a_bounded_amount():
    t0 = time.perf_counter()
    data, stopped = read_tail(io.BufferedReader(_Endless()), max_read=8 << 20)
    assert stopped and len(data) <= 1 << 20 and time.perf_counter() - t0 < 10


def test_tbx_explain_dev_zero_returns_promptly():
    out = subprocess.run(
        [sys.executable, "-m", "explainer", "explain", "/dev/zero"], capture_output=True, cwd=ROOT, timeout=60
    )
    assert out.returncode == 2
    lines = out.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tbx: ")


def test_tbx_explain_endless_pipe_says_so_in_one_line():
    proc = subprocess.Popen(
        [sys.executable, "-m", "explainer", "explain", "-", "--json"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    chunk = b"RuntimeError: grad can be implicitly created only for scalar outputs\n" * 1000
    try:
        while proc.poll() is None:
            proc.stdin.write(chunk)
    except (BrokenPipeError, OSError):
        pass
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert err.decode().strip().count("\n") == 0 and "stopped reading" in err.decode()
    assert b"backward-non-scalar-output" in out


# --- special files named in a paste ----------------------------------------------------------------


def _special_py_files(tmp_path) -> list:
    import os

    made = []
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)  # opening it for reading would wait for a writer for ever
    made.append(fifo)
    for name, target in (("kmsg.py", "/proc/kmsg"), ("status.py", "/proc/self/status"), ("zero.py", "/dev/zero")):
        link = tmp_path / name
        link.symlink_to(target)
        made.append(link)
    return made


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, /proc and /dev are POSIX")
def test_special_files_named_in_a_paste_are_never_opened(tmp_path):
    from explainer.source import local_lines

    for path in _special_py_files(tmp_path):
        t0 = time.monotonic()
        assert local_lines(str(path)) is None, path
        assert time.monotonic() - t0 < 1.0
    ok = tmp_path / "train.py"
    ok.write_text("import torch\nloss.backward()\n", encoding="utf-8")
    assert local_lines(str(ok)) == ["import torch", "loss.backward()", ""]


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, /proc and /dev are POSIX")
def test_tbx_explain_with_a_paste_naming_special_files_returns(tmp_path):
    """The fix of a second backward() rewrites the earlier call, so the CLI reads the file the frame names."""
    for p in _special_py_files(tmp_path):
        paste = tmp_path / "paste.txt"
        paste.write_text(
            f'Traceback (most recent call last):\n  File "{p}", line 9, in <module>\n    loss.backward()\n'
            "RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors "
            "after they have already been freed). Saved intermediate values of the graph are freed when you call "
            ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph "
            "a second time or if you need to access saved tensors after calling backward.\n",
            encoding="utf-8",
        )
        out = subprocess.run(
            [sys.executable, "-m", "explainer", "explain", str(paste)], capture_output=True, cwd=ROOT, timeout=30
        )
        assert out.returncode == 0 and b"backward-graph-freed" in out.stdout, (p, out.stderr)


# --- never touch a user's file ---------------------------------------------------------------------


def _tbx(args: list[str], env: dict) -> subprocess.CompletedProcess:
    """``tbx ARGS`` in a new process with ``env``, a paste on its standard input."""
    return subprocess.run(
        [sys.executable, "-m", "explainer", *args],
        input=b"RuntimeError: grad can be implicitly created only for scalar outputs",
        capture_output=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )


def _user_db(path) -> bytes:
    import sqlite3

    con = sqlite3.connect(path)
    con.execute("create table runs (id integer primary key, loss real)")
    con.execute("insert into runs (loss) values (0.25)")
    con.commit()
    con.close()
    return path.read_bytes()


@pytest.mark.parametrize("how", ["explain", "build", "build-out"])
def test_tbx_index_naming_a_users_file_never_replaces_it(tmp_path, how):
    import os

    mine = tmp_path / "experiments.sqlite"
    before = _user_db(mine)
    env = {**os.environ, "TBX_INDEX": str(mine)}
    cmd = {
        "explain": ["explain", "-"],
        "build": ["build"],
        "build-out": ["build", "--output", str(mine)],
    }[how]
    if how == "build-out":
        env.pop("TBX_INDEX")
    out = _tbx(cmd, env)
    assert out.returncode == 2, out
    err = out.stderr.decode()
    assert "not a traceback-explainer index" in err and "Traceback" not in err and err.count("\n") == 1, err
    assert mine.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["experiments.sqlite"]  # no temporary file either


def test_an_index_path_of_the_tool_is_rebuilt_and_a_foreign_file_is_not(tmp_path):
    from explainer.knowledge.index import IndexError_, build_index, may_write
    from explainer.paths import kb_dir

    fresh = tmp_path / "new.sqlite"
    assert may_write(fresh)
    build_index(kb_dir(), fresh)
    assert may_write(fresh)  # an index: rebuilt in place
    text = tmp_path / "notes.sqlite"
    text.write_text("my notes", encoding="utf-8")
    assert not may_write(text)
    with pytest.raises(IndexError_):
        build_index(kb_dir(), text)
    assert text.read_text(encoding="utf-8") == "my notes"


@pytest.mark.parametrize("damage", ["features = '{'", "regex = '('", "entry_id = NULL", "normalized = NULL"])
def test_a_damaged_index_is_one_line_not_a_traceback(tmp_path, damage):
    import os
    import shutil
    import sqlite3

    from explainer.knowledge.index import open_index
    from explainer.paths import index_path

    open_index()  # built first: shuffled ahead of every other test, the checkout has no index yet
    bad = tmp_path / "index.sqlite"
    shutil.copy(index_path(), bad)
    con = sqlite3.connect(bad)
    con.execute(f"update patterns set {damage}")
    con.commit()
    con.close()
    env = {**os.environ, "TBX_INDEX": str(bad)}
    for cmd in (["explain", "-"], ["serve", "--port", "9"]):
        out = _tbx(cmd, env)
        err = out.stderr.decode()
        assert out.returncode == 2 and "is damaged" in err and "tbx build" in err, (cmd, err)
        assert err.count("\n") == 1, err


def test_an_index_in_good_order_has_no_damage(index):
    assert index.damage() == []


TROJAN = "\u202e\u2066\u2069\u200f\u061c\u3164\u115f\uffa0\U000e0041\U000e007f\ufe0f"


def test_invisible_and_bidi_characters_leave_prose_and_show_escaped_in_code(index):
    import json

    paste = (
        "Traceback (most recent call last):\n"
        f'  File "tra\u202ein.py", line 3, in <module>\n'
        f"    loss{TROJAN}.backward()\n"
        '  File "/usr/lib/python3/site-packages/torch/_tensor.py", line 648, in backward\n'
        f"RuntimeError: grad can be implicitly {TROJAN}created only for scalar outputs{TROJAN}\n"
    )
    answer = explain_text(paste, index)
    assert answer.matches[0].id == "backward-non-scalar-output"
    out = json.dumps(rendered_json(answer, index), ensure_ascii=False)
    shown = [c for c in TROJAN if c in out]
    assert not shown, [hex(ord(c)) for c in shown]
    uf = answer.parsed.user_frame
    assert uf.code.startswith("loss\\u202e\\u2066") and "\\U000e0041" in uf.code
    assert answer.parsed.message == "grad can be implicitly created only for scalar outputs"


# --- a catastrophic kb expression fails lint, is never built, and cannot hang lint --attack --------


def test_a_nested_repeat_is_found_without_running_it():
    from explainer.knowledge.attack import nested_repeat

    for bad in (r"(?:\S+\s*)+:", r"(\w+)*x", r"(a|aa)*b", r"(?:\s*\w+)+$"):
        assert nested_repeat(bad), bad
    for ok in (r"(?:\S++\s*+)+:", r"\d+(?:\.\d+)*", r"(?:[a-z]+,)*x", r"(?>\w+\s*)+:", r"(?:foo|bar)+", r"(?:ab)+"):
        assert nested_repeat(ok) is None, ok


def test_a_catastrophic_signal_fails_lint_and_is_left_out_of_the_index(tmp_path, monkeypatch):
    import shutil

    from explainer.knowledge.index import Index, build_index
    from explainer.knowledge.kb import read_entry
    from explainer.knowledge.lint import schema_problems

    kb = tmp_path / "kb"
    kb.mkdir()
    src = (ROOT / "kb" / "amp-unscale-fp16-grads.md").read_text(encoding="utf-8")
    bad = src.replace('signals = [\n  "torch/cuda', 'signals = [\n  "(?:\\\\S+\\\\s*)+:",\n  "torch/cuda', 1)
    assert bad != src
    (kb / "amp-unscale-fp16-grads.md").write_text(bad, encoding="utf-8")
    shutil.copy(ROOT / "kb" / "backward-non-scalar-output.md", kb)
    problems = schema_problems(read_entry(kb / "amp-unscale-fp16-grads.md"))
    assert [getattr(p, "code", None) for p in problems] == ["KB208"], problems
    build_index(kb, tmp_path / "index.sqlite")
    index = Index(tmp_path / "index.sqlite")
    assert set(index.entries) == {"backward-non-scalar-output"}  # the entry is skipped, with a warning
    t0 = time.thread_time()
    explain_text("RuntimeError: " + "a " * 3000 + "!", index)
    assert time.thread_time() - t0 < 1.0


def test_an_attack_that_does_not_end_fails_and_the_rest_are_timed():
    from explainer.knowledge.attack import bounded_attacks

    jobs = [
        (re.compile(r"ab+c"), ("search",), 200),
        (re.compile(r"(a+)+$"), ("search",), 200),
        (re.compile(r"x"), ("search",), 200),
    ]
    t0 = time.monotonic()
    got = bounded_attacks(jobs, inputs=10, timeout=2.0)
    assert time.monotonic() - t0 < 30
    assert got[1][0] == float("inf")
    assert got[0][0] < 0.05 and got[2][0] < 0.05


def test_every_paste_shape_at_the_size_limit_is_answered_within_the_budget(index):
    """Each stage's special path (decoders, reflow, unwrapping, dedenting, gutters, translation, the
    environment report) at 300 000 characters: bounded before the first budget check, so the whole
    explanation stays near its 200 ms budget (measured 100-200 ms of CPU on 2 loaded cores; bounded here
    at 500 ms, which a stage quadratic in the paste passes by seconds; ``tests/bench/budget_sweep.py``
    times the same shapes through ``tbx explain --json`` against the 250 ms goal)."""
    import json

    from .bench.shapes import shapes

    def cpu(text: str) -> float:
        t0 = time.thread_time()
        answer = explain_text(text, index)
        json.dumps(answer_json(answer, index), ensure_ascii=False).encode("utf-8")
        return time.thread_time() - t0

    slow = []
    for name, text in shapes().items():
        # the best of three for a shape over the bound: a neighbour on the same core slows a run
        # down by a factor, a stage quadratic in the paste is slow every time
        took = cpu(text)
        if took > 0.5:
            took = min(took, cpu(text), cpu(text))
        if took > 0.5:
            slow.append(f"{name}: {took * 1000:.0f} ms")
    assert not slow, slow


# --- properties: any bytes, any characters --------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_ANY_CHAR = st.characters(codec=None, categories=None)  # every category, surrogates (Cs) and controls included
_PIECES = st.sampled_from(
    [
        "Traceback (most recent call last):\n",
        '  File "a.py", line 1, in <module>\n',
        "RuntimeError: ",
        '{"name": "RuntimeError", "message": "',
        '{"ename": "E", "evalue": "x", "traceback": ["',
        '{"exc_info": "Traceback (most recent call last):\\n',
        "\\u",
        "\\ud800",
        "\\n",
        '"',
        '"]}',
        "&quot;",
        "\x1b[31m",
        "回溯（最近一次调用）：\n",
    ]
)
_PASTES = st.lists(st.one_of(_PIECES, st.text(_ANY_CHAR, max_size=20)), max_size=25).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_PASTES)
def test_property_any_text_is_parsed_explained_and_encoded(index, text):
    import json

    from explainer.parse.parser import parse_text

    json.dumps(parse_text(text).as_json(), ensure_ascii=False).encode("utf-8")
    json.dumps(rendered_json(explain_text(text, index), index), ensure_ascii=False).encode("utf-8")


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=400))
def test_property_any_bytes_decode_to_valid_text(data):
    from explainer.parse.parser import parse_text

    text = decode_bytes(data)
    text.encode("utf-8")  # strict: no surrogate from an undecodable byte
    import json

    json.dumps(parse_text(text).as_json(), ensure_ascii=False).encode("utf-8")


def test_the_attack_finds_every_expression_of_every_module():
    """The attacked set is found by walking the package: every Lazy expression made by any module is
    in it (one written in a new module, a dict or a list is attacked without anyone listing it)."""
    from explainer.knowledge.attack import parser_rules
    from explainer.textio import Lazy

    attacked = {id(rx) for _name, rx, _cap, _ops in parser_rules()}
    made = Lazy.made
    missed = [rx._args[0][:60] for rx in made if id(rx) not in attacked]
    assert len(made) > 100
    assert not missed, missed


def test_a_named_signal_must_be_one_the_parser_derives(tmp_path):
    from explainer.knowledge.kb import read_entry
    from explainer.knowledge.lint import schema_problems

    src = (ROOT / "kb" / "project-module-not-found.md").read_text(encoding="utf-8")
    assert '"@own_package"' in src and not schema_problems(read_entry(ROOT / "kb" / "project-module-not-found.md"))
    (tmp_path / "project-module-not-found.md").write_text(src.replace('"@own_package"', '"@own_pkg"'), encoding="utf-8")
    problems = schema_problems(read_entry(tmp_path / "project-module-not-found.md"))
    assert [getattr(p, "code", None) for p in problems] == ["KB202"], problems


def test_unless_names_a_derived_signal(tmp_path):
    from explainer.knowledge.kb import read_entry
    from explainer.knowledge.lint import lint_entry, schema_problems

    src = (ROOT / "kb" / "no-module-third-party.md").read_text(encoding="utf-8")
    assert '"@unknown_module"' in src and not schema_problems(read_entry(ROOT / "kb" / "no-module-third-party.md"))
    for bad in ('"@unknown_mod"', '"unknown_module"'):
        (tmp_path / "no-module-third-party.md").write_text(src.replace('"@unknown_module"', bad), encoding="utf-8")
        problems = schema_problems(read_entry(tmp_path / "no-module-third-party.md"))
        assert [getattr(p, "code", None) for p in problems] == ["KB203"], problems
        # `tbx lint` says so too (it had passed an entry that `tbx build` then skipped)
        entry = read_entry(tmp_path / "no-module-third-party.md")
        linted = lint_entry(
            entry, {"no-module-third-party", *entry.meta.get("excludes", ()), *entry.meta.get("related", ())}
        )
        assert any(getattr(p, "code", None) == "KB203" and "unless:" in str(p) for p in linted), linted
