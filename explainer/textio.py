"""Turning raw bytes into text the parser can read, within fixed bounds.

* Reading keeps the last ``MAX_PASTE_BYTES`` of an input (the final exception is at the end): a
  regular file is read from its tail (one seek), a stream (a pipe, ``/dev/zero``) is read up to
  ``MAX_STREAM_BYTES`` at most, so an endless input cannot keep ``tbx explain`` reading forever.
* Decoding: a UTF-8 or UTF-16 byte-order mark decides (PowerShell's ``2>`` writes UTF-16 with a
  BOM), then UTF-8, then GB18030 (Chinese Windows consoles), then UTF-8 with replacement.
* :func:`strip_controls` removes terminal escape sequences and control characters (everything a
  terminal would act on) so that nothing from a paste reaches the user's terminal.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import warnings

USER_CODE = "<paste>"  # the file name a user's code line is parsed (never run) under
# the compiler's SyntaxWarnings about such a line ("invalid decimal literal") would reach the
# user's terminal as if the tool had failed: ignored, for that file name only
warnings.filterwarnings("ignore", category=SyntaxWarning, module=re.escape(USER_CODE) + r"\Z")

_COMPREHENSIONS = ("<dictcomp>", "<listcomp>", "<setcomp>", "<genexpr>")
_METHODS = ("match", "search", "fullmatch", "findall", "finditer", "sub", "split", "pattern", "flags", "groupindex")


class Lazy:
    """A regular expression compiled on first use: most pastes never need most of them, and
    compiling them all up front is much of the CLI's start-up time. On first use the pattern's
    methods become the object's own attributes, so later calls cost what a compiled pattern's do."""

    __slots__ = ("_args", "_rx", *_METHODS)
    made: list = []  # every one a module makes as it loads: the regex attack proves it attacks each one

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._rx: re.Pattern[str] | None
        self._args, self._rx = (pattern, flags), None
        frame: types.FrameType | None = sys._getframe(1)
        while frame is not None and frame.f_code.co_name in _COMPREHENSIONS:
            frame = frame.f_back
        if frame is not None and frame.f_code.co_name == "<module>":  # not the knowledge base's, made per entry
            Lazy.made.append(self)

    def __getattr__(self, name: str):  # only for a name not set yet: the first use
        rx = self._rx
        if rx is None:
            rx = self._rx = re.compile(*self._args)
            for method in _METHODS:
                object.__setattr__(self, method, getattr(rx, method))
        return getattr(rx, name)


TYPE_CHECKING = False  # importing typing is a tenth of the start-up; the annotations are strings
if TYPE_CHECKING:
    import types
    from typing import BinaryIO

MAX_PASTE_BYTES = 1 << 20  # the tail we keep of a larger input: the final exception is at the end
MAX_STREAM_BYTES = 64 << 20  # a stream (pipe, device) is read this far at most
_CHUNK = 1 << 16
_BOMS = (b"\xff\xfe", b"\xfe\xff")  # UTF-16 LE, BE


def _drop_partial_line(buf: bytearray) -> None:
    """The cut fell inside a line (perhaps inside a multi-byte character): drop that line."""
    cut = buf.find(b"\n")
    if 0 <= cut < 4096:
        del buf[: cut + 1]


def _finish(head: bytes, buf: bytearray, limit: int, cut: bool) -> bytes:
    """The kept tail; a UTF-16 input keeps its byte-order mark and its two-byte alignment."""
    bom = head[:2] if head[:2] in _BOMS else b""
    if len(buf) > limit:
        del buf[: len(buf) - limit]
        cut = True
    if cut and bom:
        if len(buf) % 2:
            del buf[:1]
        return bom + bytes(buf)
    if cut:
        _drop_partial_line(buf)
    return bytes(buf)


def read_tail(stream: BinaryIO, limit: int = MAX_PASTE_BYTES, max_read: int = MAX_STREAM_BYTES) -> tuple[bytes, bool]:
    """(the last ``limit`` bytes of ``stream``, whether reading stopped before its end).

    A regular file is read from ``size - limit`` on; any other stream is read in chunks, keeping the
    last ``limit`` bytes, and abandoned after ``max_read`` bytes (an endless input)."""
    try:
        st = os.fstat(stream.fileno())
        regular = stat.S_ISREG(st.st_mode)
    except (AttributeError, OSError, ValueError):
        regular, st = False, None
    if regular and st is not None and st.st_size > limit:
        head = stream.read(2)
        stream.seek(st.st_size - limit)
        buf = bytearray(stream.read(limit + 1))
        return _finish(head, buf, limit, True), False
    buf = bytearray()
    head = b""
    total = 0
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            return _finish(head, buf, limit, False), False
        if not head:
            head = bytes(chunk[:2])
        total += len(chunk)
        buf += chunk
        if len(buf) > 2 * limit:
            del buf[: len(buf) - limit]
        if total >= max_read:
            return _finish(head, buf, limit, True), True


def read_limited(stream: BinaryIO, limit: int = MAX_PASTE_BYTES) -> bytes:
    """The last ``limit`` bytes of a stream (bounded memory, bounded reading)."""
    return read_tail(stream, limit)[0]


def decode_bytes(data: bytes) -> str:
    """A BOM decides (UTF-8, UTF-16), then UTF-8, GB18030 (Chinese Windows consoles), then UTF-8 with
    replacement."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data[:2] in _BOMS:
        return data.decode("utf-16", "replace").replace("\x00", "")
    for encoding in ("utf-8", "gb18030"):
        try:
            text = data.decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    else:
        text = data.decode("utf-8", "replace")
    return text.replace("\x00", "")


def looks_binary(data: bytes) -> bool:
    """True when the input is mostly control bytes: an image or an archive, not a paste. UTF-16 text
    (with its byte-order mark) is judged on its characters, not on its zero bytes."""
    sample = data[:8192]
    if not sample:
        return False
    if sample[:2] in _BOMS:
        chars = sample[2 : 2 + (len(sample) - 2) // 2 * 2].decode(
            "utf-16-le" if sample[:2] == b"\xff\xfe" else "utf-16-be", "replace"
        )
        bad = sum(1 for c in chars if c < " " and c not in "\t\n\x0c\r\x1b")
        return bad > len(chars) * 0.1
    bad = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13, 27))
    return bad > len(sample) * 0.1


# Terminal escape sequences and control characters. Each alternative starts with its own
# character and no two quantifiers overlap, so the expression is linear; what a terminal acts on is
# removed: CSI (colours, cursor moves, screen clears), OSC (titles, hyperlinks), DCS/SOS/PM/APC
# strings, the other ESC sequences (ESC c resets the terminal), a lone ESC, the 8-bit CSI, the C0 controls but tab,
# line feed and carriage return (the parser turns those into line breaks), DEL and the C1 controls.
_CONTROL = Lazy(
    r"\x1b\[[0-?]*+[ -/]*+[@-~]"
    r"|\x1b\][^\x07\x1b]*+(?:\x07|\x1b\\)"
    r"|\x1b[PX^_][^\x1b]*+\x1b\\"
    r"|\x1b[ -/]*+[0-~]?"
    r"|\x9b[0-?]*+[ -/]*+[@-~]?"
    r"|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
)
_HAS_CONTROL = Lazy(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


# Characters that change how text reads without being seen: bidi embeddings, overrides and isolates
# (Trojan Source), marks, zero-width and invisible operators, Hangul fillers, variation selectors,
# tag characters. One character class: linear.
_INVISIBLE = Lazy(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)


_PATH_SEPARATORS = Lazy(r"[\\/]+")


def path_parts(path: str) -> list[str]:
    """A path's parts, on either separator (a Windows paste's ``\\`` or a Unix ``/``)."""
    return _PATH_SEPARATORS.split(path)


def has_invisible(text: str) -> bool:
    return not text.isascii() and _INVISIBLE.search(text) is not None


def drop_invisible(text: str) -> str:
    """Prose without invisible and direction-changing characters (a message reads as it is)."""
    return _INVISIBLE.sub("", text) if has_invisible(text) else text


def escape_invisible(text: str) -> str:
    """Code with each invisible or direction-changing character shown as its escape (``\\u202e``):
    a line that reads differently from what Python runs is shown as what it holds."""
    if not has_invisible(text):
        return text
    return _INVISIBLE.sub(
        lambda m: f"\\u{ord(m.group()):04x}" if ord(m.group()) < 0x10000 else f"\\U{ord(m.group()):08x}", text
    )


def valid_unicode(text: str) -> str:
    """``text`` as valid Unicode: a surrogate pair escaped apart (``\\ud83d\\ude00`` decoded by a JSON
    reader) joined into its character, a lone surrogate (``\\ud800``, a byte that ``surrogateescape``
    kept) replaced by U+FFFD. Every decoder's result goes through it, so that no encoder later fails."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def strip_controls(text: str) -> str:
    """``text`` without terminal escape sequences and control characters (tab and line breaks kept)."""
    if not _HAS_CONTROL.search(text):
        return text
    return _CONTROL.sub("", text)
