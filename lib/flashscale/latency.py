"""Latency in detail: submission (slat), completion (clat) and total (lat) latency, mean, deviation and
percentiles, read back from the fio JSON kept beside every point, and the latency-against-IOPS curve.

    details(directory, frame)   one row per measured run, from ``<directory>/<raw_dir>/fio.json``
    by_point(rows)              the mean over repetitions, one row per sweep point
    littles_law(points)         IOPS x mean latency against jobs x queue depth (the I/Os in flight)

Latency in ns, IOPS per second. With ``group_reporting`` the first job entry holds the whole group; the direction
is the one that moved more data, as ``fio.parse`` chooses.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from .analysis import POINT, measured

PERCENTILE_KEYS = {"p50": "50.000000", "p90": "90.000000", "p99": "99.000000", "p99.9": "99.900000",
                   "p99.99": "99.990000"}
KINDS = ("slat", "clat", "lat")


def _side(data: dict) -> dict:
    first = data["jobs"][0]
    return first["read"] if first["read"]["io_bytes"] >= first["write"]["io_bytes"] else first["write"]


def from_fio(data: dict) -> dict:
    """The latency columns of one fio result: ``{kind}_mean_ns``, ``{kind}_stddev_ns`` and ``clat_{pXX}_ns``."""
    side = _side(data)
    row = {}
    for kind in KINDS:
        stats = side.get(f"{kind}_ns", {})
        row[f"{kind}_mean_ns"] = float(stats.get("mean", float("nan")))
        row[f"{kind}_stddev_ns"] = float(stats.get("stddev", float("nan")))
    percentiles = side.get("clat_ns", {}).get("percentile", {})
    for name, key in PERCENTILE_KEYS.items():
        row[f"clat_{name}_ns"] = float(percentiles.get(key, float("nan")))
    return row


def details(directory: str | Path, frame: pd.DataFrame) -> pd.DataFrame:
    """One row per measured run: the point, ``rep``, ``iops``, ``bw_bytes`` and ``from_fio`` of its fio.json."""
    rows = []
    for run in measured(frame).itertuples():
        data = json.loads((Path(directory) / run.raw_dir / "fio.json").read_text())
        rows.append({**{k: getattr(run, k) for k in POINT}, "rep": run.rep, "iops": run.iops,
                     "bw_bytes": run.bw_bytes, **from_fio(data)})
    return pd.DataFrame(rows)


def by_point(rows: pd.DataFrame) -> pd.DataFrame:
    """The mean of every column over repetitions, per sweep point."""
    values = [c for c in rows.columns if c not in (*POINT, "rep")]
    return rows.groupby(POINT, sort=True, observed=True)[values].mean().reset_index()


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
