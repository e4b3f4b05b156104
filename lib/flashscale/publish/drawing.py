"""What every figure of ``plots`` and ``rate_plots`` draws the same way: its title and alternative text, the spread of
repetitions (smallest to largest) as error bars, n in the legend.

    done(fig, title)                     title, layout, closed in pyplot, described (``alt_text``)
    spread(rows, values)                 per sweep point of the rate rows: mean, ``{value}_min``, ``_max``, ``n``
    with_spread(points, table, values)   derived points with the spread of their repetitions in ``table``
    bounds(mean, low, high)              the (below, above) lengths of an error bar, never negative
    n_text(n)                            'n=3' or 'n=2-3'
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..analysis.core import POINT, rates
from .alt_text import described


def done(fig: plt.Figure, title: str) -> plt.Figure:
    fig.suptitle(title)
    fig.tight_layout()
    plt.close(fig)
    return described(fig)


def spread(rows: pd.DataFrame, values=("bw_bytes",)) -> pd.DataFrame:
    """Per sweep point (POINT) of ``rows`` (rate rows, ``core.rates``): for each of ``values`` its mean (named as
    the value), ``{value}_min`` and ``{value}_max``; ``n`` repetitions."""
    present = [v for v in values if v in rows.columns]
    grouped = rows.groupby(POINT, sort=True, observed=True)
    out = grouped[present].agg(["mean", "min", "max"])
    out.columns = [value if stat == "mean" else f"{value}_{stat}" for value, stat in out.columns]
    return out.assign(n=grouped.size()).reset_index()


def with_spread(points: pd.DataFrame, table: pd.DataFrame, values=("bw_bytes",)) -> pd.DataFrame:
    """``points`` (one row per sweep point: POINT columns) with ``{value}_min``, ``{value}_max`` and ``n`` from the
    repetitions of each point in ``table`` (a results table; runs too short to time are no rate: ``core.rates``)."""
    found = spread(rates(table), values).drop(columns=[v for v in values if v in points.columns])
    keep = [c for c in points.columns if c not in found.columns or c in POINT]
    return points[keep].merge(found, on=POINT, how="left", validate="one_to_one")


def bounds(mean, low, high) -> list:
    """The lengths below and above ``mean`` of an error bar from ``low`` to ``high`` (numbers or columns), clipped
    at 0 so a bar never points the wrong way."""
    return [np.clip(np.asarray(mean, float) - np.asarray(low, float), 0, None),
            np.clip(np.asarray(high, float) - np.asarray(mean, float), 0, None)]


def n_text(n: pd.Series) -> str:
    n = pd.Series(n).dropna()
    if n.empty:
        return "n=?"
    low, high = int(n.min()), int(n.max())
    return f"n={low}" if low == high else f"n={low}-{high}"
