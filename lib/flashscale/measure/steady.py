"""Steady state over preconditioning rounds, as the SNIA Solid State Storage Performance Test Specification defines it.

Pure function. A round is one pass of the test workload; its value is the tracked variable (bandwidth or IOPS). The
device is steady at round r when the measurement window, the ``window`` (5) rounds ending at r, satisfies both:

    range      max - min of the window                    <= ``range_limit`` (20%) of the window's mean
    excursion  |slope of the least-squares line| x (window - 1) <= ``slope_limit`` (10%) of the window's mean

The slope comes from ``scipy.stats.linregress`` against the round number. Rounds are numbered from 1, as in the
specification; the answer is the first such r, or that no window qualifies (with the last window's numbers).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from ..errors import AnalysisError
from .units import percent

NAN = float("nan")


@dataclass(frozen=True)
class SteadyState:
    """``steady`` and the round it was reached (``round``, 1-based, the window's last; 0 when never), with the
    window it was judged on (the first steady one, else the last): its mean, range and excursion as fractions of
    that mean, and ``note`` in words."""

    steady: bool
    round: int
    window_mean: float
    range_fraction: float
    excursion_fraction: float
    note: str


def _window(values: np.ndarray) -> tuple[float, float, float]:
    """Mean, range / mean and |slope| x (rounds - 1) / mean of one measurement window."""
    mean = float(values.mean())
    slope = float(sps.linregress(np.arange(values.size, dtype=float), values).slope)
    return mean, float(np.ptp(values)) / mean, abs(slope) * (values.size - 1) / mean


def steady_state(values, window: int = 5, range_limit: float = 0.20, slope_limit: float = 0.10) -> SteadyState:
    """The first round at which the last ``window`` rounds of ``values`` meet both SNIA steady-state limits."""
    values = np.asarray(values, dtype=float).ravel()
    if window < 2:
        raise AnalysisError(f"steady-state window {window!r} must hold at least 2 rounds")
    for name, limit in (("range_limit", range_limit), ("slope_limit", slope_limit)):
        if not limit > 0:
            raise AnalysisError(f"{name} {limit!r} must be positive")
    bad = values[~np.isfinite(values) | (values <= 0)]
    if bad.size:
        raise AnalysisError(f"round values must be positive and finite; got {bad.tolist()}")
    if values.size < window:
        return SteadyState(False, 0, NAN, NAN, NAN,
                           f"{values.size} round(s): a steady-state window needs {window}")
    for end in range(window, values.size + 1):
        mean, spread, excursion = _window(values[end - window:end])
        if spread <= range_limit and excursion <= slope_limit:
            return SteadyState(True, end, mean, spread, excursion,
                               f"steady at round {end}: rounds {end - window + 1}-{end} range over {percent(spread)} "
                               f"of their mean (limit {percent(range_limit, 0)}) and drift by {percent(excursion)} "
                               f"(limit {percent(slope_limit, 0)})")
    return SteadyState(False, 0, mean, spread, excursion,
                       f"not steady after {values.size} rounds: the last {window} range over {percent(spread)} of their "
                       f"mean (limit {percent(range_limit, 0)}) and drift by {percent(excursion)} (limit {percent(slope_limit, 0)})")
