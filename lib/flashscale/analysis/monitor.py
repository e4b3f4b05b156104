"""What the monitoring series say: were the devices the bottleneck, or something else? Pure functions on the
monitoring table (``measure.monitoring``: one row per sample and device).

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
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from ..errors import AnalysisError

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
