"""Campaigns side by side: different layouts, machines or dates.

    frame, where = raw.gather(["data/campaigns/study", "data/campaigns/quickstart", "/elsewhere/results.parquet"])
    side_by_side(frame)

``raw.gather`` reads the tables (each row with its ``source``); these are pure functions of them. The findings in
words are ``findings.comparison_sentences``.
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from ..measure import fio
from .core import point_means


def side_by_side(frame: pd.DataFrame, by: Sequence[str] = ("layout", "devices", "rw")) -> pd.DataFrame:
    """Best point-mean bandwidth per ``by`` (rows) and source (columns), bytes/s; NaN where a source lacks it.
    Metadata runs (files per second, not bandwidth) are left out."""
    frame = frame[~frame["rw"].isin(list(fio.METADATA_OPS))]
    if frame.empty:
        return pd.DataFrame()
    best = pd.concat([point_means(g).assign(source=s) for s, g in frame.groupby("source", sort=False)],
                     ignore_index=True)
    return best.pivot_table(index=list(by), columns="source", values="bw_bytes", aggfunc="max")


def relative_to(wide: pd.DataFrame, first: str | None = None) -> pd.DataFrame:
    """``side_by_side`` divided by one source's column (the first by default): 1.0 is the same bandwidth."""
    if wide.empty:
        return wide
    first = first or wide.columns[0]
    return wide.div(wide[first], axis=0)
