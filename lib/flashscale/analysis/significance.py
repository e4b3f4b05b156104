"""Is a layout's tax real? A test of the ratio of its repetitions to the reference's.

Pure functions. tax = 1 - mean(layout) / mean(reference), the definition of ``analysis.baseline_and_tax``. Storage noise is
multiplicative (a run is a few per cent faster or slower, whatever its level), so the test works on the logarithm
of the repetitions: the difference of mean logs is the log of the ratio of geometric means, and its t interval,
mapped back through 1 - exp(.), is the interval of the tax.

Two t tests on the logs:

* ``welch`` (the default, wherever a table reads a tax and in ``sequential_tax``): separate variances, Welch's
  standard error, on Hsu's degrees of freedom: k - 1 for k runs on the side with fewer (``welch_df_bound``; the
  Welch-Satterthwaite estimate is never below it, so it is the estimate bounded there). It holds where the two
  sides differ in runs or in spread, as a layout and its reference often do (a reference run to ten runs at 1%, a
  layout stopped at three at 5%). Pooling their variances there is wrong: at a true tax equal to the 2% margin
  that pair was called ``tax`` or ``equivalent`` in 18.3% of 100,000 draws (``student``; 24.8% with two runs of
  the layout). Why Hsu's and not Welch-Satterthwaite's estimate: with few runs the estimate is read from the
  variances themselves, and where the noisier side came out quiet by chance it grows as that side's standard
  error shrinks; bounded at (k - 1)(1 + k / K) (K runs on the other side), three runs a side at 5% and 1% were
  still wrong at no tax in 6.5-7.0% of draws at 5% stated, three against two in 7.15% (``make bench-stats``, 2,000 draws
  a setting; two runs at 10% against three at 1%, 7.2% of 200,000). k - 1 is the Behrens-Fisher problem's safe answer:
  the test is at most at its level whatever the two spreads (Hsu 1938; Mickey and Brown 1966), measured at most 5.65%
  (within 3 Monte Carlo errors of 5%) over every setting of ``make bench-stats``. Its price is power where the spreads
  are in fact alike: three runs a side at 2% find a real 6% tax in 43% of draws where the bounded estimate found it in
  68% (five a side: 95% and 98%), and a 95% interval of three runs a side covers in 98.8%: runs a side bring it back
  (PRECISION runs the tax reference to its most, so the layout's own runs set k). Measured in
  tests/test_significance_welch.py.
* ``student``: pooled variance, n_layout + n_reference - 2 degrees of freedom. It assumes the same relative noise
  on both sides, and is kept where something pools many samples on purpose: ``plateau``'s test of a curve's last
  step, its variance pooled over every point of the curve (``pooled_with``).

Measured on 2% multiplicative Gaussian noise, the same on both sides (tests/test_significance.py; 20,000 draws):
false alarms at no tax 4.7% (student) / 1.2% (welch) at n = 3, 4.7% / 2.3% at n = 5; a real 8% tax is found in
96% (student) / 73% (welch) of draws at n = 3 and in more than 99.9% at n = 5; the welch interval covers a true 8%
in 98.8% at n = 3 and 97.4% at n = 5, at 95% stated. The interval-overlap
rule this replaces found it in about half.

The verdict is ``real`` when the test rejects "no tax" at 1 - ``confidence`` (two-sided; the sign of ``tax``
says whether the layout costs or gains), ``noise`` when it does not, and ``n/a`` with fewer than two
repetitions on a side (nothing to test; the values are then NaN, never invented). A spread is never read as
smaller than the measurement resolves (``log_sd_floor``): runs that tie (a capped device, fio's whole KiB/s) are
not certain, and never give p = 0 or an interval of no width.

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
group-sequential TOST with Lan-DeMets O'Brien-Fleming alpha spending on exact boundaries (``group_sequential``),
whose chance of a wrong verdict stays within alpha, the whole, over every look (2.1% at the margin's edge where the
fixed interval read after every run was wrong in 12.0%: tests/test_significance_sequential.py; at most 4.85% over
every setting of ``make bench-stats``); its docstring says why this and not an SPRT, and what its boundaries allow
for.

``log_t_test`` is the t test on the logs itself, for any two samples of positive values: the tax test's, and
``plateau``'s test of the last step of a curve (one-sided, ``alternative="greater"``, its variance pooled over
every point of the curve with ``pooled_with``).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special
from scipy import stats as sps

from . import agreement, group_sequential
from .agreement import DEFAULT_MARGIN, check_margin, welch_df_bound
from ..errors import AnalysisError

NAN = float("nan")
METHODS = ("student", "welch")
VERDICTS = ("real", "noise", "n/a")
PRACTICAL = {agreement.SAME: "equivalent", agreement.BELOW: "tax", agreement.ABOVE: "gain",
             agreement.UNDECIDED: "inconclusive", agreement.NO_INTERVAL: agreement.ONE_RUN}  # the rule's, of a tax
TINY, HUGE = sys.float_info.min, sys.float_info.max  # the ratio's bounds that a float still holds
FIO_STEP_BYTES_S = 1024  # fio reports bandwidth in whole KiB/s
BLOCK_BYTES, RUNTIME_S = 2**20, 5.0  # measure.sweep.Sweep's default bs and runtime_s (analysis reaches no further
# down than measure's pure modules: tests/test_significance_ties.py holds the two the same)
MAX_REPS = 1000  # reps_to_decide looks no further
ALTERNATIVES = ("two-sided", "greater")
T_SPEND = 0.85  # the share of alpha sequential_tax's boundaries spend: the t statistics of its looks cross more often
# than the z statistics the boundaries are made for (its docstring); measured, 0.85 holds every most from 2 to 50


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
    log_diff: float = NAN  # log(layout / reference) as tested: the difference of the mean logs
    log_se: float = NAN  # its standard error
    df: float = NAN  # and degrees of freedom (``verdict_p``, ``detectable_tax`` read them)


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


def log_sd_floor(rate: float, block_bytes: int = BLOCK_BYTES, runtime_s: float = RUNTIME_S) -> float:
    """The least spread of one run's log a rate of ``rate`` bytes/s can be read as having: step / sqrt(2), the step
    the measurement resolves relative to the rate being the larger of fio's whole KiB/s (1024 / rate) and one block
    in the run (``block_bytes`` / (rate x ``runtime_s``): a run moves whole blocks). Two runs that tie differ by
    less than a step, not by nothing: their standard deviation, |a - b| / sqrt(2), is then below step / sqrt(2), and
    the floor reads a tie as the largest spread it could hide (so its interval is no narrower than that of the runs
    before rounding). The block and the run are the sweep's defaults (1 MiB, 5 s): a rate comes here without the run
    it came from; a run of smaller blocks or a longer one resolves finer (the floor is then above its own: a wider
    interval), a shorter one coarser. At 400 MB/s: 5.2e-4 / sqrt(2) = 3.7e-4, below the spread of any real device
    and of the capped emulated array (0.1 to 0.5%)."""
    step = max(FIO_STEP_BYTES_S / rate, block_bytes / (rate * runtime_s))
    return float(step / np.sqrt(2.0))


def _floored_var(logs: np.ndarray, floor: float) -> float:
    return max(float(logs.var(ddof=1)), floor ** 2)


def _spread(la: np.ndarray, lb: np.ndarray, method: str, pooled: list[np.ndarray],
            floors: tuple[float, float]) -> tuple[float, float]:
    """The standard error of mean(la) - mean(lb) and its degrees of freedom, each side's variance at least its
    floor squared; NaN where there is no degree of freedom (one value a side, or with ``student`` one value in
    every sample)."""
    if method == "student":
        logs = [la, lb, *pooled]
        df = sum(s.size - 1 for s in logs)
        if df == 0:
            return NAN, 0.0
        variance = max(sum((s.size - 1) * s.var(ddof=1) for s in logs if s.size > 1) / df, max(floors) ** 2)
        return float(np.sqrt(variance * (1 / la.size + 1 / lb.size))), float(df)
    if la.size < 2 or lb.size < 2:
        return NAN, NAN
    se = np.sqrt(_floored_var(la, floors[0]) / la.size + _floored_var(lb, floors[1]) / lb.size)
    # Hsu's degrees of freedom: Welch-Satterthwaite's estimate is never below them, so bounded there it is them
    return float(se), (welch_df_bound(la.size, lb.size) if se > 0 else NAN)



def log_t_test(a, b, method: str | None = None, alternative: str = "two-sided", pooled_with=(),
               floors: tuple[float, float] = (0.0, 0.0)) -> LogT:
    """t test of mean log(a) - mean log(b) (``a``, ``b``: positive, finite values). ``student`` pools the variance
    of the logs of ``a``, ``b`` and of each sample of ``pooled_with`` (on sum(n - 1) degrees of freedom); ``welch``
    keeps those of ``a`` and ``b`` apart, on Welch-Satterthwaite's degrees of freedom bounded by
    ``welch_df_bound``. ``method`` None: ``welch`` (it holds whether or not the two differ in runs and spread,
    module doc), or ``student`` where ``pooled_with`` is given (only a pooled variance pools other samples). The
    p-value is that of "no difference": ``two-sided``, or ``greater`` (a's mean log exceeds b's only by noise).
    ``floors``: the least standard deviation of one log of ``a`` and of ``b`` (``log_sd_floor`` for rates; none for
    values of no known resolution). No degree of freedom: se and p NaN; a spread of zero: se 0 and p the
    limit (0 where the difference points the tested way, else 1)."""
    if method is None:
        method = "student" if len(pooled_with) else "welch"
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
    se, df = _spread(la, lb, method, pooled, floors)
    if np.isnan(se):
        return LogT(diff, se, df, NAN)
    if se == 0:  # no spread at all: the p-value's limit
        toward = diff != 0 if alternative == "two-sided" else diff > 0
        return LogT(diff, se, df, 0.0 if toward else 1.0)
    if alternative == "two-sided":
        return LogT(diff, se, df, float(2 * special.stdtr(df, -abs(diff) / se)))
    return LogT(diff, se, df, float(special.stdtr(df, -diff / se)))


def tax_test(layout_reps, reference_reps, confidence: float = 0.95, method: str = "welch") -> TaxTest:
    """Test the tax of ``layout_reps`` against ``reference_reps`` (bandwidth repetitions of one point each). Welch's
    test by default: a layout and its reference may differ in runs and in spread, where pooling their variances
    (``student``) is wrong several times as often as it says (module doc). Each side's spread is at least its
    ``log_sd_floor``: repetitions are rates in bytes/s, and runs that tie are not certain."""
    if not 0.0 < confidence < 1.0:
        raise AnalysisError(f"confidence {confidence!r} must lie strictly between 0 and 1")
    if method not in METHODS:
        raise AnalysisError(f"tax test method {method!r} is unknown; expected one of {METHODS}")
    layout, reference = _repetitions(layout_reps, "layout"), _repetitions(reference_reps, "reference")
    tax = 1.0 - float(layout.mean()) / float(reference.mean()) if layout.size and reference.size else NAN
    if layout.size < 2 or reference.size < 2:
        return TaxTest(tax, NAN, NAN, NAN, "n/a", int(layout.size), int(reference.size))
    t = log_t_test(layout, reference, method, floors=(log_sd_floor(float(layout.mean())),
                                                      log_sd_floor(float(reference.mean()))))
    n = (int(layout.size), int(reference.size))
    if t.se == 0:  # no spread on either side: the ratio is what was measured, every time
        exact = 1.0 - float(np.exp(t.diff))
        return TaxTest(tax, exact, exact, t.p_value, "real" if t.diff != 0 else "noise", *n, 0.0, t.diff, 0.0, t.df)
    if not t.se > 0:
        return TaxTest(tax, NAN, NAN, NAN, "n/a", *n)
    half = float(special.stdtrit(t.df, (1 + confidence) / 2)) * t.se
    verdict = "real" if t.p_value < 1 - confidence else "noise"
    log_sd = t.se / float(np.sqrt(1 / n[0] + 1 / n[1]))
    # log(layout / reference) in [diff - half, diff + half]  ->  tax = 1 - ratio in [1 - e^(diff+half), ...]
    return TaxTest(tax, 1.0 - agreement.grown(1.0, t.diff + half), 1.0 - float(np.exp(t.diff - half)), t.p_value,
                   verdict, *n, log_sd, t.diff, t.se, t.df)


def practical(test: TaxTest, margin: float = DEFAULT_MARGIN) -> str:
    """The verdict that matters (module doc): ``agreement.judge`` of the ratio layout / reference, 1 - tax, whose
    interval is 1 - hi to 1 - lo: ``tax``, ``gain``, ``equivalent``, ``inconclusive``, or "one run: no interval"
    (``agreement.ONE_RUN``) where a side had fewer than two runs: no verdict can be given."""
    margin = check_margin(margin)
    if test.verdict == "n/a" or np.isnan(test.lo):
        return agreement.ONE_RUN
    low, high = 1.0 - test.hi, 1.0 - test.lo  # a bound past what a float holds (a t quantile of a level near 0
    return PRACTICAL[agreement.judge(max(low, TINY), min(high, HUGE), margin)]  # on 1.x df) is 0 or inf


def verdict_p(test: TaxTest, verdict: str, margin: float = DEFAULT_MARGIN) -> float:
    """The p-value of a verdict's own claim against the margin (``practical``'s reading, e = ``agreement.edge``):
    ``tax`` claims log(layout / reference) < -e (one-sided t test of d >= -e), ``gain`` that it exceeds e, and
    ``equivalent`` that it lies within (TOST: the larger of its two one-sided p-values). A verdict read from an
    interval at ``confidence`` is called exactly where this is below (1 - confidence) / 2, its one-sided level;
    NaN for any other verdict or a test with no spread known. ``family.controlled`` adjusts a report's p-values
    together."""
    edge = agreement.edge(margin)
    if verdict not in ("tax", "gain", "equivalent") or not np.isfinite(test.log_diff) or not test.log_se >= 0:
        return NAN
    if test.log_se == 0:
        inside = {"tax": test.log_diff < -edge, "gain": test.log_diff > edge,
                  "equivalent": -edge < test.log_diff < edge}[verdict]
        return 0.0 if inside else 1.0
    below = float(special.stdtr(test.df, (test.log_diff + edge) / test.log_se))  # claim: d < -e
    above = float(special.stdtr(test.df, -(test.log_diff - edge) / test.log_se))  # claim: d > e
    if verdict == "tax":
        return below
    if verdict == "gain":
        return above
    return max(float(special.stdtr(test.df, -(test.log_diff + edge) / test.log_se)),  # claim: d > -e
               float(special.stdtr(test.df, (test.log_diff - edge) / test.log_se)))  # claim: d < e


def detectable_tax(test: TaxTest, margin: float = DEFAULT_MARGIN, confidence: float = 0.95,
                   power: float = 0.8) -> float:
    """The smallest true tax this test would call ``tax`` (its interval at ``confidence``: a one-sided test at
    (1 - confidence) / 2) with probability ``power``, at the spread and runs it had: 1 - exp(-e - delta se), delta
    the noncentrality at which the noncentral t of its degrees of freedom exceeds the test's critical value with
    that probability (scipy.stats.nct; the t quantiles' sum t_{1-a} + t_{power} is short of it on few degrees of
    freedom). What a verdict other than ``tax`` could have missed: a
    smaller tax was more likely than not to go unseen. The margin itself where the test had no spread; NaN without a
    test."""
    if test.log_se == 0:
        return float(-np.expm1(-agreement.edge(margin)))
    if not (test.log_se > 0 and np.isfinite(test.df) and test.df > 0):
        return NAN
    critical = float(special.stdtrit(test.df, 1.0 - (1.0 - confidence) / 2.0))
    delta = optimize.brentq(lambda nc: float(sps.nct.sf(critical, test.df, nc)) - power, 0.0, critical + 50.0)
    return float(-np.expm1(-agreement.edge(margin) - delta * test.log_se))


def reps_to_decide(test: TaxTest, margin: float = DEFAULT_MARGIN, confidence: float = 0.95) -> int | None:
    """For an ``inconclusive`` test: the fewest repetitions a side that would, at the spread measured and the same
    estimate, bring the interval clear of the margin's nearer edge (a tax or a gain beyond it, or equivalent
    within it), on the default test's degrees of freedom at n a side (``welch_df_bound``). None when no number up
    to ``MAX_REPS`` would (the estimate sits on the edge) or there is no spread
    to go by."""
    margin = check_margin(margin)
    if not test.log_sd > 0 or np.isnan(test.tax):
        return None
    diff = float(np.log(1.0 - test.tax))  # log(layout / reference), as the interval was made
    edges = [-agreement.edge(margin), agreement.edge(margin)]
    distance = min(abs(diff - e) for e in edges)
    for n in range(max(test.n_layout, test.n_reference) + 1, MAX_REPS + 1):
        half = float(special.stdtrit(welch_df_bound(n, n), (1 + confidence) / 2)) * test.log_sd * np.sqrt(2 / n)
        if half < distance:
            return n
    return None


@dataclass(frozen=True)
class SequentialLook:
    """One look of ``sequential_tax``: the ``verdict`` (``practical``'s), whether it is final (``decided``: a tax, a
    gain or equivalent, or the last look), the one-sided ``level`` it was read at and the ``test`` itself."""

    verdict: str
    decided: bool
    level: float
    test: TaxTest
    look: int = 0  # the look's runs a side: the layout's, or the fewer side's where the reference grows
    needs: tuple[str, ...] = ()  # the sides whose next run the next look needs ("layout", "reference"); () decided


def sequential_tax(layout_reps, reference_reps, most: int, margin: float = DEFAULT_MARGIN, alpha: float = 0.05,
                   method: str = "welch", reference_grows: bool = False) -> SequentialLook:
    """The tax verdict of a layout whose runs arrive one at a time, against a reference whose runs are done: a
    group-sequential equivalence test (TOST against ``margin``, both one-sided tests and the tax or gain beyond the
    margin) looking after each of the layout's runs from the second to ``most``, each look read at the nominal level
    of exact group-sequential boundaries (``group_sequential``: Lan-DeMets O'Brien-Fleming spending).

    Why this and not an SPRT: the verdict is three-way against a margin (tax, equivalent, gain), which TOST already
    reads from one interval (``practical``); alpha spending keeps that reading and only narrows the level of each
    look, and a campaign's runs are few (2 to ``MAX_REPETITIONS``) with the variance unknown, where an SPRT needs
    the variance or a composite test. O'Brien-Fleming spends almost nothing at the first looks (two or three runs
    decide only a tax far beyond the margin) and keeps nearly the whole alpha for the last.

    ``alpha`` is the whole: each one-sided claim (the ratio below the margin's lower edge; above it, half of
    equivalence; the same two at the upper edge) is spent at ``alpha`` / 2 over every look, so at a true tax on the
    margin's edge, where ``tax`` and ``equivalent`` are both wrong, the two together are wrong at most ``alpha``: the
    fixed test's 95% interval, 2.5% a side, read sequentially. The boundaries carry the looks' correlation, so the
    last look spends what the earlier ones left, where the union bound (each look at its share alone) left most of
    it unspent. Two things the boundaries' Brownian motion does not hold, each measured and allowed for:

    * The information of a look. It is k / ``most`` for the layout's k runs (the fraction of its runs, the
      reference's done): exact where the layout's noise dominates the test's, the case where the looks matter,
      since each look then learns about as much as the runs before it. Read as 1 / (1/k + 1/m) with m the
      reference's runs (the information were the spreads the same), the early looks were spent as if they knew
      more than they did: a layout at 5% against ten reference runs at 1% was wrong at a 10% margin's edge in 6.2%
      of 4,000 draws, one-sided 3.5% of 2.5% (a one-sample sequential t over 200,000 paths, most 10; with a
      reference of 3 runs, 4.4%). Where the reference's noise dominates, the looks learn little each and k / most
      spends less early than the information allows: the test is then conservative, not wrong.
    * The t statistic. Each look estimates the variance anew, so the looks' t statistics are less alike than the
      z statistics the boundaries are made for, and read at the boundaries' nominal levels they cross more often:
      2.55-2.93% one-sided at 2.5% for a most of 2 to 20 (200,000 paths of a one-sample sequential t on Hsu's
      degrees of freedom, the test's worst case). The boundaries are therefore those of ``T_SPEND`` x alpha, 0.85:
      measured, 2.10-2.45% one-sided over the same most of 2 to 20, 2.27% at 30 and 2.21% at 50 (100,000 paths)
      (``make bench-stats`` holds the whole test over runs, spreads, margins and most).

    Welch's test by default: the two sides differ in runs, and often in spread (a layout at 5% against ten
    reference runs at 1%, pooled, was wrong in 7.6% of draws at the margin's edge, Welch's in 1.9%). Measured in
    tests/test_significance_sequential.py and by ``make bench-stats``.

    ``reference_grows``: the reference is sampled too, as the looks need it (``repetitions.shared_point``), not run
    to the most first. A look is then at j = the fewer side's runs (``look``), its information fraction j / ``most``
    and its degrees of freedom Hsu's j - 1: a run of the side already ahead adds no look (it is read at the next
    look), and the next look needs a run of each side that has only j (``needs``); the last look is the one at
    ``most`` runs a side, which spends what the earlier ones left. j / most is never more than the information the
    look holds, whatever the two spreads: 1 / (s_l^2 / n + s_r^2 / m) over its value at ``most`` a side lies between
    min(n, m) / most and max(n, m) / most, so the boundaries spend at most what the information allows (exact where
    both sides have j runs, as the interleaved design keeps them). The caller reads each look once, after the run
    that made it (``repetitions.shared_point``): a look read again after a run of the side ahead would be a look
    the boundaries did not count. Measured in tests/test_shared_reference.py and by ``make bench-stats``
    (``shared``)."""
    layout = _repetitions(layout_reps, "layout")
    reference = _repetitions(reference_reps, "reference")
    n, m = int(layout.size), int(reference.size)
    if n < 2 or m < 2 or most < 2:
        raise AnalysisError(f"a sequential tax test looks from two runs a side; got {n} of the layout, {m} of the "
                            f"reference, at most {most}")
    look = min(n, m) if reference_grows else n
    last = max(most, look)
    fractions = tuple(round(k / last, 12) for k in range(2, last + 1))
    level = max(group_sequential.nominal_levels(fractions, T_SPEND * alpha / 2.0)[look - 2], 1e-12)
    test = tax_test(layout, reference, confidence=1.0 - 2.0 * level, method=method)
    said = practical(test, margin)
    decided = said in ("tax", "gain", "equivalent") or look >= most
    needs = () if decided else tuple(side for side, runs in (("layout", n), ("reference", m))
                                     if runs <= look and (reference_grows or side == "layout"))
    return SequentialLook(said, decided, level, test, look, needs)
