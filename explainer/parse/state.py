"""The parser's limits and the few expressions and constants its passes share (the text of a
traceback's header, the launcher prefixes, the budget's rhythm, Chinese and chatty lines)."""

from __future__ import annotations

from explainer.textio import (
    Lazy,
)

MAX_CHARS = 300_000  # keep the tail of longer pastes: the final exception is at the end


MAX_LINE = 6_000  # longer lines are cut (a message's identifying words come first)


MAX_FLAT_LINE = 64_000  # a line of a paste that lost its newlines, before it is split back into lines


MAX_MESSAGE_LINES = 40


MAX_NOTEBOOK_STRINGS = 20_000  # strings read from a notebook's cut JSON (a traceback has far fewer)


_TB_TEXT = "Traceback (most recent call last)"


_IPY_HEADER = Lazy(r"^\s*((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)\s{3,}Traceback \(most recent call last\)")


_DISTRIBUTED = Lazy(r"^\[(?:rank|default)")


_CHECK_LINES = 256  # the budget is looked at after this many lines or this many characters


_CHECK_CHARS = 16_000


_TAIL_LINES = 400  # once the budget is spent, the lines still read (the end of the paste)


# a poster's own words (not "you" or "please": torch's messages say "if you need to", "Please file an issue")
_CHATTY = Lazy(
    r"\b(?:i|i'm|i've|my|we|our|me|thanks?|thank you|hello|hi|help|anyone|somebody|"
    r"trying to fix|how to|how can|why|any idea|solve|solution)\b|[?？]\s*$|我|请|谢谢|怎么|为什么|求助|大佬",
)


_CJK = Lazy(r"[\u4e00-\u9fff]")
