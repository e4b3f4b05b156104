"""Has the curve flattened? The knee's plateau test on simulated curves of known shape.

Each rate is measured over DRAWS = 300 seeded curves on N = 1, 2, 4 ... 64 with 3 repetitions and 2%
multiplicative Gaussian noise; a rate p over 300 draws has a standard deviation sqrt(p (1 - p) / 300), 1.26 points
at p = 0.05, and the bounds sit three of them from the nominal rate.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from flashscale.analysis.plateau import plateau
from flashscale.analysis.scaling import amdahl, usl
from flashscale.errors import AnalysisError

DRAWS = 300
GRID = np.repeat(2.0 ** np.arange(7), 3)
FALSE_LOW, FALSE_HIGH = 0.05 - 3 * np.sqrt(0.05 * 0.95 / DRAWS), 0.05 + 3 * np.sqrt(0.05 * 0.95 / DRAWS)


def _plateaus(curve: np.ndarray, seed: int, **kwargs):
    rng = np.random.default_rng(seed)
    return [plateau(GRID, curve * (1 + rng.normal(0, 0.02, GRID.size)), **kwargs) for _ in range(DRAWS)]


def test_a_curve_still_climbing_has_no_knee():
    # Amdahl sigma 0.08: 32 -> 64 jobs gains 2 (1 + 0.08 x 31) / (1 + 0.08 x 63) - 1 = 15.2%, three times the knee's
    # tolerance (5.3%) and nine standard errors (0.02 sqrt(2 / 3) = 1.6%) of the noise.
    found = _plateaus(amdahl(GRID, 300e6, 0.08), seed=1)
    rising = [p for p in found if not p.reached]
    assert len(rising) / DRAWS >= 0.99
    assert all(np.isnan(p.knee) and "no plateau within the measured range" in p.note for p in rising)
    assert np.median([p.last_gain for p in found]) == pytest.approx(0.152, abs=0.01)


def test_a_curve_past_its_peak_keeps_its_knee():
    found = _plateaus(usl(GRID, 200e6, 0.05, 0.002), seed=2)  # peak at 21.8 jobs: 32 -> 64 loses 24%
    assert all(p.reached and p.note == "" for p in found)
    assert np.mean([p.knee == 16 for p in found]) >= 0.95  # 16 jobs is the best grid point; 32 has 98% of it, 8 76%


def test_a_flat_end_is_called_rising_only_at_the_tests_level():
    # Capped at 8 jobs' worth: 32 -> 64 gains nothing. With fraction 1.0 the tolerance is 0, so only the t test
    # decides: it calls the curve rising in 5% of draws (one-sided at 95%).
    found = _plateaus(np.minimum(GRID, 8) * 100e6, seed=3, fraction=1.0)
    false_alarms = np.mean([not p.reached for p in found])
    assert FALSE_LOW <= false_alarms <= FALSE_HIGH, false_alarms


def test_without_repetitions_the_flattening_is_untested():
    n = np.array([1, 2, 4, 8], dtype=float)
    found = plateau(n, 100e6 * n)
    assert found.reached and found.knee == 8 and np.isnan(found.p_value)
    assert found.last_gain == pytest.approx(1.0) and "untested" in found.note
    single = plateau([4, 4], [1.0, 1.1])
    assert single.reached and single.knee == 4 and "one N (4)" in single.note


def test_by_hand():
    # means 100, 200, 210: the last step gains 5% < 5.3% -> flattened, knee 2 (200 >= 0.95 x 210)
    found = plateau([1, 1, 2, 2, 4, 4], [99.0, 101.0, 198.0, 202.0, 209.0, 211.0])
    assert found.reached and found.knee == 2 and found.level == pytest.approx(210.0) and found.note == ""
    assert found.last_gain == pytest.approx(0.05)


@pytest.mark.parametrize("kwargs, words", [({"confidence": 1.0}, "confidence 1.0"), ({"fraction": 0.0}, "0.0"),
                                           ({"y": [1.0, np.nan]}, "NaN")])
def test_bad_arguments_are_refused_by_name(kwargs, words):
    with pytest.raises(AnalysisError, match=words):
        plateau(**{"n": [1, 2], "y": [1.0, 2.0], **kwargs})


@pytest.mark.parametrize("last, previous", [([209.0, 211.0, 212.0], [198.0, 202.0, 199.0]),
                                            ([300.0, 301.0], [200.0, 260.0, 230.0]), ([100.0, 99.0], [101.0, 98.0])])
def test_the_last_steps_p_value_is_scipys_one_sided_t_test_on_the_logs(last, previous):
    """Two N: the p-value of "the last step gains nothing" is scipy's pooled t test of the logs, one-sided."""
    n = [1.0] * len(previous) + [2.0] * len(last)
    expected = scipy.stats.ttest_ind(np.log(last), np.log(previous), alternative="greater").pvalue
    assert plateau(n, previous + last).p_value == pytest.approx(expected, rel=1e-9)


def test_the_last_steps_noise_is_pooled_over_every_point():
    """Three N: the variance of the logs is pooled over the three points (6 degrees of freedom), as scipy's t
    distribution gives it; scipy's two-sample test of the last two alone (4 df) is not what plateau computes."""
    first, previous, last = [90.0, 110.0, 100.0], [198.0, 202.0, 199.0], [209.0, 211.0, 212.0]
    logs = [np.log(first), np.log(previous), np.log(last)]
    pooled = sum(((x - x.mean()) ** 2).sum() for x in logs) / 6
    t = (logs[2].mean() - logs[1].mean()) / np.sqrt(pooled * 2 / 3)
    found = plateau([1.0] * 3 + [2.0] * 3 + [4.0] * 3, first + previous + last)
    assert found.p_value == pytest.approx(scipy.stats.t.sf(t, 6), rel=1e-9)
    assert found.p_value != pytest.approx(scipy.stats.ttest_ind(logs[2], logs[1], alternative="greater").pvalue)
