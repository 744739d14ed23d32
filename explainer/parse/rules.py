"""The scan's line rules, one small function per shape of line (a frame header of every style, a
chain marker, an exception line and its message, a warning, a signal line, ...), each marked with
whether its lines end the message above them (:func:`~explainer.parse.grammar.ends_message`). Their
order is the table ``LINE_RULES`` in :mod:`explainer.parse.scan`."""

from __future__ import annotations

import re

from explainer.model import Frame, Signal
from explainer.parse.grammar import (
    _ARROW,
    _CAUSE,
    _CLOSERS,
    _CLOSING,
    _CONTEXT,
    _CPP,
    _ELLIPSIS,
    _EXC_LINE,
    _FAILED_SUMMARY,
    _FRAME_RES,
    _INLINE_EXC,
    _IPY_CONTEXT,
    _MARKERS,
    _N_FRAMES,
    _PYTEST_LOC,
    _PYTEST_SRC,
    _QUOTED_LINES,
    _REPEATED,
    _SENTENCE_END,
    _SIGNAL_RES,
    _SIGNAL_WORDS,
    _TB_START,
    _TERMINATE,
    _VSCODE,
    _WARNING_LINE,
    _WHAT,
    _WHAT_INLINE,
    _WORKER,
    MAX_SIGNALS,
    Scan,
    _collect,
    _continues,
    _debugger_words,
    _ends_message,
    _is_code,
    _is_exc_line,
    _is_structural,
    _looks_like_type,
    _tool_log_line,
    _trim_commentary,
    caret_focus,
    ends_message,
    is_library,
)
from explainer.parse.state import (
    _CHATTY,
    _CJK,
    _IPY_HEADER,
    _TB_TEXT,
    MAX_MESSAGE_LINES,
)
from explainer.textio import (
    Lazy,
)


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
    if "pip-build-env-" in s[:500]:
        # printed inside pip's isolated build environment (torch there warns that it has no NumPy):
        # about that temporary environment, not the user's, so neither a signal nor an exception
        return j
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
    before = line[: im.start()]
    if before.count("(") > before.count(")"):
        # inside a parenthesis the line opened before the type ("*(fails: ModuleNotFoundError: No module
        # named 'torch')*"): its closing parenthesis (and emphasis) is the line's, not the message's
        bare = msg.rstrip("*_` ")
        if bare.endswith(")") and bare.count(")") > bare.count("("):
            msg = bare[:-1]
    # commentary often goes on after the message: drop the sentences that talk to the reader
    sentences = _SENTENCE_END.split(msg.strip())
    while len(sentences) > 1 and _CHATTY.search(sentences[-1].lower()):
        sentences.pop()
    st.add_exc(im.group("type"), " ".join(sentences).strip().strip("*`") or None, kind="inline")
    return end + 1
