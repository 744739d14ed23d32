"""Pass 2 of the parser, *scan*: one pass over the cleaned lines with ``LINE_RULES``, small named
rules in the order of the grammar over a :class:`Scan` state (frame headers of every style and their
code lines, exception lines and their messages, chain separators, worker re-raises, signal lines);
the first rule that takes a line says where the scan goes on. What they find is a list of events."""

from __future__ import annotations

from explainer.budget import PARSE_RESERVE, Budget
from explainer.model import Signal
from explainer.parse.grammar import Scan, _Event, use_rules
from explainer.parse.rules import (
    _blank,
    _chain_marker,
    _cpp_frame,
    _cpp_terminate,
    _debugger_header,
    _exception_line,
    _frame_header,
    _group_marker,
    _inline_exception,
    _ipython_arrow,
    _ipython_header,
    _pycharm_trailer,
    _pytest_location,
    _pytest_source,
    _pytest_summary,
    _signal_line,
    _traceback_filler,
    _traceback_start,
    _warning,
)
from explainer.parse.state import (
    _CHECK_CHARS,
    _CHECK_LINES,
    _TAIL_LINES,
)

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


use_rules(LINE_RULES)  # the rules' own answers to "does this line end a message" (grammar.py)


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
