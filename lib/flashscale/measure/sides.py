"""One side of ``flashscale compare A B`` read: a campaign folder, a results table, or an archive query.

    read("data/campaigns/quickstart")                      a campaign (or study) folder: every table under it
    read("results.csv")                                    a table alone (no campaign.json: no environment)
    read("archive:team.sqlite?layout=md-raid0&last=3")     campaigns of an archive (``measure.archive``)

An archive query is ``archive:FILE`` then, after a ``?``, filters joined by ``&`` (``QUERY_KEYS``): ``host=NAME``,
``model=MODEL``, ``layout=NAME``, ``since=YYYY-MM-DD``, ``id=PREFIX`` (hex digits of a campaign's id), and
``last=N`` (the N that ran last of those kept). Every campaign it keeps is one side together: their runs of a
point are that point's runs, the spread between campaigns counted as the spread between runs. Without a filter it
is every campaign of the archive. The first ``?`` ends the file's name: a file whose name holds one cannot be
queried (rename it).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from urllib.parse import parse_qsl

import pandas as pd

from . import archive, campaign_folder, results
from ..errors import ConfigError

PREFIX = "archive:"
QUERY_KEYS = ("host", "model", "layout", "since", "id", "last")
MOST_LAST = 10_000
NAME = re.compile(r"[^\x00-\x1f\x7f]{1,200}")


@dataclass(frozen=True)
class Side:
    """What a side is called, its rows (each with ``source``) and the campaign.json of each campaign in it."""

    label: str
    rows: pd.DataFrame
    records: tuple[dict, ...]


def parse_query(text: str) -> tuple[Path, archive.Filters]:
    """``archive:FILE[?key=value&...]`` as the archive's path and its ``archive.Filters`` (module doc);
    ConfigError naming the key or value it cannot read."""
    body = text[len(PREFIX):]
    path, _, query = body.partition("?")
    if not path:
        raise ConfigError(f"{text!r}: name the archive file after 'archive:' (archive:FILE?layout=md-raid0)")
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query), max_num_fields=len(QUERY_KEYS))
    except ValueError as exc:
        raise ConfigError(f"archive query {query!r:.120} cannot be read ({exc}); write key=value&key=value "
                          f"with keys {', '.join(QUERY_KEYS)}") from None
    given: dict = {}
    for key, value in pairs:
        if key not in QUERY_KEYS:
            raise ConfigError(f"archive query key {key!r:.60} is unknown; expected one of {', '.join(QUERY_KEYS)}")
        if key in given:
            raise ConfigError(f"archive query key {key!r} is given twice")
        given[key] = checked_value(key, value)
    return Path(path), archive.Filters(**given)


def checked_value(key: str, value: str):
    """One query value checked: ``last`` a whole number in 1..MOST_LAST, ``since`` a date, ``id`` hex digits, any
    other a name of at most 200 printable characters."""
    if key == "last":
        if not (value.isdigit() and 1 <= int(value) <= MOST_LAST):
            raise ConfigError(f"archive query last={value!r:.60}: expected a whole number from 1 to {MOST_LAST}")
        return int(value)
    if key == "since":
        try:
            return date.fromisoformat(value).isoformat()
        except ValueError:
            raise ConfigError(f"archive query since={value!r:.60}: expected a date, YYYY-MM-DD") from None
    if key == "id":
        if not re.fullmatch(r"[0-9a-f]{4,64}", value):
            raise ConfigError(f"archive query id={value!r:.80}: expected 4 to 64 hex digits of a campaign's id")
        return value
    if not NAME.fullmatch(value):
        raise ConfigError(f"archive query {key}={value!r:.80}: expected 1 to 200 printable characters")
    return value


def read(text: str) -> Side:
    """One side (module doc); ConfigError or AnalysisError naming what cannot be read."""
    if text.startswith(PREFIX):
        path, filters = parse_query(text)
        entries = archive.listed(path, filters)
        if not entries:
            raise ConfigError(f"{text!r} keeps no campaign of the archive (flashscale archive list --archive "
                              f"{path} shows them)")
        rows, records = archive.rows_of(path, entries)
        return Side(text, rows, tuple(records))
    path = Path(text)
    if not path.exists():
        raise ConfigError(f"{text!r} does not exist: give a campaign folder, a results table (.parquet, .csv) or "
                          "an archive query (archive:FILE?layout=NAME&last=N)")
    tables = campaign_folder.tables_under(path)
    if not tables:
        raise ConfigError(f"{text!r} holds no results table (results.parquet)")
    frames = [results.load(t).assign(source=t.parent.name if path.is_dir() else t.name) for t in tables]
    records = [campaign_folder.read_campaign(t.parent) if t.name == campaign_folder.TABLE_FILE else None
               for t in tables]
    return Side(text, pd.concat(frames, ignore_index=True), tuple(r for r in records if isinstance(r, dict)))
