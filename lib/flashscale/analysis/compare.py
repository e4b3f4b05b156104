"""Campaigns side by side: different layouts, machines or dates.

    frame, where = raw.gather(["data/campaigns/study", "data/campaigns/quickstart", "/elsewhere/results.parquet"])
    side_by_side(frame)
    best_spread(frame)      the same best points, long: their smallest and largest repetition and n

``raw.gather`` reads the tables (each row with its ``source``); these are pure functions of them. The findings in
words are ``findings.comparison_sentences``.
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from ..measure import fio
from .core import POINT, best_points, flag, point_means, rates


def _rates(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows that can be compared: bandwidth runs (not metadata), not flagged ``too_short`` (``core.rates``); a
    source whose runs were all too short to time has nothing to show."""
    frame = frame[~frame["rw"].isin(list(fio.METADATA_OPS))]
    return frame[~flag(frame, "too_short")] if "too_short" in frame.columns else frame


def side_by_side(frame: pd.DataFrame, by: Sequence[str] = ("layout", "devices", "rw")) -> pd.DataFrame:
    """Best point-mean bandwidth per ``by`` (rows) and source (columns), bytes/s; NaN where a source lacks it.
    Metadata runs (files per second, not bandwidth) and runs too short to time are left out."""
    frame = _rates(frame)
    if frame.empty:
        return pd.DataFrame()
    best = pd.concat([point_means(g).assign(source=s) for s, g in frame.groupby("source", sort=False)],
                     ignore_index=True)
    return best.pivot_table(index=list(by), columns="source", values="bw_bytes", aggfunc="max")


def best_spread(frame: pd.DataFrame, by: Sequence[str] = ("layout", "devices", "rw")) -> pd.DataFrame:
    """The points ``side_by_side`` shows, one row per ``by`` and source: ``bw_bytes`` (the best point mean),
    ``low`` and ``high`` (its smallest and largest repetition, ``core.rates``) and ``n`` (its repetitions)."""
    frame = _rates(frame)
    parts = []
    for source, group in frame.groupby("source", sort=False):
        best = best_points(point_means(group), list(by))
        runs = rates(group).groupby(POINT, observed=True)["bw_bytes"].agg(low="min", high="max").reset_index()
        parts.append(best.merge(runs, on=POINT, how="left").assign(source=source))
    columns = [*by, "source", "bw_bytes", "low", "high", "n"]
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True).rename(columns={"reps": "n"})[columns]


def relative_to(wide: pd.DataFrame, first: str | None = None) -> pd.DataFrame:
    """``side_by_side`` divided by one source's column (the first by default): 1.0 is the same bandwidth."""
    if wide.empty:
        return wide
    first = first or wide.columns[0]
    return wide.div(wide[first], axis=0)
