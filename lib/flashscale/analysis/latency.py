"""Latency in detail: submission (slat), completion (clat) and total (lat) latency, mean, deviation and
percentiles, read back from the fio JSON kept beside every point, and the latency-against-IOPS curve.

    details(outputs)            one row per measured run, from ``raw.fio_outputs`` of the measured rows
    by_point(rows)              the mean over repetitions, one row per sweep point
    littles_law(points)         IOPS x mean latency against jobs x queue depth (the I/Os in flight)
    table_us(points)            the table for display, in microseconds

Latency in ns, IOPS per second. With ``group_reporting`` the first job entry holds the whole group; the direction
is the one that moved more data, as ``fio_output.parse`` chooses.
"""
from __future__ import annotations

from typing import Any, Iterable

import pandas as pd

from ..measure import fio_output
from .baseline_and_tax import POINT
from .stats import intervals_by

KINDS = ("slat", "clat", "lat")


def from_fio(data: dict) -> dict:
    """The latency columns of one fio result: ``{kind}_mean_ns``, ``{kind}_stddev_ns`` and the completion
    percentiles ``fio_output.CLAT_PERCENTILES`` (named as in the results table)."""
    side = fio_output.main_side(data)
    row = {}
    for kind in KINDS:
        stats = side.get(f"{kind}_ns", {})
        row[f"{kind}_mean_ns"] = float(stats.get("mean", float("nan")))
        row[f"{kind}_stddev_ns"] = float(stats.get("stddev", float("nan")))
    return {**row, **{name: fio_output.percentile(side, key) for name, key in fio_output.CLAT_PERCENTILES.items()}}


def details(outputs: Iterable[tuple[Any, dict]]) -> pd.DataFrame:
    """One row per run of ``raw.fio_outputs`` (given the measured rows): the point, ``rep``, ``iops``,
    ``bw_bytes`` and ``from_fio`` of its fio.json."""
    rows = [{**{k: getattr(run, k) for k in POINT}, "rep": run.rep, "iops": run.iops, "bw_bytes": run.bw_bytes,
             **from_fio(data)} for run, data in outputs]
    return pd.DataFrame(rows)


SPREAD = ("iops", "clat_mean_ns", "clat_p99_ns")  # what the latency figure draws: the 95% interval of each


def by_point(rows: pd.DataFrame) -> pd.DataFrame:
    """The mean of every column over repetitions, per sweep point; ``reps`` counts them, and ``{c}_lo`` and
    ``{c}_hi`` of the columns ``SPREAD`` give the 95% interval of their mean (``stats.intervals_by``: the tables'
    own; NaN for one run)."""
    values = [c for c in rows.columns if c not in (*POINT, "rep")]
    grouped = rows.groupby(POINT, sort=True, observed=True)
    out = grouped[values].mean().assign(reps=grouped.size()).reset_index()
    return out.merge(intervals_by(rows, POINT, SPREAD), on=POINT, how="left", validate="one_to_one")


def littles_law(points: pd.DataFrame) -> pd.DataFrame:
    """Per point: ``in_flight`` = numjobs x iodepth and ``littles_ratio`` = IOPS x mean total latency / in_flight.
    Near 1 when the queue is kept full; well below 1 when time goes elsewhere than waiting for I/O."""
    out = points.assign(in_flight=points["numjobs"] * points["iodepth"])
    out["littles_ratio"] = out["iops"] * out["lat_mean_ns"] / 1e9 / out["in_flight"]
    return out


def table_us(points: pd.DataFrame) -> pd.DataFrame:
    """The latency table for display: microseconds, one row per point."""
    columns = [c for c in points.columns if c.endswith("_ns")]
    shown = points[[*POINT, "iops", *columns]].copy()
    shown[columns] = shown[columns] / 1e3
    return shown.rename(columns={c: c[:-3] + "_us" for c in columns}).round(1)
