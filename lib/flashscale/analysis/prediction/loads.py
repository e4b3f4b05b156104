"""Whether what a number compares was measured at the same load: the I/O in flight (numjobs x iodepth).

Pure. Efficiency divides a layout's best point by its devices x the single device's best; the tax divides it by
the reference layout's best; a plan holds a layout's rows to the single device's curve. Each is a comparison of
layouts only where both sides were measured at the loads compared. An imported folder often holds a layout swept
far past what its single device ever ran (32 jobs at iodepth 32 on a stripe, one job at iodepth 1 on the device):
its efficiency then reads 365%, which says the load, not the layout. So each comparison says where its sides'
loads part:

    baseline    the layout's best point puts more I/O in flight on each of its devices (its load / its devices)
                than any single-device row of its rw was measured at: the baseline never saw that load
    reference   the reference layout, at the same devices and rw, was never measured at the best point's load
    above 100%  an efficiency whose whole interval lies above 100%: N devices delivered more than N times one,
                which a layout cannot; the loads (or a cache) differ
"""
from __future__ import annotations

import math
from typing import Iterable

import pandas as pd

from .. import baseline_and_tax
from ...measure.units import percent

BASELINE, REFERENCE = "baseline", "reference"


def _loads(rows: pd.DataFrame) -> pd.Series:
    return pd.to_numeric(rows["numjobs"], errors="coerce") * pd.to_numeric(rows["iodepth"], errors="coerce")


def flags(frame: pd.DataFrame, summary: pd.DataFrame, reference: str | None) -> pd.DataFrame:
    """``summary`` (``stats.summary_intervals``) with ``best_load`` (the best point's numjobs x iodepth) and
    ``load_flag``: ``baseline``, ``reference``, both (comma-separated) or empty (module docstring)."""
    rates = baseline_and_tax.rates(frame)
    rates = rates.assign(load=_loads(rates))
    single = rates[rates["devices"] == 1].groupby("rw")["load"].max()
    referenced = rates[rates["layout"].astype(str) == str(reference)].groupby(["devices", "rw"])["load"].agg(set) \
        if reference is not None else pd.Series(dtype=object)
    out = summary.assign(best_load=_loads(summary.rename(columns={"best_numjobs": "numjobs",
                                                                   "best_iodepth": "iodepth"})))
    found = []
    for row in out.itertuples(index=False):
        said = []
        load, devices = row.best_load, row.devices
        if math.isfinite(load) and devices > 1 and row.rw in single.index and load / devices > single[row.rw]:
            said.append(BASELINE)
        known = referenced.get((devices, row.rw)) if reference is not None else None
        if known and str(row.layout) != str(reference) and math.isfinite(load) and load not in known:
            said.append(REFERENCE)
        found.append(", ".join(said))
    return out.assign(load_flag=found)


def beyond_curve(points: pd.DataFrame, base: pd.DataFrame) -> pd.Series:
    """Per point (``rw``, ``devices``, ``numjobs``, ``iodepth``): whether it puts more I/O in flight on each device
    than the single device's curve ``base`` was measured at for its rw (the curve is then held at its end)."""
    most = base.groupby("rw")["outstanding"].max()
    per_device = _loads(points) / pd.to_numeric(points["devices"], errors="coerce")
    return pd.Series([bool(rw in most.index and load > most[rw]) for rw, load in zip(points["rw"], per_device)],
                     index=points.index, dtype=bool)


def sentences(flagged: pd.DataFrame, frame: pd.DataFrame, reference: str | None) -> list[str]:
    """Each flagged row of ``flags`` in words, and each efficiency above 100% beyond its interval."""
    rates = baseline_and_tax.rates(frame)
    rates = rates.assign(load=_loads(rates))
    out = []
    for row in flagged.itertuples(index=False):
        where = f"{row.layout} {row.rw} on {baseline_and_tax.count_of(row.devices, 'device')}"
        at = f"{baseline_and_tax.count_of(row.best_numjobs, 'job')} x iodepth {row.best_iodepth}"
        if BASELINE in row.load_flag:
            most = rates[(rates["devices"] == 1) & (rates["rw"] == row.rw)]["load"].max()
            out.append(f"{where}: its best point ({at}, {row.best_load / row.devices:g} in flight a device) was "
                       f"measured at a load the single device never was (at most {most:g} in flight): its "
                       f"efficiency ({percent(row.efficiency)}) compares loads, not layouts")
        if REFERENCE in row.load_flag:
            known = sorted(rates[(rates["layout"].astype(str) == str(reference)) & (rates["devices"] == row.devices)
                                 & (rates["rw"] == row.rw)]["load"].unique())
            out.append(f"{where}: the reference {reference} was not measured at its best point's load ({at}: "
                       f"{row.best_load:g} in flight; it was at {', '.join(f'{k:g}' for k in known)}): its tax "
                       "compares different loads")
    return out + above_ideal(flagged)


def above_ideal(summary: pd.DataFrame, columns: Iterable[str] = ("efficiency_lo", "efficiency")) -> list[str]:
    """Each row whose efficiency lies above 100% (its interval's low end where it has one): said, not kept quiet."""
    low = next((c for c in columns if c in summary.columns), None)
    if low is None:
        return []
    above = summary[pd.to_numeric(summary[low], errors="coerce") > 1.0]
    return [f"{r.layout} {r.rw} on {baseline_and_tax.count_of(r.devices, 'device')}: efficiency {percent(r.efficiency)} is above "
            f"100%: {r.devices} devices cannot deliver more than {r.devices} times one; the loads compared (or a "
            "cache) differ" for r in above.itertuples(index=False)]
