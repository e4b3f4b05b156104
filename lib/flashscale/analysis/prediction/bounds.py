"""The interval a prediction's unknowns leave (issue 41): every prediction is a point inside ends that come from what
the data cannot pin, not only from the runs' spread; an end nothing bounds is open (NaN), and said.

    ends(lows, highs, open_low, beyond)   the predicted interval (``predicted_lo_bw_bytes``, ``_hi_``) from each term's
                                          low and high side
    unknowns(open_low, beyond, widths)    which unknowns made it wide, the open ends first, then the widest
                                          (``predicted_unknown``)
    meets(m_lo, m_hi, p_lo, p_hi)         the measured interval meets the predicted one (an open end meets all)
    closed(lo, hi)                        both ends known: only such an interval can be missed (scored as met)
    width(lo, hi)                         hi / lo (inf where an end is open)
    words(lo, hi, unknown)                the interval for people: "27.0–33.4 GB/s", "at most 33.4 GB/s, lower end
                                          open: the layer's CPU cost"
    closing_sentences(scored)             which run would close which open ends: the layout on 2 devices (the
                                          layer's cost), a jbod on as many devices (the host's shared paths), the
                                          single device at the load beyond its curve (or a ceiling given)

The unknowns, each an end of its own (``analysis.prediction.predict`` reads them):

    the layer's CPU cost   a layer between the jobs and the devices (a stripe: md, LVM, btrfs, a parallel file
                           system) with no calibration: held below what the host's CPUs carry at the single device's
                           own cost per byte (the cpu term, where the cores are given; at a cap fio's own CPU time
                           per byte, a floor: ``curve.CPU_AT_CAP``), its lower end open
    the host's shared paths
                           more than one device at once (its PCIe root, memory, the devices' aggregate) where the
                           host was never measured carrying them together: its lower end open. What the reference
                           layout (a jbod) carried on as many devices of the host is such a measurement, for the
                           layouts on top of it (never for the reference itself)
    load beyond the curve  more in flight on a device than the single device was measured at: held at the largest
                           (the point), up to the ceilings known (the smallest of the other terms); none known: open
    stripe unit            a stripe whose chunk the table does not give: between what its possible chunks give
                           (``routing.chunks_possible``), the point at its tool's default where it has one, else
                           their geometric middle
    load below the curve   fewer in flight than the least measured: between Little's law and the rate measured at
                           the least load (``curve.Slice.values``)
    repetitions            the single device's own t interval
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import pandas as pd

from ...layouts import describe
from ...measure.units import interval, rate

LAYER_CPU = "the layer's CPU cost"
HOST = "the host's shared paths"
BEYOND = "load beyond the curve"
STRIPE_UNIT = "stripe unit"
BELOW = "load below the curve"
REPETITIONS = "repetitions"
UNKNOWNS = (LAYER_CPU, HOST, BEYOND, STRIPE_UNIT, BELOW, REPETITIONS)
OPEN_LOW = (LAYER_CPU, HOST)  # the unknowns that leave a lower end open  # open ends first, then the widest first
NOT_CEILINGS = ("devices", "layer")  # terms that grow with the devices' own rate: no ceiling beyond the curve


def _least(values) -> float:
    finite = [float(v) for v in values if np.isfinite(v)]
    return min(finite) if finite else np.nan


def ends(lows: Mapping[str, float], highs: Mapping[str, float], open_low, beyond: bool) -> tuple[float, float]:
    """The interval of the smallest term: the least of the terms' low sides (NaN where ``open_low``: a layer's CPU
    cost, or the host's shared paths, not measured), and the least of their high sides, or, ``beyond`` the curve, the least of the ceilings known
    (NaN: none known, no upper end invented)."""
    lo = np.nan if open_low else _least(lows.values())
    if beyond:
        return lo, _least(v for t, v in highs.items() if t not in NOT_CEILINGS)
    return lo, _least(highs.values())


def unknowns(open_low, beyond: bool, widths: Mapping[str, float]) -> str:
    """Which unknowns made the interval wide, comma-separated: the open ends first (``open_low``: the unknowns of
    ``OPEN_LOW`` that leave the lower end open, or True for the layer's CPU cost), then those of ``widths`` (each
    unknown's own hi / lo) above 1, the widest first; "" where nothing is unknown (an exact point)."""
    named = [LAYER_CPU] if open_low is True else [u for u in OPEN_LOW if u in (open_low or ())]
    named += [BEYOND] if beyond else []
    named += [u for u, _ in sorted(((u, w) for u, w in widths.items() if np.isfinite(w) and w > 1 + 1e-9),
                                   key=lambda item: -item[1])]
    return ",".join(named)


def meets(m_lo: float, m_hi: float, p_lo: float, p_hi: float) -> bool:
    """Whether the measured interval [m_lo, m_hi] meets the predicted [p_lo, p_hi] (an open end, NaN, reaches
    everything on its side)."""
    return (math.isnan(p_lo) or m_hi >= p_lo) and (math.isnan(p_hi) or m_lo <= p_hi)


def closed(lo: float, hi: float) -> bool:
    """Whether the interval [lo, hi] has both ends (neither open, NaN): only then can a measurement miss it."""
    return bool(np.isfinite(lo) and np.isfinite(hi))


def width(lo: float, hi: float) -> float:
    """The predicted interval's width as hi / lo: inf where an end is open or the low end is 0."""
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo <= 0:
        return math.inf
    return hi / lo


def words(lo: float, hi: float, unknown: str = LAYER_CPU) -> str:
    """The interval for people: both ends ("27.0–33.4 GB/s"), or an end said open and why, the lower end's from
    ``unknown`` (``predicted_unknown``: those of ``OPEN_LOW`` it names) ("at most 33.4 GB/s, lower end open: the
    layer's CPU cost"; "at least 33.4 GB/s, upper end open: load beyond the curve, no ceiling known")."""
    if np.isfinite(lo) and np.isfinite(hi):
        return interval(lo, hi)
    named = [u for u in str(unknown if isinstance(unknown, str) else "").split(",") if u in OPEN_LOW]
    why = " and ".join(named or [LAYER_CPU])
    low_open, high_open = f"lower end open: {why}", f"upper end open: {BEYOND}, no ceiling known"
    if np.isfinite(hi):
        return f"at most {rate(hi)}, {low_open}"
    if np.isfinite(lo):
        return f"at least {rate(lo)}, {high_open}"
    return f"open at both ends ({why}; {BEYOND}, no ceiling known)"


def _open(scored: pd.DataFrame, unknown: str) -> pd.DataFrame:
    """The scored points whose lower end (``unknown`` of ``OPEN_LOW``) or upper end (``BEYOND``) is open for
    ``unknown``."""
    named = scored["predicted_unknown"].astype("string").fillna("").str.split(",").map(lambda u: unknown in u)
    end = scored["predicted_hi_bw_bytes"] if unknown == BEYOND else scored["predicted_lo_bw_bytes"]
    return scored[named.astype(bool) & end.isna()]


def closing_sentences(scored: pd.DataFrame) -> list[str]:
    """Which cheap run would close which of the model's open ends (``predict``'s rows, scored or not): "md-raid0 on
    2 devices would measure its layer's cost and close the lower end of its 2 point(s) on 12 devices"; "jbod on 12
    devices, each device at the single device's largest measured load or beyond, would close the lower end of 10
    point(s) (gpfs-1m, ...)"; "the single device measured at 11 in flight, or a ceiling given (--ceilings), would
    close the upper end of 3 read point(s)". Nothing where no end is open (or the rows predate the interval)."""
    if not {"predicted_unknown", "predicted_lo_bw_bytes", "predicted_hi_bw_bytes"} <= set(scored.columns):
        return []
    out = []
    for (layout, devices), group in _open(scored, LAYER_CPU).groupby(["layout", "devices"], sort=True):
        fewer = "on 2 devices" if devices > 2 else "'s file system on one device"
        out.append(f"{layout} {fewer} would measure its layer's cost and close the lower end of its {len(group)} "
                   f"point(s) on {devices} devices ({LAYER_CPU})")
    host = _open(scored, HOST)
    host = host[[not describe(str(name)).per_device for name in host["layout"]]]
    for devices, group in host.groupby("devices", sort=True):
        out.append(f"a jbod on {devices} devices, each device at the single device's largest measured load or beyond, "
                   f"would close the lower end of {len(group)} point(s) ({', '.join(sorted(set(group['layout'])))}; "
                   f"{HOST})")
    beyond = _open(scored, BEYOND)
    for rw, group in beyond.groupby("rw", sort=True):
        load = (group["numjobs"] * group["iodepth"] / group["devices"]).max()
        out.append(f"the single device measured at {load:.3g} in flight, or a ceiling given (--ceilings), would close "
                   f"the upper end of {len(group)} {rw} point(s) ({BEYOND})")
    return out
