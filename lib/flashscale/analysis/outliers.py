"""Runs unlike the others of their point, and runs that stalled: flagged with their evidence, never dropped.

Two rules, each stated with the rate at which it flags a run that is nothing of the kind:

* **Unlike the others** (``unlike``): a run whose rate lies outside the ``1 - LEVEL`` (99%) prediction interval of
  the other runs of its point, on the log scale: mean of the others' logs +/- t(1 - LEVEL/2, m - 1) s sqrt(1 + 1/m),
  m the others' count and s their deviation (floored at what a rate resolves, ``significance.log_sd_floor``, so that
  runs that tie do not make every other run an outlier), and more than the report's margin of practical equivalence
  away from their geometric mean (a run 0.5% off three runs that tie is no finding). Why this rule: the run left out
  is independent of the ones it is held to, so for runs whose log rates are normal and alike it flags each run with
  probability ``LEVEL`` exactly, whatever the count or the spread (the t of a new observation against a sample);
  the rules that hold a run to the median and MAD of all the runs, the run itself among them, flag a clean run far
  more often at 3 runs (the MAD of three is the smaller of two deviations). It needs 3 runs: of two, neither can be
  told the odd one. A 30% slower run among 5 at 2% is flagged nearly always; among 3 it is flagged only where the
  other two agree closely (the t of one degree of freedom is 63.7 at 99%): ``make bench-stats`` measures both.
* **Stalled** (``measure.rate_log``): a run whose own seconds in fio's bandwidth log fell under half its median
  second; its row carries the evidence (``stall_s``, ``rate_low``, ``rate_low_at_s``).

Neither drops a run: the summary's interval keeps every run, and one stalled run in ten widens it as it pulls the
mean (``make bench-stats``: it still covers the stall-free mean at its stated rate, docs/validation.md), where an
interval that dropped the runs a rule flagged would cover a mean of the runs that rule liked.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps

from .baseline_and_tax import POINT, flag, measured
from .significance import DEFAULT_MARGIN, log_sd_floor

LEVEL = 0.01
LEAST_RUNS = 3
FLAGGED = ["layout", "devices", "rw", "bs", "numjobs", "iodepth", "rep", "bw_bytes", "others_bw_bytes",
           "off", "runs"]


def _rates(frame: pd.DataFrame) -> pd.DataFrame:
    """The measured rows that are rates (``baseline_and_tax.rates``), none where every one is too short (where
    ``rates`` refuses: a report that says so must still say what these rules found, nothing)."""
    rows = measured(frame)
    return rows[~flag(rows, "too_short")] if "too_short" in rows.columns else rows


def unlike(values, margin: float = DEFAULT_MARGIN, level: float = LEVEL) -> np.ndarray:
    """Per run of one point (``values``: its rates, all positive): whether it is unlike the others (the module's
    first rule). All False under ``LEAST_RUNS`` runs, or where a rate is not positive and finite."""
    values = np.asarray(values, dtype=float).ravel()
    n = values.size
    if n < LEAST_RUNS or not (np.isfinite(values) & (values > 0)).all():
        return np.zeros(n, dtype=bool)
    logs = np.log(values)
    rest = np.array([np.delete(logs, i) for i in range(n)])  # each run's others, one row a run
    mean = rest.mean(axis=1)
    floor = np.array([log_sd_floor(float(np.exp(m))) for m in mean])
    sd = np.maximum(rest.std(axis=1, ddof=1), floor)
    m = n - 1
    bound = float(sps.t.ppf(1.0 - level / 2.0, m - 1)) * sd * np.sqrt(1.0 + 1.0 / m)
    off = logs - mean
    return (np.abs(off) > bound) & (np.abs(np.expm1(off)) > margin)


def flagged(frame: pd.DataFrame, margin: float = DEFAULT_MARGIN, level: float = LEVEL) -> pd.DataFrame:
    """The measured runs that are rates (``_rates``) unlike the others of their point (and build, where a layout
    was built more than once: builds differ by more than runs do), one row each (``FLAGGED``): its rate, the
    geometric mean of the others, how far off it is (a fraction), and the point's runs."""
    rows = _rates(frame)
    keys = [c for c in (*POINT, "build") if c in rows.columns]
    found = []
    if rows.empty:
        return pd.DataFrame(columns=FLAGGED)
    for _, group in rows.groupby(keys, sort=True, observed=True, dropna=False):
        values = group["bw_bytes"].to_numpy(dtype=float)
        odd = unlike(values, margin, level)
        for i in np.flatnonzero(odd):
            others = np.exp(np.log(np.delete(values, i)).mean())
            r = group.iloc[i]
            found.append({**{c: r[c] for c in FLAGGED[:7]}, "bw_bytes": values[i], "others_bw_bytes": others,
                          "off": values[i] / others - 1.0, "runs": len(values)})
    return pd.DataFrame(found, columns=FLAGGED)


def stalled(frame: pd.DataFrame) -> pd.DataFrame:
    """The measured runs whose rate log shows a stall (``stall_s`` above 0: ``measure.rate_log``)."""
    rows = _rates(frame)
    if "stall_s" not in rows.columns:
        return rows.iloc[0:0]
    return rows[pd.to_numeric(rows["stall_s"], errors="coerce").fillna(0) > 0]
