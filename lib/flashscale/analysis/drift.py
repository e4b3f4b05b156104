"""The tax reference's drift over a campaign: measured before the layouts taxed against it and again after them.

A campaign measures the reference (jbod, or the single device standing in for it) first and every layout after it:
what changes over the campaign (a device warming, its garbage collection, another tenant on the machine) then reads
as the layouts' tax, and no table can tell. ``BRACKET=True`` (``measure.sweep.Sweep.bracket``) builds the reference
anew after the last layout and sweeps it once more; those rows are of phase ``bracket``, never read as the
reference's runs (``baseline_and_tax.measured``). This module reads them:

    bracket_rates(frame)             the bracket's runs that are rates (as ``baseline_and_tax.rates`` of the sweep)
    drift_test(before, after, ...)   the drift at one point: 1 - the ratio of the geometric means of the runs after
                                     to those before, its interval and p-value (``significance.tax_test``: Welch's
                                     test on the logs, Hsu's degrees of freedom, each side's spread floored at what
                                     a rate resolves), and whether it drifted
    drifts(frame, reference, ...)    every bracketed point of the reference: its runs before and after, the drift
    sentences(frame, reference, ...) the drift in words, for the report

A point **drifted** where the drift is beyond the margin (``TAX_MARGIN``) and the test says it is no noise (its
p-value under 1 - ``confidence``): the tax verdicts at that point are then withheld (``stats.tax_tests``:
``WITHHELD``), whatever the layout, since a layout measured between the two sweeps may have been measured at either
rate or between them. Without a drift the reference read unchanged withholds nothing; at no drift at all a point is
withheld at most 1 - ``confidence`` of the time (the test's level, two-sided; both conditions must hold), measured
in tests/test_drift.py and ``make bench-stats``. A drift within the margin is said, never acted on: a tax verdict
holds its margin against the reference as first measured.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..measure.results import BRACKET_PHASE
from ..measure.units import percent
from .baseline_and_tax import failed, flag, rates
from .defaults import DEFAULT_MARGIN
from .significance import tax_test

NAN = float("nan")
WITHHELD = "withheld: the reference drifted"  # a tax verdict at a point where the reference drifted
POINT = ["layout", "devices", "rw", "bs", "numjobs", "iodepth"]


@dataclass(frozen=True)
class Drift:
    """One point's drift: ``drift`` = 1 - the geometric mean of the runs after / of those before (positive: the
    reference was slower after), its ``confidence`` interval ``lo``-``hi``, the p-value of no drift, the runs on
    each side, and whether it ``drifted`` (beyond the margin and no noise)."""

    drift: float
    lo: float
    hi: float
    p: float
    before: int
    after: int
    drifted: bool


def drift_test(before, after, margin: float = DEFAULT_MARGIN, confidence: float = 0.95) -> Drift:
    """The drift from the runs ``before`` (the reference's sweep) to those ``after`` (its bracket) at one point:
    ``significance.tax_test`` of ``after`` against ``before``, read as a drift. Fewer than two runs on a side: the
    drift is the ratio of the means of what there is, with no interval, and never ``drifted``."""
    test = tax_test(after, before, confidence)
    drift = NAN if np.isnan(test.log_diff) else float(-np.expm1(test.log_diff))
    if np.isnan(drift):  # under two runs a side: tax_test gives no test, only its ratio of means
        return Drift(test.tax, NAN, NAN, NAN, test.n_reference, test.n_layout, False)
    drifted = bool(test.p_value < 1 - confidence and abs(drift) > margin)
    return Drift(drift, test.lo, test.hi, test.p_value, test.n_reference, test.n_layout, drifted)


def bracket_rates(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of the reference's bracket (phase ``bracket``) that are rates: not warm-up, not failed, not flagged
    ``too_short``, a ``bw_bytes`` that is a finite rate above 0; none where the table has no bracket."""
    if "phase" not in frame.columns:
        return frame.iloc[0:0]
    rows = frame[frame["phase"].astype("string").str.strip().eq(BRACKET_PHASE).fillna(False).astype(bool)]
    rows = rows[~flag(rows, "warmup")] if "warmup" in rows.columns else rows
    rows = rows[~failed(rows)]
    rows = rows[~flag(rows, "too_short")] if "too_short" in rows.columns else rows
    rate = pd.to_numeric(rows["bw_bytes"], errors="coerce") if "bw_bytes" in rows.columns else pd.Series(dtype=float)
    return rows[np.isfinite(rate) & (rate > 0)].assign(bw_bytes=rate).reset_index(drop=True)


def drifts(frame: pd.DataFrame, reference: str, margin: float = DEFAULT_MARGIN,
           confidence: float = 0.95) -> pd.DataFrame:
    """Every point of ``reference`` that has a bracket: ``POINT``, ``drift``, ``drift_lo``, ``drift_hi``,
    ``drift_p``, ``before_reps``, ``after_reps`` and ``drifted`` (``drift_test``); empty without a bracket."""
    columns = [*POINT, "drift", "drift_lo", "drift_hi", "drift_p", "before_reps", "after_reps", "drifted"]
    after = bracket_rates(frame)
    after = after[after["layout"] == reference]
    if after.empty:
        return pd.DataFrame(columns=columns)
    before = rates(frame)
    before = before[before["layout"] == reference]
    keys = [c for c in POINT if c in after.columns]
    found = []
    for key, runs in after.groupby(keys, sort=True, observed=True):
        mask = np.logical_and.reduce([before[c].astype(object) == v for c, v in zip(keys, key)])
        earlier = before[mask]["bw_bytes"].to_numpy(float)
        if not earlier.size:
            continue
        d = drift_test(earlier, runs["bw_bytes"].to_numpy(float), margin, confidence)
        found.append((*key, d.drift, d.lo, d.hi, d.p, d.before, d.after, d.drifted))
    return pd.DataFrame(found, columns=columns).astype({"drifted": bool})


def _change(drift: float) -> str:
    return f"{percent(abs(drift), 1)} {'slower' if drift > 0 else 'faster'}"


def _point(row) -> str:
    return f"{row.rw} bs={int(row.bs)} numjobs={int(row.numjobs)} iodepth={int(row.iodepth)}"


def sentences(frame: pd.DataFrame, reference: str, margin: float = DEFAULT_MARGIN,
              confidence: float = 0.95) -> list[str]:
    """The bracket in words: each point where ``reference`` drifted (how much, its interval, that its tax verdicts
    are withheld), or that it stayed within the margin at every point; nothing without a bracket."""
    found = drifts(frame, reference, margin, confidence)
    if found.empty:
        return []
    moved = found[found["drifted"]]
    level = percent(confidence, 0)
    if moved.empty:
        largest = found.loc[found["drift"].abs().idxmax()]
        return [f"{reference}, measured again after the layouts taxed against it (BRACKET), did not drift beyond "
                f"the {percent(margin, 1)} margin at any of its {len(found)} point(s) (its largest change "
                f"{_change(largest['drift'])} at {_point(largest)}): no verdict withheld."]
    said = [f"{reference} drifted over the campaign: measured again after the layouts taxed against it "
            f"(BRACKET), it read {_change(r.drift)} at {_point(r)} "
            f"on {int(r.devices)} device(s) ({level} interval of the drift {percent(r.drift_lo, 1)} to "
            f"{percent(r.drift_hi, 1)}, p = {r.drift_p:.2g}; {r.before_reps} runs before, {r.after_reps} after), "
            f"beyond the {percent(margin, 1)} margin: every tax verdict at that point is withheld, since the layouts "
            "between were measured against a reference that moved." for r in moved.itertuples(index=False)]
    return said
