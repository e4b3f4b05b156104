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
over every look by alpha spending) or the most runs have run (``max``: its verdict inconclusive). In a campaign the
reference's own points run to the most (``reference``, ``measure.recorder``): it is built and measured before the
layouts, on the same devices, so none of its runs can come after theirs without building it again, and every
layout's test shares its runs.

Where the reference can be run beside its layouts (``shared_point``: ``make bench-cost``, whose points are on
devices of their own), it is sampled as the decisions need it instead, Welch's form throughout: it runs until it is
precise itself, and then only when a layout's next look needs it. A look is read at j = the fewer side's runs
(``significance.sequential_tax`` with ``reference_grows``), the side ahead waits, and the next look needs a run of
each side at j. The reference thus stops where its runs no longer limit the decisions it serves, and gets runs
where they do. One reference serving K layouts ends with as many runs as the most demanding of them needed. The
optimal allocation of Welch's test (m / n = sqrt(K) s_ref / s_layout) would give it more still. But a look's
degrees of freedom are Hsu's (the fewer side's runs - 1), so a run of the reference beyond a layout's adds no
look.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Mapping, Sequence

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


@dataclass
class SharedPoint:
    """One point's runs as ``shared_point`` took them: the reference's, each layout's, who ran in what order
    (``order``: the reference or a layout's name, a run each) and each layout's last look (``looks``)."""

    reference: list[float] = field(default_factory=list)
    layouts: dict[str, list[float]] = field(default_factory=dict)
    looks: dict[str, significance.SequentialLook] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)

    def reason(self, name: str) -> str:
        """Why ``name``'s runs stopped: ``reference`` for the reference (where the decisions it serves stopped
        needing its runs), ``decided`` or ``max`` for a layout (``REPS_REASONS``)."""
        if name not in self.looks:
            return REFERENCE
        return DECIDED if self.looks[name].verdict in DECISIVE else MOST


def shared_point(reference: Callable[[], float], layouts: Mapping[str, Callable[[], float]],
                 precision: float | None, most: int, least: int = 2, margin: float = DEFAULT_MARGIN) -> SharedPoint:
    """A point measured on a reference and the layouts taxed against it, where the reference can be run between
    the layouts' runs (each callable measures one run, a rate): the reference runs until its own ``stop_reason``
    (precise at ``precision``, or ``least`` runs where None) and then only as a look needs it. Each layout in
    turn runs until precise itself, then a look is read (``significance.sequential_tax`` with
    ``reference_grows``) and, undecided, each side the next look ``needs`` runs once: every look is read once,
    after the run that made it, as the boundaries count them. A run of the reference is every later layout's too.
    The runs and looks (``SharedPoint``)."""
    point = SharedPoint()

    def run(name: str, draw: Callable[[], float], runs: list[float]) -> None:
        runs.append(float(draw()))
        point.order.append(name)

    def short(runs: list[float]) -> bool:  # its own precision (or its least runs) not yet reached
        if precision is None:
            return len(runs) < least
        return stop_reason(runs, precision, most, least) == MORE

    while short(point.reference):
        run(REFERENCE, reference, point.reference)
    for name, draw in layouts.items():
        runs = point.layouts.setdefault(name, [])
        while short(runs):
            run(name, draw, runs)
        while True:
            look = significance.sequential_tax(runs, point.reference, most, margin, reference_grows=True)
            if look.decided:
                break
            if "layout" in look.needs:
                run(name, draw, runs)
            if "reference" in look.needs:
                run(REFERENCE, reference, point.reference)
        point.looks[name] = look
    return point


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
