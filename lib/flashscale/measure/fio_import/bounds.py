"""How much of a file ``flashscale import`` reads, and how much of what it read it repeats: both bounded.

A file is read whole only when it is at most ``MAX_BYTES`` (256 MiB), compressed or not: a compressed file is
decompressed as a stream, counted before it is kept, and refused as soon as what it expands to passes ``MAX_BYTES``,
so a small archive that expands to gigabytes costs one piece of memory at a time (``decompressed``). What a refusal or a sentence repeats of a
file's content is an ``excerpt``: at most ``EXCERPT`` characters, escaped to printable ASCII, so no control
character, terminal escape or long line of someone else's file reaches a terminal, ``sources.csv`` or
``notes.json``; a message as a whole is cut to ``MESSAGE`` characters (``shown``).
"""
from __future__ import annotations

import bz2
import lzma
import zlib
from pathlib import Path
from typing import Iterator

from ...errors import FioError

MAX_BYTES = 256 * 2**20  # the most a file, or what a compressed file expands to, may hold
CHUNK = 2**20
EXCERPT = 60
MESSAGE = 400
COMPRESSED = (("gzip", b"\x1f\x8b"), ("xz", b"\xfd7zXZ\x00"), ("bzip2", b"BZh"))  # by their magic bytes
LIMIT_WORDS = f"{MAX_BYTES // 2**20} MiB, the most flashscale import reads of one file"


def excerpt(text: object, length: int = EXCERPT) -> str:
    """``text``'s first ``length`` characters as a quoted, escaped, printable ASCII literal (``ascii``), and how
    much more there was."""
    text = text if isinstance(text, str) else str(text)
    more = len(text) - length
    return ascii(text[:length]) + (f" (and {more} more characters)" if more > 0 else "")


def shown(message: str, length: int = MESSAGE) -> str:
    """A sentence about a file as the folder keeps it: printable (each other character escaped) and at most
    ``length`` characters."""
    printable = "".join(c if c.isprintable() and (c.isascii() or c.isalnum()) else ascii(c)[1:-1] for c in message)
    return printable if len(printable) <= length else printable[:length - 1] + "…"


def read_bounded(path: Path) -> bytes:
    """A file's bytes, FioError when it holds more than ``MAX_BYTES`` (read no further than that)."""
    with open(path, "rb") as stream:
        content = stream.read(MAX_BYTES + 1)
    if len(content) > MAX_BYTES:
        raise FioError(f"it holds more than {LIMIT_WORDS}: not read")
    return content


def head(path: Path, size: int) -> bytes:
    """A file's first ``size`` bytes at most."""
    with open(path, "rb") as stream:
        return stream.read(size)


def compression_of(content: bytes) -> str | None:
    """gzip, xz or bzip2 by the magic bytes ``content`` begins with; None for none."""
    return next((name for name, magic in COMPRESSED if content.startswith(magic)), None)


def decompressed(content: bytes) -> bytes | bytearray:
    """``content`` decompressed as a stream (gzip, xz, bzip2 by magic bytes; concatenated members each): FioError
    as soon as the output passes ``MAX_BYTES``, or when the data is damaged or ends early. The stream is counted
    before it is kept (a second pass keeps it): a bomb costs a piece at a time, never the limit."""
    name = compression_of(content)
    if name is None:
        return content
    try:
        total = 0
        for piece in pieces(name, memoryview(content)):
            total += len(piece)
            if total > MAX_BYTES:
                raise FioError(f"a {name} file that expands to more than {LIMIT_WORDS}: refused, not expanded "
                               "further")
        out = bytearray()
        for piece in pieces(name, memoryview(content)):
            out += piece
    except (OSError, EOFError, lzma.LZMAError, ValueError, zlib.error) as exc:
        raise FioError(f"a {name} file that does not decompress: {exc}") from None
    return out


def pieces(name: str, view: memoryview) -> Iterator[bytes]:
    """The decompressed pieces (at most ``CHUNK`` each) of every member of ``view``, compressed by ``name``, its
    input fed ``CHUNK`` at a time: a stream, stopped by whoever reads it."""
    at = 0
    while at < len(view):
        if name == "gzip":
            decompressor, tail = zlib.decompressobj(16 + zlib.MAX_WBITS), b""
            while not decompressor.eof:
                if not tail:
                    tail, at = _fed(view, at, name)
                yield decompressor.decompress(tail, CHUNK)
                tail = decompressor.unconsumed_tail
        else:
            decompressor = lzma.LZMADecompressor() if name == "xz" else bz2.BZ2Decompressor()
            while not decompressor.eof:
                feed = b""
                if decompressor.needs_input:
                    feed, at = _fed(view, at, name)
                yield decompressor.decompress(feed, CHUNK)
        at -= len(decompressor.unused_data)  # the bytes after this member: the next one's, if any
        if compression_of(bytes(view[at:at + 6])) != name:
            return  # what follows the last member is not another (padding): left, as gzip -d leaves it


def _fed(view: memoryview, at: int, name: str) -> tuple[memoryview, int]:
    if at >= len(view):
        raise FioError(f"a {name} file that ends before its data does (truncated)")
    return view[at:at + CHUNK], at + min(CHUNK, len(view) - at)
