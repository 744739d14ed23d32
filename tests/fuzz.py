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
