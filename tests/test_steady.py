"""SNIA steady state over rounds, on series worked by hand and on synthetic converging and drifting series."""
from __future__ import annotations

import numpy as np
import pytest

from flashscale.measure.steady import steady_state
from flashscale.errors import AnalysisError


def test_converging_series_by_hand():
    # Window ending at round 7 (120, 105, 100, 100, 100): mean 105, range 20 = 19.0% (passes), slope -4.5 per round,
    # excursion 4 x 4.5 = 18 = 17.1% of the mean (fails). Round 8 (105, 100, 100, 100, 100): mean 101, range 5 = 5.0%,
    # slope -1, excursion 4 = 4.0%: steady at round 8.
    result = steady_state([200, 150, 120, 105, 100, 100, 100, 100, 100])
    assert result.steady and result.round == 8
    assert result.window_mean == pytest.approx(101.0)
    assert result.range_fraction == pytest.approx(5 / 101) and result.excursion_fraction == pytest.approx(4 / 101)
    assert "steady at round 8: rounds 4-8" in result.note


def test_a_constant_series_is_steady_at_its_fifth_round():
    assert steady_state([7.0] * 5).round == 5


def test_a_steady_drift_is_never_steady_though_its_range_passes():
    # 3% lost per round: any five rounds fall about 4 x 3% = 12% of their mean, within the 20% range limit but over
    # the 10% excursion limit: the excursion condition alone refuses it.
    result = steady_state(100 * 0.97 ** np.arange(20))
    assert not result.steady and result.round == 0
    assert 0.10 < result.excursion_fraction <= result.range_fraction < 0.20
    assert "not steady after 20 rounds" in result.note


def test_an_oscillation_is_never_steady_though_it_does_not_drift():
    # +/- 12%: range 24% of the mean in every window, slope near 0.
    result = steady_state(100 * (1 + 0.12 * (-1.0) ** np.arange(20)))
    assert not result.steady and result.range_fraction > 0.20 and result.excursion_fraction < 0.10


def test_noisy_converging_series_settle_near_the_noiseless_round():
    rounds = np.arange(1, 31)
    truth = 1e9 * (1 + 0.6 * np.exp(-(rounds - 1) / 3))  # a fresh device settling after the first write pass
    exact = steady_state(truth).round
    assert 5 < exact < 30
    rng = np.random.default_rng(5)
    found = [steady_state(truth * (1 + rng.normal(0, 0.01, rounds.size))) for _ in range(50)]
    assert all(r.steady for r in found)
    assert all(abs(r.round - exact) <= 2 for r in found), (exact, sorted(r.round for r in found))


def test_too_few_rounds_are_not_steady():
    result = steady_state([1.0, 1.0, 1.0, 1.0])
    assert not result.steady and np.isnan(result.window_mean) and "a steady-state window needs 5" in result.note


@pytest.mark.parametrize("kwargs, words", [
    ({"values": [1.0, np.nan, 1.0, 1.0, 1.0]}, "nan"), ({"values": [1.0, 0.0, 1.0, 1.0, 1.0]}, r"\[0.0\]"),
    ({"window": 1}, "window 1"), ({"range_limit": 0.0}, "range_limit 0.0"), ({"slope_limit": -1}, "slope_limit -1"),
])
def test_bad_arguments_are_refused_by_name(kwargs, words):
    with pytest.raises(AnalysisError, match=words):
        steady_state(**{"values": [1.0] * 5, **kwargs})
