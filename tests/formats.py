"""Turn a real traceback into the paste formats people send, for the robustness matrix.

Each transformation takes the standard CPython text a reproducer printed and returns what the same
error looks like when pasted from another place. Written by the project, not copied from anyone.
"""

from __future__ import annotations

import json
import re

_FRAME = re.compile(r'^(\s*)File "([^"]+)", line (\d+), in (\S+)$')


def _final_line(tb: str) -> str:
    """The final exception's lines: from the first unindented line after the last frame."""
    lines = [l for l in tb.rstrip("\n").split("\n") if l.strip()]
    last_frame = max((i for i, l in enumerate(lines) if _FRAME.match(l)), default=-1)
    for i in range(last_frame + 1, len(lines)):
        if not lines[i].startswith((" ", "\t")):
            return "\n".join(lines[i:])
    return lines[-1]


def standard(tb: str) -> str:
    return tb


def flattened(tb: str) -> str:
    return " ".join(l.strip() for l in tb.split("\n") if l.strip() and not re.match(r"^\s*[\^~]+\s*$", l))


def ansi(tb: str) -> str:
    out = []
    for l in tb.split("\n"):
        if l.startswith("Traceback"):
            out.append(f"\x1b[31m{l}\x1b[0m")
        elif _FRAME.match(l):
            out.append(re.sub(r'"([^"]+)"', '\x1b[32m"\\1"\x1b[0m', l))
        else:
            out.append(l)
    return "\n".join(out)


def rank_prefixed(tb: str) -> str:
    return "\n".join(f"[rank0]: {l}" for l in tb.split("\n"))


def logged(tb: str) -> str:
    return "\n".join(f"2026-11-30 02:13:{i % 60:02d},512 ERROR {l}" for i, l in enumerate(tb.split("\n")))


def ipython8(tb: str) -> str:
    out = ["---------------------------------------------------------------------------"]
    final = _final_line(tb)
    etype = final.split(":", 1)[0]
    out.append(f"{etype:<42}Traceback (most recent call last)")
    for l in tb.split("\n"):
        m = _FRAME.match(l)
        if m:
            out.append(f"File {m.group(2)}:{m.group(3)}, in {m.group(4)}()")
        elif l.startswith("Traceback"):
            continue
        elif l.startswith("    ") and not re.match(r"^\s*[\^~]+\s*$", l):
            out.append(f"----> {1} {l.strip()}")
        else:
            out.append(l)
    return "\n".join(out)


def jupyter_json(tb: str) -> str:
    final = _final_line(tb)
    etype, _, evalue = final.partition(": ")
    body = tb.rstrip("\n").split("\n")
    return json.dumps(
        {
            "output_type": "error",
            "ename": etype,
            "evalue": evalue,
            "traceback": [f"\x1b[0;31m{l}\x1b[0m" for l in body],
        },
        indent=1,
    )


def pytest_style(tb: str) -> str:
    final = _final_line(tb).split("\n")
    out = ["    def test_training():", ">       train()", "", "tests/test_train.py:12: "]
    out += [f"E       {l}" for l in final]
    out.append(f"FAILED tests/test_train.py::test_training - {final[0]}")
    return "\n".join(out)


def last_line(tb: str) -> str:
    return _final_line(tb).split("\n")[0]


def commentary_en(tb: str) -> str:
    return f"Hi, I get this error when I run my training script:\n\n```\n{tb}\n```\n\nAny idea how to fix it? Thanks!"


def commentary_zh(tb: str) -> str:
    return f"大佬们，跑训练脚本的时候报错了，求助：\n{tb}\n请问这是什么原因？"


def windows_paths(tb: str) -> str:
    def win(m: re.Match) -> str:
        path = m.group(2).replace("/", "\\")
        path = re.sub(r"^\\.*?\\site-packages", r"C:\\Users\\me\\anaconda3\\envs\\dl\\Lib\\site-packages", path)
        if not path[1:3] == ":\\":
            path = "D:\\work" + (path if path.startswith("\\") else "\\" + path)
        return f'{m.group(1)}File "{path}", line {m.group(3)}, in {m.group(4)}'

    return "\n".join(_FRAME.sub(win, l) for l in tb.split("\n"))


def dataloader_worker(tb: str) -> str:
    final = _final_line(tb)
    etype = final.split(":", 1)[0]
    inner = tb.rstrip("\n").replace(
        "Traceback (most recent call last):", "Original Traceback (most recent call last):", 1
    )
    return (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 40, in <module>\n'
        "    for batch in loader:\n"
        '  File "/usr/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1480, in _process_data\n'
        "    data.reraise()\n"
        '  File "/usr/lib/python3.11/site-packages/torch/_utils.py", line 733, in reraise\n'
        "    raise exception\n"
        f"{etype}: Caught {etype.split('.')[-1]} in DataLoader worker process 0.\n{inner}\n"
    )


def chained_cause(tb: str) -> str:
    return (
        tb.rstrip("\n") + "\n\nThe above exception was the direct cause of the following exception:\n\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 88, in <module>\n'
        "    run(cfg)\n"
        '  File "train.py", line 61, in run\n'
        '    raise TrainingFailed(f"step {step} failed") from exc\n'
        "TrainingFailed: step 12 failed\n"
    )


_LIBRARY_PATH = re.compile(r"site-packages|dist-packages|[\\/]lib[\\/]python\d")
# what other entries' signals and evidence look for, written into the user's own code: a keyword
# argument list of a diffusers call, a device, a comment naming GradScaler, backward(), NaN
_DECOY_KWARGS = ', revision="fp16", torch_dtype=torch.float16, device="cuda:0")'
_DECOY_COMMENT = "  # fp16 on cuda, then backward() with GradScaler and autocast; NaN loss? inplace op?"


def code_mentions_other_errors(tb: str) -> str:
    """The user's code lines (the line shown under each frame outside the installed libraries)
    rewritten to mention other entries' words: a call gains ``revision="fp16", torch_dtype=...,
    device="cuda:0"``, every such line a comment naming GradScaler, backward(), NaN. What torch
    printed is unchanged, so the answer must be too: signals come from torch's output, not from the
    user's code."""
    out, user_frame = [], False
    for line in tb.split("\n"):
        m = _FRAME.match(line)
        if m:
            user_frame = not _LIBRARY_PATH.search(m.group(2))
            out.append(line)
            continue
        if user_frame and line.startswith("    ") and line.strip() and not re.match(r"^\s*[\^~]+\s*$", line):
            code = line.rstrip()
            if code.endswith(")") and not code.lstrip().startswith("raise "):
                code = code[:-1] + _DECOY_KWARGS
            line = code + _DECOY_COMMENT
        user_frame = False
        out.append(line)
    return "\n".join(out)


FORMATS = {
    "standard": standard,
    "flattened": flattened,
    "ansi": ansi,
    "rank_prefixed": rank_prefixed,
    "logged": logged,
    "ipython8": ipython8,
    "jupyter_json": jupyter_json,
    "pytest": pytest_style,
    "last_line": last_line,
    "commentary_en": commentary_en,
    "commentary_zh": commentary_zh,
    "windows_paths": windows_paths,
    "dataloader_worker": dataloader_worker,
    "chained_cause": chained_cause,
    "code_mentions_other_errors": code_mentions_other_errors,
}
