"""The sequential tax test (analysis.significance.sequential_tax): its error rate holds under a look after every run,
where reading the fixed 95% interval at each look does not; a real tax is decided in a few runs."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from flashscale.analysis import significance
from flashscale.errors import AnalysisError

NOISE = 0.02  # 2% multiplicative noise, as test_significance's
REFERENCE_RUNS = 3
BW = 400e6  # bytes/s: the tests read rates, whose resolution (significance.log_sd_floor) is far below this noise


def verdicts(ratio: float, sequential: bool, draws: int = 1000, most: int = 10, seed: int = 3, method: str = "welch"):
    """Each draw: a reference of 3 runs, a layout of true ratio ``ratio`` run until decided or ``most``; the
    verdicts and the runs each took."""
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(draws):
        reference = BW * rng.lognormal(0, NOISE, REFERENCE_RUNS)
        layout = list(BW * ratio * rng.lognormal(0, NOISE, 2))
        while True:
            if sequential:
                look = significance.sequential_tax(layout, reference, most, method=method)
                said, decided = look.verdict, look.decided
            else:  # the fixed 95% interval read after every run
                said = significance.practical(significance.tax_test(layout, reference, method=method))
                decided = said in ("tax", "gain", "equivalent") or len(layout) >= most
            if decided:
                found.append((said, len(layout)))
                break
            layout.append(BW * ratio * rng.lognormal(0, NOISE))
    return Counter(said for said, _ in found), np.mean([n for _, n in found])


def test_on_the_margin_s_edge_the_sequential_test_is_wrong_at_most_alpha():
    """A true tax of exactly 2% (the margin): 'equivalent' and 'tax' are both wrong. Measured over 1,000 draws
    (seed 3; 2,000 gave the same rates): the sequential test wrong in 2.6% (0.8% equivalent, 1.8% tax), the fixed
    interval read after every run in 9.7% (1.9% and 7.8%): twice its alpha of 5%. Bounds: 5% (alpha) and 7%
    (about 3 standard errors of 1,000 draws below the measured 9.7%). Both measured with the pooled test, which holds
    here (both sides' spreads are 2%, and the pooled test is the sequential test's default); Welch's is wrong in
    0.6% sequentially, and read after every run in 4.5%: tests/test_significance_welch.py measures it where the two
    sides differ."""
    said, _ = verdicts(0.98, sequential=True, method="student")
    assert (said["equivalent"] + said["tax"]) / 1000 <= 0.05
    naive, _ = verdicts(0.98, sequential=False, method="student")
    assert (naive["equivalent"] + naive["tax"]) / 1000 >= 0.07


@pytest.mark.parametrize("method, decided, most_runs", [("student", 0.9, 5), ("welch", 0.48, 7)])
def test_a_real_tax_is_decided_in_a_few_runs(method, decided, most_runs):
    """A true tax of 8% against a 2% margin, the reference's 3 runs done: measured (1,000 draws, seed 3) with the
    pooled test 92.9% of draws said tax in 4.1 runs on average (of at most 10; the fixed interval read after every
    run: 2.7), none equivalent or gain. With Welch's 53.5% in 6.4 runs: it does not borrow the layout's runs to
    learn the reference's spread, which its three runs tell on 2 degrees of freedom; the rest end inconclusive at
    the most. The bound is 3 standard errors below the rate measured."""
    said, runs = verdicts(0.92, sequential=True, method=method)
    assert said["tax"] / 1000 >= decided and said["equivalent"] == said["gain"] == 0
    assert runs < most_runs


def test_o_brien_fleming_spends_little_early_and_all_at_the_end():
    spent = [significance.obrien_fleming_spent(t) for t in (0.2, 0.5, 0.8, 1.0)]
    assert spent == sorted(spent) and spent[0] < 0.001
    assert spent[-1] == pytest.approx(0.05, rel=1e-9)
    with pytest.raises(AnalysisError, match="information fraction 0"):
        significance.obrien_fleming_spent(0)


def test_the_last_look_is_final_and_one_run_is_refused():
    rng = np.random.default_rng(1)
    look = significance.sequential_tax(BW * rng.lognormal(0, 0.3, 4), BW * rng.lognormal(0, 0.3, 3), most=4)
    assert look.decided and look.verdict == "inconclusive"
    with pytest.raises(AnalysisError, match="two runs a side"):
        significance.sequential_tax([1.0], [1.0, 1.1], most=5)
