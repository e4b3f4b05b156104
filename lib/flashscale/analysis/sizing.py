"""How many devices (and hosts) reach a target throughput, and which limit binds first: ``predict``'s model run
over the device count, before anything is bought or built.

    sizing(base, target, limits)   per rw: the prediction for 1 ... ``max_devices`` devices, the fewest that reach
                                   the target, and where a limit other than the devices first binds

Each of N devices runs the single device's best point at the baseline block size (``base``: ``predict.curve`` or
``predict.figures``; the best over numjobs and iodepth, fewest jobs on a tie, as ``core.best_points`` chooses): N x
its jobs over the layout, at its queue depth. With ``devices_per_host`` the hosts grow with the devices
(ceil(N / devices_per_host), one network link each, each with its memory and cores); without, ``limits.hosts`` is
fixed.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from . import core
from .predict import Limits, nearest, predict
from ..errors import AnalysisError, ConfigError

MAX_DEVICES = 512


def baseline_points(base: pd.DataFrame, baseline_bs: int = core.BASELINE_BS) -> pd.DataFrame:
    """Per rw of the curve: its best point at the block size nearest ``baseline_bs`` (bs, numjobs, iodepth, bw)."""
    parts = []
    for rw, rows in base.groupby("rw", sort=True):
        at = rows[rows["bs"] == nearest(rows["bs"], baseline_bs)]
        parts.append(core.best_points(at, ["rw"]))
    return pd.concat(parts, ignore_index=True)[["rw", "bs", "numjobs", "iodepth", "bw_bytes"]]


def _limits_for(limits: Limits, devices: int, devices_per_host: int | None) -> Limits:
    if devices_per_host is None:
        return limits
    return dataclasses.replace(limits, hosts=math.ceil(devices / devices_per_host), links=None)


def _check(target: float, devices_per_host, max_devices, limits: Limits) -> None:
    if isinstance(target, bool) or not isinstance(target, (int, float, np.number)) or not (
            np.isfinite(target) and target > 0):
        raise ConfigError(f"target {target!r} must be a throughput above 0, bytes/s")
    for name, value in (("devices_per_host", devices_per_host), ("max_devices", max_devices)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1):
            raise ConfigError(f"{name} = {value!r} must be a whole number above 0")
    if devices_per_host is not None and (limits.hosts != 1 or limits.links is not None):
        raise ConfigError(f"give either devices_per_host ({devices_per_host}) or a fixed count of hosts "
                          f"({limits.hosts}) and links ({limits.links}), not both")


def sizing(base: pd.DataFrame, target: float, limits: Limits = Limits(), layout: str = "jbod",
           devices_per_host: int | None = None, max_devices: int = MAX_DEVICES,
           baseline_bs: int = core.BASELINE_BS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(table, answers)``. ``table``: ``predict``'s frame for every rw and 1 ... ``max_devices`` devices.
    ``answers``, per rw: ``devices`` (the fewest whose prediction reaches ``target``; NaN when none up to
    ``max_devices`` does), ``devices_lo`` (the fewest whose interval's low side does), their ``hosts``,
    ``predicted_bw_bytes`` and ``predicted_limit`` there, ``other_limit`` and ``other_limit_devices``: the first
    limit other than the devices to bind as N grows, and from how many devices ("" and NaN within
    ``max_devices`` none does), and ``ceiling_bw_bytes``: the prediction at ``max_devices``."""
    _check(target, devices_per_host, max_devices, limits)
    points = pd.DataFrame([dict(devices=n, rw=p.rw, bs=p.bs, numjobs=n * p.numjobs, iodepth=p.iodepth)
                           for p in baseline_points(base, baseline_bs).itertuples(index=False)
                           for n in range(1, max_devices + 1)])
    hosts = points["devices"].map(lambda n: _limits_for(limits, n, devices_per_host).hosts)
    parts = [predict(base, layout, group, _limits_for(limits, int(group["devices"].iloc[0]), devices_per_host))
             for _, group in points.groupby(hosts, sort=True)]
    table = pd.concat(parts, ignore_index=True).sort_values(["rw", "devices"], kind="mergesort")
    table = table.reset_index(drop=True)
    if table["predicted_bw_bytes"].isna().all():
        raise AnalysisError(f"no prediction: {table['predicted_note'].iloc[0]}")
    answers = [_answer(rows, target) for _, rows in table.groupby("rw", sort=True)]
    return table, pd.DataFrame(answers)


def _first(rows: pd.DataFrame, mask: pd.Series) -> pd.Series | None:
    hits = rows[mask]
    return hits.iloc[0] if len(hits) else None


def _answer(rows: pd.DataFrame, target: float) -> dict:
    rows = rows.sort_values("devices")
    reach = _first(rows, rows["predicted_bw_bytes"] >= target)
    sure = _first(rows, rows["predicted_lo"] >= target)
    other = _first(rows, rows["predicted_limit"] != "devices")
    return dict(rw=rows["rw"].iloc[0], target_bw_bytes=target,
                devices=reach["devices"] if reach is not None else np.nan,
                hosts=reach["hosts"] if reach is not None else np.nan,
                predicted_bw_bytes=reach["predicted_bw_bytes"] if reach is not None else np.nan,
                predicted_lo=reach["predicted_lo"] if reach is not None else np.nan,
                predicted_hi=reach["predicted_hi"] if reach is not None else np.nan,
                predicted_limit=reach["predicted_limit"] if reach is not None else "",
                devices_lo=sure["devices"] if sure is not None else np.nan,
                other_limit=other["predicted_limit"] if other is not None else "",
                other_limit_devices=other["devices"] if other is not None else np.nan,
                ceiling_bw_bytes=rows["predicted_bw_bytes"].iloc[-1],
                ceiling_limit=rows["predicted_limit"].iloc[-1], max_devices=int(rows["devices"].iloc[-1]))


def shown(table: pd.DataFrame, answers: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``table`` worth a reader's look: 1, 2, 4, ... up to twice the answer (or every row to
    ``max_devices`` when there is none), the answer, the one before it and where another limit first binds."""
    keep = []
    for answer in answers.itertuples(index=False):
        rows = table[table["rw"] == answer.rw]
        top = int(min(2 * answer.devices, answer.max_devices)) if np.isfinite(answer.devices) else answer.max_devices
        wanted = {2 ** k for k in range(int(math.log2(top)) + 1)} | {top}
        wanted |= {int(v) for v in (answer.devices - 1, answer.devices, answer.devices_lo, answer.other_limit_devices)
                   if np.isfinite(v) and v >= 1}
        keep.append(rows[rows["devices"].isin(wanted)])
    return pd.concat(keep).sort_values(["rw", "devices"]).reset_index(drop=True)
