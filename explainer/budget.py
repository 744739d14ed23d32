"""A time budget for one explanation.

The parser and the matcher call :meth:`Budget.spent` between their steps (parser passes, every few
hundred lines of the scan, message sources, candidate patterns, signal expressions); once the
deadline has passed they stop and return what they have, and the answer is marked partial. No
thread is involved: the cost between two checks is bounded because every regular expression applied
to user text is linear and every input is capped (see :mod:`explainer.knowledge.attack`).
"""

from __future__ import annotations

import time

DEFAULT_BUDGET_S = 0.2


class Budget:
    """A deadline; ``cut`` becomes true the first time a step stops because of it."""

    __slots__ = ("deadline", "seconds", "cut")

    def __init__(self, seconds: float | None = DEFAULT_BUDGET_S) -> None:
        self.seconds = seconds
        self.deadline = None if seconds is None else time.monotonic() + seconds
        self.cut = False

    def spent(self, reserve: float = 0.0) -> bool:
        """Whether the deadline has passed; with ``reserve`` (a share of the budget), whether it is
        that close to passing: the parser keeps a quarter of the budget for the matcher, so that a
        paste that takes long to read is still matched."""
        if self.deadline is None:
            return False
        assert self.seconds is not None  # a deadline comes from seconds
        if time.monotonic() > self.deadline - reserve * self.seconds:
            self.cut = True  # whoever stops now returns less than it would have: the answer is partial
            return True
        return False

    def setup(self, fn):
        """``fn()``, with the time it takes left out of the budget: one-time work of the process
        (building the matcher on the first explanation) is no part of this paste's cost, and under
        load it could otherwise spend the whole budget before the first pattern is tried."""
        start = time.monotonic()
        try:
            return fn()
        finally:
            if self.deadline is not None:
                self.deadline += time.monotonic() - start


PARSE_RESERVE = 0.25  # the share of the budget the parser leaves to the matcher


UNLIMITED = None  # pass ``budget=UNLIMITED`` (None) for no deadline
