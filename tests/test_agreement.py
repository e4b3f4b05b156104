"""The one rule for "the same number" (analysis.agreement): pairs that must and must not agree, its properties, and
its false-agreement rate measured on simulated repetitions of a known difference."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from flashscale.analysis import agreement
from flashscale.analysis.agreement import ABOVE, BELOW, NO_INTERVAL, SAME, UNDECIDED, Side, agree, between, judge
from flashscale.errors import AnalysisError, ConfigError

MB = 1e6


def test_the_same_mean_measured_tightly_twice_agrees():
    said = between([100 * MB, 100.4 * MB, 99.6 * MB], [99.8 * MB, 100.2 * MB, 100.0 * MB], 0.02)
    assert said.verdict == SAME and said.agrees
    assert said.lo < 1 < said.hi and said.ratio == pytest.approx(1.0)


def test_100_and_145_mb_s_with_wide_intervals_do_not_agree():
    # both intervals wide (a slow run among three) and overlapping: the overlap rule called this "reproduced"
    original, again = [60 * MB, 100 * MB, 140 * MB], [100 * MB, 145 * MB, 190 * MB]
    said = between(again, original, 0.02)
    assert said.verdict == UNDECIDED and not said.agrees
    assert said.lo < 0.98 and said.hi > 1.02  # the ratio's interval reaches across the band: more runs would tell
    tight = between([144 * MB, 145 * MB, 146 * MB], [99.5 * MB, 100 * MB, 100.5 * MB], 0.02)
    assert tight.verdict == ABOVE and tight.ratio == pytest.approx(1.45)


def test_a_tax_of_0_percent_does_not_agree_with_one_of_40_percent():
    # the layout's share of the reference (1 - tax): 1.0 against 0.6, each with a wide interval of 3 runs
    no_tax = Side.of_interval(1.0, 0.7, 1.3, df=4)
    forty = Side.of_interval(0.6, 0.3, 0.9, df=4)
    assert agree(no_tax, forty, 0.02).verdict == UNDECIDED
    assert agree(Side.of_interval(1.0, 0.99, 1.01, 4), Side.of_interval(0.6, 0.59, 0.61, 4), 0.02).verdict == ABOVE


def test_one_run_gives_no_interval_and_no_verdict():
    said = between([100 * MB], [100 * MB, 100.1 * MB], 0.02)
    assert said.verdict == NO_INTERVAL and math.isnan(said.lo) and not said.agrees
    assert agree(Side.of_interval(379 * MB, math.nan, math.nan, 0), Side.exact(379 * MB)).verdict == NO_INTERVAL


def test_exact_sides_agree_when_within_the_margin_and_a_2_percent_shortfall_is_the_edge():
    assert agree(Side.exact(100.0), Side.exact(101.0), 0.02).verdict == SAME
    assert agree(Side.exact(100.0), Side.exact(103.0), 0.02).verdict == BELOW
    assert agree(Side.exact(103.0), Side.exact(100.0), 0.02).verdict == ABOVE
    assert judge(0.97, 0.979, 0.02) == BELOW and judge(0.981, 1.0199, 0.02) == SAME
    assert judge(0.99, 1.0203, 0.02) == SAME and judge(0.99, 1.0205, 0.02) == UNDECIDED  # 1 / 0.98 = 1.0204
    assert agree(Side.exact(100.0), Side.exact(100.0), 0.0).verdict == UNDECIDED  # margin 0: nothing is "same"


def test_an_interval_given_as_bounds_is_the_delta_method_s_for_a_t_interval():
    reps = np.array([98.0, 100.0, 103.0])
    side = Side.of(reps)
    half = 4.302652729911275 * reps.std(ddof=1) / math.sqrt(3)  # t(0.975, 2)
    again = Side.of_interval(reps.mean(), reps.mean() - half, reps.mean() + half, df=2)
    assert again.log_se == pytest.approx(side.log_se) and again.df == side.df


@pytest.mark.parametrize("call, words", [
    (lambda: between([1.0, -2.0], [1.0, 1.0]), "positive and finite"),
    (lambda: agree(Side.exact(1.0), Side.exact(1.0), 2), "tax margin 2 .*0.02 for 2%"),
    (lambda: agree(Side.exact(1.0), Side.exact(1.0), 0.02, confidence=95), "confidence 95"),
    (lambda: judge(0.0, 1.0), "positive and ordered"),
])
def test_bad_input_is_refused_naming_it(call, words):
    with pytest.raises((AnalysisError, ConfigError), match=words):
        call()


runs = st.lists(st.floats(min_value=1.0, max_value=1e4, allow_nan=False), min_size=1, max_size=6)
margins = st.floats(min_value=0.0, max_value=0.5)
MIRROR = {SAME: SAME, ABOVE: BELOW, BELOW: ABOVE, UNDECIDED: UNDECIDED, NO_INTERVAL: NO_INTERVAL}


def _near_an_edge(said: agreement.Agreement, margin: float) -> bool:
    """Whether a bound of the ratio's log interval lies within rounding of the band's edge."""
    if said.verdict == NO_INTERVAL:
        return False
    band = agreement.edge(margin)
    return any(abs(abs(math.log(bound)) - band) < 1e-9 for bound in (said.lo, said.hi))


@settings(max_examples=200, deadline=None)
@given(runs, runs, margins)
def test_the_rule_does_not_care_which_side_comes_first(a, b, margin):
    assert between(b, a, margin).verdict == MIRROR[between(a, b, margin).verdict]


@settings(max_examples=200, deadline=None)
@given(runs, runs, margins, st.floats(min_value=1e-3, max_value=1e3))
def test_the_rule_does_not_care_about_the_unit(a, b, margin, scale):
    said = between(a, b, margin)
    assume(not _near_an_edge(said, margin))
    assert between([scale * x for x in a], [scale * x for x in b], margin).verdict == said.verdict


@settings(max_examples=200, deadline=None)
@given(runs, runs, margins, st.floats(min_value=0.0, max_value=0.4))
def test_a_wider_margin_never_turns_agreement_into_disagreement(a, b, margin, more):
    wider = min(margin + more, 0.99)
    if between(a, b, margin).agrees:
        assert between(a, b, wider).agrees


DRAWS = 2000


@pytest.mark.parametrize("reps", [3, 5])
def test_a_difference_just_beyond_the_margin_is_called_the_same_in_at_most_alpha_of_draws(reps):
    """True ratio 1% beyond the 2% margin's edge, 2% multiplicative noise: the share of draws called ``same`` is
    the test's error rate, at most (1 - confidence) / 2 = 2.5% by construction; 3 binomial standard deviations of
    2,000 draws (1.0 point) above it fail. An interval-overlap rule calls most of these draws the same."""
    rng = np.random.default_rng(reps)
    truth = (1 - 0.02) * 0.99
    same = overlap = 0
    for _ in range(DRAWS):
        b = 1e8 * (1 + rng.normal(0, 0.02, reps))
        a = truth * 1e8 * (1 + rng.normal(0, 0.02, reps))
        same += between(a, b, 0.02).agrees
        overlap += _overlap(a, b)
    alpha = 0.025
    assert same / DRAWS <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / DRAWS), same / DRAWS
    assert overlap / DRAWS > 0.5  # what the rule replaces


def _overlap(a, b) -> bool:
    """The rule this replaces: two 95% t intervals that overlap are the same number."""
    import scipy.stats

    def interval(x):
        x = np.asarray(x)
        half = scipy.stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size)
        return x.mean() - half, x.mean() + half

    (lo_a, hi_a), (lo_b, hi_b) = interval(a), interval(b)
    return lo_a <= hi_b and lo_b <= hi_a


def test_an_interval_too_wide_for_a_float_has_an_infinite_upper_end_not_an_overflow():
    """Two runs that scatter by orders of magnitude on one side, two that agree on the other: Welch's df is near 1
    and the half-width on the log scale is beyond exp's range (benchmarks' stored VM runs hit it)."""
    wild, tight = agreement.Side(1.0, 400.0, 1.0, 2), agreement.Side(1.0, 1e-3, 1.0, 2)
    said = agreement.agree(wild, tight)
    assert said.hi == math.inf and said.lo >= 0 and said.verdict == agreement.UNDECIDED
    assert wild.interval()[1] == math.inf and wild.interval()[0] >= 0
    assert agreement.grown(2.0, 1.0) == pytest.approx(2.0 * math.e, rel=1e-12)
