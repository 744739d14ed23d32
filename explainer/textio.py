"""Turning raw bytes into text the parser can read, within fixed bounds."""

from __future__ import annotations

from typing import BinaryIO

MAX_PASTE_BYTES = 1 << 20  # the tail we keep of a larger input: the final exception is at the end
_CHUNK = 1 << 16


def read_limited(stream: BinaryIO, limit: int = MAX_PASTE_BYTES) -> bytes:
    """Read a whole stream but keep only its last ``limit`` bytes (bounded memory)."""
    buf = bytearray()
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            break
        buf += chunk
        if len(buf) > 2 * limit:
            del buf[: len(buf) - limit]
    if len(buf) > limit:
        del buf[: len(buf) - limit]
        # drop a partial first line: it may start inside a multi-byte character
        cut = buf.find(b"\n")
        if 0 <= cut < 4096:
            del buf[: cut + 1]
    return bytes(buf)


def decode_bytes(data: bytes) -> str:
    """UTF-8, then GB18030 (Chinese Windows consoles), then UTF-8 with replacement."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            return data.decode("utf-16").replace("\x00", "")
        except UnicodeDecodeError:
            pass
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
    """True when the input is mostly control bytes: an image or an archive, not a paste."""
    sample = data[:8192]
    if not sample:
        return False
    bad = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13, 27))
    return bad > len(sample) * 0.1
