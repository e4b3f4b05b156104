"""Throughput over time within a run, from fio's bandwidth logs.

A sweep run with ``LOG_EXTRA`` (``write_bw_log`` and ``log_avg_msec``) leaves ``bw_bw.<job>.log`` files beside its
fio.json: one line per interval, ``time_ms, KiB/s, direction, bs, offset`` (``raw.bw_logs`` reads them). ``series``
sums the jobs of each run per interval into one aggregate bandwidth per (run, time); ``stability`` says how much it
moves.
"""
from __future__ import annotations

from typing import Any, Iterable

import pandas as pd

from ..measure import raw
from .core import POINT


def log_extra(interval_ms: int) -> tuple[tuple[str, str], ...]:
    """The fio options that make every job log its bandwidth every ``interval_ms`` into its run's directory."""
    return (("write_bw_log", raw.LOG_PREFIX), ("log_avg_msec", str(int(interval_ms))))


def series(logs: Iterable[tuple[Any, pd.DataFrame]], interval_ms: int) -> pd.DataFrame:
    """Per run and interval of ``raw.bw_logs`` (given the measured rows): the point, ``rep``, ``time_s`` and the
    aggregate ``bw_bytes`` over the run's jobs (their logs summed per interval of ``interval_ms``)."""
    parts = []
    for run, log in logs:
        slot = (log["time_ms"] / interval_ms).round().astype("int64")
        parts.append(log.assign(slot=slot, **{k: getattr(run, k) for k in POINT}, rep=run.rep))
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
