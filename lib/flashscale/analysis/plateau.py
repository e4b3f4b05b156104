"""The saturation knee, and whether the curve has flattened at all within the measured range.

Pure functions, model-free. Throughput y against concurrency n (numjobs, iodepth or devices); n may repeat (one
value per repetition).

The knee is the smallest N whose mean throughput reaches ``fraction`` (default 0.95) of the plateau, the largest
mean measured along the curve. That is only a knee if the curve has flattened: a curve still climbing at its
largest N would otherwise report "95% of the plateau at the largest N" for any N at all. So ``plateau`` tests the
last step (the two largest N): the curve is *still rising* when that step gains more than the knee's tolerance
(the previous point lies below ``fraction`` of the last, a gain above 1 / fraction - 1: 5.3% at 0.95) and more
than the noise: a one-sided t test on log throughput (``significance.log_t_test``), the repetitions' variance
pooled over every point (noise is relative, so its log variance is shared along the curve), at 1 - ``confidence``.
A still-rising curve has no knee (NaN) and says "no plateau within the measured range". With one repetition per
point there is no noise to test against: the knee is kept and the note says the flattening was not tested.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import AnalysisError
from .significance import log_t_test
from ..measure.units import percent

NAN = float("nan")


def point_problem(n: np.ndarray, y: np.ndarray) -> str:
    """What makes these points unusable for any scaling question; '' when nothing does."""
    if n.size == 0:
        return "no points"
    if n.size != y.size:
        return f"{n.size} N values against {y.size} throughput values"
    if not (np.all(np.isfinite(n)) and np.all(np.isfinite(y))):
        return f"NaN or inf among the points at N = {n[~(np.isfinite(n) & np.isfinite(y))].tolist()}"
    if np.any(n <= 0):
        return f"N must be positive; got {n[n <= 0].tolist()}"
    if np.any(y < 0):
        return f"negative throughput at N = {n[y < 0].tolist()}"
    if np.all(y == 0):
        return "all throughput is zero"
    return ""


def _points(n, y) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The distinct N (ascending), the mean throughput at each, and each one's repetitions; raises on bad points."""
    n, y = np.asarray(n, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
    problem = point_problem(n, y)
    if problem:
        raise AnalysisError(f"no knee: {problem}")
    levels = np.unique(n)
    reps = [y[n == level] for level in levels]
    return levels, np.array([r.mean() for r in reps]), reps


def knee(n, y, fraction: float = 0.95) -> float:
    """The smallest N whose mean throughput reaches ``fraction`` of the plateau (the largest mean measured)."""
    if not 0.0 < fraction <= 1.0:
        raise AnalysisError(f"knee fraction {fraction!r} must lie in (0, 1]")
    levels, means, _ = _points(n, y)
    return float(np.min(levels[means >= fraction * np.max(means)]))


@dataclass(frozen=True)
class Plateau:
    """Whether the curve flattened within the measured range, and its knee if so.

    ``reached`` is False only when the last step is shown to gain more than the knee's tolerance and the noise;
    ``knee`` is then NaN. ``level`` is the largest mean measured (the plateau when reached). ``last_gain`` is
    mean(last N) / mean(previous N) - 1, ``p_value`` the one-sided p-value of "the last step gains nothing"
    (NaN when untested), ``note`` says in words what was found or why it was not tested."""

    reached: bool
    knee: float
    level: float
    last_gain: float
    p_value: float
    note: str


def _last_step_p(reps: list[np.ndarray]) -> float:
    """One-sided p-value that the last point's log mean exceeds the previous one's only by noise
    (``significance.log_t_test``, the variance of the logs pooled over every point); NaN when the repetitions
    leave no degree of freedom (one value per point) or hold a zero."""
    if any(np.any(r <= 0) for r in reps):
        return NAN
    return log_t_test(reps[-1], reps[-2], "student", "greater", pooled_with=reps[:-2]).p_value


def plateau(n, y, fraction: float = 0.95, confidence: float = 0.95) -> Plateau:
    """Has throughput ``y`` flattened along ``n`` within the measured range? The knee when it has."""
    if not 0.0 < confidence < 1.0:
        raise AnalysisError(f"confidence {confidence!r} must lie strictly between 0 and 1")
    at = knee(n, y, fraction)
    levels, means, reps = _points(n, y)
    level = float(np.max(means))
    if levels.size < 2:
        return Plateau(True, at, level, NAN, NAN, f"one N ({levels[0]:g}): whether the curve flattens is untested")
    gain = float(means[-1] / means[-2] - 1) if means[-2] > 0 else float("inf")
    p_value = _last_step_p(reps)
    step = f"the last step ({levels[-2]:g} -> {levels[-1]:g}) gains {percent(gain)}"
    if not gain > 1 / fraction - 1:
        return Plateau(True, at, level, gain, p_value, "")
    if np.isnan(p_value):
        return Plateau(True, at, level, gain, p_value,
                       f"{step}, but with one repetition per point whether that is more than noise is untested")
    if p_value < 1 - confidence:
        return Plateau(False, NAN, level, gain, p_value,
                       f"no plateau within the measured range: {step}, more than the noise (p = {p_value:.2g})")
    return Plateau(True, at, level, gain, p_value, f"{step}, within the noise (p = {p_value:.2g})")
