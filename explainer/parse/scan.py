"""Pass 2 of the parser, *scan*: one pass over the cleaned lines with ``LINE_RULES``, small named
rules in the order of the grammar over a :class:`Scan` state (frame headers of every style and their
code lines, exception lines and their messages, chain separators, worker re-raises, signal lines);
the first rule that takes a line says where the scan goes on. What they find is a list of events."""

from __future__ import annotations

import re

from explainer.budget import PARSE_RESERVE, Budget
from explainer.model import Frame, Signal
from explainer.parse.state import (
    _CHATTY,
    _CHECK_CHARS,
    _CHECK_LINES,
    _CJK,
    _IPY_HEADER,
    _TAIL_LINES,
    _TB_TEXT,
    MAX_MESSAGE_LINES,
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
        Lazy(r"Assertion `?(?:(?!Assertion)[^\n]){0,400}`? failed\.|device-side assert|CUDA kernel errors", re.I),
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
    ("terminate", Lazy(r"terminate called after throwing")),
]


# every signal expression above contains one of these words: lines without any skip the expressions.
# Matched against the lower-cased line: an IGNORECASE alternation is several times slower.
_SIGNAL_WORDS = Lazy(
    "assert|cuda kernel|nccl|watchdog|killed|segmentation|bus error|core dumped|sig|exitcode|oom|shm|shared memory|terminate called"
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


def _is_structural(line: str) -> bool:
    """Whether ``line`` ends the message above it: one of the line rules that start a new part of a
    traceback would take it (derived from ``LINE_RULES``: each rule says so with :func:`ends_message`)."""
    # most lines hold none of the words a rule's start needs: one search over their union says so
    return _STRUCTURAL_WORDS.search(line) is not None and any(starts(line) for starts in _STRUCTURAL)


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


# The line rules, in the order of the grammar. Each gets the scan, the line and the line stripped;
# it returns the index of the next line to read when the line is its own, or None to let the next
# rule look at it. A line no rule takes is skipped.


@ends_message(None)
def _blank(st: Scan, line: str, s: str) -> int | None:
    return st.i + 1 if not s else None


@ends_message(lambda line: line == "+--group--", needs=("+--group--",))
def _group_marker(st: Scan, line: str, s: str) -> int | None:
    """The marker ``clean`` puts where an ExceptionGroup's box starts a sub-exception."""
    if s != "+--group--":
        return None
    if st.events:
        st.events[-1].kind = "group"
    st.relation = "group"
    return st.i + 1


@ends_message(None)
def _signal_line(st: Scan, line: str, s: str) -> int | None:
    """Notes a line that tells something by itself (NCCL, a device-side assert, a signal); the line
    still goes to the rules after this one."""
    if len(st.signals) < MAX_SIGNALS and _SIGNAL_WORDS.search(s.lower()):
        rx: Lazy | re.Pattern[str]
        for kind, rx in _SIGNAL_RES:
            if rx.search(s):
                st.signals.append(Signal(kind, s[:500]))
                break
    return None


@ends_message(
    lambda line: ("frame #" in line or "Exception raised from" in line) and bool(_CPP.match(line)),
    needs=("frame #", "Exception raised from"),
)
def _cpp_frame(st: Scan, line: str, s: str) -> int | None:
    """A C++ stack line (``frame #3: ...``, "Exception raised from ..."): one signal per run of them."""
    if not (("frame #" in line or "Exception raised from" in line) and _CPP.match(line)):
        return None
    if len(st.signals) < MAX_SIGNALS and not any(x.kind == "cpp_frame" for x in st.signals[-3:]):
        st.signals.append(Signal("cpp_frame", s[:300]))
    st.hints.add("cpp_frames")
    return st.i + 1


@ends_message(None)
def _ipython_header(st: Scan, line: str, s: str) -> int | None:
    """IPython's ``ValueError      Traceback (most recent call last)``: the type comes first."""
    m = _IPY_HEADER.match(line) if _TB_TEXT in line else None
    if not m:
        return None
    st.hints.add("ipython")
    st.in_tb, st.frames, st.pending_type = True, [], m.group(1)
    return st.i + 1


@ends_message(lambda line: _TB_TEXT in line and bool(_TB_START.match(line)), needs=(_TB_TEXT,))
def _traceback_start(st: Scan, line: str, s: str) -> int | None:
    """``Traceback (most recent call last):``, and a DataLoader worker's ``Original Traceback``."""
    if not (_TB_TEXT in line and _TB_START.match(line)):
        return None
    if "Original" in s:
        st.hints.add("dataloader_worker")
        if st.events and _WORKER.search(st.events[-1].message or ""):
            st.events[-1].kind = "worker"
        if st.events and st.events[-1].kind == "worker":
            st.relation = "worker"
    st.in_tb, st.frames = True, []
    return st.i + 1


@ends_message(
    lambda line: "above exception" in line and bool(_CAUSE.search(line) or _CONTEXT.search(line)),
    needs=("above exception",),
)
def _chain_marker(st: Scan, line: str, s: str) -> int | None:
    """ "The above exception was the direct cause ..." / "During handling of the above exception ..."."""
    if "above exception" not in s:
        return None
    if _CAUSE.search(s):
        st.relation = "cause"
    elif _CONTEXT.search(s):
        st.relation = "context"
    else:
        return None
    st.hints.add("chained")
    return st.i + 1


@ends_message(
    lambda line: (
        ("File " in line or " in " in line or "Cell In" in line or "Input In" in line or ".py(" in line)
        and any(rx.match(line) for _, rx in _FRAME_RES)
    ),
    needs=("File ", " in ", "Cell In", "Input In", ".py("),
)
def _frame_header(st: Scan, line: str, s: str) -> int | None:
    """A frame in any of the styles of ``_FRAME_RES``, with its code line when one follows."""
    if not ("File " in line or " in " in line or "Cell In" in line or "Input In" in line or ".py(" in line):
        return None
    for style, rx in _FRAME_RES:  # noqa: B007 - the matching style is read below
        fm = rx.match(line)
        if fm:
            break
    else:
        return None
    lines, i = st.lines, st.i
    if style != "standard":
        st.hints.add(style)
    gd = fm.groupdict()
    if not st.frames and not st.events and i > 0 and _is_code(lines[i - 1]):
        # a paste cut at the top often starts with the user's own code line
        st.frames.append(Frame("<truncated>", None, None, lines[i - 1].strip(), False))
    code = (gd.get("code") or "").strip() or None
    focus = None
    # the code sits on the next line unless the frame header carried it (flattened pastes)
    if code is None and i + 1 < len(lines):
        nxt = lines[i + 1]
        if (
            nxt.startswith((" ", "\t"))
            and nxt.strip()
            # deeper than the header: in a traceback indented as a whole (a quoted reply, Markdown's
            # indented code) the exception line after a frame without code is not its code
            and _indent(nxt) > _indent(line)
            and not _is_structural(nxt)
            and not _MARKERS.match(nxt)
            and not ("->" in nxt and _ARROW.match(nxt))
            and not _IPY_CONTEXT.match(nxt)
        ):
            code = nxt.strip()
            i += 1
            if i + 1 < len(lines):
                focus = caret_focus(nxt, lines[i + 1])
    file = gd["file"].strip()
    line_no = int(gd["line"]) if gd.get("line") else None
    st.frames.append(Frame(file, line_no, (gd.get("func") or "").strip() or None, code, is_library(file), focus))
    st.in_tb = True
    return i + 1


@ends_message(None)
def _ipython_arrow(st: Scan, line: str, s: str) -> int | None:
    """IPython's ``----> 12 loss.backward()``: the line and code of the frame above it."""
    m = _ARROW.match(line) if "->" in line else None
    if not (m and st.frames):
        return None
    f = st.frames[-1]
    st.frames[-1] = Frame(
        f.file, f.line or int(m.group("line")), f.function, f.code or m.group("code").strip() or None, f.library
    )
    return st.i + 1


@ends_message(None)
def _traceback_filler(st: Scan, line: str, s: str) -> int | None:
    """Inside a traceback: carets, "[Previous line repeated N more times]", IPython's context lines,
    "N frames", an ellipsis."""
    if st.in_tb and (
        _MARKERS.match(line)
        or _REPEATED.match(line)
        or _IPY_CONTEXT.match(line)
        or _N_FRAMES.match(line)
        or _ELLIPSIS.match(line)
    ):
        return st.i + 1
    return None


@ends_message(lambda line: line.startswith(">") and bool(_PYTEST_SRC.match(line)), needs=(">",))
def _pytest_source(st: Scan, line: str, s: str) -> int | None:
    """pytest's ``>       loss.backward()``: the code of the frame above it."""
    m = _PYTEST_SRC.match(line) if line.startswith(">") else None
    if not m:
        return None
    st.hints.add("pytest")
    if st.frames and not st.frames[-1].code:
        f = st.frames[-1]
        st.frames[-1] = Frame(f.file, f.line, f.function, m.group("code").strip(), f.library)
    return st.i + 1


@ends_message(None)
def _pytest_location(st: Scan, line: str, s: str) -> int | None:
    """pytest's ``train.py:12: RuntimeError`` under a failure: the type is on the ``E`` lines."""
    return st.i + 1 if ".py:" in s and _PYTEST_LOC.match(s) else None


@ends_message(None)
def _debugger_header(st: Scan, line: str, s: str) -> int | None:
    """VS Code's "Exception has occurred: X", the message on the lines after it."""
    m = _VSCODE.match(line) if _debugger_words(line) else None
    if not m:
        return None
    st.hints.add("debugger")
    msg_lines, j = _collect(st.lines, st.i + 1, MAX_MESSAGE_LINES)
    st.add_exc(m.group("type"), "\n".join(msg_lines) or None, kind="debugger")
    st.pending_type = None
    return j


@ends_message(lambda line: "terminate called" in line and bool(_TERMINATE.search(line)), needs=("terminate called",))
def _cpp_terminate(st: Scan, line: str, s: str) -> int | None:
    """ "terminate called after throwing an instance of 'c10::Error'", then ``what():  message``."""
    m = _TERMINATE.search(s) if "terminate called" in s else None
    if not m:
        return None
    lines, n = st.lines, len(st.lines)
    j = st.i + 1
    while j < n and not lines[j].strip():
        j += 1
    wm = _WHAT.match(lines[j]) if j < n else None
    if wm is None:
        inline = _WHAT_INLINE.search(s)
        msg = inline.group("msg") if inline else None
        j = st.i
    else:
        msg = wm.group("msg")
    extra, k = _collect(lines, j + 1, 10, _is_exc_line)
    st.add_exc(m.group("type"), "\n".join([msg or "", *extra]).strip() or None, kind="terminate")
    return k


@ends_message(
    lambda line: line.startswith(("FAILED ", "ERROR ")) and bool(_FAILED_SUMMARY.match(line)),
    needs=("FAILED ", "ERROR "),
)
def _pytest_summary(st: Scan, line: str, s: str) -> int | None:
    """``FAILED test_x.py::test_y - RuntimeError: ...``: an exception, cut; a full one wins over it."""
    m = _FAILED_SUMMARY.match(s) if s.startswith(("FAILED ", "ERROR ")) else None
    if not m:
        return None
    st.hints.add("pytest")
    em = _EXC_LINE.match(m.group("rest"))
    if em and em.group("msg") is not None and _looks_like_type(em.group("type"), False):
        st.add_exc(em.group("type"), em.group("msg").strip(), kind="summary")
    return st.i + 1


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


@ends_message(None)
def _warning(st: Scan, line: str, s: str) -> int | None:
    """``path.py:148: UserWarning: message`` as ``warnings`` prints it, the message maybe on more
    lines, then the source line that warned, indented by two (``  warnings.warn(...)``): skipped."""
    m = _WARNING_LINE.match(s) if "Warning" in s else None
    if not m:
        return None
    first = m.group("msg").strip()
    source = _indent(line) + 2

    def ends(nxt: str) -> bool:
        t = nxt.strip()
        return (
            _indent(nxt) >= source
            or t.startswith("warnings.warn")
            or ("Warning" in t and bool(_WARNING_LINE.match(t)))
            or _is_exc_line(t)
        )

    more, j = _collect(st.lines, st.i + 1, 8 - bool(first), ends)
    if j < len(st.lines) and (_indent(st.lines[j]) >= source or st.lines[j].strip().startswith("warnings.warn")):
        j += 1
    st.signals.append(Signal("warning", s[:500]))
    st.add_exc(m.group("type"), " ".join([first, *more] if first else more) or None, warning=True)
    return j


@ends_message(None)
def _pycharm_trailer(st: Scan, line: str, s: str) -> int | None:
    """PyCharm's ``python-BaseException`` after a traceback: not an exception of its own."""
    return st.i + 1 if s == "python-BaseException" else None


_HEADINGS = ("Error", "Exception", "Errors", "Exceptions")


@ends_message(None)
def _exception_line(st: Scan, line: str, s: str) -> int | None:
    """``Type: message`` (or a bare type after frames), the message running on over the next lines."""
    em = _EXC_LINE.match(line)
    after_frames = st.in_tb and bool(st.frames)
    if not (em and (em.group("msg") is not None or after_frames) and _looks_like_type(em.group("type"), after_frames)):
        return None
    exc_type: str | None = em.group("type")
    if exc_type in _HEADINGS and not after_frames and not (em.group("msg") or "").strip():
        return None  # "Error:" over what the poster shows next is a heading, not an exception of that name
    msg_lines, j = _message_lines(st, _trim_commentary((em.group("msg") or "").strip()))
    message = "\n".join(msg_lines).strip() or None
    if exc_type == "python-BaseException":
        exc_type = None
    if st.pending_type and exc_type == st.pending_type:
        st.pending_type = None
    st.add_exc(exc_type, message)
    if message and _WORKER.search(message) and "Original Traceback" in message:
        st.events[-1].kind = "worker"
    return j


def _message_lines(st: Scan, first: str) -> tuple[list[str], int]:
    """An exception's message from its first line on, and the index of the line after it. It ends
    at a structural line, another exception or warning, another logger's or tool's line, a closing
    delimiter, the poster's own words, or a blank line that no continuation of torch's follows."""
    lines, tags, i, n = st.lines, st.tags, st.i, len(st.lines)
    msg_lines = [first] if first else []
    j = i + 1
    # a message that starts empty continues after one blank line (spawn's bootstrapping text,
    # indented); the poster's words after a bare exception do not ("StopIteration", blank, "I...")
    if (
        not first
        and j + 1 < n
        and not lines[j].strip()
        and lines[j + 1].strip()
        and (
            lines[j + 1].startswith((" ", "\t"))
            or not (_CHATTY.search(lines[j + 1].lower()) or (not lines[j + 1].isascii() and _CJK.search(lines[j + 1])))
        )
    ):
        j += 1
    had_frames = bool(st.frames)
    while j < n and len(msg_lines) < MAX_MESSAGE_LINES:
        nxt = lines[j]
        if not nxt.strip():
            # torch often adds a hint paragraph after up to two blank lines (torch.load's
            # weights-only messages leave two); commentary is not that
            k = j + 1
            while k < n and not lines[k].strip() and k - j < 3:
                k += 1
            if k < n and k - j < 3 and had_frames and _continues(lines[k]):
                msg_lines.append("")
                j = k
                continue
            break
        indented = nxt.startswith((" ", "\t"))
        # another logger's line ends it; an indented one wraps the message
        if tags and tags[j] != tags[i] and (tags[j] or not indented):
            break
        if _is_structural(nxt) or nxt.strip() == "python-BaseException":
            break
        opens_more = bool(msg_lines) and msg_lines[-1].rstrip().endswith(("raised:", "error:"))
        if (not opens_more and not indented and _is_exc_line(nxt)) or (
            "Warning" in nxt and _WARNING_LINE.match(nxt.strip())
        ):
            break
        if (_debugger_words(nxt) and _VSCODE.match(nxt)) or _tool_log_line(lines, j):
            break  # "wandb: Synced run ...": another tool's log lines after the error
        if not any(ch.isalnum() for ch in nxt) and _ends_message(lines, j + 1):
            break  # a closing delimiter of the poster's (">>", "---", a code fence), not the message
        if (
            not indented
            and not nxt.isascii()
            and all(m.isascii() for m in msg_lines)
            and (_CHATTY.search(nxt) or _chinese_prose(nxt))
            and _CJK.search(nxt)
        ):
            break  # the poster's words in Chinese right under an English message
        msg_lines.append(nxt.strip() if not nxt.startswith("\t") else nxt.rstrip())
        j += 1
    return msg_lines, j


def _chinese_prose(line: str) -> bool:
    """A line written mostly in Chinese (a path or a key with a Chinese name in it is not)."""
    han = len(_CJK.findall(line))
    return han >= 4 and han * 3 >= sum(1 for ch in line if ch.isalnum())


@ends_message(None)
def _inline_exception(st: Scan, line: str, s: str) -> int | None:
    """An exception quoted in commentary or logged as a repr: "I get 'RuntimeError: ...' when ...",
    ``ERROR job 7: got RuntimeError('...')``."""
    im = _INLINE_EXC.search(line) if ("Error" in line or "Exception" in line) else None
    if not im:
        return None
    end = st.i
    rest = line[im.end() :]
    quote = im.group("q")
    if quote:  # a repr: the message ends at its closing quote and parenthesis
        cut = rest.find(quote + ")")
        rest = (rest[:cut] if cut >= 0 else rest).replace("\\" + quote, quote).replace("\\n", "\n")
    opener = im.group("open")
    closer = None if im.group("shut") or quote else _CLOSERS.get(opener)
    if closer and closer not in rest:
        # a quoted message wrapped onto the next lines: it goes on to its closing quote
        for j in range(st.i + 1, min(len(st.lines), st.i + 1 + _QUOTED_LINES)):
            nxt = st.lines[j].strip()
            if not nxt or _is_structural(st.lines[j]):
                break
            if closer in nxt:
                rest, end = rest.rstrip() + " " + nxt, j
                break
    msg = _trim_commentary(rest.strip())
    if closer and closer in msg:
        if opener in ("**", "`"):
            msg = msg[: msg.rindex(closer)]
        else:  # the closing quote, not an apostrophe inside a word ("Can't")
            close = _CLOSING[closer].search(msg)
            msg = msg[: close.start()] if close else msg
    # commentary often goes on after the message: drop the sentences that talk to the reader
    sentences = _SENTENCE_END.split(msg.strip())
    while len(sentences) > 1 and _CHATTY.search(sentences[-1].lower()):
        sentences.pop()
    st.add_exc(im.group("type"), " ".join(sentences).strip().strip("*`") or None, kind="inline")
    return end + 1


LINE_RULES = (
    _blank,
    _group_marker,
    _signal_line,
    _cpp_frame,
    _ipython_header,
    _traceback_start,
    _chain_marker,
    _frame_header,
    _ipython_arrow,
    _traceback_filler,
    _pytest_source,
    _pytest_location,
    _debugger_header,
    _cpp_terminate,
    _pytest_summary,
    _warning,
    _pycharm_trailer,
    _exception_line,
    _inline_exception,
)


# the rules' own answers to "does this line end a message", in the grammar's order, and the union of
# the words their lines need
def structural(rules) -> tuple[tuple, Lazy]:
    """What :func:`_is_structural` reads, made from a table of rules: their ``ends_message`` tests and
    one expression for the union of their ``needs``."""
    starts = tuple(rule.ends_message for rule in rules if rule.ends_message is not None)
    words = Lazy("|".join(re.escape(w) for rule in rules if rule.ends_message for w in rule.needs))
    return starts, words


_STRUCTURAL, _STRUCTURAL_WORDS = structural(LINE_RULES)


def _scan(
    lines: list[str], tags: list[str] | None = None, budget: Budget | None = None
) -> tuple[list[_Event], list[Signal], set[str]]:
    """Pass 2: the line rules over the cleaned lines, in order; the events (exceptions, warnings),
    signal lines and format hints they found."""
    st = Scan(lines, tags)
    n = len(lines)
    next_check, chars = 0, 0
    while st.i < n:
        line = lines[st.i]
        if budget is not None:
            chars += len(line)
            if st.i >= next_check or chars > _CHECK_CHARS:
                next_check, chars = st.i + _CHECK_LINES, 0
                if st.i < n - _TAIL_LINES and budget.spent(PARSE_RESERVE):
                    # out of time: go on with the end of the paste, where the final exception is
                    st.i = n - _TAIL_LINES
                    st.forget()
                    continue
        s = line.strip()
        for rule in LINE_RULES:
            nxt = rule(st, line, s)
            if nxt is not None:
                st.i = nxt
                break
        else:
            st.i += 1
    _finish(st)
    return st.events, st.signals, st.hints


def _finish(st: Scan) -> None:
    """At the end of the paste: a type announced but never followed, frames with no exception after them."""
    if st.pending_type and not any(e.exc_type == st.pending_type for e in st.events):
        st.add_exc(st.pending_type, None)
    if st.frames and not st.events:
        st.add_exc(None, None, kind="truncated")  # the paste was cut before the exception line
    elif st.frames and not st.events[-1].frames:
        # the stack printed after the message: VS Code (innermost first), or a paste put together
        # as "error line, then the traceback"
        st.events[-1].frames = st.frames[::-1] if st.events[-1].kind == "debugger" else st.frames
