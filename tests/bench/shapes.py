"""Pastes of every shape the parser's stages have a special path for, each at the size limit: the
inputs of the end-to-end budget checks (``tests/test_reliability.py``, ``tests/bench/budget_sweep.py``)."""

from __future__ import annotations

import json

TB = (
    "Traceback (most recent call last):\n"
    '  File "/home/u/train.py", line 12, in <module>\n'
    "    loss.backward()\n"
    "RuntimeError: grad can be implicitly created only for scalar outputs\n"
)
N = 300_000  # the parser's MAX_CHARS


def shapes() -> dict[str, str]:
    tb_flat = TB.replace("\n", " ")
    return {
        "one long line": "a" * N,
        "one line of Traceback words": ("Traceback (most recent call last):" * (N // 34))[:N],
        "one flattened traceback repeated": (tb_flat * (N // len(tb_flat)))[:N],
        "line breaks only": "\n" * N,
        "short lines": "a\n" * (N // 2),
        "spaces then an error": " " * (N - 40) + "\nRuntimeError: boom",
        "a JSON log record": json.dumps({"exc_info": "Traceback (most recent call last):\n" + "x\n" * (N // 4)}),
        "escaped breaks, no record": "Traceback (most recent call last):\\n" + "  x\\n" * (N // 5),
        "notebook JSON": json.dumps({"ename": "RuntimeError", "evalue": "boom", "traceback": ["x"] * (N // 6)}),
        "a cut notebook": '{"ename": "RuntimeError", "traceback": [' + '"\\"' * (N // 3),
        "an error object": json.dumps({"name": "RuntimeError", "message": "boom", "stack": "at x\n" * (N // 6)}),
        "a cut error object": '{"name": "RuntimeError", "message": "boom", "stack": "' + "\\n at" * (N // 5),
        "HTML entities": "&quot;&lt;" * (N // 10),
        "a terminal-width wrap": ("w" * 99 + "\n") * (N // 100),
        "indented tracebacks": ("    " + TB.replace("\n", "\n    ")) * (N // (len(TB) + 20)),
        "line numbers in a gutter": "".join(f"{i} x = {i}\n" for i in range(N // 12)),
        "a translated traceback": ("回溯（最近一次调用）：\n运行时错误：张量错误\n" * (N // 20)),
        "box borders": ("│ " + " " * 96 + " │\n") * (N // 101),
        "terminal escapes": "\x1b[31m" * (N // 5),
        "an environment report": "PyTorch version: 2.1.0\n" + "Nvidia driver version: 535\n" * (N // 27),
        "a chain of tracebacks": (TB + "\nDuring handling of the above exception, another exception occurred:\n\n")
        * (N // 160),
        "frames only": '  File "x.py", line 1, in f\n' * (N // 28),
        "an unclosed tuple": "RuntimeError: expected (" + "1, " * (N // 3 - 10),
        "invisible characters": ("\u202e\u200b" + "a") * (N // 3),
        "lone surrogates, escaped": '{"name": "E", "message": "x", "stack": "' + "\\ud800" * (N // 6) + '"}',
    }
