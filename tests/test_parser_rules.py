"""The parser's line rules (``explainer.parse.parser.LINE_RULES``), each on its own: what line it takes,
what it records on the scan, and where the scan goes on. ``test_parser.py`` tests them together on
whole pastes; these say which rule a change moved."""

from __future__ import annotations

import pytest

from explainer.parse.assemble import parse_text
from explainer.parse.grammar import Scan
from explainer.parse.scan import LINE_RULES

RULE = {r.__name__.strip("_"): r for r in LINE_RULES}


def apply(name: str, lines: list[str], i: int = 0, **state):
    """Run one rule on line ``i``: (the index it goes on at or None, the scan after it)."""
    st = Scan(lines)
    st.i = i
    for key, value in state.items():
        setattr(st, key, value)
    return RULE[name](st, lines[i], lines[i].strip()), st


def events(st: Scan) -> list[tuple]:
    return [(e.kind, e.exc_type, e.message) for e in st.events]


def test_the_table_is_in_the_grammars_order():
    names = list(RULE)
    assert names[0] == "blank" and names[-1] == "inline_exception"
    # structure before messages: a frame header, a chain marker or a traceback start is never read
    # as an exception line, and a quoted exception is the last resort
    for early in ("traceback_start", "chain_marker", "frame_header", "pytest_summary", "warning"):
        assert names.index(early) < names.index("exception_line") < names.index("inline_exception")
    assert names.index("signal_line") < names.index("cpp_frame")  # a signal is noted before a rule takes the line


@pytest.mark.parametrize("line", ["I am training a model and it fails", "epoch 3/10 loss=0.41", "  x = y + 1"])
def test_a_line_of_prose_or_log_is_no_rules(line):
    for name in RULE:
        nxt, st = apply(name, [line])
        assert nxt is None and not st.events and not st.frames, name


def test_blank():
    assert apply("blank", ["   ", "x"])[0] == 1
    assert apply("blank", ["x"])[0] is None


def test_group_marker_makes_the_exception_before_it_a_group():
    st = Scan(["+--group--"])
    st.add_exc("ExceptionGroup", "errors (2 sub-exceptions)")
    assert RULE["group_marker"](st, "+--group--", "+--group--") == 1
    assert st.events[-1].kind == "group" and st.relation == "group"


def test_signal_line_notes_and_never_takes_the_line():
    nxt, st = apply("signal_line", ["[rank0]: NCCL error in: ProcessGroupNCCL.cpp:1275, unhandled system error"])
    assert nxt is None and [s.kind for s in st.signals] == ["nccl"]
    nxt, st = apply("signal_line", ["Assertion `t >= 0 && t < n_classes` failed."])
    assert nxt is None and [s.kind for s in st.signals] == ["cuda_assert"]
    assert apply("signal_line", ["loss went up"])[1].signals == []


def test_cpp_frame_keeps_one_signal_per_run():
    lines = ["frame #0: c10::Error::Error(...) + 0x8d", "frame #1: at::native::foo() + 0x10"]
    st = Scan(lines)
    for st.i, line in enumerate(lines):
        assert RULE["cpp_frame"](st, line, line.strip()) == st.i + 1
    assert [s.kind for s in st.signals] == ["cpp_frame"] and "cpp_frames" in st.hints


def test_ipython_header_announces_the_type():
    nxt, st = apply("ipython_header", ["RuntimeError                              Traceback (most recent call last)"])
    assert nxt == 1 and st.pending_type == "RuntimeError" and st.in_tb and "ipython" in st.hints


def test_traceback_start_and_a_workers_original_traceback():
    nxt, st = apply("traceback_start", ["Traceback (most recent call last):"])
    assert nxt == 1 and st.in_tb and st.relation is None
    st = Scan(["Original Traceback (most recent call last):"])
    st.add_exc("IndexError", "Caught IndexError in DataLoader worker process 0.")
    assert RULE["traceback_start"](st, st.lines[0], st.lines[0].strip()) == 1
    assert st.events[-1].kind == "worker" and st.relation == "worker" and "dataloader_worker" in st.hints


def test_chain_marker():
    cause = "The above exception was the direct cause of the following exception:"
    context = "During handling of the above exception, another exception occurred:"
    assert apply("chain_marker", [cause])[1].relation == "cause"
    assert apply("chain_marker", [context])[1].relation == "context"
    assert apply("chain_marker", ["see the above exception for details"])[0] is None


def test_frame_header_takes_its_code_line_and_the_carets():
    lines = [
        '  File "/home/u/train.py", line 12, in main',
        "    loss = model(x).sum(dim=1)",
        "           ^^^^^^^^",
        "RuntimeError: boom",
    ]
    nxt, st = apply("frame_header", lines)
    assert nxt == 2 and st.in_tb
    (f,) = st.frames
    assert (f.file, f.line, f.function, f.code, f.library) == ("/home/u/train.py", 12, "main", lines[1].strip(), False)
    assert f.focus == "model(x)"


def test_frame_header_flattened_and_other_styles():
    nxt, st = apply(
        "frame_header", ['File "/usr/lib/python3.11/site-packages/torch/_tensor.py", line 5, in backward  x = 1']
    )
    assert nxt == 1 and st.frames[0].code == "x = 1" and st.frames[0].library
    nxt, st = apply("frame_header", ["Cell In[4], line 7", "      6 x = 1", "----> 7 y()"])
    assert nxt == 1 and st.frames[0].file == "Cell In[4]" and "ipython" in st.hints  # a context line is no code
    nxt, st = apply("frame_header", ["> /home/u/train.py(30)forward()"])
    assert nxt == 1 and st.frames[0].line == 30 and "debugger" in st.hints
    assert apply("frame_header", ["the error is in my loss"])[0] is None


def test_frame_header_keeps_a_code_line_cut_above_the_first_frame():
    lines = ["loss.backward()", '  File "/home/u/t.py", line 3, in <module>']
    nxt, st = apply("frame_header", lines, i=1)
    assert nxt == 2 and [f.file for f in st.frames] == ["<truncated>", "/home/u/t.py"]
    assert st.frames[0].code == "loss.backward()"


def test_ipython_arrow_fills_the_frame_above():
    st = Scan(["----> 7 loss.backward()"])
    RULE["frame_header"](st, "Cell In[4], line 7", "Cell In[4], line 7")
    assert RULE["ipython_arrow"](st, st.lines[0], st.lines[0].strip()) == 1
    assert st.frames[-1].code == "loss.backward()" and st.frames[-1].line == 7
    assert apply("ipython_arrow", ["----> 7 loss.backward()"])[0] is None  # no frame to fill


@pytest.mark.parametrize(
    "line", ["    ^^^^^^^^^^", "  [Previous line repeated 996 more times]", "     12 x = 1", "  3 frames", "..."]
)
def test_traceback_filler_only_inside_a_traceback(line):
    assert apply("traceback_filler", [line], in_tb=True)[0] == 1
    assert apply("traceback_filler", [line], in_tb=False)[0] is None


def test_pytest_source_and_location():
    st = Scan([">       loss.backward()"])
    RULE["frame_header"](st, "tests/test_train.py:12: in test_step", "tests/test_train.py:12: in test_step")
    assert RULE["pytest_source"](st, st.lines[0], st.lines[0]) == 1
    assert st.frames[-1].code == "loss.backward()" and "pytest" in st.hints
    assert apply("pytest_location", ["tests/test_train.py:12: RuntimeError"])[0] == 1
    assert apply("pytest_location", ["tests/test_train.py:12: in test_step"])[0] is None


def test_debugger_header_reads_the_message_under_it():
    lines = ["Exception has occurred: RuntimeError", "grad can be implicitly created only for scalar outputs", "", "x"]
    nxt, st = apply("debugger_header", lines)
    assert nxt == 2 and events(st) == [("debugger", "RuntimeError", lines[1])] and st.pending_type is None
    assert apply("debugger_header", ["发生异常: ValueError", "bad"])[1].events[0].exc_type == "ValueError"


def test_cpp_terminate_with_what_on_the_next_line():
    lines = [
        "terminate called after throwing an instance of 'c10::Error'",
        "  what():  CUDA error: device-side assert triggered",
        "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 (most recent call first):",
    ]
    nxt, st = apply("cpp_terminate", lines)
    assert nxt == 2 and events(st) == [("terminate", "c10::Error", "CUDA error: device-side assert triggered")]


def test_pytest_summary_is_an_exception_only_when_it_names_one():
    nxt, st = apply("pytest_summary", ["FAILED tests/test_a.py::test_b - RuntimeError: expected scalar type Float"])
    assert nxt == 1 and events(st) == [("summary", "RuntimeError", "expected scalar type Float")]
    nxt, st = apply("pytest_summary", ["FAILED tests/test_a.py::test_b - assert 1 == 2"])
    assert nxt == 1 and not st.events


def test_warning_with_a_wrapped_message_and_its_source_line():
    lines = [
        "/site-packages/torch/nn/modules/loss.py:536: UserWarning: Using a target size (torch.Size([4]))",
        "that is different to the input size (torch.Size([4, 1])).",
        "  return F.mse_loss(input, target, reduction=self.reduction)",
        "epoch 1",
    ]
    nxt, st = apply("warning", lines)
    # the source line that warned (indented by two) ends the message and is skipped
    assert nxt == 3 and st.events[0].warning and st.events[0].exc_type == "UserWarning"
    assert (
        st.events[0].message
        == "Using a target size (torch.Size([4])) that is different to the input size (torch.Size([4, 1]))."
    )
    indented = ["    " + line for line in lines]  # a paste indented as a whole: the same
    nxt, st = apply("warning", indented)
    assert nxt == 3 and st.events[0].message.endswith("(torch.Size([4, 1])).")


def test_pycharm_trailer():
    assert apply("pycharm_trailer", ["python-BaseException"])[0] == 1


def test_exception_line_message_runs_on_and_stops_at_the_posters_words():
    lines = [
        "RuntimeError: Error(s) in loading state_dict for Net:",
        '\tMissing key(s) in state_dict: "fc.weight".',
        "请问这个怎么解决？",
    ]
    nxt, st = apply("exception_line", lines)
    assert (
        nxt == 2
        and st.events[0].message
        == 'Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "fc.weight".'
    )


def test_exception_line_keeps_torchs_hint_paragraph_after_a_blank_only_after_frames():
    lines = ["ValueError: bad value", "", "    Hint: pass a float"]
    frame = apply("frame_header", ['  File "/home/u/t.py", line 3, in f'])[1].frames
    nxt, st = apply("exception_line", lines, frames=list(frame), in_tb=True)
    assert nxt == 3 and st.events[0].message == "bad value\n\nHint: pass a float"
    nxt, st = apply("exception_line", lines)
    assert nxt == 1 and st.events[0].message == "bad value"


def test_exception_line_a_bare_type_only_after_frames_and_the_pending_type_is_met():
    assert apply("exception_line", ["StopIteration"])[0] is None
    frame = apply("frame_header", ['  File "/home/u/t.py", line 3, in f'])[1].frames
    nxt, st = apply("exception_line", ["StopIteration", "", "I don't know why"], frames=list(frame), in_tb=True)
    assert nxt == 1 and events(st) == [("exc", "StopIteration", None)] and st.events[0].frames == frame
    nxt, st = apply("exception_line", ["ValueError: x"], pending_type="ValueError")
    assert st.pending_type is None


def test_inline_exception_in_prose_and_as_a_repr():
    nxt, st = apply("inline_exception", ["I get 'RuntimeError: CUDA out of memory.' when I train. Any idea?"])
    assert nxt == 1 and events(st) == [("inline", "RuntimeError", "CUDA out of memory.")]
    nxt, st = apply("inline_exception", ["ERROR job 7: got RuntimeError('size mismatch, m1: [4 x 3]')"])
    assert events(st) == [("inline", "RuntimeError", "size mismatch, m1: [4 x 3]")]
    # a quote wrapped onto the next line goes on to its closing quote; the scan goes on after it
    nxt, st = apply(
        "inline_exception", ['Running it gives "ValueError: too many values', 'to unpack (expected 2)" here']
    )
    assert nxt == 2 and st.events[0].message == "too many values to unpack (expected 2)"


_PREFIXED = [
    "[rank0]: Traceback",
    "[default1]:RuntimeError: x",
    "2026-11-30 12:00:01,123 - ERROR - x",
    "[2026-11-30T12:00:01Z] x",
    "Oct 16 02:07:00 host x",
    "10:53:25-006878 x",
    "ERROR: x",
    "[WARNING] x",
    "WARN x",
    "INFO:root: x",
    "W1130 01:02:03.456 123 file.cpp:45] x",
    "(TrainWorker pid=123) x",
    "worker-1 rank=42] x",
    "(RayTrainWorker pid=123, ip=10.0.0.1) x",
    "11-05 12:03:00 client.py:250] x",
    "11-12 10:29:35 [serving_chat.py:948] x",
    "(VllmWorker rank=0 pid=2051) x",
    "E   RuntimeError: x",
    "E\tRuntimeError: x",
    "*** RuntimeError: x",
    "0: Traceback",
    "> RuntimeError: x",
]


@pytest.mark.parametrize("line", _PREFIXED)
def test_every_prefix_passes_the_guard_before_its_expression(line):
    from explainer.parse.clean import _ANY_PREFIX, _may_have_prefix, strip_prefixes

    assert _ANY_PREFIX.match(line).end() > 0
    assert _may_have_prefix(line)
    assert strip_prefixes(line) != line


def test_a_vllm_log_keeps_its_traceback():
    """vLLM logs every line of a traceback behind its level, date, time and source line, and a worker
    process behind its name: the frames are read through both."""
    from explainer.parse.parser import parse_text

    tb = [
        "Traceback (most recent call last):",
        '  File "/env/lib/python3.10/site-packages/vllm/engine/multiprocessing/client.py", line 314, in _check_success',
        "    raise response",
        "RuntimeError: Engine loop has died",
    ]
    for prefix in (
        "ERROR 11-05 12:03:00 client.py:250] ",
        "ERROR 11-12 10:29:35 [serving_chat.py:948] ",
        "(VllmWorker rank=0 pid=2051) ERROR 02-20 09:04:16 [multiproc_executor.py:470] ",
    ):
        p = parse_text("\n".join(prefix + line for line in tb))
        assert (p.exc_type, p.message) == ("RuntimeError", "Engine loop has died"), prefix
        assert [(f.function, f.code) for f in p.frames] == [("_check_success", "raise response")], prefix


def test_the_prefix_guard_never_skips_a_line_a_prefix_matches():
    """The guard is a filter in front of ``_ANY_PREFIX``: a line it turns away must be one the
    expression does not match (checked on prefix-like text, every start of the examples above)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from explainer.parse.clean import _ANY_PREFIX, _may_have_prefix

    def skipped_wrongly(line: str) -> bool:
        m = _ANY_PREFIX.match(line)
        return bool(m and m.end()) and not _may_have_prefix(line)

    for line in _PREFIXED:
        for i in range(len(line)):
            assert not skipped_wrongly(line[i:]), line[i:]

    @settings(max_examples=3000, deadline=None, database=None)
    @given(st.text(alphabet="[]():-*>0123 \tEWIODRNACGFTKSPLUOVOctpid=rank_.", max_size=30))
    def check(line):
        assert not skipped_wrongly(line), line

    check()


def test_every_line_rule_says_whether_it_ends_a_message():
    """The grammar is written once: each rule of LINE_RULES declares (ends_message) whether its lines
    end the message above them, and the scan's "is this line structural" is derived from that."""
    from explainer.parse import grammar as scan

    undecided = [r.__name__ for r in LINE_RULES if not hasattr(r, "ends_message")]
    assert not undecided, f"declare @ends_message(...) or @ends_message(None) on {undecided}"
    assert scan._STRUCTURAL == scan.structural(LINE_RULES)[0]
    assert scan._is_structural('  File "a.py", line 1, in <module>')
    assert scan._is_structural("The above exception was the direct cause of the following exception:")
    assert not scan._is_structural("RuntimeError: a message that goes on")


def test_a_new_structural_rule_ends_messages_without_a_second_edit(monkeypatch):
    """Adding a header rule to the table is enough: a message stops at its line (the hand-kept list
    it replaced swallowed a new header into the message above)."""
    from explainer.parse import grammar

    @grammar.ends_message(lambda line: line.startswith("=== STEP "), needs=("=== STEP ",))
    def _step_header(st, line, s):
        return st.i + 1 if line.startswith("=== STEP ") else None

    assert not grammar._is_structural("=== STEP 3 ===")
    starts, words = grammar.structural((*LINE_RULES[:1], _step_header, *LINE_RULES[1:]))
    monkeypatch.setattr(grammar, "_STRUCTURAL", starts)
    monkeypatch.setattr(grammar, "_STRUCTURAL_WORDS", words)
    assert grammar._is_structural("=== STEP 3 ===")


def test_the_words_a_structural_line_needs_never_hide_one():
    """The cheap test first (any word of the union of the rules' ``needs``) is true on every line
    of the repository's pastes that a rule's ``ends_message`` takes."""
    from explainer.parse import grammar as scan

    from .fuzz import seeds

    assert all(r.needs for r in LINE_RULES if r.ends_message is not None)
    for paste in seeds():
        for line in paste.split("\n"):
            if any(starts(line) for starts in scan._STRUCTURAL):
                assert any(w in line for w in scan._STRUCTURAL_WORDS), line


def _own(text):
    return [s.text for s in parse_text(text).signals if s.kind == "own_package"]


def test_a_missing_package_that_is_a_folder_of_the_users_frames_is_the_projects_own():
    tb = 'Traceback (most recent call last):\n  File "{f}", line 6, in <module>\n    import x\n{e}\n'
    own = tb.format(f="E:\\w\\libs\\chatchat\\cli.py", e="ModuleNotFoundError: No module named 'chatchat.startup'")
    assert _own(own) == ["E:\\w\\libs\\chatchat\\cli.py"]
    # a package found elsewhere, a compiled part of a checkout never built, a submodule the package's
    # own __init__ imports (a file its build writes), an installed package's folder: not the project's
    assert not _own(tb.format(f="/w/proj/train.py", e="ModuleNotFoundError: No module named 'chatchat'"))
    assert not _own(tb.format(f="/w/mmcv/mmcv/ops/nms.py", e="ModuleNotFoundError: No module named 'mmcv._ext'"))
    gfpgan = tb.format(
        f="E:\\IA\\GFPGAN\\gfpgan\\__init__.py", e="ModuleNotFoundError: No module named 'gfpgan.version'"
    )
    assert not _own(gfpgan)
    site = tb.format(
        f="/venv/lib/python3.10/site-packages/chatchat/cli.py", e="ModuleNotFoundError: No module named 'chatchat.x'"
    )
    assert not _own(site)
    assert not _own(tb.format(f="/w/chatchat/cli.py", e="KeyError: 'No module named chatchat'"))
    # the bare name imported inside a subpackage named after it: a wrapper of that library
    wrapper = "C:\\w\\src\\upscale\\model\\realesrgan\\factory.py"
    assert not _own(tb.format(f=wrapper, e="ModuleNotFoundError: No module named 'realesrgan'"))
    # ... but right inside a source root, or the project's folder (not a package), it is the project's
    for f in ("/w/LLaMA-Factory/src/llamafactory/cli.py", "/w/Langchain-Chatchat/chatchat/cli.py"):
        top = f.split("/")[-2]
        assert _own(tb.format(f=f, e=f"ModuleNotFoundError: No module named '{top}'")) == [f]


def test_an_inline_message_inside_the_lines_own_parenthesis():
    """A note such as Codex's `*(fails: ModuleNotFoundError: No module named 'torch')*`: the closing
    parenthesis and emphasis are the line's, not the message's; a message's own balanced parentheses stay."""
    from explainer.parse.parser import parse_text

    p = parse_text("- `pytest` *(fails: ModuleNotFoundError: No module named 'torch')*")
    assert (p.exc_type, p.message) == ("ModuleNotFoundError", "No module named 'torch'")
    p = parse_text("(this fails with ValueError: too many values to unpack (expected 2))")
    assert p.message == "too many values to unpack (expected 2)"
