"""Throughput over time within a run, from fio's bandwidth logs.

A sweep run with ``LOG_EXTRA`` (``write_bw_log`` and ``log_avg_msec``) leaves ``bw_bw.<job>.log`` files beside its
fio.json: one line per interval, ``time_ms, KiB/s, direction, bs, offset``. ``series`` sums the jobs of each run
per interval into one aggregate bandwidth per (run, time); ``stability`` says how much it moves.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from .core import POINT, measured

LOG_PREFIX = "bw"


def log_extra(interval_ms: int) -> tuple[tuple[str, str], ...]:
    """The fio options that make every job log its bandwidth every ``interval_ms`` into its run's directory."""
    return (("write_bw_log", LOG_PREFIX), ("log_avg_msec", str(int(interval_ms))))


def read_log(path: Path) -> pd.DataFrame:
    """One fio bandwidth log: ``time_ms`` and ``bw_bytes`` (fio logs KiB/s)."""
    frame = pd.read_csv(path, header=None, usecols=[0, 1], names=["time_ms", "kib_s"], skipinitialspace=True)
    return pd.DataFrame({"time_ms": frame["time_ms"].astype("int64"), "bw_bytes": frame["kib_s"] * 1024.0})


def series(directory: str | Path, frame: pd.DataFrame, interval_ms: int) -> pd.DataFrame:
    """Per measured run and interval: the point, ``rep``, ``time_s`` and aggregate ``bw_bytes`` over its jobs."""
    parts = []
    for run in measured(frame).itertuples():
        logs = sorted((Path(directory) / run.raw_dir).glob(f"{LOG_PREFIX}_bw.*.log"))
        for path in logs:
            log = read_log(path)
            log["slot"] = (log["time_ms"] / interval_ms).round().astype("int64")
            parts.append(log.assign(**{k: getattr(run, k) for k in POINT}, rep=run.rep))
    if not parts:
        return pd.DataFrame(columns=[*POINT, "rep", "time_s", "bw_bytes"])
    logs = pd.concat(parts, ignore_index=True)
    out = logs.groupby([*POINT, "rep", "slot"], sort=True, observed=True)["bw_bytes"].sum().reset_index()
    out["time_s"] = out["slot"] * interval_ms / 1000.0
    return out.drop(columns="slot")


def full_intervals(over_time: pd.DataFrame) -> pd.DataFrame:
    """The intervals of each run without its first and last (usually partial) ones, when it has more than two."""
    run = over_time.groupby([*POINT, "rep"], sort=False, observed=True)["time_s"]
    edge = (over_time["time_s"] == run.transform("min")) | (over_time["time_s"] == run.transform("max"))
    return over_time[~edge | (run.transform("size") <= 2)]


def stability(over_time: pd.DataFrame) -> pd.DataFrame:
    """Per run, over its full intervals (``full_intervals``): mean, deviation, coefficient of variation, lowest
    and highest interval bandwidth."""
    grouped = full_intervals(over_time).groupby([*POINT, "rep"], sort=True, observed=True)["bw_bytes"]
    out = grouped.agg(intervals="size", mean="mean", std="std", low="min", high="max").reset_index()
    out["cv"] = out["std"] / out["mean"]
    return out
