"""Turn any pasted text into the plain traceback model. Never raises. This module is the parser's face;
the work happens in three passes over bounded input, each a module of this package:

1. *clean* (:mod:`explainer.parse.clean`): decode notebook JSON, drop ANSI codes, Markdown fences, rich box borders and the
   prefixes that launchers, loggers and pytest put before every line; re-split pastes that lost
   their newlines;
2. *scan* (:mod:`explainer.parse.scan`): one pass over the lines with the table ``LINE_RULES``, small named rules in the order of
   the grammar over a :class:`Scan` state: frame headers of every style and their code lines,
   exception lines and their messages, chain separators, worker re-raises, signal lines (NCCL, CUDA
   assertions, signals, C++ frames, warnings); the first rule that takes a line says where the scan
   goes on. What they find is a list of events;
3. *assemble* (:mod:`explainer.parse.assemble`): pick the exception the user should read first, the chain before it, the other
   tracebacks in the paste, and mark library frames.

Every regular expression here is linear: no two quantifiers can take the same characters (where
they could, the first one is possessive, ``*+`` / ``++``, or the work is done in plain code), lines
are capped at ``MAX_LINE`` before they are matched and the paste at ``MAX_CHARS``
(:mod:`explainer.parse.state`). ``tests/test_reliability.py`` attacks every expression of these
modules at those caps with the inputs of :mod:`explainer.knowledge.attack`.

A :class:`~explainer.budget.Budget` bounds the time of one parse: it is checked between the passes
and every ``_CHECK_LINES`` lines of the scan; once it is spent, the scan goes on with the last
``_TAIL_LINES`` lines only (the final exception is at the end) and the answer is marked partial.
"""

from explainer.parse.assemble import lang_hint, parse_text
from explainer.parse.clean import strip_prefixes
from explainer.parse.grammar import is_library
from explainer.parse.state import MAX_CHARS, MAX_FLAT_LINE, MAX_LINE, MAX_MESSAGE_LINES

__all__ = [
    "MAX_CHARS",
    "MAX_FLAT_LINE",
    "MAX_LINE",
    "MAX_MESSAGE_LINES",
    "is_library",
    "lang_hint",
    "parse_text",
    "strip_prefixes",
]
