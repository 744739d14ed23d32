"""A seeded mutator of real tracebacks: the fuzz test and ``tests/bench/fuzz_explain.py`` share it.

Mutations are the shapes that hurt backtracking parsers: long runs of one character (spaces, tabs,
digits and separators, brackets, quotes, box borders, markers), spans deleted or repeated, unclosed
brackets, lines joined or cut, escape sequences, lines from another paste.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
RUNS = [
    " ",
    "\t",
    "\n",
    "(",
    "0, ",
    "0x",
    "[",
    "'",
    '"',
    "`",
    "|",
    "│ ",
    "^",
    "~",
    "x",
    ":",
    "\x1b[",
    "中",
    "-",
    ".",
    'File "',
    "Error: ",
    " of ",
    "a.",
    '\\"',
    "\n\t",
]
LENGTHS = (10, 100, 1000, 3000)
# what a JSON string may carry that Python holds but UTF-8 cannot write (lone surrogates), a pair
# escaped apart, NUL, every control class, bidi and invisible characters, a cut escape
ESCAPES = [
    "\\ud800",
    "\\udfff",
    "\\udc80x",
    "\\ud83d\\ude00",
    "\\ude00\\ud83d",
    "\\u0000",
    "\\u001b[31m",
    "\\u009b",
    "\\u0085",
    "\\u2028",
    "\\u202e",
    "\\u2066",
    "\\udb40\\udc41",
    "\\ufeff",
    "\\u",
    "\\",
    "\\x00",
]
# the same, raw in the text (a lone surrogate is what ``surrogateescape`` makes of an undecodable byte)
RAW = ["\ud800", "\udcff", "\x00", "\x1b]8;;x\x07", "\x85", "\u2028", "\u202e", "\U000e0041", "\ufffe", "\x7f"]


def wrap(text: str, rnd: random.Random) -> str:
    """``text`` inside what one of the parser's decoders reads (a notebook's error output, an error
    object as VS Code copies it, a JSON log record's ``exc_info``), with escapes spliced into it."""
    body = json.dumps(text)[1:-1]
    for _ in range(rnd.randint(1, 6)):
        at = rnd.randint(0, len(body))
        body = body[:at] + rnd.choice(ESCAPES) + body[at:]
    kind = rnd.randrange(4)
    if kind == 0:
        lines = body.split("\\n")
        joined = '", "'.join(lines)
        return f'{{"ename": "RuntimeError", "evalue": "{lines[-1]}", "traceback": ["{joined}"]}}'
    if kind == 1:
        return f'{{"name": "RuntimeError", "message": "{body[-80:]}", "stack": "{body}"}}'
    if kind == 2:
        return f'{{"level": "error", "exc_info": "Traceback (most recent call last):\\n{body}"}}'
    return body


def seeds() -> list[str]:
    """The real pastes of the repository: fixture pastes, the parser's format cases, and the
    benchmarks' reproducer tracebacks (``data/bench_pastes.jsonl``) when present."""
    from .conftest import read_cases

    out = [p.read_text(encoding="utf-8") for p in sorted((FIXTURES / "pastes").glob("*.txt"))]
    out += [paste for _title, paste, _expect in read_cases(FIXTURES / "parser" / "formats.txt") if paste.strip()]
    bench = ROOT / "data" / "bench_pastes.jsonl"
    if bench.exists():
        out += [json.loads(line)["text"] for line in bench.read_text(encoding="utf-8").splitlines() if line.strip()]
    return out


def mutate(text: str, rnd: random.Random, others: list[str] | None = None) -> str:
    for _ in range(rnd.randint(1, 4)):
        n = len(text)
        at = rnd.randint(0, n)
        op = rnd.randrange(9)
        if op == 0:  # a long run of one shape
            text = text[:at] + rnd.choice(RUNS) * rnd.choice(LENGTHS) + text[at:]
        elif op == 1 and n:  # a span deleted
            text = text[:at] + text[at + rnd.randint(1, 200) :]
        elif op == 2 and n:  # a span repeated
            span = text[at : at + rnd.randint(1, 80)]
            text = text[:at] + span * rnd.randint(2, 60) + text[at:]
        elif op == 3:  # whitespace changed everywhere
            text = text.replace(" ", rnd.choice(["  ", "\t", " \t", "   "]))
        elif op == 4 and n:  # cut
            text = text[:at] if rnd.random() < 0.5 else text[at:]
        elif op == 5:  # flattened, or every line wrapped in a box
            text = " ".join(text.split("\n")) if rnd.random() < 0.5 else "\n".join(f"│ {l} │" for l in text.split("\n"))
        elif op == 6:  # closing brackets and quotes removed
            text = text.translate({ord(c): None for c in rnd.choice([")", "]", "'", '"', ")]'\""])})
        elif op == 7 and rnd.random() < 0.3:  # into a decoder's JSON, or raw characters spliced in
            if rnd.random() < 0.5:
                text = wrap(text, rnd)
            else:
                text = text[:at] + rnd.choice(RAW) * rnd.randint(1, 3) + text[at:]
        elif op == 7 and others:  # a line from another paste
            other = rnd.choice(others).split("\n")
            text = text[:at] + "\n" + rnd.choice(other) + "\n" + text[at:]
        else:  # a run inside the final message
            last = text.rstrip().rfind("\n") + 1
            text = (
                text[:last]
                + rnd.choice(["RuntimeError: ", "ValueError: ", ""])
                + text[last:]
                + rnd.choice(RUNS) * rnd.choice(LENGTHS)
            )
    return text[:200_000]


def mutations(count: int, seed: int = 0):
    """``count`` mutated pastes, the same ones for the same seed."""
    base = seeds()
    rnd = random.Random(seed)
    for _ in range(count):
        yield mutate(rnd.choice(base), rnd, base)
