"""An adaptive sweep along one axis (numjobs or iodepth): where throughput saturates, without measuring the grid.

    found = explore(grid=range(1, 65), measure=lambda n: [bw of each repetition at n])
    found.peak, found.knee, found.steps (each point measured and why), found.skipped (each grid value not, and why)

``measure`` runs one point of the axis (all its repetitions) and returns its throughput per repetition; the
explorer only ever asks for values of ``grid``, each at most once. Three phases:

1. **double**: from the grid's smallest value, the next point is the smallest grid value at least twice the last.
   Doubling stops at the grid's end, or at the first step that does not gain: a gain under ``tolerance`` (by default
   the knee's own, 1 / fraction - 1: 5.3% at 0.95), or one the noise explains (a one-sided Welch t test on log
   throughput, the last point's repetitions against the one before, at 1 - ``confidence``; with one repetition a
   point there is no noise to test against and only the tolerance stops it).
2. **peak**: a curve that falls after a maximum (USL) has its peak between the best point and a neighbour that is
   not clearly below it (within ``fraction`` of it): the midpoint of that gap is measured, the best point and its
   neighbours move, at most ``peak_probes`` times, until no such gap is wider than one grid step.
3. **knee**: the knee is the smallest measured value whose mean reaches ``fraction`` of the peak (the largest mean
   measured), as ``analysis.plateau.knee`` defines it; the gap between the last point below that level and the
   first above it is bisected until the two are neighbours on the grid, so the knee is placed to one grid step.

Storage noise is multiplicative, so the tests work on logarithms. Pure: the explorer runs nothing itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np
from scipy import stats as sps

from ..errors import ConfigError
from .sweep import positive_ints
from .units import percent


@dataclass(frozen=True)
class Step:
    """One point measured: the axis value, the phase that chose it and why, its repetitions."""

    value: int
    phase: str
    reason: str
    reps: tuple[float, ...]

    @property
    def mean(self) -> float:
        return float(np.mean(self.reps))


@dataclass(frozen=True)
class Exploration:
    """What an adaptive sweep measured and found. ``stopped`` says why doubling stopped; ``skipped`` holds each grid
    value never measured, with the reason."""

    grid: tuple[int, ...]
    steps: tuple[Step, ...]
    stopped: str
    skipped: tuple[tuple[int, str], ...]
    fraction: float

    def means(self) -> dict[int, float]:
        """Mean throughput at each measured value, ascending."""
        return dict(sorted((s.value, s.mean) for s in self.steps))

    @property
    def peak(self) -> tuple[int, float]:
        """The value with the largest mean measured, and that mean."""
        value, mean = max(self.means().items(), key=lambda item: (item[1], -item[0]))
        return value, mean

    @property
    def knee(self) -> int:
        """The smallest measured value whose mean reaches ``fraction`` of the peak."""
        level = self.fraction * self.peak[1]
        return min(v for v, m in self.means().items() if m >= level)

    def runs(self) -> int:
        """Repetitions run in all: the cost, against ``len(grid)`` x repetitions for the whole grid."""
        return sum(len(s.reps) for s in self.steps)

    def summary(self) -> dict:
        """What a report says of it, as plain JSON: peak, knee, each point measured and why, each skipped and why."""
        return {"peak": self.peak[0], "peak_bw_bytes": self.peak[1], "knee": self.knee, "stopped": self.stopped,
                "runs": self.runs(), "grid": list(self.grid),
                "measured": [{"value": s.value, "phase": s.phase, "reason": s.reason, "mean_bw_bytes": s.mean}
                             for s in self.steps],
                "skipped": [{"value": value, "reason": reason} for value, reason in self.skipped]}


def checked_grid(grid: Iterable[int]) -> tuple[int, ...]:
    """The grid sorted, each value a positive whole number (numpy's too: ``sweep.positive_ints``); refused if
    empty or repeated."""
    values = positive_ints("grid", tuple(int(v) if isinstance(v, np.integer) else v for v in grid),
                           prefix="adaptive ")
    if len(set(values)) != len(values):
        raise ConfigError(f"adaptive grid {list(values)!r} repeats a value")
    return tuple(sorted(values))


def gain_is_real(before: Sequence[float], after: Sequence[float], tolerance: float, confidence: float) -> tuple[bool, str]:
    """Does ``after`` gain on ``before``: by more than ``tolerance`` and more than the noise (one-sided Welch t test
    on the logs at 1 - ``confidence``; untested with fewer than two repetitions a side)? And the words why."""
    gain = float(np.mean(after) / np.mean(before) - 1)
    if gain <= tolerance:
        return False, f"gains {percent(gain)}, not more than the tolerance {percent(tolerance)}"
    a, b = np.log(np.asarray(after, float)), np.log(np.asarray(before, float))
    if a.size < 2 or b.size < 2:
        return True, f"gains {percent(gain)} (one repetition: noise untested)"
    wa, wb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    if not wa + wb > 0:
        return True, f"gains {percent(gain)} with no spread at all"
    df = (wa + wb) ** 2 / (wa ** 2 / (a.size - 1) + wb ** 2 / (b.size - 1))  # Welch-Satterthwaite
    p = float(sps.t.sf((a.mean() - b.mean()) / np.sqrt(wa + wb), df))
    if p >= 1 - confidence:
        return False, f"gains {percent(gain)}, within the noise (p = {p:.2g})"
    return True, f"gains {percent(gain)}, more than the noise (p = {p:.2g})"


def _measured(measure: Callable[[int], Sequence[float]], value: int, phase: str, reason: str) -> Step:
    reps = tuple(float(v) for v in measure(value))
    if not reps or any(not np.isfinite(v) or v <= 0 for v in reps):
        raise ConfigError(f"adaptive sweep: the measurement at {value} gave {list(reps)!r}; throughput must be "
                          "positive and finite, at least one repetition")
    return Step(value, phase, reason, reps)


def _double(grid, measure, tolerance, confidence, patience) -> tuple[list[Step], str]:
    steps = [_measured(measure, grid[0], "double", "the grid's smallest value")]
    best, flat = steps[0], 0
    while True:
        last = steps[-1].value
        following = [v for v in grid if v >= 2 * last]
        if not following:
            return steps, f"doubling reached the grid's end at {last}"
        steps.append(_measured(measure, following[0], "double", f"twice {last} or the next grid value" +
                               (f" ({flat} step(s) without a gain on {best.value} so far)" if flat else "")))
        real, why = gain_is_real(best.reps, steps[-1].reps, tolerance, confidence)
        best, flat = (steps[-1], 0) if real else (best, flat + 1)
        if flat >= patience:
            return steps, f"{best.value} -> {following[0]} {why}, {flat} doubling(s) in a row: stopped doubling"


def _between(grid: Sequence[int], lo: int, hi: int) -> int | None:
    """The grid value closest to the middle of (lo, hi), strictly inside; None when they are neighbours."""
    inside = [v for v in grid if lo < v < hi]
    return min(inside, key=lambda v: (abs(v - (lo + hi) / 2), v)) if inside else None


def _peak_gap(grid, steps: list[Step], fraction: float) -> tuple[int, int] | None:
    """The widest gap beside the best point whose neighbour is within ``fraction`` of it (the peak may lie there)."""
    means = dict(sorted((s.value, s.mean) for s in steps))
    best = max(means, key=lambda v: (means[v], -v))
    values = list(means)
    at = values.index(best)
    gaps = [(values[i], values[j]) for i, j in ((at - 1, at), (at, at + 1)) if 0 <= i and j < len(values)
            and means[values[i if j == at else j]] >= fraction * means[best]]
    gaps = [g for g in gaps if _between(grid, *g) is not None]
    return max(gaps, key=lambda g: (len([v for v in grid if g[0] < v < g[1]]), -g[0])) if gaps else None


def _knee_gap(grid, steps: list[Step], fraction: float) -> tuple[int, int] | None:
    """The last measured value below ``fraction`` of the peak before the first that reaches it, and that one;
    None when they are neighbours on the grid (the knee is placed) or the smallest value reaches it."""
    means = dict(sorted((s.value, s.mean) for s in steps))
    level = fraction * max(means.values())
    knee = min(v for v, m in means.items() if m >= level)
    below = [v for v in means if v < knee]
    if not below or _between(grid, below[-1], knee) is None:
        return None
    return below[-1], knee


def explore(grid: Iterable[int], measure: Callable[[int], Sequence[float]], fraction: float = 0.95,
            tolerance: float | None = None, confidence: float = 0.95, peak_probes: int = 3, patience: int = 2) -> Exploration:
    """Find the peak and the knee of throughput along ``grid`` measuring as few of its values as it can."""
    grid = checked_grid(grid)
    if not 0.0 < fraction < 1.0 or not 0.0 < confidence < 1.0:
        raise ConfigError(f"fraction {fraction!r} and confidence {confidence!r} must lie strictly between 0 and 1")
    tolerance = 1 / fraction - 1 if tolerance is None else tolerance
    steps, stopped = _double(grid, measure, tolerance, confidence, patience)
    for _ in range(peak_probes):
        gap = _peak_gap(grid, steps, fraction)
        if gap is None:
            break
        steps.append(_measured(measure, _between(grid, *gap), "peak",
                               f"between {gap[0]} and {gap[1]}, within {percent(fraction, 0)} of each other: the peak may lie between"))
    while (gap := _knee_gap(grid, steps, fraction)) is not None:
        steps.append(_measured(measure, _between(grid, *gap), "knee",
                               f"between {gap[0]} (below {percent(fraction, 0)} of the peak) and {gap[1]} (above): bisecting to place the knee"))
    return Exploration(grid, tuple(steps), stopped, _skipped(grid, steps, stopped), fraction)


def _skipped(grid: Sequence[int], steps: list[Step], stopped: str) -> tuple[tuple[int, str], ...]:
    measured = sorted(s.value for s in steps)
    reasons = []
    for value in grid:
        if value in measured:
            continue
        if value > measured[-1]:
            reasons.append((value, f"beyond the last point measured: {stopped}"))
            continue
        lo = max(v for v in measured if v < value)
        hi = min(v for v in measured if v > value)
        reasons.append((value, f"between {lo} and {hi}: neither the peak nor the knee lies there"))
    return tuple(reasons)
