"""How a command prints its results: one ``--format table|csv|json`` on every command that prints them.

    add_format(parser, choices=FORMATS, default="table", json_alias=False)
        the ``--format`` option (and ``--json``, the same as ``--format json``, where a command had it)
    emit(rows, fmt, table=None, json_lines=False)
        ``rows`` (a list of mappings, or a DataFrame: its records) printed in ``fmt``

The formats, alike on every command:

- ``table``, for people: aligned columns under a header (``table``: the rows people read, formatted, where they
  differ from the raw ones; a DataFrame prints as pandas prints it);
- ``csv``: a header, then one line a row (RFC 4180, the ``csv`` module's quoting); numbers as they are kept (bytes,
  bytes/s), a missing value empty, a list or mapping as its JSON;
- ``json``: one JSON list of objects, or with ``json_lines`` one object a line (JSON Lines, ``flashscale erase``'s
  record); a missing or infinite number is ``null``.

Nothing here colours or decorates: flashscale prints no colour and no progress bar to a terminal (progress comes as
plain lines on stderr), so ``NO_COLOR`` and output into a pipe or a file need nothing of it. This module imports
neither pandas nor numpy: ``--help`` builds every parser that calls ``add_format`` without them.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from typing import Any, Iterable, Mapping, TextIO

FORMATS = ("table", "csv", "json")


def add_format(parser: argparse.ArgumentParser, choices: Iterable[str] = FORMATS, default: str = "table",
               json_alias: bool = False) -> None:
    """``--format`` on ``parser`` (``args.format``); with ``json_alias``, ``--json`` as well, the same as ``--format
    json`` (kept where a command had it before ``--format``)."""
    choices = tuple(choices)
    parser.add_argument("--format", choices=choices, default=default,
                        help="how to print the results: a table for people, csv or json for scripts")
    if json_alias:
        parser.add_argument("--json", dest="format", action="store_const", const="json",
                            help="the same as --format json")


def emit(rows, fmt: str, table=None, json_lines: bool = False, file: TextIO | None = None) -> None:
    """Print ``rows`` (mappings, or a DataFrame) in ``fmt`` (``FORMATS``) to ``file`` (stdout); ``table``: what the
    table format shows instead of ``rows`` (formatted for people)."""
    out = file or sys.stdout
    if fmt == "table":
        shown = rows if table is None else table
        if hasattr(shown, "to_string"):
            print(shown.to_string(index=False), file=out)
        else:
            _aligned(_records(shown), out)
        return
    records = [{k: _plain(v) for k, v in record.items()} for record in _records(rows)]
    if fmt == "json":
        if json_lines:
            out.writelines(json.dumps(record) + "\n" for record in records)
        else:
            print(json.dumps(records, indent=1), file=out)
    elif fmt == "csv":
        _csv(records, out)
    else:
        raise ValueError(f"format {fmt!r} is none of {', '.join(FORMATS)}")


def _records(rows) -> list[Mapping[str, Any]]:
    return rows.to_dict("records") if hasattr(rows, "to_dict") else [dict(r) for r in rows]


def _plain(value: Any) -> Any:
    """A value JSON and CSV can hold: a numpy scalar as its Python value, a missing or infinite number None."""
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _columns(records: list[Mapping[str, Any]]) -> list[str]:
    return list(dict.fromkeys(name for record in records for name in record))


def _csv(records: list[Mapping[str, Any]], out: TextIO) -> None:
    columns = _columns(records)
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for record in records:
        writer.writerow(["" if record.get(c) is None else json.dumps(record[c])
                         if isinstance(record[c], (list, dict)) else record[c] for c in columns])


def _aligned(records: list[Mapping[str, Any]], out: TextIO) -> None:
    """Columns left-aligned under their names, two spaces apart; a missing value "-"."""
    columns = _columns(records)
    cells = [columns] + [["-" if r.get(c) is None or r.get(c) == "" else str(r[c]) for c in columns]
                         for r in records]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    for row in cells:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip(), file=out)
