"""How many devices (and hosts) reach a target throughput, and which limit binds first: ``predict``'s model run
over the device count, before anything is bought or built, held to what the table in hand already measured.

    sizing(base, target, ceil, evidence=...)     per rw: the prediction for 1 ... ``max_devices`` devices, the fewest
                                                 that reach the target, and where a limit other than the devices
                                                 first binds
    evidence(table, base, layout, ceil)          the table's own multi-device rows of the layout against the model

Each of N devices runs the single device's best point at the baseline block size (``base``: ``predict.curve`` or
``predict.figures``; the best over numjobs and iodepth, fewest jobs on a tie, as ``baseline_and_tax.best_points`` chooses): N x
its jobs over the layout, at its queue depth. With ``devices_per_host`` the hosts grow with the devices
(ceil(N / devices_per_host), one network link each, each with its memory and cores); without, ``ceilings.hosts`` is
fixed.

The data in hand first. Where the results table measured the layout on several devices (``evidence``), a count it
measured is answered by what it measured (``source`` "measured"), and every count above it by the model held to
the table's ratio there (measured / predicted at the table's best point on that count, "held to the table"): the
answer never names fewer devices than the table measured falling short of the target, nor more than it measured
reaching it. Where the table and the model disagree by more than the margin (2%), ``evidence`` says by how much.

Every count up to ``max_devices`` is answered, and an answer says how far it stands from the evidence. Where no
ceiling that does not grow with the devices is known (memory, CPU with the device's CPU cost, network, uplink:
``ceilings.SHARED``), nothing but the devices bounds the prediction, as far as known, and every count scales without
end (one job a device, two thousand RAM disks, a terabyte per second). An answer above ``EXTRAPOLATION`` (4) x the
largest layout measured (1 for a single device or a published figure), two doublings past what any shared part of
the machine (memory, CPUs, the root complex, interrupts) has been seen to carry, is then flagged
(``extrapolated``), and ``reach`` says why and what would bound it. Where no count reaches the target, the answer
says which limit holds the last count and from which count it binds (``ceiling_limit``, ``ceiling_from``): a
ceiling, or the devices themselves, still growing where ``max_devices`` stops them.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from .. import baseline_and_tax
from . import curve as curves, loads
from .ceilings import SHARED, Ceilings
from .predict import nearest, predict
from ..significance import DEFAULT_MARGIN
from ...errors import AnalysisError, ConfigError
from ...measure.units import percent
from ..defaults import MAX_DEVICES

EXTRAPOLATION = 4  # without a shared ceiling, an answer beyond this many times the largest layout measured is flagged


def baseline_points(base: pd.DataFrame, baseline_bs: int = baseline_and_tax.BASELINE_BS) -> pd.DataFrame:
    """Per rw of the curve: its best point at the block size nearest ``baseline_bs`` (bs, numjobs, iodepth, bw)."""
    parts = []
    for rw, rows in base.groupby("rw", sort=True):
        at = rows[rows["bs"] == nearest(rows["bs"], baseline_bs)]
        parts.append(baseline_and_tax.best_points(at, ["rw"]))
    return pd.concat(parts, ignore_index=True)[["rw", "bs", "numjobs", "iodepth", "bw_bytes"]]


def _ceilings_for(ceilings: Ceilings, devices: int, devices_per_host: int | None) -> Ceilings:
    if devices_per_host is None:
        return ceilings
    return dataclasses.replace(ceilings, hosts=math.ceil(devices / devices_per_host), network_links=None)


def _check(target: float, devices_per_host, max_devices, ceilings: Ceilings) -> None:
    if isinstance(target, bool) or not isinstance(target, (int, float, np.number)) or not (
            np.isfinite(target) and target > 0):
        raise ConfigError(f"target {target!r} must be a throughput above 0, bytes/s")
    for name, value in (("devices_per_host", devices_per_host), ("max_devices", max_devices)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1):
            raise ConfigError(f"{name} = {value!r} must be a whole number above 0")
    if devices_per_host is not None and (ceilings.hosts != 1 or ceilings.network_links is not None):
        raise ConfigError(f"give either devices_per_host ({devices_per_host}) or a fixed count of hosts "
                          f"({ceilings.hosts}) and links ({ceilings.network_links}), not both")


def evidence(table: pd.DataFrame, base: pd.DataFrame, layout: str, ceilings: Ceilings = Ceilings(),
             chunk_bytes: int | None = None, devices_per_host: int | None = None,
             margin: float = DEFAULT_MARGIN) -> pd.DataFrame:
    """The table's own rows of ``layout`` on more than one device: per rw and count, its best point (``core``'s best
    of the point means) against the model at that same point, with the ceilings ``sizing`` gives that count:
    ``measured_bw_bytes``, ``predicted_bw_bytes``, ``error`` (measured / predicted - 1), ``contradicts`` (beyond
    ``margin`` either way) and ``beyond_curve``: its load on each device (numjobs x iodepth / devices) is more than
    the device's curve was measured at, so the model held the device at its largest measured load there
    (``analysis.prediction.loads``). Empty without such rows."""
    columns = ["rw", "devices", "bs", "numjobs", "iodepth", "measured_bw_bytes", "predicted_bw_bytes", "error",
               "contradicts", "beyond_curve"]
    points = baseline_and_tax.point_means(table) if table is not None and not table.empty else pd.DataFrame()
    if points.empty:
        return pd.DataFrame(columns=columns)
    mine = points[(points["layout"].astype(str) == layout) & (points["devices"] > 1)
                  & points["rw"].isin(set(base["rw"]))]
    if mine.empty:
        return pd.DataFrame(columns=columns)
    best = baseline_and_tax.best_points(mine, ["rw", "devices"])
    said = [predict(base, layout, [row], _ceilings_for(ceilings, row["devices"], devices_per_host), chunk_bytes)
            for row in best[["devices", "rw", "bs", "numjobs", "iodepth"]].to_dict("records")]
    out = best[["rw", "devices", "bs", "numjobs", "iodepth"]].assign(
        measured_bw_bytes=best["bw_bytes"].to_numpy(),
        predicted_bw_bytes=[float(frame["predicted_bw_bytes"].iloc[0]) for frame in said])
    out["error"] = out["measured_bw_bytes"] / out["predicted_bw_bytes"] - 1
    out["contradicts"] = out["error"].abs() > margin
    out["beyond_curve"] = loads.beyond_curve(out, curves.with_outstanding(base))
    return out[columns].reset_index(drop=True)


def largest_measured(table: pd.DataFrame | None) -> int:
    """The most devices any layout of ``table`` was measured on (1 without a table: a published figure)."""
    if table is None or table.empty:
        return 1
    return int(baseline_and_tax.rates(table)["devices"].max())


def _bounded(table: pd.DataFrame) -> bool:
    """Whether any term that does not grow with the devices is known at some count of ``table``."""
    return bool(table[[f"{t}_limit_bw_bytes" for t in SHARED]].notna().any().any())


def _held(rows: pd.DataFrame, found: pd.DataFrame) -> pd.DataFrame:
    """``rows`` (one rw's predictions by count) held to the table's evidence ``found``: a measured count answered by
    its measurement, a count above it by the model times the ratio there, a count below it by no more than it
    measured (``source``, ``model_bw_bytes``)."""
    out = rows.assign(model_bw_bytes=rows["predicted_bw_bytes"], source="model")
    for row in found.sort_values("devices").itertuples(index=False):
        ratio = row.measured_bw_bytes / row.predicted_bw_bytes
        above = rows["devices"] > row.devices
        for column in ("predicted_bw_bytes", "predicted_lo", "predicted_hi"):
            out.loc[above, column] = rows.loc[above, column] * ratio
        out.loc[above, "source"] = f"held to the table on {row.devices} devices ({percent(ratio - 1, signed=True)})"
        at = rows["devices"] == row.devices
        out.loc[at, ["predicted_bw_bytes", "predicted_lo", "predicted_hi"]] = row.measured_bw_bytes
        out.loc[at, "source"] = "measured"
    for row in found.itertuples(index=False):  # fewer devices deliver no more than more did
        below = (out["devices"] < row.devices) & (out["predicted_bw_bytes"] > row.measured_bw_bytes)
        out.loc[below, ["predicted_bw_bytes", "predicted_lo", "predicted_hi"]] = out.loc[
            below, ["predicted_bw_bytes", "predicted_lo", "predicted_hi"]].clip(upper=row.measured_bw_bytes)
        out.loc[below, "source"] = f"no more than the table measured on {row.devices} devices"
    return out


def sizing(base: pd.DataFrame, target: float, ceilings: Ceilings = Ceilings(), layout: str = "jbod",
           devices_per_host: int | None = None, max_devices: int = MAX_DEVICES,
           baseline_bs: int = baseline_and_tax.BASELINE_BS, table: pd.DataFrame | None = None,
           chunk_bytes: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(rows, answers)``. ``rows``: ``predict``'s frame for every rw and 1 ... ``max_devices`` devices (fewer
    where nothing but the devices bounds it: ``EXTRAPOLATION``), held to ``table``'s own rows of ``layout``
    (``evidence``; ``model_bw_bytes`` the model's own, ``source`` which answered).
    ``answers``, per rw: ``devices`` (the fewest whose prediction reaches ``target``; NaN when none up to the last
    count does), ``devices_lo`` (the fewest whose interval's low side does), their ``hosts``,
    ``predicted_bw_bytes`` and ``predicted_limit`` there, ``other_limit`` and ``other_limit_devices``: the first
    limit other than the devices to bind as N grows, and from how many devices ("" and NaN within the counts none
    does), ``ceiling_bw_bytes`` and ``ceiling_limit``: the prediction at the last count and the limit binding there,
    ``ceiling_from``: the fewest devices from which that limit binds to the last count, ``extrapolated``: the answer
    is beyond ``EXTRAPOLATION`` x the largest layout measured with no shared ceiling known, ``reach``: how far the
    evidence holds the counts ("" where a shared ceiling bounds them)."""
    _check(target, devices_per_host, max_devices, ceilings)
    points = pd.DataFrame([dict(devices=n, rw=p.rw, bs=p.bs, numjobs=n * p.numjobs, iodepth=p.iodepth)
                           for p in baseline_points(base, baseline_bs).itertuples(index=False)
                           for n in range(1, max_devices + 1)])
    hosts = points["devices"].map(lambda n: _ceilings_for(ceilings, n, devices_per_host).hosts)
    parts = [predict(base, layout, group, _ceilings_for(ceilings, int(group["devices"].iloc[0]), devices_per_host),
                     chunk_bytes, stripe_span=False)
             for _, group in points.groupby(hosts, sort=True)]
    rows = pd.concat(parts, ignore_index=True).sort_values(["rw", "devices"], kind="mergesort")
    rows = rows.reset_index(drop=True)
    if rows["predicted_bw_bytes"].isna().all():
        raise AnalysisError(f"no prediction: {rows['predicted_note'].iloc[0]}")
    found = evidence(table, base, layout, ceilings, chunk_bytes, devices_per_host)
    held, answers = [], []
    for rw, group in rows.groupby("rw", sort=True):
        group = _held(group, found[found["rw"] == rw])
        held.append(group)
        answers.append(_answer(group, target, _evidence_reach(group, table)))
    return pd.concat(held, ignore_index=True), pd.DataFrame(answers)


def _first(rows: pd.DataFrame, mask: pd.Series) -> pd.Series | None:
    hits = rows[mask]
    return hits.iloc[0] if len(hits) else None


def _evidence_reach(rows: pd.DataFrame, table: pd.DataFrame | None) -> int | None:
    """The largest count the evidence holds where nothing but the devices bounds ``rows`` (``EXTRAPOLATION`` x the
    largest layout measured); None where a shared ceiling is known at some count."""
    return None if _bounded(rows) else EXTRAPOLATION * largest_measured(table)


def _ceiling_from(rows: pd.DataFrame) -> int:
    """The fewest devices from which the limit binding the last count binds every count to the last."""
    limits = rows["predicted_limit"].to_numpy()
    start = len(limits) - 1
    while start > 0 and limits[start - 1] == limits[-1]:
        start -= 1
    return int(rows["devices"].iloc[start])


def _reach(evidence_reach: int | None) -> str:
    """Where the evidence stops holding the counts, in words ("" where a shared ceiling holds them)."""
    if evidence_reach is None:
        return ""
    measured = baseline_and_tax.count_of(evidence_reach // EXTRAPOLATION, "device")
    return (f"nothing but the devices bounds the prediction as far as known: beyond {evidence_reach} devices "
            f"({EXTRAPOLATION} x the largest layout measured, {measured}) it "
            f"is an extrapolation, which a known memory, network, uplink or CPU ceiling would bound")


def _answer(rows: pd.DataFrame, target: float, evidence_reach: int | None = None) -> dict:
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
                ceiling_limit=rows["predicted_limit"].iloc[-1], ceiling_from=_ceiling_from(rows),
                max_devices=int(rows["devices"].iloc[-1]),
                source=reach["source"] if reach is not None and "source" in rows else "",
                extrapolated=bool(evidence_reach is not None and (reach is None or reach["devices"] > evidence_reach)),
                reach=_reach(evidence_reach))


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
