"""The boundaries of a one-sided group-sequential test: the nominal level of each look such that the chance of
crossing at any look is what a spending function allots, exactly, under the looks' joint distribution.

Pure functions. The looks see one statistic as its information grows, t_1 < ... < t_K = 1 (information fractions).
Under the null its z-values are those of a Brownian motion read at the t_k: the score S_k = Z_k sqrt(t_k) has
independent Gaussian increments of variance t_k - t_{k-1} (Jennison and Turnbull, *Group Sequential Methods*, 2000,
ch. 3 and 7: the canonical joint distribution). ``boundaries`` finds the critical z of each look in turn, the
first at the spent share alone, each later one such that the chance of crossing it having crossed none before is
the share that look spends: the recursive numerical integration of Armitage, McPherson and Rowe (1969), on a grid of
the score (J&T ch. 19). So the looks together spend exactly the whole level, and the last look spends what the
earlier ones left, where the union bound (each look at its share alone) leaves the looks' correlation unspent:
with ten looks of O'Brien-Fleming type at a total of 2.5%, the union bound's looks together cross in about 1%.

``nominal_levels`` gives each look's boundary as the one-sided level a test at that look is read at (1 - Phi(c_k)):
the usual way to carry a boundary to a t test, whose degrees of freedom change from look to look (J&T ch. 3.8).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np
from scipy import optimize, special

from ..errors import AnalysisError

STEP = 0.01  # the score grid's spacing (the score's sd at the last look is 1)
HIGHEST = 40.0  # a critical z nothing crosses (a chance below 1e-300): where a look's share is too small for a float
LOWEST = -9.0  # the grid's floor, nine of the last look's standard deviations below zero


def obrien_fleming(information: float, alpha: float) -> float:
    """Lan-DeMets' O'Brien-Fleming-type spending function: the share of a one-sided ``alpha`` spent by the look at
    ``information`` (in (0, 1]), 2 - 2 Phi(z_{1 - alpha/2} / sqrt(information)): all of ``alpha`` at 1, almost none
    at the first looks."""
    if not 0.0 < information <= 1.0:
        raise AnalysisError(f"information fraction {information!r} must lie in (0, 1]")
    return float(2.0 - 2.0 * special.ndtr(special.ndtri(1.0 - alpha / 2.0) / np.sqrt(information)))


def boundaries(fractions: Sequence[float], alpha: float) -> tuple[float, ...]:
    """The critical z of each look at the information ``fractions`` (increasing, the last 1) such that a one-sided
    test crossing any of them has chance ``alpha`` under the null, spent by ``obrien_fleming``: the first look's
    share alone, each later look's the share it spends given no crossing before (the module's docstring)."""
    t = np.asarray(fractions, dtype=float)
    if t.size == 0 or not np.all(np.diff(t) > 0) or not 0.0 < t[0] or not np.isclose(t[-1], 1.0):
        raise AnalysisError(f"information fractions {list(fractions)!r} must increase within (0, 1] to 1")
    if not 0.0 < alpha < 0.5:
        raise AnalysisError(f"one-sided alpha {alpha!r} must lie in (0, 0.5)")
    spent = np.array([obrien_fleming(min(x, 1.0), alpha) for x in t])
    shares = np.diff(spent, prepend=0.0)
    critical = [min(float(-special.ndtri(shares[0])), HIGHEST)]  # -ndtri(p), not ndtri(1 - p): exact for tiny p
    grid = _grid(critical[0] * np.sqrt(t[0]))
    density = np.exp(-grid**2 / (2 * t[0])) / np.sqrt(2 * np.pi * t[0])  # the score's, not yet crossed
    for k in range(1, t.size):
        sd = np.sqrt(t[k] - t[k - 1])
        weights = density * _trapezoid(grid)
        share = max(shares[k], 0.0)  # under alpha < 0.5, always less than the chance of reaching this look

        def crossing(c: float) -> float:
            return float(weights @ special.ndtr((grid - c * np.sqrt(t[k])) / sd))

        critical.append(optimize.brentq(lambda c: crossing(c) - share, -12.0, HIGHEST, xtol=1e-10))
        nxt = _grid(critical[-1] * np.sqrt(t[k]))
        density = (np.exp(-(nxt[:, None] - grid[None, :])**2 / (2 * sd**2)) / (sd * np.sqrt(2 * np.pi))) @ weights
        grid = nxt
    return tuple(critical)


def _grid(upper: float) -> np.ndarray:
    """The score from ``LOWEST`` to ``upper`` (a boundary), ends included, about ``STEP`` apart."""
    return np.linspace(LOWEST, upper, max(3, int(np.ceil((upper - LOWEST) / STEP)) + 1))


def _trapezoid(grid: np.ndarray) -> np.ndarray:
    """The trapezoid rule's weights on an evenly spaced ``grid``."""
    w = np.full(grid.size, grid[1] - grid[0])
    w[[0, -1]] /= 2
    return w


@lru_cache(maxsize=4096)
def nominal_levels(fractions: tuple[float, ...], alpha: float) -> tuple[float, ...]:
    """Each look's one-sided nominal level, 1 - Phi(c_k) of ``boundaries``: what a test at that look is read at."""
    return tuple(float(special.ndtr(-c)) for c in boundaries(fractions, alpha))
