"""Many verdicts, one error budget (``analysis.family``, ``significance.verdict_p``, ``significance.detectable_tax``):
each claim's p-value says exactly what its interval says; a report's claims controlled together keep their false
discovery rate where one at a time they do not; the detectable tax is found at about its stated power."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from flashscale.analysis import family, significance

BW = 400e6


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 10), m=st.integers(2, 10),
       ratio=st.floats(0.85, 1.15), spread=st.floats(0.001, 0.2), margin=st.floats(0.005, 0.1),
       confidence=st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_a_claim_s_p_value_is_below_its_level_exactly_where_its_interval_makes_the_claim(seed, n, m, ratio, spread,
                                                                                        margin, confidence):
    rng = np.random.default_rng(seed)
    test = significance.tax_test(BW * ratio * rng.lognormal(0, spread, n), BW * rng.lognormal(0, spread, m),
                                 confidence)
    said = significance.practical(test, margin)
    level = (1 - confidence) / 2
    for claim in family.CLAIMS:
        p = significance.verdict_p(test, claim, margin)
        if abs(p - level) > 1e-9:  # on the level itself, rounding decides
            assert (p < level) == (said == claim), (claim, p, said)


def draw_report(rng, true_taxes, runs: int, spread: float, margin: float) -> tuple[pd.DataFrame, np.ndarray]:
    """One report: every layout taxed against one reference's runs (shared: the claims depend on each other)."""
    reference = BW * rng.lognormal(0, spread, runs)
    rows = []
    for tax in true_taxes:
        test = significance.tax_test(BW * (1 - tax) * rng.lognormal(0, spread, runs), reference)
        said = significance.practical(test, margin)
        rows.append({"tax_verdict": said, "tax_confidence": 0.95,
                     **{f"tax_claim_p_{c}": significance.verdict_p(test, c, margin) for c in family.CLAIMS}})
    return pd.DataFrame(rows), np.asarray(true_taxes)


def false_claims(table: pd.DataFrame, true_taxes: np.ndarray, margin: float, kept: pd.Series) -> tuple[int, int]:
    """(false, all) among the claims ``kept``: a tax claimed where the true tax is at most the margin, equivalence
    where it is at least the margin (gains never true here, so always false)."""
    wrong = ((table["tax_verdict"] == "tax") & (true_taxes <= margin)) | (
        (table["tax_verdict"] == "equivalent") & (true_taxes >= margin)) | (table["tax_verdict"] == "gain")
    return int((wrong & kept).sum()), int(kept.sum())


def test_a_report_s_claims_controlled_together_keep_their_false_discovery_rate():
    """20 layouts against one reference, 5 runs a side at 2%: 16 with a true tax exactly at the 2% margin (every
    claim about them is false), 4 with a 10% tax. Over 2,000 reports (seed 5) the share of false claims among those
    kept, averaged (the false discovery rate): read one at a time 3.6%, controlled together (tax_held) 0.06%,
    within the stated 2.5%. The price is power: of the 4 true taxes a report held 1.94 on average, against 4.00 one
    at a time (Welch's test on Hsu's 4 degrees of freedom: the family of 60 claims asks of each a level its 5 runs
    a side reach only for the larger taxes; with the pooled test's 8, 3.89 in 500 reports)."""
    rng = np.random.default_rng(5)
    truth = [0.02] * 16 + [0.10] * 4
    alone, together, found, found_alone = [], [], [], []
    for _ in range(2000):
        table, true_taxes = draw_report(rng, truth, 5, 0.02, 0.02)
        out = family.controlled(table)
        claims = table["tax_verdict"].isin(family.CLAIMS)
        wrong, made = false_claims(table, true_taxes, 0.02, claims)
        alone.append(wrong / max(made, 1))
        held = out["tax_held"].fillna(False).astype(bool)
        wrong, made = false_claims(table, true_taxes, 0.02, held)
        together.append(wrong / max(made, 1))
        found.append(int((held & (table["tax_verdict"] == "tax") & (true_taxes > 0.02)).sum()))
        found_alone.append(int((claims & (table["tax_verdict"] == "tax") & (true_taxes > 0.02)).sum()))
    error = 3 * np.std(together) / np.sqrt(len(together))
    assert np.mean(together) <= 0.025 + error
    assert np.mean(alone) > 0.025 + 3 * np.std(alone) / np.sqrt(len(alone))  # one at a time: above what is stated
    assert np.mean(found) > 1.8  # 3 standard errors (0.12) below the measured 1.94


def claims(verdicts: list[str], p: list[float]) -> pd.DataFrame:
    """Rows whose verdict's claim has p-value ``p`` and whose other claims are far from it (p = 1)."""
    rows = []
    for verdict, value in zip(verdicts, p):
        rows.append({"tax_verdict": verdict, "tax_confidence": 0.95,
                     **{f"tax_claim_p_{c}": (value if c == verdict else 1.0) for c in family.CLAIMS}})
    return pd.DataFrame(rows)


def test_the_family_says_how_many_claims_hold_and_names_those_that_do_not():
    """Four rows, three claims: BH over all 12 claims they could make (those not made at p = 1)."""
    table = claims(["tax", "equivalent", "tax", "inconclusive"], [1e-6, 0.004, 0.001, 1.0]).assign(
        layout=["md", "btrfs", "lvm", "xfs"], rw=["read", "read", "write", "read"], devices=2)
    out = family.controlled(table)
    assert out["tax_q"].iloc[:3].tolist() == pytest.approx([12e-6, 0.004 * 12 / 3, 0.001 * 12 / 2], rel=1e-9)
    assert out["tax_held"].tolist()[:3] == [True, True, True] and pd.isna(out["tax_held"].iloc[3])
    assert family.sentences(out) == ["3 verdict(s) (tax, gain or equivalent) controlled together at a 2.5% false "
                                     "discovery rate (Benjamini-Hochberg): all 3 hold."]
    looser = family.controlled(table.assign(tax_claim_p_equivalent=[1.0, 0.01, 1.0, 1.0]))
    assert looser["tax_held"].tolist()[:3] == [True, False, True]  # q = 0.01 x 12 / 3 = 0.04 > 0.025
    assert family.sentences(looser) == [
        "3 verdict(s) (tax, gain or equivalent) controlled together at a 2.5% false discovery rate "
        "(Benjamini-Hochberg): 2 of 3 hold; not held as a family: btrfs read at 2 devices (equivalent, q = 0.04)."]
    assert family.sentences(family.controlled(table.assign(tax_verdict="inconclusive"))) == []


@pytest.mark.parametrize("runs, method, measured", [(3, "student", 0.800), (5, "student", 0.789),
                                                    (10, "student", 0.797), (3, "welch", 0.822),
                                                    (5, "welch", 0.800), (10, "welch", 0.801)])
def test_a_tax_at_the_detectable_size_is_called_at_about_its_power(runs, method, measured):
    """Runs a side at 2% spread: detectable_tax of a test at its true spread on its degrees of freedom (the pooled
    test's 2n - 2, Welch's on Hsu's n - 1), then 4,000 draws of that test at that true tax (seed 2): called a tax in
    80.0%, 78.9% and 79.7% of draws pooled, 82.2%, 80.0% and 80.1% Welch's, where 80% is stated (3 Monte Carlo
    errors: 1.9%; Welch's at 3 runs a little above). ``tax_tests`` gives each row's from its own test's degrees of
    freedom. (Welch's test at the pooled test's detectable taxes, 7.8%, 5.9% and 4.6%, called them in 46%, 66% and 75%: on its own degrees of
    freedom it detects only larger taxes, 10.6%, 6.6% and 4.7%.)"""
    sigma = 0.02
    df = 2 * runs - 2 if method == "student" else runs - 1
    known = significance.TaxTest(0.0, 0.0, 0.0, 1.0, "noise", runs, runs, sigma, 0.0, sigma * np.sqrt(2 / runs), df)
    detectable = significance.detectable_tax(known)
    rng = np.random.default_rng(2)
    called = sum(significance.practical(significance.tax_test(BW * (1 - detectable) * rng.lognormal(0, sigma, runs),
                                                              BW * rng.lognormal(0, sigma, runs), method=method))
                 == "tax" for _ in range(4000))
    assert 0.02 < detectable < 0.11
    error = 3 * np.sqrt(0.8 * 0.2 / 4000)
    if method == "student":  # exact: at its power
        assert called / 4000 == pytest.approx(0.8, abs=error)
    else:  # at least its power (Welch's at 3 runs a little above: 82.2%)
        assert called / 4000 >= 0.8 - error
    assert called / 4000 == pytest.approx(measured, abs=0.03)
