"""The parser on project-written samples of every paste format, and its robustness bounds."""

from __future__ import annotations

import json
import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explainer.parse.parser import MAX_LINE, parse_text

from .conftest import FIXTURES, read_cases

CASES = read_cases(FIXTURES / "parser" / "formats.txt")


@pytest.mark.parametrize("title,paste,expect", CASES, ids=[c[0] for c in CASES])
def test_parser_fixture(title, paste, expect):
    p = parse_text(paste)
    j = p.as_json()
    if j["user_frame"] and "user_frame" in expect and "focus" not in (expect["user_frame"] or {}):
        j["user_frame"].pop("focus")  # the caret focus is checked where a case states it
    for key in ("exc_type", "message", "format", "user_frame"):
        if key in expect:
            assert j[key] == expect[key], f"{title}: {key}"
    if "message_startswith" in expect:
        assert (p.message or "").startswith(expect["message_startswith"]), p.message
    if "message_contains" in expect:
        assert expect["message_contains"] in (p.message or "")
    if "n_frames" in expect:
        assert len(p.frames) == expect["n_frames"]
    if "chain" in expect:
        assert j["chain"] == expect["chain"]
    if "chain_relations" in expect:
        assert [c["relation"] for c in j["chain"]] == expect["chain_relations"]
    if "others" in expect:
        assert j["others"] == expect["others"]
    for kind in expect.get("signal_kinds", []):
        assert kind in {s.kind for s in p.signals}, (kind, p.signals)


def test_library_frames_and_user_frame():
    p = parse_text(CASES[0][1])
    assert [f.library for f in p.frames] == [False, True]
    assert p.user_frame.file.endswith("train.py")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=3000))
def test_never_raises_on_random_text(text):
    p = parse_text(text)
    p.as_json()


_PIECES = [c[1] for c in CASES]


@settings(max_examples=300, deadline=None)
@given(
    st.integers(min_value=0, max_value=len(_PIECES) - 1),
    st.integers(min_value=0, max_value=2**32),
    st.text(max_size=20),
)
def test_never_raises_on_mutated_tracebacks(which, seed, junk):
    rnd = random.Random(seed)
    text = list(_PIECES[which])
    for _ in range(rnd.randint(1, 12)):
        op = rnd.choice(("del", "ins", "dup", "cut"))
        pos = rnd.randrange(len(text) + 1)
        if op == "del" and text:
            del text[min(pos, len(text) - 1)]
        elif op == "ins":
            text[pos:pos] = list(junk or "\x00")
        elif op == "dup":
            text[pos:pos] = text[pos : pos + rnd.randint(1, 200)]
        else:
            text = text[pos:]
    parse_text("".join(text)).as_json()


def test_ten_mib_paste_is_bounded():
    tb = CASES[0][1]
    big = ("INFO step 1 loss 0.123 lr 0.001\n" * 330_000)[: 10 * 1024 * 1024] + tb
    t = time.thread_time()
    p = parse_text(big)
    elapsed = time.thread_time() - t
    assert p.exc_type == "RuntimeError" and "cannot be multiplied" in p.message
    assert elapsed < 3.0, f"10 MiB paste took {elapsed:.2f} s"  # measured well under 1 s; CI machines are noisy


def test_one_mib_line_is_bounded():
    line = "x" * (1024 * 1024) + " RuntimeError: boom"
    t = time.thread_time()
    parse_text(line + "\n" + CASES[0][1])
    parse_text(line)
    elapsed = time.thread_time() - t
    assert elapsed < 3.0, f"1 MiB line took {elapsed:.2f} s"


VSCODE_STACK = (
    "---------------------------------------------------------------------------\n"
    "RuntimeError                              Traceback (most recent call last)\n"
    "Cell In[3], line 1\n----> 1 out = a @ w\n\n"
    "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x20 and 10x5)"
)


@pytest.mark.parametrize(
    "paste",
    [
        # valid JSON, as VS Code's "Copy error" gives it
        json.dumps(
            {
                "name": "RuntimeError",
                "message": "mat1 and mat2 shapes cannot be multiplied (4x20 and 10x5)",
                "stack": VSCODE_STACK,
            }
        ),
        # not valid JSON: raw newlines inside the strings, with commentary around it (en, zh)
        'Copied from VS Code:\n{"name": "RuntimeError", "message": "mat1 and mat2 shapes cannot be multiplied '
        '(4x20 and 10x5)", "stack": "' + VSCODE_STACK + '"}\nwhat is wrong?',
        'VS Code 里复制出来的错误：\n{"name": "RuntimeError", "message": "mat1 and mat2 shapes cannot be multiplied '
        '(4x20 and 10x5)", "stack": "' + VSCODE_STACK + '"}\n求助',
        # cut inside the stack: the message field still gives the whole line
        '{"name": "RuntimeError", "message": "mat1 and mat2 shapes cannot be multiplied (4x20 and 10x5)", "stack": "'
        + VSCODE_STACK[:-30],
    ],
)
def test_vscode_error_object(paste):
    p = parse_text(paste)
    assert p.exc_type == "RuntimeError"
    assert p.message == "mat1 and mat2 shapes cannot be multiplied (4x20 and 10x5)"
    assert p.user_frame is not None and p.user_frame.file == "Cell In[3]" and p.user_frame.code == "out = a @ w"


@pytest.mark.parametrize(
    ("paste", "message"),
    [
        (
            'Traceback (most recent call last):\n  File "t.py", line 3, in <module>\n    x.view(-1)\n'
            "RuntimeError: view size is not compatible with input tensor's size and stride\n>>",
            "view size is not compatible with input tensor's size and stride",
        ),
        (
            "RuntimeError: CUDA error: device-side assert triggered\nCompile with `TORCH_USE_CUDA_DSA` to enable "
            "device-side assertions.\n---\nthanks in advance",
            "CUDA error: device-side assert triggered\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
        ),
        (
            '```\nTraceback (most recent call last):\n  File "t.py", line 3, in <module>\n    f()\n'
            "RuntimeError: boom\n```\n这是什么原因？",
            "boom",
        ),
        (
            'Traceback (most recent call last):\n  File "t.py", line 3, in <module>\n    f()\nRuntimeError: boom\n为什么会这样？',
            "boom",
        ),
        # a translated message keeps its Chinese lines; torchrun's ==== tables stay in the message
        ("RuntimeError: mat1 和 mat2 形状不能相乘\n第二行也是报错", "mat1 和 mat2 形状不能相乘\n第二行也是报错"),
    ],
)
def test_closing_delimiters_and_questions_are_not_the_message(paste, message):
    assert parse_text(paste).message == message


TB_LINES = [
    "Traceback (most recent call last):",
    '  File "train.py", line 3, in <module>',
    "    loss.backward()",
    "RuntimeError: grad can be implicitly created only for scalar outputs",
]


@pytest.mark.parametrize(
    "paste",
    [
        # a quoted reply or Markdown blockquote, nested too, with the poster's words around it
        "You wrote:\n" + "\n".join("> " + line for line in TB_LINES) + "\nsame here",
        "楼上的报错：\n" + "\n".join("> > " + line for line in TB_LINES) + "\n我也遇到了",
        # copied from a page's HTML source
        "\n".join(TB_LINES).replace('"', "&quot;").replace("<module>", "&lt;module&gt;"),
        # another tool's log lines after the error
        "\n".join(TB_LINES) + "\nwandb: Waiting for W&B process to finish... (failed 1).\nwandb: Synced 5 files",
    ],
)
def test_quoted_escaped_and_logged_pastes_keep_the_users_frame(paste):
    p = parse_text(paste)
    assert p.exc_type == "RuntimeError" and p.message == "grad can be implicitly created only for scalar outputs"
    assert p.user_frame is not None and (p.user_frame.file, p.user_frame.line) == ("train.py", 3)
    assert p.user_frame.code == "loss.backward()"


def test_a_message_line_with_its_own_lower_case_label_stays_in_the_message():
    assert parse_text("RuntimeError: boom\nnote: the rest of it").message == "boom\nnote: the rest of it"


@pytest.mark.parametrize(
    ("paste", "exc_type", "message", "where"),
    [
        (
            '回溯（最近一次调用最后）：\n  文件 "train.py"，第 3 行，在 <module>\n    loss.backward()\n运行时错误：梯度只能为标量输出隐式创建',
            "RuntimeError",
            "梯度只能为标量输出隐式创建",
            ("train.py", 3, "loss.backward()"),
        ),
        (
            "浏览器翻译后的报错：\n追溯（最近一次调用最后一次）：\n  文件“C:\\proj\\train.py”，第 12 行，在 <module> 中\n    out = model(x)\n"
            "运行时错误：mat1 和 mat2 形状不能相乘（4x20 和 10x5）",
            "RuntimeError",
            "mat1 和 mat2 形状不能相乘（4x20 和 10x5）",
            ("C:\\proj\\train.py", 12, "out = model(x)"),
        ),
        ("类型错误：'int' object is not callable", "TypeError", "'int' object is not callable", None),
        # an English traceback with a Chinese word in its message is left alone
        ("RuntimeError: 错误：boom", "RuntimeError", "错误：boom", None),
    ],
)
def test_a_browser_translated_traceback_reads_as_python_wrote_it(paste, exc_type, message, where):
    p = parse_text(paste)
    assert (p.exc_type, p.message) == (exc_type, message)
    uf = p.user_frame
    assert ((uf.file, uf.line, uf.code) if uf else None) == where


SPYDER = (
    "Traceback (most recent call last):\n\n  File D:\\proj\\train.py:30\n    loss.backward()\n\n"
    "  File D:\\Anaconda\\Lib\\site-packages\\torch\\_tensor.py:648 in backward\n    torch.autograd.backward(\n\n"
    "RuntimeError: grad can be implicitly created only for scalar outputs"
)


@pytest.mark.parametrize(
    "paste",
    [SPYDER, " ".join(line.strip() for line in SPYDER.split("\n") if line.strip()), "Spyder 里报错：\n" + SPYDER],
)
def test_spyders_module_level_frame_names_no_function(paste):
    """Spyder prints the script's own frame as `File D:\\proj\\train.py:30` (no ` in <module>`)."""
    p = parse_text(paste)
    uf = p.user_frame
    assert uf is not None and (uf.file, uf.line, uf.code) == ("D:\\proj\\train.py", 30, "loss.backward()")
    assert [f.line for f in p.frames] == [30, 648]


@pytest.mark.parametrize(
    "paste",
    [
        "\n".join(f"{n} {line}" for n, line in enumerate(TB_LINES, 1)),  # an editor's gutter
        "\n".join(f"{n} | {line}" for n, line in enumerate(TB_LINES, 40)),  # a viewer's, from line 40
        "\n".join(f"0: {line}" for line in TB_LINES),  # srun -l: one rank on every line
        "报错如下（带行号）：\n" + "\n".join(f"{n}\t{line}" for n, line in enumerate(TB_LINES, 1)),
    ],
)
def test_line_numbers_and_rank_prefixes_are_taken_off(paste):
    p = parse_text(paste)
    assert p.exc_type == "RuntimeError" and p.message == "grad can be implicitly created only for scalar outputs"
    assert p.user_frame is not None and p.user_frame.code == "loss.backward()"


def test_numbers_inside_a_message_are_not_a_gutter():
    assert parse_text("RuntimeError: boom\n1 2 3\n4 5 6").message == "boom\n1 2 3\n4 5 6"


def _interleaved(ranks: list[int], lines: list[str]) -> list[str]:
    """Each line printed by every rank in turn, as ``srun -l`` shows two ranks failing together."""
    return [f"{r}: {line}" for line in lines for r in ranks]


@pytest.mark.parametrize(
    "paste",
    [
        "\n".join(_interleaved([0, 1], TB_LINES)),
        "\n".join(_interleaved([3, 1, 2], TB_LINES)),
        "两张卡一起跑的时候 srun 打出来是这样的：\n" + "\n".join(_interleaved([0, 1], TB_LINES)) + "\n请问怎么解决？",
    ],
)
def test_ranks_interleaved_line_by_line_are_read_as_one(paste):
    """Several ranks' tracebacks cut into each other: the frame's code line was lost (the next line
    was another rank's frame header). The rank that printed last is read on its own."""
    p = parse_text(paste)
    assert p.exc_type == "RuntimeError" and p.message == "grad can be implicitly created only for scalar outputs"
    assert p.user_frame is not None and (p.user_frame.line, p.user_frame.code) == (3, "loss.backward()")


def test_a_numbered_list_is_not_ranks():
    # counted lines, or numbers that do not repeat, are no launcher's ranks
    text = "1: first step\n2: second step\n3: third step\n4: RuntimeError: boom"
    assert parse_text(text).message == "boom"
    assert "1: first step" in parse_text("note:\n1: first step\n7: other\nRuntimeError: boom\n").lines


def _long_flat(n: int = 60) -> str:
    frames = "".join(
        f'  File "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py", line {100 + i}, in _call_impl'
        f"    return forward_call(*args, **kwargs)"
        for i in range(n)
    )
    return (
        'Traceback (most recent call last):  File "/home/u/train.py", line 7, in <module>    loss.backward()'
        + frames
        + "RuntimeError: grad can be implicitly created only for scalar outputs"
    )


@pytest.mark.parametrize(
    "paste",
    [_long_flat(), "[rank0]: " + _long_flat(), "跑到一半报错，复制出来变成一行了：\n" + _long_flat() + "\n求助"],
)
def test_a_long_flattened_traceback_keeps_its_end(paste):
    """Over MAX_LINE characters on one line: the line was cut before it was split back into lines,
    so the last frames and the exception line were lost (no message at all)."""
    assert len(_long_flat()) > MAX_LINE
    p = parse_text(paste)
    assert p.exc_type == "RuntimeError" and p.message == "grad can be implicitly created only for scalar outputs"
    assert len(p.frames) == 61 and p.user_frame.code == "loss.backward()"
    assert p.format in ("flattened", "distributed_prefixed")


OLD_IPYTHON = """\
---------------------------------------------------------------------------
RuntimeError                              Traceback (most recent call last)
<ipython-input-5-3f2a> in <module>
      1 x = torch.randn(3, requires_grad=True)
----> 2 (x * 2).backward()

/opt/conda/lib/python3.7/site-packages/torch/tensor.py in backward(self, gradient, retain_graph, create_graph)
    184         \"\"\"
--> 185         torch.autograd.backward(self, gradient, retain_graph, create_graph)
    186

/opt/conda/lib/python3.7/site-packages/torch/autograd/__init__.py in backward(tensors, grad_tensors)
    117
--> 119     grad_tensors = _make_grads(tensors, grad_tensors)
    120     if retain_graph is None:

RuntimeError: grad can be implicitly created only for scalar outputs
"""


@pytest.mark.parametrize(
    "paste",
    [
        OLD_IPYTHON,
        " ".join(OLD_IPYTHON.splitlines()),  # a forum that joined the lines with spaces
        "".join(OLD_IPYTHON.splitlines()),  # Kaggle's comments: with nothing, the type glued to the code
        "Kaggle 上复制下来的报错：\n" + "".join(OLD_IPYTHON.splitlines()) + "\n这是什么原因？",
    ],
)
def test_ipython_7_frames_whole_and_flattened(paste):
    """IPython 7 prints `<ipython-input-5-3f2a> in <module>` (no parentheses) and empty context
    lines ("    117"): the cell's frame was not read, and a context line was taken for code."""
    p = parse_text(paste)
    assert p.exc_type == "RuntimeError" and p.message == "grad can be implicitly created only for scalar outputs"
    assert [(f.file.rsplit("/", 1)[-1], f.line, f.code) for f in p.frames] == [
        ("<ipython-input-5-3f2a>", 2, "(x * 2).backward()"),
        ("tensor.py", 185, "torch.autograd.backward(self, gradient, retain_graph, create_graph)"),
        ("__init__.py", 119, "grad_tensors = _make_grads(tensors, grad_tensors)"),
    ]
    assert p.user_frame.file == "<ipython-input-5-3f2a>"


IPYTHON_8 = """\
---------------------------------------------------------------------------
RuntimeError                              Traceback (most recent call last)
Cell In[3], line 2
      1 x = torch.randn(3, requires_grad=True)
----> 2 (x * 2).backward()

File ~/miniconda3/lib/python3.11/site-packages/torch/_tensor.py:522, in Tensor.backward(self, gradient)
    512 if has_torch_function_unary(self):
--> 522 torch.autograd.backward(
    523     self, gradient, retain_graph, create_graph, inputs=inputs
    524 )

File ~/miniconda3/lib/python3.11/site-packages/torch/autograd/__init__.py:259, in backward(tensors, grad_tensors)
--> 259 grad_tensors_ = _make_grads(tensors, grad_tensors_, is_grads_batched=False)

RuntimeError: grad can be implicitly created only for scalar outputs
"""


@pytest.mark.parametrize(
    "paste",
    [
        IPYTHON_8,
        " ".join(IPYTHON_8.splitlines()),
        "".join(IPYTHON_8.splitlines()),
        "Jupyter 里的报错复制过来成了一行：" + " ".join(IPYTHON_8.splitlines()),
    ],
)
def test_ipython_8_flattened_keeps_the_cell_frame(paste):
    """Flattened, IPython 8's layout was split at its `File ...:522, in` frames only: the
    `Cell In[3], line 2` frame (the user's) was lost, and with nothing between the lines all were."""
    p = parse_text(paste)
    assert p.exc_type == "RuntimeError" and p.message == "grad can be implicitly created only for scalar outputs"
    assert [(f.file.rsplit("/", 1)[-1], f.line, f.code) for f in p.frames] == [
        ("Cell In[3]", 2, "(x * 2).backward()"),
        ("_tensor.py", 522, "torch.autograd.backward("),
        ("__init__.py", 259, "grad_tensors_ = _make_grads(tensors, grad_tensors_, is_grads_batched=False)"),
    ]


def test_characters_a_web_page_adds_unseen_are_taken_out():
    """A zero-width space, a joiner or a soft hyphen copied with the text ("Runtime\u200bError")."""
    for ch in ("\u200b", "\u200d", "\u2060", "\u00ad", "\ufeff"):
        p = parse_text(
            f'Traceback (most recent call last):\n  File "a.py", line 1, in <module>\n    f()\nRuntime{ch}Error: boom{ch}ed'
        )
        assert (p.exc_type, p.message) == ("RuntimeError", "boomed"), ch


def test_the_environment_report_ends_at_a_line_of_the_error():
    """A path line belongs to the collect_env report (cuDNN's libraries); a warning printed at a
    path right after it does not."""
    p = parse_text(
        "PyTorch version: 2.1.0\nIs CUDA available: True\ncuDNN version: Probably one of the following:\n"
        "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.2\n"
        "/home/u/proj/train.py:40: UserWarning: The given NumPy array is not writable\n  x = torch.from_numpy(a)"
    )
    assert (p.exc_type, p.message) == ("UserWarning", "The given NumPy array is not writable")
    assert not any("libcudnn" in line for line in p.lines)


def test_lines_drawn_to_the_screens_width_are_not_a_terminal_wrap():
    from explainer.parse.clean import _unwrap_terminal

    rules = [
        "=" * 30 + " FAILURES " + "=" * 40,
        "_" * 30 + " test_a " + "_" * 42,
        "E       RuntimeError: boom",
        "=" * 20 + " short test summary info " + "=" * 35,
        "FAILED tests/test_a.py::test_a - RuntimeError: boom",
    ]
    assert _unwrap_terminal(rules) == rules
    wrapped = ["x" * 79 + "y", "z" * 80, "w" * 80, "end"]
    assert _unwrap_terminal(wrapped) == ["x" * 79 + "y" + "z" * 80 + "w" * 80 + "end"]


def test_a_warning_printed_three_times_is_not_a_terminal_wrap():
    """Three identical full-width warning lines and the error under them: the error is the answer
    (it was glued onto the warnings, and a CUDA OOM was answered as the warning)."""
    w = (
        "/usr/lib/python3/site-packages/torch/cuda/__init__.py:118: UserWarning: CUDA initialization: "
        "Unexpected error from cudaGetDeviceCount()."
    )
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 7.79 GiB"
    for lines in ([w, w, w, oom], [w, w, w, "运行出错了：", oom], ["x" * 40 + w[:90], w[:130], w[1:131], oom]):
        p = parse_text("\n".join(lines))
        assert p.exc_type == "torch.OutOfMemoryError" and p.message.startswith("CUDA out of memory"), lines


def test_a_wrapped_line_is_not_joined_onto_an_exception_line_of_its_own():
    from explainer.parse.clean import _unwrap_terminal

    wrapped = ["a" * 79 + "b", "c" * 80, "d" * 80, "ValueError: next record"]
    assert _unwrap_terminal(wrapped) == ["a" * 79 + "b" + "c" * 80 + "d" * 80, "ValueError: next record"]


def test_an_error_quoted_in_prose_beats_a_templates_placeholder_line():
    p = parse_text(
        "### Error logs\n\n# Error messages and logs here please\n\n### What happened\n"
        'I only get "The size of tensor a (0) must match the size of tensor b (3) at non-singleton dimension 1" '
        "when I train.\n"
    )
    assert p.message == "The size of tensor a (0) must match the size of tensor b (3) at non-singleton dimension 1"


def test_a_cpp_frame_line_is_never_the_message():
    """torch 1.3 and older print the message, then c10's frames, without a Python type line."""
    p = parse_text(
        "invalid argument 0: Sizes of tensors must match except in dimension 0. Got 3 and 1 in dimension 1 "
        "at /pytorch/aten/src/TH/generic/THTensor.cpp:689\n"
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string const&) + 0x33 (0x7f3 in libc10.so)\n"
        "frame #1: at::native::cat(c10::ArrayRef<at::Tensor>, long) + 0x1 (0x7f in libcaffe2.so)\n"
    )
    assert p.message.startswith("invalid argument 0: Sizes of tensors must match")


def test_the_closing_half_of_a_posters_quotes_is_not_the_message():
    """```ModuleNotFoundError: No module named 'src'` ``: the backtick that opened the paste went with
    the type; its closing half is no part of what Python printed. Balanced quotes stay."""
    assert parse_text("`ModuleNotFoundError: No module named 'src'`").message == "No module named 'src'"
    assert parse_text("ValueError: Model m.ckpt not found in available models: ['a']\"").message.endswith("['a']")
    kept = parse_text('KeyError: "the key `a` was not found"')
    assert kept.message.endswith('"') and "`a`" in kept.message


def test_an_error_level_log_prefix_names_its_logger():
    """The cleaner strips a log record's prefix from the message and keeps the logger it named: the
    standard library's ``ERROR:pkg.mod:`` and loguru's ``| ERROR | pkg.mod:function:line - ``; a
    lower level names none (an INFO line is no error's)."""
    loguru = parse_text("2024-11-13 14:40:37.395 | ERROR    | quokka_sched.cli.main:run_job:114 - need a plan input")
    assert loguru.message == "need a plan input"
    assert [s.text for s in loguru.signals if s.kind == "logger"] == ["quokka_sched.cli.main:run_job:114"]
    std = parse_text("ERROR:quokka_sched.engine:the queue ran dry")
    assert [s.text for s in std.signals if s.kind == "logger"] == ["quokka_sched.engine"]
    info = parse_text("2024-11-13 14:40:37 | INFO | quokka_sched.cli.main:run_job:114 - starting")
    assert not [s for s in info.signals if s.kind == "logger"]
