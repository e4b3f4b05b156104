"""Applications against fio on the same devices: the application's tax. Pure functions on the results table.

    tax = 1 - application bytes/s / fio's best bytes/s on the same layout

For the many-files transfer (``copy_bw``) fio's reference is the smaller of its best read and best write on the
layout (a copy reads and writes every byte); for bonnie++'s block write and read, fio's best write and read. Only
measured, non-warm-up fio rows that are rates count (``baseline_and_tax.rates``: none flagged ``too_short``); an application row
with no value (bonnie++'s ``+++++``) keeps its reason, and one flagged ``too_short`` gives no value and no tax.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import baseline_and_tax
from ..errors import AnalysisError

# application metric -> the fio directions its reference is the smallest best of
REFERENCE = {"copy_bw": ("read", "write"), "write_bw": ("write",), "block_write": ("write",),
             "block_read": ("read",), "block_rewrite": ("read", "write")}
SEQUENTIAL = {"read": "read", "write": "write"}
SHORT = "too short to give a rate (analysis.evidence.too_short_sentences says why)"


def rated(apps: pd.DataFrame) -> pd.DataFrame:
    """The applications' rows as a report shows them: a row flagged ``too_short`` keeps no value (NaN, and
    ``missing_reason`` says so: ``evidence.too_short_sentences`` says why), so that no rate above what the devices
    allow is published; the rows themselves are kept."""
    if "too_short" not in apps.columns or apps.empty:
        return apps
    short = baseline_and_tax.flag(apps, "too_short")
    reason = apps["missing_reason"] if "missing_reason" in apps.columns else pd.Series(None, index=apps.index)
    return apps.assign(value=apps["value"].mask(short), bw_bytes=apps["bw_bytes"].mask(short),
                       missing_reason=reason.astype(object).mask(short, SHORT))


def fio_best(table: pd.DataFrame) -> pd.DataFrame:
    """fio's best bandwidth per layout and direction (sequential read, write), measured rows only."""
    need = {"layout", "rw", "bw_bytes"}
    if not need <= set(table.columns):
        raise AnalysisError(f"the results table lacks {sorted(need - set(table.columns))}")
    rows = baseline_and_tax.runs(table)
    rows = rows[~baseline_and_tax.flag(rows, "too_short")] if "too_short" in rows.columns else rows
    rows = rows[(rows.get("workload", "fio") == "fio") & rows["rw"].isin(list(SEQUENTIAL))]
    return rows.groupby(["layout", "rw"])["bw_bytes"].max().unstack("rw")


def tax(table: pd.DataFrame) -> pd.DataFrame:
    """One row per application row with a fio reference: layout, workload, metric, point, its bytes/s, fio's
    reference bytes/s, the tax, and why a value is missing."""
    best = fio_best(table)
    apps = table[table.get("workload", "fio").isin(["bonnie++", "transfer"]) & table["metric"].isin(list(REFERENCE))]
    shorts = baseline_and_tax.flag(apps, "too_short") if "too_short" in apps.columns else pd.Series(False, index=apps.index)
    rows = []
    for (_, row), short in zip(apps.iterrows(), shorts):  # too short: no rate, or above its truth by the slice
        directions = REFERENCE[row["metric"]]
        have = row["layout"] in best.index and all(d in best.columns for d in directions)
        reference = min(best.loc[row["layout"], d] for d in directions) if have else np.nan
        value = np.nan if short else row["value"]
        rows.append({"layout": row["layout"], "workload": row["workload"], "metric": row["metric"],
                     "point": row["point"], "value_bytes": value, "fio_bytes": reference,
                     "tax": 1 - value / reference if reference and reference > 0 else np.nan,
                     "missing_reason": SHORT if short else row.get("missing_reason")})
    return pd.DataFrame(rows, columns=["layout", "workload", "metric", "point", "value_bytes", "fio_bytes", "tax",
                                       "missing_reason"])
