"""What a run's series say over its time: the monitor's samples of the devices and CPUs (were the devices the
bottleneck, or something else?) and fio's own bandwidth logs (how steady was the rate?). Pure functions on the
monitoring table (``measure.monitoring``: one row per sample and device) and on the logs ``measure.raw`` reads.

A device's **load** in a sample is the larger of its utilisation (iostat's %util as a fraction) and its bandwidth
against its cap in each direction, when the cap is known. Both are needed: on the emulated array the kernel's
throttle holds I/O *before* the device, so a loop device at its 200 MB/s cap shows a low %util; on real devices
without a known cap, %util is what there is (an NVMe device serving parallel requests can be 100% "utilised" and
still have room: read a load near 1.0 as "busy all the time", not "can give no more").

``bottlenecks`` gives one verdict per run (layout, workload, point, rep), from each device's median load over the
run's samples and the busiest CPU's median:

    devices   every device at least ``busy`` loaded: the devices were the bottleneck
    uneven    some devices at least ``busy``, others under half that: one (or a few) did the work
    cpu       no device saturated, and one CPU at least ``cpu_busy``: the CPU (one thread) was the limit
    neither   nothing saturated: latency, the software, or too few requests in flight

A sweep run with ``LOG_EXTRA`` (``log_extra``: ``write_bw_log`` and ``log_avg_msec``) leaves ``bw_bw.<job>.log``
files beside its fio.json: one line per interval, ``time_ms, KiB/s, direction, bs, offset`` (``raw.bw_logs`` reads
them). ``series`` sums the jobs of each run per interval into one aggregate bandwidth per (run, time);
``stability`` says how much it moves.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from .baseline_and_tax import POINT
from ..errors import AnalysisError
from ..measure import raw

BUSY = 0.9
CPU_BUSY = 0.95
RUN = ["layout", "workload", "point", "rep"]
VERDICTS = ("devices", "uneven", "cpu", "neither")


def load(monitor: pd.DataFrame, caps: Mapping[str, float] | None = None) -> pd.Series:
    """Each sample's device load: max(util, read bandwidth / read cap, write bandwidth / write cap)."""
    missing = [c for c in ("util", "read_bw_bytes", "write_bw_bytes") if c not in monitor.columns]
    if missing:
        raise AnalysisError(f"the monitoring table lacks {missing}")
    parts = [monitor["util"].astype("float64")]
    for direction in ("read", "write"):
        cap = (caps or {}).get(direction)
        if cap:
            parts.append(monitor[f"{direction}_bw_bytes"].astype("float64") / float(cap))
    return pd.concat(parts, axis=1).max(axis=1)


def per_device(monitor: pd.DataFrame, caps: Mapping[str, float] | None = None) -> pd.DataFrame:
    """One row per run and device: median load, mean read / write bandwidth, mean utilisation and queue depth."""
    frame = monitor[monitor["device"].notna()].assign(load=lambda m: load(m, caps))
    if frame.empty:
        return pd.DataFrame(columns=[*RUN, "device", "load", "read_bw_bytes", "write_bw_bytes", "util",
                                     "queue_depth"])
    return (frame.groupby(RUN + ["device"], dropna=False)
            .agg(load=("load", "median"), read_bw_bytes=("read_bw_bytes", "mean"),
                 write_bw_bytes=("write_bw_bytes", "mean"), util=("util", "mean"),
                 queue_depth=("queue_depth", "mean"))
            .reset_index())


def verdict(loads: pd.Series, cpu_busiest: float, busy: float = BUSY, cpu_busy: float = CPU_BUSY) -> str:
    """One run's verdict (``VERDICTS``) from its devices' median loads and its busiest CPU's median."""
    if len(loads) and (loads >= busy).all():
        return "devices"
    if len(loads) > 1 and (loads >= busy).any() and (loads < busy / 2).any():
        return "uneven"
    if cpu_busiest >= cpu_busy:
        return "cpu"
    return "neither"


def bottlenecks(monitor: pd.DataFrame, caps: Mapping[str, float] | None = None, busy: float = BUSY,
                cpu_busy: float = CPU_BUSY) -> pd.DataFrame:
    """One row per run: devices, how many were busy, the least and most loaded, the busiest CPU, the verdict."""
    devices = per_device(monitor, caps)
    cpus = monitor.groupby(RUN, dropna=False)["cpu_busiest"].median().rename("cpu_busiest").reset_index()
    rows = []
    for _, run in cpus.iterrows():
        mine = devices
        for column in RUN:
            mine = mine[(mine[column] == run[column]) | (mine[column].isna() & pd.isna(run[column]))]
        loads = mine["load"].astype("float64")
        rows.append({**{c: run[c] for c in RUN}, "devices": len(loads), "busy_devices": int((loads >= busy).sum()),
                     "min_load": loads.min() if len(loads) else np.nan,
                     "max_load": loads.max() if len(loads) else np.nan, "cpu_busiest": run["cpu_busiest"],
                     "verdict": verdict(loads, run["cpu_busiest"], busy, cpu_busy)})
    return pd.DataFrame(rows, columns=[*RUN, "devices", "busy_devices", "min_load", "max_load", "cpu_busiest",
                                       "verdict"])


def device_sum(monitor: pd.DataFrame, direction: str = "write") -> pd.DataFrame:
    """Per run, the devices' bandwidth in ``direction`` summed per sample, then its median over the samples where
    the devices moved anything (bytes/s; the median, so the partial seconds at a run's edges do not pull it down):
    what the devices did, to set beside what the benchmark reported."""
    column = f"{direction}_bw_bytes"
    frame = monitor[monitor["device"].notna()]
    summed = frame.groupby(RUN + ["t_s"], dropna=False)[column].sum().reset_index()
    active = summed[summed[column] > 0]
    return active.groupby(RUN, dropna=False)[column].median().rename(f"devices_{column}").reset_index()


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
