"""What the scan's line rules share (:mod:`explainer.parse.rules`): the expressions of every
traceback line's shape, the small tests on lines (is it code, a type, an exception line, does it end a
message), and the :class:`Scan` state the rules read and write."""

from __future__ import annotations

import re

from explainer.model import Frame, Signal
from explainer.parse.state import (
    _CHATTY,
    _CJK,
)
from explainer.textio import (
    USER_CODE,
    Lazy,
)

_TB_START = Lazy(r"^\s*(?:Original )?Traceback \(most recent call last\):?\s*$")


_CAUSE = Lazy(r"The above exception was the direct cause of the following exception")


_CONTEXT = Lazy(r"During handling of the above exception, another exception occurred")


_WORKER = Lazy(r"Caught (\w+) in DataLoader worker process \d+")


_FRAME_RES = [
    # standard CPython: File "x.py", line 3, in f
    ("standard", Lazy(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>\S+))?\s*(?P<code>.*)$')),
    # IPython 8 / Spyder: File ~/x.py:12, in f(x)   File D:\a\b.py:581 in backward
    (
        "ipython",
        Lazy(
            r"^\s*File (?P<file>(?:[A-Za-z]:[\\/]|~|/|\.|\w)[^\n]*?):(?P<line>\d+),? in (?P<func>[\w<>.\[\]-]+)(?:\([^)]*\))?\s*(?P<code>.*)$"
        ),
    ),
    # Spyder's module-level frame: File D:\proj\train.py:30 (no function named)
    ("ipython", Lazy(r"^\s*File (?P<file>(?:[A-Za-z]:[\\/]|~|/|\.)[^\n:]*?\.pyx?):(?P<line>\d+)\s*$")),
    # IPython 8 cells: Cell In[3], line 5   /  Input In [3], in <cell line: 5>()
    ("ipython", Lazy(r"^\s*(?P<file>Cell In\s?\[\d*\]), line (?P<line>\d+)(?:, in (?P<func>[\w<>.]+))?")),
    ("ipython", Lazy(r"^\s*(?P<file>Input In \[\d*\]), in (?P<func>[^\n(]+)")),
    # old IPython / Colab: <ipython-input-9-abc> in <module>()   /path/x.py in f(a, b); IPython 7 drops
    # the parentheses of <module>
    (
        "ipython",
        Lazy(
            r"^\s*(?P<file><ipython-input-[\w-]+>|(?:[A-Za-z]:[\\/]|/|~)[^\n]*?\.pyx?) in (?P<func>[\w<>.]+)(?:\(.*)?$"
        ),
    ),
    # rich: /path/x.py:12 in f   (borders already removed)
    (
        "rich",
        Lazy(r"^\s*(?P<file>(?:[A-Za-z]:[\\/]|/|~)[^\s:]*(?: [^\s:]+)*\.py):(?P<line>\d+) in (?P<func>[\w<>.]+)\s*$"),
    ),
    # pdb / ipdb: > /path/x.py(12)forward()
    (
        "debugger",
        Lazy(r"^>?\s*(?P<file>(?:[A-Za-z]:[\\/]|/|~|\.)[^\s()]*\.py)\((?P<line>\d+)\)(?P<func>[\w<>]+)\(\)\s*$"),
    ),
    # pytest: path/x.py:12: in test_f
    ("pytest", Lazy(r"^(?P<file>[^\s:][^:\n]*\.py):(?P<line>\d+): in (?P<func>[\w<>.]+)\s*$")),
]


_ARROW = Lazy(r"^\s*-+>\s*(?P<line>\d+)\s(?P<code>.*)$")


_IPY_CONTEXT = Lazy(r"^\s{2,}\d+(?:\s|$)")  # a context line, empty ones too ("    117")


def caret_focus(code_line: str, marker_line: str) -> str | None:
    """The part of a code line that Python 3.11+'s ``^^^~~~`` line under it points at, or None.
    Plain string scanning (no regular expression): the columns of the first and last marker."""
    if len(marker_line) > 2000 or not marker_line.strip() or marker_line.strip(" ^~") or "^" not in marker_line:
        return None
    start = len(marker_line) - len(marker_line.lstrip(" "))
    end = len(marker_line.rstrip())
    piece = code_line[start:end].strip()
    return piece or None


_MARKERS = Lazy(r"^[\^~\s]++$")


_REPEATED = Lazy(r"^\s*\[Previous line repeated \d+ more times?\]")


_PYTEST_SRC = Lazy(r"^>\s{3,}(?P<code>\S.*)$")


_PYTEST_LOC = Lazy(r"^(?P<file>[^\s:][^:\n]*\.py):(?P<line>\d+): (?P<type>\w+)$")


_FAILED_SUMMARY = Lazy(r"^(?:FAILED|ERROR) \S+ - (?P<rest>.+)$")


_DEBUGGER_WORDS = ("Exception has occurred", "发生异常", "例外が発生しました")  # VS Code, in three languages


_VSCODE = Lazy(r"^\s*(?:" + "|".join(_DEBUGGER_WORDS) + r")\s*[:：]\s*(?P<type>[\w.]+)\s*$")


def _debugger_words(line: str) -> bool:
    return any(w in line for w in _DEBUGGER_WORDS)


_TERMINATE = Lazy(r"terminate called after throwing an instance of '(?P<type>[^']+)'")


_WHAT = Lazy(r"^\s*what\(\):\s*(?P<msg>.*)$")


_WARNING_LINE = Lazy(r"^(?P<file>\S[^\n]*?):(?P<line>\d+): (?P<type>\w*Warning): ?(?P<msg>.*)$")


_EXC_LINE = Lazy(r"^(?P<indent>\s*)(?P<type>(?:[A-Za-z_]\w*(?:\.|::))*[A-Za-z_]\w*)(?:(?:\s*[:：]\s?)(?P<msg>.*))?$")


_EXC_SUFFIX = Lazy(r"(?:Error|Exception|Warning|Exit|Interrupt|Failed|Unsupported|Missing|Iteration|Timeout|Exceeded)$")


_KNOWN_TYPES = {"KeyboardInterrupt", "StopIteration", "GeneratorExit", "SystemExit", "python-BaseException"}


# An exception quoted inside prose: the type may be glued to Chinese text (CJK characters are \w to
# Python's re, so only ASCII word characters may not precede it), wrapped alone in Markdown emphasis
# (**RuntimeError**: ...), followed by a colon with or without a space (full-width too), or written as
# its repr in a log line (got RuntimeError('...')). Starts are ASCII-word starts only: linear.
_INLINE_EXC = Lazy(
    r"(?P<open>\*\*|[`'\"“‘「]?)(?<![A-Za-z0-9_.])"
    r"(?P<type>(?:[A-Za-z_][A-Za-z0-9_]*+\.)*+[A-Z][A-Za-z0-9_]*?(?:Error|Exception))(?P<shut>\*\*|`)?"
    r"(?:\s*+[:：](?![:/])\s?|\((?P<q>['\"]))"
)


_QUOTED_LINES = 8  # a quoted message is looked for its closing quote this many lines on


_CLOSERS = {"**": "**", "`": "`", "'": "'", '"': '"', "“": "”", "‘": "’", "「": "」"}


# the closing quote of an inline message: followed by a space, punctuation or the end
_CLOSING = {c: Lazy(re.escape(c) + r"(?=\s|[.,;:)!?]|$)") for c in set(_CLOSERS.values())}


_SENTENCE_END = Lazy(r"(?<=[.!?。！？])\s+")


_CODEISH = Lazy(r"[.(=\[]")


_PARAGRAPH = Lazy(r"^(?:[A-Z][a-z]+ |\(\d\) |from user code:)")


_TYPE_SEP = Lazy(r"\.|::")


_CAMEL = Lazy(r"^[A-Z]\w*$")


_N_FRAMES = Lazy(r"^\s*+\d++ frames?\s*$")


_ELLIPSIS = Lazy(r"^\s*+\.\.\.\s*$")


_WHAT_INLINE = Lazy(r"what\(\):\s*+(?P<msg>.*)$")


_CPP = Lazy(r"^\s*(?:Exception raised from .* \(most recent call first\):|frame #\d+: )")


_SIGNAL_RES = [
    # (an assertion's text stops at the next "Assertion": a match from an earlier one would also be
    # one from that later one, and each character is then scanned from one start only)
    (
        "cuda_assert",
        # (a kernel's assertion line starts with its source file and function, also where a paste cuts it there)
        Lazy(
            r"Assertion `?(?:(?!Assertion)[^\n]){0,400}`? failed\.|device-side assert|CUDA kernel errors|\.cuh?:\d{1,6}: void ",
            re.I,
        ),
    ),
    (
        "nccl",
        Lazy(
            r"\bNCCL\b|ProcessGroupNCCL|Watchdog caught collective|ncclUnhandled|ncclSystemError|ncclInternalError",
            re.I,
        ),
    ),
    (
        "signal",
        Lazy(
            r"killed by signal|Segmentation fault|Bus error|core dumped|SIGKILL|SIGSEGV|SIGBUS|SIGABRT|Received signal|exitcode\s*:\s*-\d+|Killed$|OOM[- ]killer|out of shared memory|shm",
            re.I,
        ),
    ),
    (  # the process died in native code without a signal line: LLVM, a failed assertion in a system library
        "crash",
        Lazy(r"LLVM ERROR: |failed assertion `|Fatal Python error|Illegal instruction|Abort trap", re.I),
    ),
    ("terminate", Lazy(r"terminate called after throwing")),
]


# every signal expression above contains one of these words: lines without any skip the expressions.
# Matched against the lower-cased line: an IGNORECASE alternation is several times slower.
_SIGNAL_WORDS = Lazy(
    "assert|cuda kernel|: void |nccl|watchdog|killed|segmentation|bus error|core dumped|sig|exitcode|oom|shm|shared memory|terminate called"
    "|illegal instruction|abort trap|fatal python error|llvm error"
)


# ("site-packages" anywhere makes a path a library path, so "/torch/" needs no look-ahead for it)
_LIB = Lazy(
    r"(?:site-packages|dist-packages|[\\/]lib[\\/]python\d[\d.]*[\\/]|[\\/]Lib[\\/]|[\\/]pkgs[\\/]|"
    r"^<frozen |[\\/]torch[\\/]|^torch[\\/]|[\\/]importlib[\\/]|[\\/]\.pyenv[\\/]versions[\\/][^\\/]+[\\/]lib[\\/])"
)


def is_library(path: str) -> bool:
    return bool(_LIB.search(path))


class _Event:
    """An exception or warning found in the paste, with the frames read before it."""

    __slots__ = ("kind", "exc_type", "message", "relation", "frames", "warning")

    def __init__(
        self, kind: str, exc_type: str | None, message: str | None, frames: list[Frame], *, warning: bool = False
    ) -> None:
        self.kind = kind  # exc, inline, summary, terminate, debugger, truncated, worker, group
        self.exc_type = exc_type
        self.message = message
        self.relation: str | None = None
        self.frames = frames
        self.warning = warning


def _is_code(line: str) -> bool:
    text = line.strip()
    if not text or len(text) > 200 or text.endswith(":") or not _CODEISH.search(text) or not text.isascii():
        return False  # ("Traceback (most recent call last):" is the usual line before a first frame)
    try:
        compile(text, USER_CODE, "exec", dont_inherit=True)  # a syntax check only: never executed
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


_CJK_OR_FULLWIDTH = Lazy(r"[\u4e00-\u9fff，。？！；]")


def _trim_commentary(first: str) -> str:
    """An English message followed, on the same line, by Chinese words is a message plus the
    poster's comment ("... scalar outputs，请问怎么解决？"); a quoted Chinese path is not cut."""
    if not first or not first[0].isascii() or first.isascii():
        return first
    pos = singles = doubles = 0  # quotes before the current character, counted once
    for m in _CJK_OR_FULLWIDTH.finditer(first):
        singles += first.count("'", pos, m.start())
        doubles += first.count('"', pos, m.start())
        pos = m.start()
        if singles % 2 == 0 and doubles % 2 == 0:
            before = first[: m.start()]
            # a few ASCII words then Chinese is a translated message ("mat1 和 mat2 形状..."), kept
            return before.rstrip(" ,:;-—(（") if len(before.split()) >= 4 else first
    return first


_TOOL_PREFIX = Lazy(r"([a-z][a-z0-9_.-]{1,19}): \S")


def _tool_log_line(lines: list[str], j: int) -> bool:
    """A line of another tool's log ("wandb: ...", "mlflow: ..."): its lower-case ``name: `` prefix
    starts another line beside it too (a message's own "note: ..." line stands alone)."""
    m = _TOOL_PREFIX.match(lines[j])
    if not m:
        return False
    prefix = m.group(1) + ": "
    return any(lines[k].startswith(prefix) for k in range(max(0, j - 3), min(len(lines), j + 4)) if k != j)


def _ends_message(lines: list[str], k: int) -> bool:
    """After a line with no letters or digits: nothing more, or the poster's own words (a closing
    ``>>``, ``---`` or fence then "thanks"), not torch's next lines (torchrun's ``====`` tables)."""
    while k < len(lines) and not lines[k].strip():
        k += 1
    if k >= len(lines):
        return True
    s = lines[k].strip()
    return bool(_CHATTY.search(s.lower()) or (not s.isascii() and _CJK.search(s)))


def _continues(line: str) -> bool:
    """After a blank line inside an exception's message: does this line still belong to it?"""
    s = line.strip()
    if _is_structural(line):
        return False
    if line.startswith((" ", "\t")):
        return True  # torch indents the paragraphs of its long messages; commentary is rarely indented
    if _CHATTY.search(s.lower()) or (not s.isascii() and _CJK.search(s)):
        return False
    if s.startswith(
        ("Process finished with exit code", "python-BaseException", "During handling", "The above exception")
    ):
        return False
    if _is_exc_line(line):
        return False
    return bool(_PARAGRAPH.match(s))


def _is_exc_line(line: str) -> bool:
    """``Type: message`` where Type reads as an exception type: the start of another exception."""
    m = _EXC_LINE.match(line)
    return bool(m and m.group("msg") is not None and _looks_like_type(m.group("type"), False))


def _looks_like_type(name: str, after_frames: bool) -> bool:
    last = _TYPE_SEP.split(name)[-1]
    if name in _KNOWN_TYPES or _EXC_SUFFIX.search(last):
        return True
    if last == "error" and "." in name and name[0].isalpha():
        return True  # a module's lower-case exception class: cv2.error, socket.error, zmq.error
    # torch's own exception classes are not all named ...Error (GuardOnDataDependentSymNode,
    # FailOnRecompileLimitHit): a CamelCase class inside the torch package is one wherever it stands
    if name.startswith("torch.") and name.count(".") >= 2 and _CAMEL.match(last):
        return True
    # right after a traceback's frames, a dotted CamelCase name is an exception type too
    return after_frames and bool(_CAMEL.match(last)) and ("." in name or "::" in name)


def structural(rules) -> tuple[tuple, tuple[str, ...]]:
    """What :func:`_is_structural` reads, made from a table of rules, in its order: their
    ``ends_message`` tests and the union of their ``needs`` (a dozen words: substring tests cost less
    than compiling one alternation of them on every start)."""
    starts = tuple(rule.ends_message for rule in rules if rule.ends_message is not None)
    words = tuple(dict.fromkeys(w for rule in rules if rule.ends_message for w in rule.needs))
    return starts, words


def use_rules(rules) -> None:
    """Make ``rules`` (the scan's table, :data:`explainer.parse.scan.LINE_RULES`) the grammar whose
    structural lines end messages: called once, where the table is written."""
    global _STRUCTURAL, _STRUCTURAL_WORDS
    _STRUCTURAL, _STRUCTURAL_WORDS = structural(rules)


_STRUCTURAL: tuple = ()  # set by use_rules from the scan's table
_STRUCTURAL_WORDS: tuple[str, ...] = ()  # none until then


def _is_structural(line: str) -> bool:
    """Whether ``line`` ends the message above it: one of the line rules that start a new part of a
    traceback would take it (derived from ``LINE_RULES``: each rule says so with :func:`ends_message`)."""
    # most lines hold none of the words a rule's start needs: one search over their union says so
    return any(w in line for w in _STRUCTURAL_WORDS) and any(starts(line) for starts in _STRUCTURAL)


def ends_message(starts, *, needs: tuple[str, ...] = ()):
    """Mark a line rule with what it answers before a message goes on to a line: ``starts(line)`` is
    true where the rule would take the line as the start of a new part (a frame, a traceback, a chain
    marker), so the message above ends there; ``None`` for a rule whose lines can be part of a message.
    ``needs``: text one of which every such line holds (the cheap test run first). Every rule of
    ``LINE_RULES`` says one or the other (a test checks), so the grammar is written once."""

    def mark(rule):
        rule.ends_message, rule.needs = starts, needs
        return rule

    return mark


MAX_SIGNALS = 200


class Scan:
    """What the line rules read and write: the lines, the one being read (``i``), and what was
    found so far. ``frames`` are the frames since the last exception; ``relation`` is how the next
    exception relates to the one before it (cause, context, worker, group); ``pending_type`` is a
    type announced before its message (an IPython header, "Exception has occurred: X")."""

    __slots__ = ("lines", "tags", "i", "events", "signals", "hints", "frames", "in_tb", "relation", "pending_type")

    def __init__(self, lines: list[str], tags: list[str] | None = None) -> None:
        self.lines = lines
        self.tags = tags
        self.i = 0
        self.events: list[_Event] = []
        self.signals: list[Signal] = []
        self.hints: set[str] = set()
        self.frames: list[Frame] = []
        self.in_tb = False
        self.relation: str | None = None
        self.pending_type: str | None = None

    def add_exc(self, exc_type: str | None, msg: str | None, *, warning: bool = False, kind: str = "exc") -> None:
        """An exception (or warning) ends here: it takes the frames read since the last one."""
        ev = _Event(kind, exc_type, msg, self.frames, warning=warning)
        ev.relation = self.relation
        self.events.append(ev)
        self.frames, self.in_tb, self.relation = [], False, None

    def forget(self) -> None:
        """Drop the traceback being read (the scan jumps ahead)."""
        self.frames, self.in_tb, self.relation, self.pending_type = [], False, None, None


def _collect(lines: list[str], j: int, limit: int, stop=None) -> tuple[list[str], int]:
    """The lines from ``j`` on, stripped, up to a blank or structural line or one that ``stop``
    accepts, at most ``limit`` of them; and the index of the line after them."""
    out: list[str] = []
    n = len(lines)
    while j < n and len(out) < limit and lines[j].strip() and not _is_structural(lines[j]):
        if stop is not None and stop(lines[j]):
            break
        out.append(lines[j].strip())
        j += 1
    return out, j
