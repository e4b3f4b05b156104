"""Are two numbers the same? The one rule of flashscale: the tax's verdict (``significance.practical``), a
reproduction's agreement (``compare.agreement``) and a prediction's (``predict.score``) all ask it here.

Two measurements of one quantity, or a prediction and a measurement, *agree* when the confidence interval of their
ratio lies within the margin: the smaller within ``margin`` of the larger, the ratio strictly between 1 - margin and
1 / (1 - margin). On the log of the ratio that is |log ratio| < -log(1 - margin) at both ends of the interval: two
one-sided tests (TOST) of "they differ by the margin or more", each at (1 - confidence) / 2, both rejected. The
band is symmetric on the log scale, so the answer does not depend on which side comes first, and a ratio of 0.98
(a 2% tax) lies on the edge of a 2% margin whichever way it is read.

    agree(a, b, margin)      an ``Agreement``: the ratio a / b, its interval, and the verdict
    judge(lo, hi, margin)    the verdict of a ratio's interval already made (the tax test's)
    Side.of(runs).interval() the interval of a positive quantity (a rate, a ratio, an efficiency): on the log scale,
                             never below zero; ``stats.interval_t`` and every table's ``_lo``/``_hi`` are made by it
    prediction_interval(p, m) where a measurement of m's runs should fall if the prediction p is right: p's own
                             interval widened by the new runs' noise (``predict.score``'s ``in_interval``)

The verdicts (``VERDICTS``):

    same          the whole interval inside the band: the two agree
    above, below  the whole interval beyond it (a / b larger, or smaller): they differ by more than the margin
    undecided     the interval reaches across an edge of the band: more repetitions would tell
    no interval   a side has one run and no other word for its spread: no verdict can be given (``ONE_RUN``)

Each side is a ``Side``: its value, the standard error of the log of that value and its degrees of freedom.
``Side.of(repetitions)``: the mean of the repetitions, its coefficient of variation over sqrt(n) (the delta
method's standard error of the log of a mean) on n - 1 degrees of freedom. ``Side.of_interval``: the same from a t
interval already made (a table's ``_lo``/``_hi``). ``Side.exact``: a number without spread (a published figure, a
ceiling). The interval of the ratio is ratio x exp(+/- t s), s = sqrt(s_a^2 + s_b^2) on Welch-Satterthwaite degrees
of freedom: the efficiency's interval too (``stats.ratio_interval``).

Measured (tests/test_agreement.py, 2,000 draws of 2% multiplicative noise): a true ratio 1% beyond a 2% margin is
called ``same`` in 0.3% of draws with 3 runs a side and 0.05% with 5, at most (1 - confidence) / 2 = 2.5% by
construction, where two overlapping 95% intervals called it the same in 95% and 83%; the same mean measured tightly
twice is ``same``; 100 and 145 MB/s with wide intervals are ``undecided``, never ``same``, and so is a tax of 0%
against one of 40%. The price: two equal numbers are shown ``same`` within 2% in 81% of draws at 3 runs of 0.5%
noise (the capped emulated array), but in 1% at 3 runs of 2% noise and 19% at 10 (``undecided``: more runs would
tell), where the overlap rule called nearly all of them reproduced.

A side given as a value and an interval without its degrees of freedom (``side(..., df=None)``) is read as a normal
interval, which overstates its spread: the verdict errs towards ``undecided``, never towards ``same``.

Why 2% by default (``DEFAULT_MARGIN``): the seeds treat differences of a few per cent as none (seed 004 shows only
Turbo Boost off, the two differing by less than 3%, and calls deeper queues no change within 5%; seed 001 runs
every test three times and records the standard deviation), the tax seed 000 reports is 9.1% (IMSM, read), and the
emulated array repeats within 0.5%, so 2% is well clear of its noise. A study of finer differences sets
``TAX_MARGIN`` lower and pays in repetitions (``significance.reps_to_decide`` says how many).
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from ..errors import AnalysisError, ConfigError
from ..measure import units
from .defaults import DEFAULT_MARGIN  # below 2%: within one rerun of the same layout on real NVMe devices

SAME, ABOVE, BELOW, UNDECIDED, NO_INTERVAL = "same", "above", "below", "undecided", "no interval"
VERDICTS = (SAME, ABOVE, BELOW, UNDECIDED, NO_INTERVAL)
ONE_RUN = units.ONE_RUN  # what a number of one run says instead of an interval, and why no verdict can be given


def check_margin(margin) -> float:
    """``margin`` as a float in [0, 1); ConfigError naming the value otherwise (e.g. 2 for 2%). One margin serves a
    whole report: the tax's, a reproduction's and a prediction's (``TAX_MARGIN``, ``--margin``)."""
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0.0 <= margin < 1.0:
        raise ConfigError(f"tax margin {margin!r} (TAX_MARGIN, --margin) must be a fraction in [0, 1), "
                          "e.g. 0.02 for 2%")
    return float(margin)


def _check_confidence(confidence) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.0 < confidence < 1.0:
        raise AnalysisError(f"confidence {confidence!r} must lie strictly between 0 and 1")
    return float(confidence)


def edge(margin: float) -> float:
    """The band's half-width on the log scale: -log(1 - margin) (0.0202 for 2%)."""
    return -math.log1p(-check_margin(margin))


@dataclass(frozen=True)
class Side:
    """One side of a comparison: ``value`` (a mean, a prediction), ``log_se`` (the standard error of its log; 0
    exact, NaN unknown: one run), ``df`` (its degrees of freedom; inf where exact or normal) and ``n`` (its runs)."""

    value: float
    log_se: float
    df: float
    n: int

    @classmethod
    def of(cls, repetitions) -> "Side":
        """The mean of ``repetitions`` (positive, finite) with the delta method's standard error of its log."""
        values = np.asarray(repetitions, dtype=float).ravel()
        if values.size == 0 or not (np.isfinite(values).all() and (values > 0).all()):
            raise AnalysisError(f"repetitions must be positive and finite, at least one; got {values.tolist()}")
        mean = float(values.mean())
        if values.size < 2:
            return cls(mean, math.nan, math.nan, 1)
        return cls(mean, float(values.std(ddof=1)) / mean / math.sqrt(values.size), values.size - 1.0,
                   int(values.size))

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """The interval of a positive quantity, on the log scale: the t interval of the log of ``value`` (its
        standard error ``log_se`` on ``df`` degrees of freedom), back-transformed, value x exp(+/- t s). Never
        below zero, always around ``value``; (nan, nan) for one run (no spread: no interval)."""
        if not math.isfinite(self.log_se):
            return (math.nan, math.nan)
        t = float(sps.t.ppf((1 + _check_confidence(confidence)) / 2, self.df)) if self.log_se > 0 else 0.0
        return (self.value * math.exp(-t * self.log_se), grown(self.value, t * self.log_se))

    @classmethod
    def exact(cls, value: float) -> "Side":
        """A number without spread: a published figure, a ceiling given as a parameter."""
        return cls(float(value), 0.0, math.inf, 0)

    @classmethod
    def of_interval(cls, value: float, lo: float, hi: float, df: float, confidence: float = 0.95) -> "Side":
        """A side known by its value and the t interval ``lo``..``hi`` of ``df`` degrees of freedom at
        ``confidence`` (inf: a normal one): s = (hi - lo) / (2 t value), exact for a t interval of a mean (the
        delta method), slightly more than the truth for one made on the log scale (sinh h > h), never less. No
        interval (NaN bounds, df < 1) is a side of one run; a zero-width one with df >= 1 is exact."""
        value, lo, hi = float(value), float(lo), float(hi)
        if not (math.isfinite(value) and value > 0):
            raise AnalysisError(f"a side's value must be positive and finite; got {value!r}")
        if not (math.isfinite(lo) and math.isfinite(hi)) or not df >= 1:
            return cls(value, math.nan, math.nan, 1)
        if hi < lo:
            raise AnalysisError(f"interval {lo!r} to {hi!r} is inverted")
        t = float(sps.t.ppf((1 + _check_confidence(confidence)) / 2, df))
        return cls(value, (hi - lo) / (2 * t * value), float(df), int(df) + 1 if math.isfinite(df) else 0)


@dataclass(frozen=True)
class Agreement:
    """a / b (``ratio``), its interval at ``confidence``, the ``margin`` and the ``verdict`` (``VERDICTS``)."""

    ratio: float
    lo: float
    hi: float
    verdict: str
    margin: float
    confidence: float

    @property
    def agrees(self) -> bool:
        return self.verdict == SAME

    @property
    def difference(self) -> float:
        """a / b - 1: how far a is from b, signed."""
        return self.ratio - 1.0


def _welch(a: Side, b: Side) -> tuple[float, float]:
    """The standard error of log a - log b and its Welch-Satterthwaite degrees of freedom (inf where exact)."""
    se = math.sqrt(a.log_se ** 2 + b.log_se ** 2)
    if se == 0:
        return 0.0, math.inf
    parts = [s.log_se ** 4 / s.df for s in (a, b) if s.log_se > 0 and math.isfinite(s.df)]
    return se, (se ** 4 / sum(parts) if parts else math.inf)


def welch_df_bound(n: int, m: int) -> float:
    """The most degrees of freedom Welch's test takes with ``n`` and ``m`` runs: Hsu's k - 1, k the fewer
    (``significance``'s module doc: why Welch-Satterthwaite's estimate needs a bound, and why this one)."""
    return min(n, m) - 1.0


def judge_log(lo: float, hi: float, margin: float) -> str:
    """The verdict of an interval of the log of a ratio (module doc); ``NO_INTERVAL`` where a bound is NaN."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return NO_INTERVAL
    band = edge(margin)
    if -band < lo and hi < band:
        return SAME
    if lo > band:
        return ABOVE
    if hi < -band:
        return BELOW
    return UNDECIDED


def judge(lo: float, hi: float, margin: float = DEFAULT_MARGIN) -> str:
    """The verdict of a ratio's interval ``lo``..``hi`` (both positive), read against ``margin``: the band's edges
    1 - margin and 1 / (1 - margin) compared as ratios, so that a tax interval whose bound is the margin itself
    (1 - 0.02) lies on the edge, not beyond it by a rounding."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return NO_INTERVAL
    if lo <= 0 or hi < lo:
        raise AnalysisError(f"a ratio's interval must be positive and ordered; got {lo!r} to {hi!r}")
    low = 1.0 - check_margin(margin)
    if low < lo and hi < 1.0 / low:
        return SAME
    if lo > 1.0 / low:
        return ABOVE
    if hi < low:
        return BELOW
    return UNDECIDED


def grown(value: float, log_half: float) -> float:
    """``value`` x exp(``log_half``), the upper end of a log-scale interval: infinite, not an overflow, where the
    half-width is beyond what a float carries (a t quantile on a fraction of a degree of freedom, a Welch df of two
    runs that scatter)."""
    return value * math.exp(log_half) if log_half < math.log(sys.float_info.max) - 1 else math.inf


def agree(a: Side, b: Side, margin: float = DEFAULT_MARGIN, confidence: float = 0.95) -> Agreement:
    """Whether ``a`` and ``b`` are the same number within ``margin`` (module doc)."""
    margin, confidence = check_margin(margin), _check_confidence(confidence)
    ratio = a.value / b.value
    se, df = _welch(a, b)
    if not np.isfinite(se):
        return Agreement(ratio, math.nan, math.nan, NO_INTERVAL, margin, confidence)
    log_ratio = math.log(a.value) - math.log(b.value)
    half = float(sps.t.ppf((1 + confidence) / 2, df)) * se if se > 0 else 0.0
    verdict = judge_log(log_ratio - half, log_ratio + half, margin)  # Side(ratio, se, df, n).interval, on the log
    return Agreement(ratio, ratio * math.exp(-half), grown(ratio, half), verdict, margin, confidence)


def between(a, b, margin: float = DEFAULT_MARGIN, confidence: float = 0.95) -> Agreement:
    """``agree`` of two sets of repetitions."""
    return agree(Side.of(a), Side.of(b), margin, confidence)


def side(value: float, lo: float, hi: float, df: float, confidence: float = 0.95) -> Side | None:
    """``Side.of_interval`` of a table's row (a prediction, a measured mean with its runs - 1 as ``df``); None
    where ``value`` is no positive number (nothing predicted, nothing measured)."""
    if not (isinstance(value, (int, float, np.number)) and np.isfinite(value) and value > 0):
        return None
    df = float(df) if df is not None and np.isfinite(df) else math.inf
    return Side.of_interval(value, lo, hi, df, confidence)


def verdict(a: Side | None, b: Side | None, margin: float = DEFAULT_MARGIN, confidence: float = 0.95) -> str | None:
    """``agree(a, b).verdict``; None where a side is missing."""
    return None if a is None or b is None else agree(a, b, margin, confidence).verdict


def prediction_interval(predicted: Side, measured: Side, confidence: float = 0.95) -> tuple[float, float]:
    """Where the mean of ``measured``'s runs should fall if ``predicted`` is right: a prediction interval, not the
    prediction's confidence interval. The prediction's interval is that of its own mean (the single device's runs
    behind it); a new measurement adds its own run-to-run noise: s_pred^2 = s_model^2 + s^2 / m, s / sqrt(m) the
    measured side's ``log_se`` (its m runs' spread), or with one run the prediction's own spread of one run
    (s_model x sqrt(its runs): the same device's noise, on its degrees of freedom), else on Welch-Satterthwaite's,
    bounded as the tax test's (``welch_df_bound``). With an exactly right model the confidence interval missed the
    measurement in 7 to 38% of draws (3 runs a side at 2%: 10%), this in at most 5.7% (tests/test_predict_interval.py). (nan, nan) where the prediction has no interval."""
    confidence = _check_confidence(confidence)
    if not math.isfinite(predicted.log_se):
        return (math.nan, math.nan)
    if math.isfinite(measured.log_se):
        se, df = _welch(predicted, measured)
        if predicted.n > 1 and measured.n > 1:
            df = min(df, welch_df_bound(predicted.n, measured.n))
    else:  # one run: no spread of its own; the same device's noise, s sqrt(1/k + 1) on the prediction's df
        se, df = predicted.log_se * math.sqrt(1 + max(predicted.n, 1)), predicted.df
    half = float(sps.t.ppf((1 + confidence) / 2, df)) * se if se > 0 else 0.0
    return (predicted.value * math.exp(-half), grown(predicted.value, half))
