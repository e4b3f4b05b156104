"""When a point has run enough: the stopping rule of a sweep with a precision (``Sweep.precision``, PRECISION).

Pure functions. A point's runs are rates, positive, and their noise multiplicative, so its precision is read on the
log scale: ``relative_half_width`` is half the log of hi / lo of the point's 95% interval (``stats.interval_t``, the
one interval of a point's repetitions: this module writes none of its own), about the half-width relative to the
mean for a few per cent, and never met by an interval that reaches zero or below (infinite then). A point stops
``precise`` once that is within the precision, or at ``max`` once the most runs have run
(Kalibera and Jones, "Rigorous benchmarking in reasonable time", ISMM 2013: repeat where the variance is).

Looking after every run and stopping at the first precise look is optional stopping (a Chow-Robbins fixed-width
rule): the interval of a point that stopped early covers its mean less often than 95%, because the runs that stop
early are those that happened to agree. Measured on Gaussian noise of known mean and spread (tests/test_repetitions.py,
2,000 points, precision 0.02, at most 10 runs): at 0.5% spread 2.7 runs a point on average and 94.6% coverage; at
2% spread (the precision itself) about 6 runs and 88 to 90% coverage. Stricter looks (a 99% interval to stop, a
95% one to report) and Stein's two stages from 2 runs did not bring it back (90 to 93%, more runs); from 3 runs
Stein's rule did (95%), at never fewer than the default's 3 runs. The rows say how many runs each point took and
why it stopped, so a reader can tell a point that stopped at 2 runs from one that ran to the most.

Where a layout's tax is asked (``decision``: the reference's runs at the matching point are given, ``measure.reference.reference_runs``:
jbod's, or N x the single device's where the campaign has no jbod), a precise point goes on until the tax is
``decided`` by ``significance.sequential_tax`` (a tax, a gain or equivalent against the margin, its error rates held
over every look by alpha spending) or the most runs have run (``max``: its verdict inconclusive). The reference's
own points run to the most (``reference``, ``measure.recorder``): every layout's test shares its runs, and
Welch's test learns the reference's spread from them alone.
"""
from __future__ import annotations

import dataclasses
from functools import partial
from typing import Sequence

import numpy as np
import pandas as pd

from . import agreement, baseline_and_tax, significance, stats
from .agreement import DEFAULT_MARGIN
from ..measure.units import number

NAN = float("nan")
PRECISE, MOST, MORE, DECIDED, REFERENCE = "precise", "max", "more", "decided", "reference"  # sweep.REPS_REASONS
DECISIVE = ("tax", "gain", "equivalent")  # significance.practical's verdicts that decide a tax


def relative_half_width(values: Sequence[float], confidence: float = 0.95) -> float:
    """Half of log(hi / lo) of the interval of ``values``' mean (``stats.interval_t``, its spread never below what
    a rate resolves, ``significance.log_sd_floor``): the precision of a positive rate in bytes/s. NaN with fewer
    than two values; infinite where the interval reaches zero or below; never 0: runs that tie differ by less than
    a step of the measurement, not by nothing."""
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        return NAN
    lo, hi = stats.interval_t(values, confidence)
    if (values > 0).all():
        side = agreement.Side.of(values)
        floor = significance.log_sd_floor(side.value) / np.sqrt(values.size)
        lo, hi = dataclasses.replace(side, log_se=max(side.log_se, floor)).interval(confidence)
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo <= 0:
        return float("inf")
    return float(np.log(hi / lo) / 2)


def stop_reason(values: Sequence[float], precision: float, most: int, least: int = 2,
                confidence: float = 0.95) -> str:
    """Why a point stops after the runs ``values`` (their rates): ``precise`` once it has ``least`` runs and is within
    ``precision`` (``relative_half_width``), ``max`` once it has ``most``; else ``more`` (run it again)."""
    n = len(values)
    if n >= least and relative_half_width(values, confidence) <= precision:
        return PRECISE
    return MOST if n >= most else MORE


def decision(values: Sequence[float], reference: Sequence[float] | None, precision: float, most: int,
             least: int = 2, margin: float = DEFAULT_MARGIN) -> str:
    """Why a point stops after the runs ``values``: ``stop_reason`` where no tax is asked of it (``reference``
    None or under two runs); else, once precise (or at the most), ``decided`` when the group-sequential test of its
    runs against ``reference``'s (``significance.sequential_tax`` against ``margin``, looking up to ``most`` runs)
    says a tax, a gain or equivalent, ``max`` at the most runs (inconclusive), else ``more``: a precise point
    goes on past its precision until the tax is decided."""
    said = stop_reason(values, precision, most, least)
    if reference is None or len(reference) < 2 or len(values) < max(least, 2) or said == MORE:
        return said
    look = significance.sequential_tax(values, reference, most, margin)
    if look.verdict in DECISIVE:
        return DECIDED
    return MOST if len(values) >= most else MORE


def stopping(precision: float | None, most: int, least: int = 2, margin: float = DEFAULT_MARGIN):
    """The rule a sweep's recorder asks after each run of a point (``decision`` at ``precision``, between ``least``
    and ``most`` runs), as a function of the rates so far and the reference's runs at the point (None: no tax
    asked); None without a precision (a fixed count)."""
    if precision is None:
        return None
    return partial(decision, precision=precision, most=most, least=least, margin=margin)


def stopped(frame: pd.DataFrame) -> pd.DataFrame:
    """Per sweep point (``baseline_and_tax.POINT``): ``reps`` (its measured runs, ``baseline_and_tax.measured``) and ``reps_reason``, why its
    runs stopped: its last run's (the row of the highest ``rep``); ``fixed`` for rows written before the column."""
    rows = baseline_and_tax.measured(frame)
    if rows.empty:
        return pd.DataFrame(columns=[*baseline_and_tax.POINT, "reps", "reps_reason"])
    why = rows["reps_reason"] if "reps_reason" in rows else pd.Series("fixed", index=rows.index)
    rows = rows.assign(reps_reason=why.astype("string").fillna("fixed")).sort_values("rep")
    grouped = rows.groupby(baseline_and_tax.POINT, sort=True, observed=True)
    return pd.concat([grouped.size().rename("reps"), grouped["reps_reason"].last()], axis=1).reset_index()


# How each reason reads in a sentence (``sentences``).
REASON_WORDS = {"fixed": "ran a fixed REPETITIONS", PRECISE: "stopped precise (95% interval within PRECISION)",
                DECIDED: "ran until the group-sequential tax test decided", MOST: "ran to MAX_REPETITIONS",
                REFERENCE: "ran to MAX_REPETITIONS as the tax reference, whose runs every layout's test shares",
                MORE: "were cut short (the campaign stopped)"}


def sentences(frame: pd.DataFrame) -> list[str]:
    """What a report says of its points' runs: per reason they stopped (``stopped``), how many points, and their
    runs on average and at the least and most; and, where a layout was built more than once (BUILDS), how many
    times."""
    points = stopped(frame)
    said = []
    for why, group in points.groupby("reps_reason", sort=True):
        runs = group["reps"]
        each = (f"{int(runs.min())} runs each" if runs.min() == runs.max() else
                f"{number(runs.mean(), 2)} runs each on average ({int(runs.min())} to {int(runs.max())})")
        said.append(f"{len(group)} point(s) {REASON_WORDS.get(why, why)}: {each}.")
    if "build" in frame.columns:  # the measured runs' (the reference's bracket, BRACKET, is no replicate)
        built = pd.to_numeric(baseline_and_tax.runs(frame)["build"], errors="coerce").fillna(0)
        if (built > 0).any():
            said.append(f"Each layout was built {int(built.max()) + 1} times (BUILDS), a point's runs spread over "
                        "its builds: `flashscale analyze` shows the variance between builds and within one.")
    return said
