"""The tax test: false alarms, power and interval coverage measured on simulated repetitions of known truth.

Each rate is measured over DRAWS = 400 seeded draws with 2% multiplicative Gaussian noise. A rate p measured over
400 draws has a standard deviation sqrt(p (1 - p) / 400): 1.1 points at p = 0.05 and at p = 0.95, so the bounds
below sit three standard deviations from the nominal rate (a correct test fails them about once in 700 runs, an
interval-overlap rule or a test at the wrong level fails them every time).
"""
from __future__ import annotations

import re
import numpy as np
import pytest
import scipy.stats

from flashscale.analysis.significance import TaxTest, log_t_test, practical, reps_to_decide, tax_test, welch_df_bound
from flashscale.errors import AnalysisError, ConfigError

NAN = float("nan")

DRAWS = 400
NOISE = 0.02
BW = 2.0e9  # bytes/s


def _draws(tax: float, reps: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(DRAWS):
        reference = BW * (1 + rng.normal(0, NOISE, reps))
        layout = (1 - tax) * BW * (1 + rng.normal(0, NOISE, reps))
        yield layout, reference


@pytest.mark.parametrize("reps, method", [(3, "student"), (5, "student"), (3, "welch"), (5, "welch")])
def test_false_alarms_at_no_tax_near_five_percent(reps, method):
    verdicts = [tax_test(a, b, method=method).verdict for a, b in _draws(0.0, reps, seed=reps)]
    rate = verdicts.count("real") / DRAWS
    upper = 0.05 + 3 * np.sqrt(0.05 * 0.95 / DRAWS)  # 0.083
    assert rate <= upper, rate
    if method == "student":  # exact under this noise model: the rate is 5%, not merely at most 5%
        assert rate >= 0.05 - 3 * np.sqrt(0.05 * 0.95 / DRAWS), rate  # 0.017


@pytest.mark.parametrize("method, expected", [("student", 0.95), ("welch", 0.73)])
def test_a_real_eight_percent_tax_is_found_at_three_repetitions(method, expected):
    """Measured (seed 11): the pooled test 95.3%, Welch's on Hsu's 2 degrees of freedom (the default) 73.3%: what
    not assuming the two sides' spreads equal costs at three runs a side (significance's module doc)."""
    tests = [tax_test(a, b, method=method) for a, b in _draws(0.08, 3, seed=11)]
    power = np.mean([t.verdict == "real" and t.tax > 0 for t in tests])
    assert power >= expected - 2 * np.sqrt(expected * (1 - expected) / DRAWS), power


@pytest.mark.parametrize("reps", [3, 5])
def test_tax_interval_covers_the_truth_at_its_nominal_rate(reps):
    """At least its 95%, whatever the spreads; at equal spreads more (Hsu's degrees of freedom, n - 1): measured
    99.5% at 3 runs a side, 97.25% at 5 (seeds 23 and 25). The pooled test's interval covers at its rate."""
    covered = [t.lo <= 0.08 <= t.hi for t in (tax_test(a, b) for a, b in _draws(0.08, reps, seed=20 + reps))]
    tolerance = 3 * np.sqrt(0.95 * 0.05 / DRAWS)  # 0.033
    assert np.mean(covered) >= 0.95 - tolerance, np.mean(covered)
    if reps == 5:  # where some draws must miss: not everything covered
        assert np.mean(covered) <= 0.99, np.mean(covered)
    pooled = [t.lo <= 0.08 <= t.hi for t in (tax_test(a, b, method="student") for a, b in _draws(0.08, reps, seed=30))]
    assert abs(np.mean(pooled) - 0.95) <= tolerance, np.mean(pooled)


def test_tax_test_by_hand():
    # layout = 0.9 x reference: tax = 1 - 90 / 100 = 0.1. The logs of 0.98, 1, 1.02 have sd 0.0200 on both sides,
    # so se = 0.0200 sqrt(2 / 3) = 0.01633, t = -log 0.9 / se = 0.10536 / 0.01633 = 6.45 on 4 df: p = 0.0030.
    # Welch's (the default): the same se on Hsu's 3 - 1 = 2 df: p = 0.0232.
    reference = np.array([98.0, 100.0, 102.0]) * 1e6  # MB/s, in bytes/s: spreads far above a rate's resolution
    result = tax_test(0.9 * reference, reference, method="student")
    assert isinstance(result, TaxTest)
    assert result.tax == pytest.approx(0.1)
    assert result.lo < 0.1 < result.hi and result.verdict == "real"
    assert result.p_value == pytest.approx(0.0030, abs=1e-4)
    assert tax_test(0.9 * reference, reference).p_value == pytest.approx(0.0232, abs=1e-4)
    assert (result.n_layout, result.n_reference) == (3, 3)
    same = tax_test(reference, reference[::-1])
    assert same.tax == pytest.approx(0.0) and same.verdict == "noise" and same.p_value == pytest.approx(1.0)


@pytest.mark.parametrize("layout, reference", [([100.0], [100.0, 101.0]), ([99.0, 101.0], [100.0])])
def test_too_little_to_test_is_not_applicable(layout, reference):
    result = tax_test(layout, reference)
    assert result.verdict == "n/a"
    assert np.isnan(result.lo) and np.isnan(result.hi) and np.isnan(result.p_value)
    assert result.tax == pytest.approx(1 - np.mean(layout) / np.mean(reference))


@pytest.mark.parametrize("kwargs, words", [
    ({"layout_reps": [1.0, -2.0]}, "layout repetitions .* \\[-2.0\\]"),
    ({"reference_reps": [1.0, np.nan]}, "reference repetitions"),
    ({"confidence": 1.0}, "confidence 1.0"),
    ({"method": "bootstrap"}, "'bootstrap'"),
])
def test_bad_inputs_are_refused_by_name(kwargs, words):
    args = {"layout_reps": [1.0, 1.1], "reference_reps": [1.0, 1.2], **kwargs}
    with pytest.raises(AnalysisError, match=words):
        tax_test(**args)


SAMPLES = [([98.0, 100.0, 102.0], [88.0, 90.5, 91.0]), ([700.0, 712.0, 705.0], [790.0, 801.0, 796.0, 793.0]),
           ([1.0, 1.3], [1.1, 1.05, 0.97, 1.2, 1.01]), ([5e8, 5.2e8, 4.9e8], [5.1e8, 5.0e8, 5.05e8])]


@pytest.mark.parametrize("a, b", SAMPLES)
@pytest.mark.parametrize("method", ["student", "welch"])
@pytest.mark.parametrize("alternative", ["two-sided", "greater"])
def test_log_t_test_is_scipys_t_test_on_the_logs(a, b, method, alternative):
    """Welch's the same as scipy's but for its degrees of freedom, bounded (``welch_df_bound``)."""
    found = log_t_test(a, b, method, alternative)
    scipy_t = scipy.stats.ttest_ind(np.log(a), np.log(b), equal_var=method == "student", alternative=alternative)
    df = scipy_t.df if method == "student" else min(scipy_t.df, welch_df_bound(len(a), len(b)))
    tail = scipy.stats.t.sf(abs(scipy_t.statistic) if alternative == "two-sided" else scipy_t.statistic, df)
    assert found.p_value == pytest.approx(tail * (2 if alternative == "two-sided" else 1), rel=1e-9)
    assert found.diff / found.se == pytest.approx(scipy_t.statistic, rel=1e-12)
    assert found.df == pytest.approx(df, rel=1e-12)


@pytest.mark.parametrize("a, b", SAMPLES)
@pytest.mark.parametrize("method", ["student", "welch"])
def test_the_tax_tests_p_value_is_scipys(a, b, method):
    expected = log_t_test(a, b, method).p_value  # scipy's, Welch's df bounded (the test above)
    rates = 1e8 / np.mean(b)  # as rates of hundreds of MB/s, spreads far above what a rate resolves
    assert tax_test(rates * np.asarray(a), rates * np.asarray(b), method=method).p_value == pytest.approx(expected,
                                                                                                          rel=1e-9)
    if method == "student":
        assert expected == pytest.approx(scipy.stats.ttest_ind(np.log(a), np.log(b)).pvalue, rel=1e-9)


def test_pooled_with_pools_the_variance_of_every_sample():
    """Three samples: the difference of the first two, on the variance of the logs of all three (6 df)."""
    a, b, c = np.array([210.0, 212.0, 207.0]), np.array([200.0, 204.0, 199.0]), np.array([100.0, 90.0, 110.0])
    logs = [np.log(a), np.log(b), np.log(c)]
    pooled = sum(((x - x.mean()) ** 2).sum() for x in logs) / 6
    t = (logs[0].mean() - logs[1].mean()) / np.sqrt(pooled * (1 / 3 + 1 / 3))
    found = log_t_test(a, b, alternative="greater", pooled_with=[c])
    assert found.df == 6 and found.p_value == pytest.approx(scipy.stats.t.sf(t, 6), rel=1e-9)
    alone = scipy.stats.ttest_ind(logs[0], logs[1], alternative="greater").pvalue
    assert found.p_value > 10 * alone  # c's 10% noise drowns a step that a and b alone show


def test_repetitions_without_spread_are_read_at_the_spread_a_rate_resolves():
    """A throttle that precise repeats to the block: not a spread of zero but one below a step of the measurement
    (significance.log_sd_floor: 1 MiB in a 5 s run), so no p of 0 and no interval of no width (the test once gave
    lo = hi = tax and p = 0 here), yet an interval as narrow as the runs resolve."""
    exact = tax_test([100e6] * 3, [90e6] * 3)
    assert exact.lo < 1 - 100 / 90 < exact.hi and exact.hi - exact.lo < 0.02 and exact.verdict == "real"
    assert 0 < exact.p_value < 0.01
    assert practical(exact, 0.02) == "gain" and practical(exact, 0.2) == "equivalent"
    same = tax_test([100e6, 100e6], [100e6, 100e6])
    assert same.lo < 0 < same.hi and same.verdict == "noise" and same.p_value == pytest.approx(1.0)
    assert practical(same, 0.0) == "inconclusive" and practical(same, 0.02) == "equivalent"


@pytest.mark.parametrize("lo, hi, verdict", [
    (0.021, 0.09, "tax"), (-0.09, -0.021, "gain"), (-0.019, 0.019, "equivalent"), (0.01, 0.03, "inconclusive"),
    (-0.03, -0.01, "inconclusive"), (-0.05, 0.05, "inconclusive"), (0.02, 0.05, "inconclusive"),
])
def test_the_practical_verdict_reads_the_interval_against_the_margin(lo, hi, verdict):
    """Beyond the margin: the whole interval past its edge; within: the whole interval inside; else undecided."""
    test = TaxTest((lo + hi) / 2, lo, hi, 0.01, "real", 3, 3, 0.01)
    assert practical(test, 0.02) == verdict
    assert practical(TaxTest(0.05, NAN, NAN, NAN, "n/a", 1, 3), 0.02) == "one run: no interval"


def test_the_runs_that_would_decide_move_the_interval_off_the_margins_edge():
    """A 3% tax measured at 2% spread in three runs a side reaches across the 2% edge (this draw: 2.5%, 0.6% to
    4.4%); at the n returned (same estimate, same spread) the interval clears the edge and at n - 1 it does not."""
    rng = np.random.default_rng(0)
    layout, reference = 97e6 * (1 + 0.02 * rng.standard_normal(3)), 100e6 * (1 + 0.02 * rng.standard_normal(3))
    test = tax_test(layout, reference)
    assert practical(test) == "inconclusive"
    n = reps_to_decide(test)
    edge = abs(np.log(1 - test.tax) - np.log(0.98))
    half = [scipy.stats.t.ppf(0.975, k - 1) * test.log_sd * np.sqrt(2 / k) for k in (n - 1, n)]
    assert half[1] < edge <= half[0]
    assert reps_to_decide(TaxTest(0.02, 0.0, 0.04, 0.1, "noise", 3, 3, 0.02)) is None  # on the edge


@pytest.mark.parametrize("bad", [2, -0.01, 1.0, "2%", True, None])
def test_a_margin_that_is_not_a_fraction_is_refused_naming_it(bad):
    with pytest.raises(ConfigError, match=re.escape(repr(bad))):
        practical(tax_test([1.0, 1.1], [1.0, 1.1]), bad)


def test_no_degree_of_freedom_or_no_spread():
    none = log_t_test([1.0], [2.0])
    assert np.isnan(none.se) and np.isnan(none.p_value) and none.diff == pytest.approx(np.log(0.5))
    assert log_t_test([2.0], [1.0], pooled_with=[[1.0, 1.1]]).df == 1  # one value a side, a spread elsewhere
    flat = log_t_test([2.0, 2.0], [1.0, 1.0], alternative="greater")
    assert flat.se == 0 and flat.p_value == pytest.approx(0.0)
    assert log_t_test([1.0, 1.0], [2.0, 2.0], alternative="greater").p_value == pytest.approx(1.0)
    assert log_t_test([1.0, 1.0], [1.0, 1.0]).p_value == pytest.approx(1.0)


@pytest.mark.parametrize("kwargs, words", [
    ({"method": "welch", "pooled_with": [[1.0, 2.0]]}, "pool"),
    ({"alternative": "less"}, "'less'"),
    ({"method": "anova"}, "'anova'"),
    ({"b": []}, "values in every sample"),
    ({"pooled_with": [[1.0, 0.0]]}, "pooled repetitions"),
])
def test_log_t_test_refuses_by_name(kwargs, words):
    with pytest.raises(AnalysisError, match=words):
        log_t_test(**{"a": [1.0, 1.1], "b": [1.0, 1.2], **kwargs})
