"""Is a layout's tax real? A test of the ratio of its repetitions to the reference's.

Pure functions. tax = 1 - mean(layout) / mean(reference), the definition of ``analysis.baseline_and_tax``. Storage noise is
multiplicative (a run is a few per cent faster or slower, whatever its level), so the test works on the logarithm
of the repetitions: the difference of mean logs is the log of the ratio of geometric means, and its t interval,
mapped back through 1 - exp(.), is the interval of the tax.

Two t tests on the logs:

* ``student`` (default): pooled variance, n_layout + n_reference - 2 degrees of freedom. It assumes the same
  relative noise on both sides, which holds for two layouts measured on the same devices with the same fio job.
* ``welch``: separate variances, Welch-Satterthwaite degrees of freedom. Safe when the noise differs, but with
  three repetitions a side its degrees of freedom fall towards 2 and it loses power.

Measured on 2% multiplicative Gaussian noise (tests/test_significance.py; 20,000 draws while designing):
false alarms at no tax 4.7% (student) / 3.2% (welch) at n = 3, 4.7% / 4.1% at n = 5; a real 8% tax is found in
96% (student) / 91% (welch) of draws at n = 3 and in more than 99.9% at n = 5. The interval-overlap rule this
replaces found it in about half.

The verdict is ``real`` when the test rejects "no tax" at 1 - ``confidence`` (two-sided; the sign of ``tax``
says whether the layout costs or gains), ``noise`` when it does not, and ``n/a`` with fewer than two
repetitions on a side (nothing to test; the values are then NaN, never invented). Repetitions without any spread
on either side (a throttle that precise) give the exact interval: tax to tax.

Significant is not the same as important: on an array whose throttle is exact to 0.1%, a 0.3% difference is
"real" and nobody's tax. ``practical`` reads the same interval by the one rule of ``analysis.agreement`` (the
ratio layout / reference against the margin of practical equivalence, ``DEFAULT_MARGIN``): a ``tax`` beyond the
margin (the whole interval of the ratio below 1 - margin), a ``gain`` beyond it (the whole interval above
1 / (1 - margin)), ``equivalent`` (the whole interval between: both one-sided tests of TOST at
(1 - confidence) / 2 reject a difference as large as the margin), ``inconclusive`` (the interval reaches across an
edge) or "one run: no interval" (fewer than two runs on a side: no verdict can be given); ``reps_to_decide`` says how many
repetitions a side would, at the spread measured, move the interval off that edge. Margin 0 gives back the plain
significance test (``tax``, ``gain`` or ``inconclusive``). Why 2% by default: ``analysis.agreement``.

``sequential_tax`` reads the same verdict when the layout's runs arrive one at a time (PRECISION's repetitions): a
group-sequential TOST with Lan-DeMets O'Brien-Fleming alpha spending, whose chance of a wrong verdict stays within
alpha over every look (2.6% at the margin's edge where the fixed interval read after every run was wrong in 9.7%:
tests/test_significance_sequential.py); its docstring says why this and not an SPRT.

``log_t_test`` is the t test on the logs itself, for any two samples of positive values: the tax test's, and
``plateau``'s test of the last step of a curve (one-sided, ``alternative="greater"``, its variance pooled over
every point of the curve with ``pooled_with``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from . import agreement
from .agreement import DEFAULT_MARGIN, check_margin
from ..errors import AnalysisError

NAN = float("nan")
METHODS = ("student", "welch")
VERDICTS = ("real", "noise", "n/a")
PRACTICAL = {agreement.SAME: "equivalent", agreement.BELOW: "tax", agreement.ABOVE: "gain",
             agreement.UNDECIDED: "inconclusive", agreement.NO_INTERVAL: agreement.ONE_RUN}  # the rule's, of a tax
MAX_REPS = 1000  # reps_to_decide looks no further
ALTERNATIVES = ("two-sided", "greater")


@dataclass(frozen=True)
class TaxTest:
    """The tax of a layout against the reference, its interval at ``confidence``, the two-sided p-value of
    "no tax" and the verdict (``real``, ``noise`` or ``n/a``)."""

    tax: float
    lo: float
    hi: float
    p_value: float
    verdict: str
    n_layout: int
    n_reference: int
    log_sd: float = NAN  # the spread of one repetition's log (pooled with ``student``): what more repetitions shrink


def _repetitions(values, side: str) -> np.ndarray:
    values = np.asarray(values, dtype=float).ravel()
    bad = values[~np.isfinite(values) | (values <= 0)]
    if bad.size:
        raise AnalysisError(f"{side} repetitions must be positive and finite for a test on their logs; "
                            f"got {bad.tolist()}")
    return values


@dataclass(frozen=True)
class LogT:
    """mean log(a) - mean log(b) (``diff``), its standard error, degrees of freedom and p-value."""

    diff: float
    se: float
    df: float
    p_value: float


def _spread(la: np.ndarray, lb: np.ndarray, method: str, pooled: list[np.ndarray]) -> tuple[float, float]:
    """The standard error of mean(la) - mean(lb) and its degrees of freedom; NaN where there is no degree of
    freedom (one value a side, or with ``student`` one value in every sample)."""
    if method == "student":
        logs = [la, lb, *pooled]
        df = sum(s.size - 1 for s in logs)
        if df == 0:
            return NAN, 0.0
        variance = sum((s.size - 1) * s.var(ddof=1) for s in logs if s.size > 1) / df
        return float(np.sqrt(variance * (1 / la.size + 1 / lb.size))), float(df)
    if la.size < 2 or lb.size < 2:
        return NAN, NAN
    wa, wb = la.var(ddof=1) / la.size, lb.var(ddof=1) / lb.size
    se = np.sqrt(wa + wb)
    df = (wa + wb) ** 2 / (wa ** 2 / (la.size - 1) + wb ** 2 / (lb.size - 1)) if se > 0 else NAN
    return float(se), float(df)


def log_t_test(a, b, method: str = "student", alternative: str = "two-sided", pooled_with=()) -> LogT:
    """t test of mean log(a) - mean log(b) (``a``, ``b``: positive, finite values). ``student`` pools the variance
    of the logs of ``a``, ``b`` and of each sample of ``pooled_with`` (on sum(n - 1) degrees of freedom); ``welch``
    keeps those of ``a`` and ``b`` apart. The p-value is that of "no difference": ``two-sided``, or ``greater``
    (a's mean log exceeds b's only by noise). No degree of freedom: se and p NaN; a spread of zero: se 0 and p the
    limit (0 where the difference points the tested way, else 1)."""
    if method not in METHODS:
        raise AnalysisError(f"t test method {method!r} is unknown; expected one of {METHODS}")
    if alternative not in ALTERNATIVES:
        raise AnalysisError(f"t test alternative {alternative!r} is unknown; expected one of {ALTERNATIVES}")
    if method == "welch" and len(pooled_with):
        raise AnalysisError("only the student t test pools the variance of other samples (pooled_with)")
    samples = [_repetitions(a, "first"), _repetitions(b, "second"), *(_repetitions(s, "pooled") for s in pooled_with)]
    if any(s.size == 0 for s in samples):
        raise AnalysisError(f"a t test needs values in every sample; got {[s.size for s in samples]}")
    la, lb, *pooled = [np.log(s) for s in samples]
    diff = float(la.mean() - lb.mean())
    se, df = _spread(la, lb, method, pooled)
    if np.isnan(se):
        return LogT(diff, se, df, NAN)
    if se == 0:  # no spread at all: the p-value's limit
        toward = diff != 0 if alternative == "two-sided" else diff > 0
        return LogT(diff, se, df, 0.0 if toward else 1.0)
    if alternative == "two-sided":
        return LogT(diff, se, df, float(2 * sps.t.sf(abs(diff) / se, df)))
    return LogT(diff, se, df, float(sps.t.sf(diff / se, df)))


def tax_test(layout_reps, reference_reps, confidence: float = 0.95, method: str = "student") -> TaxTest:
    """Test the tax of ``layout_reps`` against ``reference_reps`` (bandwidth repetitions of one point each)."""
    if not 0.0 < confidence < 1.0:
        raise AnalysisError(f"confidence {confidence!r} must lie strictly between 0 and 1")
    if method not in METHODS:
        raise AnalysisError(f"tax test method {method!r} is unknown; expected one of {METHODS}")
    layout, reference = _repetitions(layout_reps, "layout"), _repetitions(reference_reps, "reference")
    tax = 1.0 - float(layout.mean()) / float(reference.mean()) if layout.size and reference.size else NAN
    if layout.size < 2 or reference.size < 2:
        return TaxTest(tax, NAN, NAN, NAN, "n/a", int(layout.size), int(reference.size))
    t = log_t_test(layout, reference, method)
    n = (int(layout.size), int(reference.size))
    if t.se == 0:  # no spread on either side: the ratio is what was measured, every time
        exact = 1.0 - float(np.exp(t.diff))
        return TaxTest(tax, exact, exact, t.p_value, "real" if t.diff != 0 else "noise", *n, 0.0)
    if not t.se > 0:
        return TaxTest(tax, NAN, NAN, NAN, "n/a", *n)
    half = float(sps.t.ppf((1 + confidence) / 2, t.df)) * t.se
    verdict = "real" if t.p_value < 1 - confidence else "noise"
    log_sd = t.se / float(np.sqrt(1 / n[0] + 1 / n[1]))
    # log(layout / reference) in [diff - half, diff + half]  ->  tax = 1 - ratio in [1 - e^(diff+half), ...]
    return TaxTest(tax, 1.0 - float(np.exp(t.diff + half)), 1.0 - float(np.exp(t.diff - half)), t.p_value, verdict,
                   *n, log_sd)


def practical(test: TaxTest, margin: float = DEFAULT_MARGIN) -> str:
    """The verdict that matters (module doc): ``agreement.judge`` of the ratio layout / reference, 1 - tax, whose
    interval is 1 - hi to 1 - lo: ``tax``, ``gain``, ``equivalent``, ``inconclusive``, or "one run: no interval"
    (``agreement.ONE_RUN``) where a side had fewer than two runs: no verdict can be given."""
    margin = check_margin(margin)
    if test.verdict == "n/a" or np.isnan(test.lo):
        return agreement.ONE_RUN
    return PRACTICAL[agreement.judge(1.0 - test.hi, 1.0 - test.lo, margin)]


def reps_to_decide(test: TaxTest, margin: float = DEFAULT_MARGIN, confidence: float = 0.95) -> int | None:
    """For an ``inconclusive`` test: the fewest repetitions a side that would, at the spread measured and the same
    estimate, bring the interval clear of the margin's nearer edge (a tax or a gain beyond it, or equivalent
    within it). None when no number up to ``MAX_REPS`` would (the estimate sits on the edge) or there is no spread
    to go by."""
    margin = check_margin(margin)
    if not test.log_sd > 0 or np.isnan(test.tax):
        return None
    diff = float(np.log(1.0 - test.tax))  # log(layout / reference), as the interval was made
    edges = [-agreement.edge(margin), agreement.edge(margin)]
    distance = min(abs(diff - e) for e in edges)
    for n in range(max(test.n_layout, test.n_reference) + 1, MAX_REPS + 1):
        if float(sps.t.ppf((1 + confidence) / 2, 2 * n - 2)) * test.log_sd * np.sqrt(2 / n) < distance:
            return n
    return None


def obrien_fleming_spent(information: float, alpha: float = 0.05) -> float:
    """Lan-DeMets' O'Brien-Fleming-type spending function: the share of a one-sided ``alpha`` spent by the look at
    ``information`` (the information fraction, in (0, 1]), 2 - 2 Phi(z_{1 - alpha/2} / sqrt(information)); all of
    ``alpha`` at 1, almost none at the first looks."""
    if not 0.0 < information <= 1.0:
        raise AnalysisError(f"information fraction {information!r} must lie in (0, 1]")
    return float(2.0 - 2.0 * sps.norm.cdf(sps.norm.ppf(1.0 - alpha / 2.0) / np.sqrt(information)))


@dataclass(frozen=True)
class SequentialLook:
    """One look of ``sequential_tax``: the ``verdict`` (``practical``'s), whether it is final (``decided``: a tax, a
    gain or equivalent, or the last look), the one-sided ``level`` it was read at and the ``test`` itself."""

    verdict: str
    decided: bool
    level: float
    test: TaxTest


def sequential_tax(layout_reps, reference_reps, most: int, margin: float = DEFAULT_MARGIN, alpha: float = 0.05,
                   method: str = "student") -> SequentialLook:
    """The tax verdict of a layout whose runs arrive one at a time, against a reference whose runs are done: a
    group-sequential equivalence test (TOST against ``margin``, both one-sided tests and the tax or gain beyond the
    margin) with Lan-DeMets O'Brien-Fleming alpha spending, looking after each of the layout's runs from the second
    to ``most``.

    Why this and not an SPRT: the verdict is three-way against a margin (tax, equivalent, gain), which TOST already
    reads from one interval (``practical``); alpha spending keeps that reading and only narrows the level of each
    look, and a campaign's runs are few (2 to ``MAX_REPETITIONS``) with the variance unknown, where an SPRT needs
    the variance or a composite test. O'Brien-Fleming spends almost nothing at the first looks (two or three runs
    decide only a tax far beyond the margin) and keeps nearly the whole alpha for the last.

    Each look is read at the alpha it spends, alpha*(t_k) - alpha*(t_{k-1}) (t the information, 1 / (1/n + 1/m)
    for n runs of the layout and m of the reference, over its value at ``most``): by the union bound the chance of
    a wrong verdict over every look is at most ``alpha`` whatever the looks see (Bonferroni over the spent shares,
    conservative against the exact recursive boundaries; measured in tests/test_significance_sequential.py). The
    last look spends the rest and is final, whatever it says."""
    layout = _repetitions(layout_reps, "layout")
    reference = _repetitions(reference_reps, "reference")
    n, m = int(layout.size), int(reference.size)
    if n < 2 or m < 2 or most < 2:
        raise AnalysisError(f"a sequential tax test looks from two runs a side; got {n} of the layout, {m} of the "
                            f"reference, at most {most}")
    full = 1.0 / (1.0 / most + 1.0 / m)
    now, before = (min(1.0, 1.0 / (1.0 / k + 1.0 / m) / full) for k in (n, n - 1))
    spent = obrien_fleming_spent(now, alpha) - (obrien_fleming_spent(before, alpha) if n > 2 else 0.0)
    level = max(spent, 1e-12)
    test = tax_test(layout, reference, confidence=1.0 - 2.0 * level, method=method)
    said = practical(test, margin)
    return SequentialLook(said, said in ("tax", "gain", "equivalent") or n >= most, level, test)
