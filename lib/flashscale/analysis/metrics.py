"""What ``analyze --metric`` summarizes: bandwidth, IOPS or a completion-latency percentile, each where it means
something. Pure functions on the results table.

    METRICS                          bw, iops, p50, p99, p999: the column each reads
    as_rates(frame, metric)          the table with that metric's numbers where the bandwidth's were (bw, iops)
    named(summary, metric)           a summary of ``as_rates`` with its columns named for the metric
    latency_at_best(frame, summary)  each row's latency percentile at its best point, and its latency tax
    reasons(summary, reference)      why each missing efficiency, tax or latency tax is missing, in words

- ``bw``: the summary of ``stats.summary_intervals`` as it is.
- ``iops``: the same summary with IOPS where the bandwidth was. IOPS add across devices as bandwidth does and more is
  better, so the best point, the baseline, efficiency, tax, their intervals and the tax test read the same
  (``best_iops``, ``baseline_iops``, ``efficiency``, ``tax``). A table without an ``iops`` column (a table written
  by hand, the quickstart's golden) gets it as bw_bytes / bs: fio's IOPS is I/Os over time and its bandwidth I/Os x
  bs over time, so the two agree exactly at a fixed block size (``IOPS_FROM_BW`` says so under the table).
  The summary reads IOPS as I/Os of ``significance.BLOCK_BYTES`` each (``IOPS_AS_BYTES``), so that the tax test's
  least spread of a run (one block in the run, ``significance.log_sd_floor``) is one I/O in the run; ``named``
  divides it out. Efficiency and tax are ratios and do not see it; the summary of IOPS read as bytes/s gave a tax
  interval of -6e294 to 100% on the quickstart (a floor of 1,024 bytes/s over 770 "bytes/s").
- ``p50``, ``p99``, ``p999``: fio's completion latency (clat: from submission to completion; fio's ``lat`` adds the
  submission), percentiles of each run. Latency does not add across devices and less is better, so there is no
  "best latency" (the lowest is at the lightest load, which says nothing of a layout) and no efficiency: each row
  gets the latency at its best bandwidth point (``best_bs``, ``best_numjobs``, ``best_iodepth``), the mean of that
  point's runs with its t interval on the log scale (``stats.interval_t``), and its latency tax: the layout's mean
  over the reference's at the same point, minus one (+20%: its p99 is 20% longer than the reference's at the same
  load), with ``stats.ratio_interval``'s interval. The latency tax means something at the same point only (same bs,
  jobs and queue depth): where the reference was not measured there, it is missing and ``latency_tax_note`` says why.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import AnalysisError, ConfigError
from .baseline_and_tax import rates
from .significance import BLOCK_BYTES
from .stats import interval_t, ratio_interval

METRICS = {"bw": "bw_bytes", "iops": "iops", "p50": "clat_p50_ns", "p99": "clat_p99_ns", "p999": "clat_p999_ns"}
LATENCY = ("p50", "p99", "p999")
IOPS_FROM_BW = "IOPS: bandwidth / block size (the table has no iops column; exact at fio's fixed block size)"
NAN = float("nan")
IOPS_AS_BYTES = float(BLOCK_BYTES)  # the bytes an I/O is read as while the summary computes (module doc)


def check_metric(metric: str) -> str:
    """``metric`` if it is one of ``METRICS``, else ConfigError naming it."""
    if metric not in METRICS:
        raise ConfigError(f"--metric {metric!r} is not one of {', '.join(METRICS)}")
    return metric


def as_rates(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """``frame`` with ``metric``'s numbers in ``bw_bytes`` (``iops``; ``bw`` and the latencies leave it as it is),
    the columns that hold only bandwidth (a truth, a direction's share) left out: what ``stats.summary_intervals``
    summarizes. Never changes ``frame``."""
    if check_metric(metric) != "iops":
        return frame
    if "iops" in frame.columns and pd.to_numeric(frame["iops"], errors="coerce").notna().any():
        iops = pd.to_numeric(frame["iops"], errors="coerce")
    else:
        iops = pd.to_numeric(frame["bw_bytes"], errors="coerce") / pd.to_numeric(frame["bs"], errors="coerce")
    bandwidth_only = [c for c in frame.columns if c.endswith("bw_bytes") and c != "bw_bytes"]
    return frame.drop(columns=bandwidth_only).assign(bw_bytes=iops * IOPS_AS_BYTES)


def iops_derived(frame: pd.DataFrame) -> bool:
    """Whether ``as_rates(frame, "iops")`` derives IOPS from bandwidth (the table holds no iops of its own)."""
    return not ("iops" in frame.columns and pd.to_numeric(frame["iops"], errors="coerce").notna().any())


def named(summary: pd.DataFrame, metric: str) -> pd.DataFrame:
    """A summary made of ``as_rates(frame, metric)`` with its columns named for ``metric``: ``best_iops``,
    ``baseline_iops``, ``reference_iops``, each ``_lo``/``_hi`` (bw: as it is)."""
    if check_metric(metric) != "iops":
        return summary
    rates = [c for c in summary.columns if "bw_bytes" in c and pd.api.types.is_numeric_dtype(summary[c])]
    out = summary.assign(**{c: summary[c] / IOPS_AS_BYTES for c in rates})
    return out.rename(columns={c: c.replace("bw_bytes", "iops") for c in summary.columns if "bw_bytes" in c})


def _runs(rows: pd.DataFrame, column: str) -> dict[tuple, np.ndarray]:
    """Each point's finite values of ``column`` (the runs fio gave a percentile for), keyed by the point."""
    keys = ["layout", "devices", "rw", "bs", "numjobs", "iodepth"]
    values = pd.to_numeric(rows[column], errors="coerce")
    kept = rows.assign(**{column: values})[values.notna() & np.isfinite(values)]
    return {tuple(key): group[column].to_numpy(float) for key, group in kept.groupby(keys, sort=False)}


def _latency_row(row, runs: dict[tuple, np.ndarray], reference: str, confidence: float) -> dict:
    """One summary row's latency at its best point and its latency tax against ``reference`` at the same point."""
    point = (row.best_bs, row.best_numjobs, row.best_iodepth)
    mine = runs.get((row.layout, row.devices, row.rw, *point), np.array([]))
    other = runs.get((reference, row.devices, row.rw, *point), np.array([]))
    said = {"latency": NAN, "latency_lo": NAN, "latency_hi": NAN, "latency_reps": mine.size,
            "reference_latency": NAN, "latency_tax": NAN, "latency_tax_lo": NAN, "latency_tax_hi": NAN,
            "latency_tax_note": ""}
    if not mine.size:
        return {**said, "latency_tax_note": "the table holds no latency percentile for its best point's runs (the "
                                            "fio output gave none: terse, normal or an old fio)"}
    low, high = interval_t(mine, confidence)
    said.update(latency=float(mine.mean()), latency_lo=low, latency_hi=high)
    if row.layout == reference:
        return {**said, "reference_latency": said["latency"], "latency_tax": 0.0, "latency_tax_note": "the reference"}
    if not other.size:
        return {**said, "latency_tax_note": f"{reference} not measured at this point ({row.devices} devices, bs "
                                            f"{int(row.best_bs)}, {int(row.best_numjobs)} jobs, queue depth "
                                            f"{int(row.best_iodepth)}): latencies at other loads do not compare"}
    ratio_lo, ratio_hi = ratio_interval(mine, other, confidence)
    return {**said, "reference_latency": float(other.mean()), "latency_tax": float(mine.mean() / other.mean()) - 1,
            "latency_tax_lo": ratio_lo - 1, "latency_tax_hi": ratio_hi - 1}


def latency_at_best(frame: pd.DataFrame, summary: pd.DataFrame, metric: str, reference: str,
                    confidence: float = 0.95) -> pd.DataFrame:
    """``summary`` (a bandwidth summary) with ``metric``'s latency percentile at each row's best point: the
    columns ``{column}`` (the mean over its runs, ns), ``{column}_lo``/``_hi``, ``latency_reps``,
    ``reference_{column}``, ``latency_tax`` with ``_lo``/``_hi`` and ``latency_tax_note`` (module doc). AnalysisError
    naming the column where the table has none of it (a table without fio's percentiles)."""
    column = METRICS[check_metric(metric)]
    if metric not in LATENCY:
        raise ConfigError(f"--metric {metric!r} is not a latency: one of {', '.join(LATENCY)}")
    if column not in frame.columns or pd.to_numeric(frame[column], errors="coerce").notna().sum() == 0:
        raise AnalysisError(f"--metric {metric}: the table has no {column} (fio's completion-latency percentile of "
                            "each run): it holds bandwidth only")
    runs = _runs(rates(frame), column)
    said = pd.DataFrame([_latency_row(row, runs, reference, confidence) for row in summary.itertuples(index=False)],
                        index=summary.index)
    said = said.rename(columns={"latency": column, "latency_lo": f"{column}_lo", "latency_hi": f"{column}_hi",
                                "reference_latency": f"reference_{column}"})
    return pd.concat([summary, said], axis=1)


def reasons(summary: pd.DataFrame, reference: str) -> dict[str, pd.Series]:
    """Why each missing value of the columns that can miss is missing, per row ("" where it is not missing):
    ``efficiency`` (its ``efficiency_note``), ``tax`` and ``tax_verdict`` (no reference row at those devices and
    rw, or too few runs), ``latency_tax`` (``latency_tax_note``)."""
    out: dict[str, pd.Series] = {}
    blank = pd.Series("", index=summary.index)
    if "efficiency" in summary.columns:
        note = summary["efficiency_note"].fillna("").astype(str) if "efficiency_note" in summary.columns else blank
        out["efficiency"] = note.where(summary["efficiency"].isna(), "")
        out["efficiency"] = out["efficiency"].where(out["efficiency"] != "", summary["efficiency"].isna().map(
            {True: "no efficiency: no single-device baseline for this rw", False: ""}))
    if "tax" in summary.columns:
        nowhere = [f"no tax: {reference} was not measured on {devices} device(s)" for devices in summary["devices"]]
        out["tax"] = pd.Series(nowhere, index=summary.index).where(summary["tax"].isna(), "")
        if "tax_verdict" in summary.columns:
            out["tax_verdict"] = out["tax"].where(summary["tax_verdict"] == "unknown", "")
    if "latency_tax" in summary.columns:
        out["latency_tax"] = ("no latency tax: " + summary["latency_tax_note"]).where(summary["latency_tax"].isna(), "")
    for column, note in (("knee_numjobs", "fit_note"), ("usl_peak_numjobs", "fit_note")):
        if column in summary.columns and note in summary.columns:
            out[column] = ("no fit: " + summary[note].fillna("").astype(str)).where(summary[column].isna(), "")
    return out
