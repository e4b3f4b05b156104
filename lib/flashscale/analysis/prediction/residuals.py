"""Which other points' errors hold a point's table interval (issue 50, item 6: ``conformal``'s half-widths), per
layout where the table is large enough.

    conformal_half(scores, level)     the split-conformal half-width: the k-th smallest of the other points' scores,
                                      k = ceil(level x (n + 1)); NaN where k > n (too few for ``level``)
    least_others(level)               the fewest other points that state it (9 at 90%)
    residual_halves(scores, layouts, mine, level, noise)   per point, its half-width and where it came from

A score is a point's |log(measured / predicted)|, or infinite where the measurement lay past the model's own
closed end (``conformal``'s clipped interval cannot reach it at any width). Per point, the first of three that
applies, chosen by counts alone (never by which gives the narrower interval):

    own       its layout's other calibrating points, where it has ``least_others(level)`` of them: conformal within
              the layout (Mondrian conformal, Vovk et al. 2005, ch. 4), so its level holds for each layout
    scaled    where its layout has at least ``LEAST_SCALE`` other points: every calibrating point's score over its
              own layout's scale, the root mean square of that layout's *other* calibrating errors (at least their
              mean run-noise half-width, so a layout measured exactly has a scale), whose conformal quantile is
              multiplied by the point's layout's scale (normalised conformal, Lei et al. 2018, section 5.2). The
              errors are logs already, so a fast layout's never widens a slow one's; the scale keeps a layer that
              costs 10% from widening a jbod that costs nothing, and the reverse. The level then holds marginally,
              and per layout only as far as the scaled errors are alike across layouts: measured, not promised
    pooled    every other calibrating point's score, as if the layouts were one (marginal coverage only), said
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...errors import ConfigError

LEAST_SCALE = 2  # the fewest other points of a layout that give it a scale of its own
OWN, SCALED, POOLED = "own", "scaled", "pooled"  # the tiers (module doc), ``conformal``'s ``scored_tier``


def check_level(level) -> float:
    """``level`` as a float strictly between 0 and 1; ConfigError naming the value otherwise."""
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.0 < level < 1.0:
        raise ConfigError(f"the intervals' level {level!r} must be a fraction strictly between 0 and 1, e.g. 0.9")
    return float(level)


def conformal_half(others, level: float = 0.9) -> float:
    """The split-conformal half-width from ``others`` (the other points' scores, NaN left out, infinite kept: a
    point no width covers): their k-th smallest, k = ceil(level x (n + 1)); NaN where k > n (too few for
    ``level``), infinite where the k-th is."""
    scores = np.asarray(others if isinstance(others, np.ndarray) else list(others), dtype=float)
    scores = np.sort(scores[~np.isnan(scores)])
    k = math.ceil(check_level(level) * (len(scores) + 1) - 1e-9)
    return float(scores[k - 1]) if 1 <= k <= len(scores) else math.nan


def least_others(level: float = 0.9) -> int:
    """The fewest other points for which ``conformal_half`` states an interval at ``level`` (9 for 90%)."""
    return math.ceil(check_level(level) / (1 - level) - 1e-9)


def residual_halves(scores: pd.Series, layouts: pd.Series, mine: pd.Series, level: float = 0.9,
                    noise: pd.Series | None = None) -> tuple[np.ndarray, list[str], list[str]]:
    """Per point (module doc): the half-width on the log scale at ``level`` from the other calibrating points'
    ``scores`` (``mine``: the rows that calibrate; NaN scores left out), NaN where too few, infinite where too many
    of them lay past their model's closed end; its tier (``OWN``, ``SCALED``, ``POOLED``) and where it came from,
    in words. ``noise``: each point's run-noise half-width (the least a layout's scale may be)."""
    e = scores.to_numpy(dtype=float)
    floor = np.zeros(len(e)) if noise is None else np.nan_to_num(noise.to_numpy(dtype=float))
    codes, names = pd.factorize(layouts.astype(str))
    usable = mine.to_numpy(dtype=bool) & ~np.isnan(e)
    halves, tiers, how = [], [], []
    for i in range(len(e)):
        others = usable.copy()
        others[i] = False
        own = others & (codes == codes[i])
        name = names[codes[i]]
        tier, (half, said) = OWN, _own(e, name, own, level)
        if not said:
            tier, (half, said) = SCALED, _scaled(e, floor, codes, others, i, name, level)
        if not said:
            tier, half = POOLED, conformal_half(e[others], level)
            said = (f"pooled over {int(others.sum())} other points ({name} has {int(own.sum())} of its own"
                    + (f"; {least_others(level)} needed)" if math.isnan(half) else ")"))
        halves.append(half)
        tiers.append(tier)
        how.append(said)
    return np.asarray(halves, dtype=float), tiers, how


def _own(e: np.ndarray, name: str, own: np.ndarray, level: float) -> tuple[float, str]:
    count = int(own.sum())
    if count < least_others(level):
        return math.nan, ""
    return conformal_half(e[own], level), f"{name}'s own {count} other points alone"


def _scaled(e: np.ndarray, floor: np.ndarray, codes: np.ndarray, others: np.ndarray, i: int, name: str,
            level: float) -> tuple[float, str]:
    """The scaled tier (module doc); (NaN, "") where the point's layout has fewer than ``LEAST_SCALE`` others with
    a finite error, or fewer than ``least_others(level)`` calibrating points have a scale."""
    finite = np.isfinite(e)
    use, size = others & finite, int(codes.max()) + 1
    square = np.bincount(codes[use], weights=e[use] ** 2, minlength=size)
    least = np.bincount(codes[use], weights=floor[use], minlength=size)
    count = np.bincount(codes[use], minlength=size).astype(float)
    mine = codes[i]
    if count[mine] < LEAST_SCALE:
        return math.nan, ""
    scale_i = max(math.sqrt(square[mine] / count[mine]), least[mine] / count[mine])
    group, errors, leave = codes[others], e[others], finite[others].astype(float)  # each leaves its own error out
    n = count[group] - leave
    keep = n >= LEAST_SCALE
    spare = np.where(keep, n, 1.0)
    rest = np.fmax(square[group] - np.where(leave > 0, errors, 0.0) ** 2, 0.0)
    scale = np.fmax(np.sqrt(rest / spare), (least[group] - leave * floor[others]) / spare)
    ratios = np.where(scale > 0, errors / np.where(scale > 0, scale, 1.0), np.where(errors == 0, 0.0, np.inf))[keep]
    if len(ratios) < least_others(level) or scale_i <= 0:
        return math.nan, ""
    return conformal_half(ratios, level) * scale_i, (
        f"scaled by {name}'s {int(count[mine])} other points (root mean square {scale_i:.1%}), the quantile of "
        f"{len(ratios)} points' errors over their layouts'")
