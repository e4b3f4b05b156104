"""Whose errors hold a point's table interval (``residuals``: its layout's own, scaled by its layout's, or pooled)
and the table's interval clipped to the model's closed end (``conformal.two_ended``), on hand-made tables whose
answer is worked out here, and on the quickstart's golden table (issue 50, item 6). The Monte Carlo of both is in
``tests/test_predict_conformal.py``."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from flashscale.analysis.prediction import conformal, predict, residuals, scoring

QUICKSTART = Path(__file__).resolve().parent / "golden" / "quickstart_results.csv"
MiB = 2**20


def test_each_tier_by_hand():
    """Layout a: 10 points (9 others: its own, the 9th smallest of 9 at 90%); b: 3 points (2 others: scaled by
    their root mean square, the quantile of a's 10 errors over a's own scales, b's and c's having too few to scale
    but themselves); c: 1 point (none of its own: pooled over the 13 others, the 13th smallest of 13)."""
    a, b = [0.01 * k for k in range(1, 11)], [0.2, 0.3, 0.4]
    errors = pd.Series(a + b + [0.5])
    layouts = pd.Series(["a"] * 10 + ["b"] * 3 + ["c"])
    halves, tiers, said = residuals.residual_halves(errors, layouts, pd.Series(True, index=errors.index), 0.9)
    assert tiers == [residuals.OWN] * 10 + [residuals.SCALED] * 3 + [residuals.POOLED]
    assert halves[0] == pytest.approx(0.10) and halves[9] == pytest.approx(0.09)  # a's largest other
    ratios = [e / math.sqrt(sum(x * x for x in a if x != e) / 9) for e in a]
    assert halves[10] == pytest.approx(max(ratios) * math.sqrt((0.3**2 + 0.4**2) / 2))  # 10th of 10 ratios
    assert halves[13] == pytest.approx(0.4)  # the largest of the other 13 (c's own 0.5 left out)
    assert said[0] == "a's own 9 other points alone"
    assert said[10].startswith("scaled by b's 2 other points (root mean square 35.4%)")
    assert said[13] == "pooled over 13 other points (c has 0 of its own)"


def test_a_point_past_its_closed_end_scores_infinity_and_the_tier_is_chosen_by_counts_alone():
    """One of a's others at infinity (past its model's closed end): a's own quantile, the 9th of 9, is infinite
    (no clipped interval reaches it); the tier stays ``own``, never a narrower one chosen after the fact."""
    errors = pd.Series([0.01 * k for k in range(1, 10)] + [math.inf])
    halves, tiers, _ = residuals.residual_halves(errors, pd.Series(["a"] * 10), pd.Series([True] * 10), 0.9)
    assert tiers == [residuals.OWN] * 10
    assert np.isinf(halves[:9]).all() and halves[9] == pytest.approx(0.09)


def one_closed_end(measured: list[float]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """12 points of one layout, each predicted 1 GB/s "at most 1 GB/s" (the lower end open), one run each (the
    house's 2% noise: the closed end widened to 1 GB/s x exp(1.645 x 2%) = 1.033 GB/s)."""
    scored = pd.DataFrame(dict(layout="md-raid0", devices=4, rw="read", bs=MiB, numjobs=range(1, 13), iodepth=1,
                               predicted_bw_bytes=1e9, predicted_lo_bw_bytes=np.nan, predicted_hi_bw_bytes=1e9,
                               measured_bw_bytes=measured, measured_reps=1))
    return scored, scored.rename(columns={"measured_bw_bytes": "bw_bytes"})


def test_the_table_s_interval_is_clipped_to_the_model_s_closed_end_where_the_table_kept_to_it():
    """Every point below its "at most": the table's interval (its layout's own 11 others, the 11th of 11: up to
    exp(0.30)) is clipped to 1.033 GB/s, the model's end widened by the run noise, and said. The largest error
    (-0.30 on the log scale) misses: leave-one-out, no other reaches it."""
    below = list(np.exp(-np.linspace(0.02, 0.30, 12)) * 1e9)
    got = conformal.two_ended(*one_closed_end(below))
    widened = 1e9 * math.exp(1.6448536 * conformal.DEFAULT_NOISE)
    assert got["scored_clipped"].all() and not got["scored_unclipped"].any()
    assert got["scored_hi_bw_bytes"].to_numpy() == pytest.approx(widened)
    assert got["empirical_hi_bw_bytes"].gt(1.2e9).all()  # what the table alone would have said
    assert got["scored_inside"].tolist() == [True] * 11 + [False]
    assert conformal.table_sentences(got) == ["The table's 12 interval(s): 12 from their layout's own points "
                                              "alone, 0 scaled by their layout's errors, 0 pooled over every layout; "
                                              "12 clipped to the model's closed end."]


def test_where_the_table_passed_its_closed_ends_the_clip_is_refused_and_a_point_past_its_own_misses():
    """One point at 1.1 GB/s, past its 1.033 "at most": each of the other 11 has it among its others, the 11th of 11
    is infinite, so their intervals are not clipped (said); its own interval is clipped (its others kept to
    theirs), and it misses: an "at most" that broke is a miss, not a width. The largest error below (-0.30) misses
    too, its unclipped interval from the others' plain errors (the largest 0.27)."""
    measured = list(np.exp(-np.linspace(0.02, 0.30, 11)) * 1e9) + [1.1e9]
    got = conformal.two_ended(*one_closed_end(measured))
    assert got["scored_unclipped"].tolist() == [True] * 11 + [False]
    assert got["scored_clipped"].tolist() == [False] * 11 + [True]
    assert got["scored_inside"].tolist() == [True] * 10 + [False, False]
    assert got["scored_residuals"].iloc[0].endswith("not clipped: too many of them lay past their model's closed end")
    assert conformal.table_sentences(got)[0].endswith("1 clipped to the model's closed end, 11 not: the table's points "
                                                      "lay past theirs.")


def test_the_quickstart_s_intervals_each_layout_by_its_own_errors_and_clipped():
    """The quickstart's golden table (jbod and btrfs-raid0 on 4 capped devices, 3 runs a point): 16 of 16 with two
    ends, 16 inside, median |error| 0.5%; each layout's 7 other points scale its interval, so jbod's are about
    +/-3% (pooled they were +/-45%: btrfs's writes), btrfs-raid0's wide; 14 clipped to the model's "at most". Its
    write at 1 job (the model's "at most 802 MB/s") is not clipped: its own three runs spread so far (0.25-0.56
    GB/s, t at 2 degrees of freedom) that the model's end widened by their noise lies past the table's 1,739."""
    frame = pd.read_csv(QUICKSTART)
    got = predict.score(predict.predict_results(frame), frame).set_index(["layout", "rw", "numjobs"])
    assert got["scored_inside"].all() and len(got) == 16 and (got["scored_from"] == conformal.TABLE).all()
    assert got["error"].abs().median() == pytest.approx(0.005, abs=5e-4)
    assert (got["scored_tier"] == residuals.SCALED).all() and int(got["scored_clipped"].sum()) == 14
    jbod = got.loc["jbod"]
    assert (jbod["scored_hi_bw_bytes"] / jbod["predicted_bw_bytes"]).max() < 1.04
    assert (jbod["scored_lo_bw_bytes"] / jbod["predicted_bw_bytes"]).min() > 0.95
    read = got.loc[("btrfs-raid0", "read", 1)]
    assert read["scored_hi_bw_bytes"] == pytest.approx(read["predicted_hi_bw_bytes"] * math.exp(read["run_noise_half"]))
    assert read["scored_hi_bw_bytes"] < 0.81e9 < read["empirical_hi_bw_bytes"]
    write = got.loc[("btrfs-raid0", "write", 1)]
    assert not write["scored_clipped"] and write["predicted_hi_bw_bytes"] == pytest.approx(802e6, rel=1e-3)
    assert write["scored_hi_bw_bytes"] == pytest.approx(1739e6, rel=1e-3)
    assert write["predicted_hi_bw_bytes"] * math.exp(write["run_noise_half"]) > write["scored_hi_bw_bytes"]
    assert scoring.interval_sentences(got.reset_index())[1] == (
        "The table's 16 interval(s): 0 from their layout's own points alone, 16 scaled by their layout's errors, 0 "
        "pooled over every layout; 14 clipped to the model's closed end.")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]),
                          st.one_of(st.floats(0, 5), st.just(math.inf), st.just(math.nan)), st.booleans()),
                max_size=25),
       st.sampled_from([0.5, 0.8, 0.9]))
def test_any_scores_give_a_half_width_that_is_nan_inf_or_one_scaled_score(rows, level):
    """Whatever the scores (NaN, infinite, ties at zero) and whichever rows calibrate: a tier per point, a
    half-width that is NaN (too few), infinite, or non-negative; never an exception."""
    layouts = pd.Series([r[0] for r in rows], dtype=object)
    scores, mine = pd.Series([r[1] for r in rows], dtype=float), pd.Series([r[2] for r in rows], dtype=bool)
    halves, tiers, said = residuals.residual_halves(scores, layouts, mine, level, pd.Series(0.01, index=scores.index))
    assert len(halves) == len(tiers) == len(said) == len(rows)
    assert set(tiers) <= {residuals.OWN, residuals.SCALED, residuals.POOLED}
    assert all(math.isnan(h) or h >= 0 for h in halves)
