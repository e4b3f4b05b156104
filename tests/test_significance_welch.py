"""The tax test holds its error rate where the layout and its reference differ in runs and spread (Welch's test on
Hsu's degrees of freedom: analysis.significance's module doc), and pooling their variances does not.

At a true tax equal to the 2% margin, ``tax`` and ``equivalent`` are both wrong: each one-sided test of the
interval is at 2.5%, so at most 5% of draws may say either. Each setting is DRAWS seeded draws of multiplicative
(log-normal) noise; a rate of 5% over 3,000 draws has a standard error of 0.4 points, so the bound is 5% + 3 of
them (6.2%).
"""
from __future__ import annotations

import numpy as np
import scipy.stats
import pytest

from flashscale.analysis import significance, stats

DRAWS = 3000
MARGIN = 0.02
EDGE = 1 - MARGIN  # the true ratio layout / reference: a tax exactly at the margin
BW = 400e6  # bytes/s: the reference's true rate (the floor of a rate's resolution is far below these spreads)
BOUND = 0.05 + 3 * np.sqrt(0.05 * 0.95 / DRAWS)  # 0.062


def wrong(layout_runs: int, layout_sd: float, reference_runs: int, reference_sd: float, method: str = "welch",
          seed: int = 5) -> float:
    """The share of draws at the margin's edge whose fixed tax test says ``tax`` or ``equivalent``."""
    rng = np.random.default_rng(seed)
    said = []
    for _ in range(DRAWS):
        layout = BW * EDGE * rng.lognormal(0, layout_sd, layout_runs)
        reference = BW * rng.lognormal(0, reference_sd, reference_runs)
        said.append(significance.practical(significance.tax_test(layout, reference, method=method), MARGIN))
    return (said.count("tax") + said.count("equivalent")) / DRAWS


# runs and spread of the layout, then of the reference; measured wrong (seed 5, 3,000 draws): Welch's on Hsu's
# degrees of freedom / pooled (student)
GRID = [(3, 0.05, 10, 0.01),  # the issue's: a quiet reference with more runs, a noisy layout: 2.3 / 18.1%
        (2, 0.05, 10, 0.01),  # the same with two runs of the layout: 0.6 / 24.9%
        (10, 0.01, 3, 0.05),  # the other way round: 2.0 / 18.3%
        (10, 0.01, 2, 0.03),  # 0.3 / 22.4%
        (2, 0.02, 10, 0.02),  # equal spreads, unequal runs: 0.0 / 2.3%
        (2, 0.02, 2, 0.02),  # the fewest runs a sweep with a precision takes: 0.3 / 3.0%
        (3, 0.02, 3, 0.02),  # the default REPETITIONS: 1.0 / 3.5%
        (5, 0.03, 5, 0.01),  # equal runs, unequal spreads: 2.3 / 4.5%
        (10, 0.02, 10, 0.02)]  # MAX_REPETITIONS a side: 3.9 / 4.8%


@pytest.mark.parametrize("layout_runs, layout_sd, reference_runs, reference_sd", GRID)
def test_at_the_margin_s_edge_the_tax_test_is_wrong_at_most_five_percent(layout_runs, layout_sd, reference_runs,
                                                                        reference_sd):
    rate = wrong(layout_runs, layout_sd, reference_runs, reference_sd)
    assert rate <= BOUND, rate


def test_pooled_variances_are_wrong_several_times_as_often_where_the_sides_differ():
    """The issue's case with the pooled (Student) test: measured 18.1% (seed 5, 3,000 draws), where Welch's is 3.2%:
    the layout's 5% noise is read as the reference's 1% (pooled over 11 of the 13 runs' degrees of freedom)."""
    assert wrong(3, 0.05, 10, 0.01, method="student") > 0.15


def test_every_tax_verdict_is_welch_s_unless_asked():
    """The fixed test, the tables' tax tests and the sequential test: Welch's unless the pooled test is asked."""
    rng = np.random.default_rng(0)
    layout, reference = BW * rng.lognormal(0, 0.05, 3), BW * rng.lognormal(0, 0.01, 10)
    look = significance.sequential_tax(layout, reference, 10)
    assert look == significance.sequential_tax(layout, reference, 10, method="welch")
    assert look != significance.sequential_tax(layout, reference, 10, method="student")
    default = significance.tax_test(layout, reference)
    assert default == significance.tax_test(layout, reference, method="welch")
    assert default != significance.tax_test(layout, reference, method="student")
    assert significance.log_t_test(layout, reference) == significance.log_t_test(layout, reference, "welch")
    for function in (stats.tax_tests, stats.summary_intervals):
        defaults = function.__defaults__ + tuple((function.__kwdefaults__ or {}).values())
        assert "welch" in defaults and "student" not in defaults


def test_welch_s_degrees_of_freedom_are_hsu_s_the_fewer_runs_less_one():
    """Two runs at 3% against ten quiet ones: Welch-Satterthwaite's df, about 1.x here, may grow toward 9 where the
    two runs happened to agree; the test takes Hsu's k - 1 = 1 whatever the spreads (the estimate is never below
    it). Equal runs: n - 1."""
    quiet = np.exp(np.linspace(-0.01, 0.01, 10))
    assert significance.log_t_test([0.98, 0.981], quiet).df == significance.log_t_test([0.94, 1.02], quiet).df == 1
    assert [significance.welch_df_bound(n, n) for n in (2, 3, 10)] == [1, 2, 9]
    assert significance.welch_df_bound(3, 10) == significance.welch_df_bound(10, 3) == 2


def false_alarms(df_rule, draws: int = 4000, seed: int = 9) -> float:
    """At no tax, two runs at 10% against three at 1%: the share of draws whose two-sided 5% test on Welch's
    standard error, on the degrees of freedom ``df_rule(welch_satterthwaite)``, rejects."""
    rng = np.random.default_rng(seed)
    rejected = 0
    for _ in range(draws):
        a, b = np.log(BW * rng.lognormal(0, 0.10, 2)), np.log(BW * rng.lognormal(0, 0.01, 3))
        t = scipy.stats.ttest_ind(a, b, equal_var=False)
        rejected += 2 * scipy.stats.t.sf(abs(t.statistic), df_rule(t.df)) < 0.05
    return rejected / draws


def test_welch_satterthwaite_s_estimate_is_wrong_more_often_than_it_says_where_hsu_s_holds():
    """Measured (4,000 draws, seed 9): the estimate bounded at (k - 1)(1 + k / K) = 5/3, the rule before this one,
    rejects 'no tax' in 7.1% of draws at 5% stated; the tax test (Hsu's 1) in 2.6%. Bounds: 3 standard errors of
    4,000 draws (0.34 points) below the one and above 5% for the other."""
    assert false_alarms(lambda df: min(df, 5 / 3)) > 0.05 + 3 * np.sqrt(0.05 * 0.95 / 4000)
    rng = np.random.default_rng(9)
    said = 0
    for _ in range(4000):
        layout, reference = BW * rng.lognormal(0, 0.10, 2), BW * rng.lognormal(0, 0.01, 3)
        said += significance.tax_test(layout, reference).verdict == "real"
    assert said / 4000 <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 4000)


SEQUENTIAL_DRAWS = 800
SEQUENTIAL_BOUND = 0.05 + 3 * np.sqrt(0.05 * 0.95 / SEQUENTIAL_DRAWS)  # 0.073


def wrong_sequentially(layout_sd: float, reference_runs: int, reference_sd: float, method: str = "welch",
                       draws: int = SEQUENTIAL_DRAWS, most: int = 10, seed: int = 3) -> float:
    """The share of draws at the margin's edge whose group-sequential test, the layout's runs arriving one at a time
    (from two to ``most``) against a reference whose runs are done, ends in anything but ``inconclusive``."""
    rng = np.random.default_rng(seed)
    wrong_ones = 0
    for _ in range(draws):
        reference = BW * rng.lognormal(0, reference_sd, reference_runs)
        layout = list(BW * EDGE * rng.lognormal(0, layout_sd, 2))
        while not (look := significance.sequential_tax(layout, reference, most, MARGIN, method=method)).decided:
            layout.append(BW * EDGE * rng.lognormal(0, layout_sd))
        wrong_ones += look.verdict != "inconclusive"
    return wrong_ones / draws


@pytest.mark.parametrize("layout_sd, reference_runs, reference_sd", [(0.05, 10, 0.01), (0.01, 3, 0.03)])
def test_the_sequential_test_holds_its_error_rate_where_the_sides_differ(layout_sd, reference_runs, reference_sd):
    """A PRECISION campaign's case: the reference's runs done, the layout's arriving. Measured (seed 3, 800 draws),
    wrong (tax, gain or equivalent at a true 2% tax): a noisy layout (5%) against ten quiet reference runs (1%)
    1.9% with Welch's test, 7.6% pooled; a quiet layout (1%) against three noisy runs (3%) 1.0%."""
    assert wrong_sequentially(layout_sd, reference_runs, reference_sd) <= SEQUENTIAL_BOUND


def test_the_pooled_sequential_test_is_wrong_more_often_than_its_alpha_where_the_sides_differ():
    """The noisy layout against ten quiet reference runs, pooled: 7.6% of 800 draws (above), 3.4 standard errors
    above its 5% (before the boundaries' spend was cut to 0.85 alpha and their information to the layout's runs:
    14.1%)."""
    assert wrong_sequentially(0.05, 10, 0.01, method="student") > 0.065
