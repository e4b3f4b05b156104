"""Runs that tie are not certain: a spread is never read as smaller than a rate resolves
(``significance.log_sd_floor``), in the fixed tax test, the sequential test and the precision rule alike.

A capped device repeats to within a block, and fio gives whole KiB/s: two runs of the same point often come out
equal. Each draw here measures rates as fio would, rounded to whole blocks (1 MiB) in a 5 s run, around a truth
drawn anew (395 to 405 MB/s, so the rounding falls differently each time) with a noise below or near that step.
Before the floor, a tie was a spread of zero: p = 0, an interval of no width, and at a true tax equal to the 2%
margin a wrong verdict (``tax`` or ``equivalent``) in nearly every draw.
"""
from __future__ import annotations

import numpy as np
import pytest

from flashscale.analysis import repetitions, significance
from flashscale.measure.sweep import Sweep

DRAWS, POINTS = 2000, 1000
BLOCK, RUNTIME_S = 2**20, 5.0  # the sweep's defaults, which log_sd_floor assumes
BOUND = 0.05 + 3 * np.sqrt(0.05 * 0.95 / DRAWS)  # 5% and 3 Monte Carlo standard errors: 0.065


def measured(rng, truth: float, sd: float, runs: int) -> np.ndarray:
    """``runs`` rates of a true ``truth`` bytes/s with relative noise ``sd``, each a whole number of blocks in a run."""
    moved = truth * RUNTIME_S * rng.lognormal(0, sd, runs) if sd else np.full(runs, truth * RUNTIME_S)
    return np.round(moved / BLOCK) * BLOCK / RUNTIME_S


@pytest.mark.parametrize("layout_runs, reference_runs, sd", [(2, 2, 0.0), (2, 2, 1e-4), (3, 3, 3e-4), (2, 10, 1e-4),
                                                            (3, 3, 1e-3)])
def test_at_the_margin_s_edge_runs_that_tie_are_wrong_at_most_five_percent(layout_runs, reference_runs, sd):
    """Measured wrong (seed 8, 2,000 draws), before the floor / after: noise 0 at 2 runs a side: 98% / 0%; 0.01%:
    61% / 0%; 0.03% at 3: 5.5% / 0.1%; 0.01%, 2 against 10: 32.9% / 0%; 0.1% at 3 (few ties): 3.3% / 3.1%."""
    rng = np.random.default_rng(8)
    wrong = 0
    for _ in range(DRAWS):
        truth = rng.uniform(395e6, 405e6)
        test = significance.tax_test(measured(rng, 0.98 * truth, sd, layout_runs),
                                     measured(rng, truth, sd, reference_runs))
        wrong += significance.practical(test, 0.02) in ("tax", "equivalent")
    assert wrong / DRAWS <= BOUND


@pytest.mark.parametrize("sd", [0.0, 1e-4, 5e-4])
def test_a_point_that_stops_precise_on_ties_still_covers_its_truth(sd):
    """Points run until precise at 2% (at most 10 runs): the floored interval of the mean, log(mean) +/- the
    half-width the rule read, covers the true rate in at least 95% of points (minus 3 standard errors). Measured
    (seed 9, 1,000 points) before the floor / after: noise 0: 0% / 100%; 0.01%: 24.6% / 100%; 0.05%: 73% / 100%."""
    rng = np.random.default_rng(9)
    covered = 0
    for _ in range(POINTS):
        truth = rng.uniform(395e6, 405e6)
        values = list(measured(rng, truth, sd, 2))
        while repetitions.stop_reason(values, 0.02, 10) == "more":
            values.extend(measured(rng, truth, sd, 1))
        half = repetitions.relative_half_width(values)
        covered += abs(np.log(np.mean(values) / truth)) <= half
    assert covered / POINTS >= 0.95 - 3 * np.sqrt(0.05 * 0.95 / POINTS)


def test_equal_runs_are_not_certain():
    """The issue's case, in bytes/s: 390 and 400 MB/s twice each. The tax, 2.5% against a 2% margin, is what the
    runs say to within the step they resolve (1 MiB in 5 s: 0.05%), so the test may find it, but never with p = 0
    or an interval of no width; the precision rule reads the tie as a half-width of 0.33%, not 0: precise at 2%,
    not at 0.1%."""
    layout, reference = [390e6, 390e6], [400e6, 400e6]
    fixed = significance.tax_test(layout, reference)
    assert 0 < fixed.p_value and fixed.lo < fixed.tax < fixed.hi
    look = significance.sequential_tax(layout, reference, most=10)
    assert 0 < look.test.p_value and look.test.lo < look.test.tax < look.test.hi
    assert significance.log_t_test(layout, reference).p_value < 1e-12  # no floor where no resolution is known
    half = repetitions.relative_half_width([400e6, 400e6])
    assert half == pytest.approx(12.706 * significance.log_sd_floor(400e6) / np.sqrt(2), rel=1e-3)  # t(0.975, 1)
    assert repetitions.stop_reason([400e6, 400e6], 0.001, 10) == "more"
    assert repetitions.stop_reason([400e6, 400e6], 0.02, 10) == "precise"
    assert significance.log_sd_floor(400e6) == pytest.approx(2**20 / (400e6 * 5) / np.sqrt(2))
    assert significance.log_sd_floor(1e5, 4096) == pytest.approx(1024 / 1e5 / np.sqrt(2))  # fio's KiB/s binds


def test_the_floor_assumes_the_sweep_s_default_block_and_run():
    assert (significance.BLOCK_BYTES, significance.RUNTIME_S) == (Sweep.bs[0], Sweep.runtime_s) == (BLOCK, RUNTIME_S)
