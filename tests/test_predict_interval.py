"""A prediction's "in the interval" keeps its 95%: with an exactly right model the measured mean falls in the
prediction interval (``agreement.prediction_interval``, which ``predict.score``'s ``in_interval`` reads) in 95% of
draws, where the prediction's own confidence interval, the interval of the single device's mean and not of a new
measurement, missed it in 7 to 38% of draws.

Each draw: a device of true rate 200 MB/s measured in k runs, the prediction N = 4 x their mean with its interval
(the t interval on the log scale, as every table's), and the layout measured in m runs of a true 4 x 200 MB/s, each
side with multiplicative noise. A miss rate of 5% over DRAWS = 2,000 draws has a standard error of 0.5 points: the
bound is 5% + 3 of them.
"""
from __future__ import annotations

import numpy as np
import pytest

from flashscale.analysis import agreement, stats

DRAWS = 2000
TRUTH, DEVICES = 200e6, 4
BOUND = 0.05 + 3 * np.sqrt(0.05 * 0.95 / DRAWS)  # 0.065


def misses(device_runs: int, layout_runs: int, device_sd: float, layout_sd: float, seed: int = 6) -> tuple:
    """The share of draws whose measured mean lies outside the prediction interval, and outside the prediction's
    own confidence interval (what ``in_interval`` read before)."""
    rng = np.random.default_rng(seed)
    outside = confidence_only = 0
    for _ in range(DRAWS):
        device = TRUTH * rng.lognormal(0, device_sd, device_runs)
        layout = DEVICES * TRUTH * rng.lognormal(0, layout_sd, layout_runs)
        lo, hi = (DEVICES * bound for bound in stats.interval_t(device))
        predicted = agreement.side(DEVICES * device.mean(), lo, hi, device_runs - 1)
        measured = agreement.side(layout.mean(), *stats.interval_t(layout), layout_runs - 1)
        low, high = agreement.prediction_interval(predicted, measured)
        outside += not low <= layout.mean() <= high
        confidence_only += not lo <= layout.mean() <= hi
    return outside / DRAWS, confidence_only / DRAWS


# device runs, layout runs, their spreads; measured (seed 6, 2,000 draws) outside: prediction / confidence interval
GRID = [(3, 3, 0.02, 0.02),  # the default REPETITIONS: 3.7 / 10.0%
        (3, 1, 0.02, 0.02),  # one run of the layout, read at the device's spread: 5.0 / 16.6%
        (2, 2, 0.01, 0.01),  # the fewest a precision takes: 2.9 / 6.6%
        (5, 10, 0.02, 0.02),  # 4.1 / 8.7%
        (3, 3, 0.01, 0.03),  # a layout noisier than its device: 5.7 / 30.7%
        (10, 2, 0.02, 0.02)]  # 0.05 / 37.5%


@pytest.mark.parametrize("device_runs, layout_runs, device_sd, layout_sd", GRID)
def test_a_right_model_s_prediction_interval_holds_the_measurement_95_percent_of_the_time(device_runs, layout_runs,
                                                                                        device_sd, layout_sd):
    outside, confidence_only = misses(device_runs, layout_runs, device_sd, layout_sd)
    assert outside <= BOUND, outside
    assert confidence_only > outside  # the confidence interval alone is too narrow for a new measurement


def test_no_interval_without_the_prediction_s_spread():
    one = agreement.side(800e6, float("nan"), float("nan"), 0)
    assert np.isnan(agreement.prediction_interval(one, agreement.Side.of([790e6, 810e6]))).all()
