"""What a file holds: fio's output, read whatever the file is named (fio's ``--output`` takes any name:
``.json``, ``.output``, ``.log``, ``.txt``, none), or something else, left aside by its content and counted by what
it is.

    empty                   no bytes
    binary                  a NUL byte in its first 64 KiB, where no byte-order mark or compression says text
    fio's per-job logs      write_bw_log and the like: lines of numbers and commas (``1000, 5120, 0, 4096, 0``)
    fio job files           ``[section]`` lines and ``name=value`` options
    JSON not fio's          a JSON object, none of them fio's (no ``"fio version"``)
    text not fio's output   anything else

fio's output is what ``reader.read_outputs`` reads: a JSON object beginning a line and ``"fio version"`` in the
text, a terse line, a normal output's job block. A file that holds it but cannot be read (truncated, damaged) is
fio's, and refused by name.
"""
from __future__ import annotations

import json
import re

from . import bounds, documents, normal, terse

HEAD = 64 * 2**10  # how much of a file says whether it is binary
EMPTY = "empty"
BINARY = "binary"
FIO_VERSION = '"fio version"'
_LOG_LINE = re.compile(r"\s*\d+(?:\s*,\s*-?\d+){2,}\s*")
_SECTION = re.compile(r"^\[[^\]\n]{1,200}\][ \t]*\r?$", re.MULTILINE)
_OPTION = re.compile(r"^[ \t]*[a-z_]{1,40}[ \t]*(?:=|\r?$)", re.MULTILINE)


def by_head(head: bytes) -> str | None:
    """What a file whose first bytes are ``head`` is, when they already say it is not fio's (empty, binary); None
    when its text must be read to tell."""
    if not head:
        return EMPTY
    if bounds.compression_of(head) or any(head.startswith(bom) for bom, _ in documents.BOMS):
        return None
    return BINARY if b"\x00" in head[:HEAD] else None


def not_fio(text: str) -> str | None:
    """None when ``text`` holds fio's output; else what it holds instead (module docstring)."""
    if not text.strip():
        return EMPTY
    if (FIO_VERSION in text and documents.has_object(text)) or terse.terse_lines(text) or normal.is_normal(text):
        return None
    if _json_object(text):
        return "JSON not fio's"
    lines = [line for line in text.splitlines()[:20] if line.strip()]
    if lines and all(_LOG_LINE.fullmatch(line) for line in lines):
        return "fio's per-job logs"
    if _SECTION.search(text) and _OPTION.search(text):
        return "fio job files"
    return "text not fio's output"


def _json_object(text: str) -> bool:
    """Whether a JSON object begins ``text``'s first line that begins with ``{`` (``documents``)."""
    start = documents.next_object(text, 0)
    if start is None:
        return False
    try:
        json.JSONDecoder().raw_decode(text, start)
    except (ValueError, RecursionError):
        return False
    return True
