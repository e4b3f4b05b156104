"""Repetition statistics and propagated intervals, worked by hand (MB = 1e6 bytes)."""
from __future__ import annotations

import re
import numpy as np
import scipy.stats
import pandas as pd
import pytest

from flashscale.errors import ConfigError
from flashscale.analysis.stats import describe, interval_bootstrap, interval_t, repetition_stats, summary_intervals

MB = 1e6
MIB = 1048576
T975_2 = 4.302652729911275  # t quantile 0.975 with 2 degrees of freedom (tables: 4.303)
H = T975_2 * 5 / np.sqrt(3)  # half-width of the t interval of 3 repetitions with s = 5: 12.42068
LO, HI = 105 * np.exp(-H / 105), 105 * np.exp(H / 105)  # on the log scale (mean 105): 93.2858 to 118.1852


def _rows(layout, devices, bws, warmup_bw=None, rw="read", numjobs=1):
    base = dict(layout=layout, devices=devices, rw=rw, bs=MIB, numjobs=numjobs, iodepth=1)
    out = [dict(base, rep=0, warmup=True, bw_bytes=warmup_bw * MB)] if warmup_bw is not None else []
    return out + [dict(base, rep=i, warmup=False, bw_bytes=bw * MB) for i, bw in enumerate(bws, start=1)]


@pytest.fixture
def results() -> pd.DataFrame:
    # Each point has 3 repetitions with s = 5 MB/s, so each t interval is mean +/- H.
    rows = _rows("single", 1, [100, 110, 105], warmup_bw=900)  # mean 105: the baseline
    rows += _rows("jbod", 2, [190, 200, 195], numjobs=2)  # mean 195
    rows += _rows("btrfs", 2, [180, 190, 185], numjobs=2)  # mean 185
    return pd.DataFrame(rows)


def test_interval_t_by_hand():
    # mean 105, s = sqrt((25 + 25 + 0) / 2) = 5, half = 4.3027 x 5 / sqrt(3) = 12.4207 on the raw scale; on the log
    # scale the half-width is H / 105 = 0.118292, so 105 x exp(-/+ 0.118292) = 93.2858 to 118.1852
    lo, hi = interval_t(np.array([100.0, 110.0, 105.0]), 0.95)
    assert (lo, hi) == (pytest.approx(93.2858, abs=1e-4), pytest.approx(118.1852, abs=1e-4))
    assert H == pytest.approx(12.4207, abs=1e-4)


def test_two_runs_far_apart_give_no_rate_below_zero():
    """The docs' import example: jbod's two runs 1,057 MB/s apart gave (-981 to 3,096) on the raw scale."""
    lo, hi = interval_t(np.array([100.0, 2000.0]) * MB)
    assert 0 < lo < 1050 * MB < hi < np.inf
    # the log scale's half-width: t(0.975, 1) x cv / sqrt(2) = 12.7062 x (1343.5 / 1050) / 1.41421 = 11.4961
    assert np.log(hi / (1050 * MB)) == pytest.approx(11.4961, abs=1e-4)
    assert np.log(1050 * MB / lo) == pytest.approx(11.4961, abs=1e-4)


def test_values_not_all_positive_keep_the_classic_interval():
    lo, hi = interval_t(np.array([-5.0, 0.0, 5.0]))
    assert (lo, hi) == (pytest.approx(-12.4207, abs=1e-4), pytest.approx(12.4207, abs=1e-4))


def test_interval_of_one_value_is_nan_without_warnings():
    assert all(np.isnan(interval_t(np.array([3.0]))))
    assert all(np.isnan(interval_bootstrap(np.array([3.0]))))
    d = describe(np.array([3.0]))
    assert d["reps"] == 1 and d["mean"] == pytest.approx(3.0) and np.isnan(d["std"]) and np.isnan(d["cv"])


def test_bootstrap_is_seeded_and_within_the_data():
    values = np.array([100.0, 110.0, 105.0, 102.0, 108.0])
    first = interval_bootstrap(values, 0.95, n_boot=4000, seed=7)
    assert first == interval_bootstrap(values, 0.95, n_boot=4000, seed=7)
    assert values.min() <= first[0] < values.mean() < first[1] <= values.max()


def test_describe_by_hand():
    d = describe(np.array([100.0, 110.0, 105.0, 120.0]))
    # mean 108.75; median (105 + 110) / 2 = 107.5; deviations -8.75, 1.25, -3.75, 11.25:
    # squares 76.5625 + 1.5625 + 14.0625 + 126.5625 = 218.75; / 3 = 72.9167; s = 8.5391
    assert d["mean"] == pytest.approx(108.75)
    assert d["median"] == pytest.approx(107.5)
    assert d["std"] == pytest.approx(8.539126, rel=1e-6)
    assert d["cv"] == pytest.approx(8.539126 / 108.75, rel=1e-6)


def test_repetition_stats_excludes_warmup(results):
    reps = repetition_stats(results).set_index("layout")
    single = reps.loc["single"]
    assert single["reps"] == 3  # the 900 MB/s warm-up is not a repetition
    assert single["bw_bytes"] == pytest.approx(105 * MB)
    assert single["bw_bytes_std"] == pytest.approx(5 * MB)
    assert single["bw_bytes_cv"] == pytest.approx(5 / 105)
    assert single["bw_bytes_lo"] == pytest.approx(LO * MB)
    assert single["bw_bytes_hi"] == pytest.approx(HI * MB)


def test_repetition_stats_of_iops_column(results):
    frame = results.assign(iops=results["bw_bytes"] / MIB)
    single = repetition_stats(frame, value="iops").set_index("layout").loc["single"]
    assert single["iops"] == pytest.approx(105 * MB / MIB)
    assert single["iops_cv"] == pytest.approx(5 / 105)
    assert single["iops_lo"] == pytest.approx(LO * MB / MIB)


def test_summary_intervals_by_hand(results):
    out = summary_intervals(results, reference="jbod").set_index("layout")
    jbod, btrfs, single = out.loc["jbod"], out.loc["btrfs"], out.loc["single"]
    # efficiency 195 / (2 x 105), on the log scale: x exp(+/- t s), s^2 = (5/195)^2 / 3 + (5/105)^2 / 3, Welch df
    wa, wb = (5 / 195) ** 2 / 3, (5 / 105) ** 2 / 3
    df = (wa + wb) ** 2 / ((wa ** 2 + wb ** 2) / 2)
    half = scipy.stats.t.ppf(0.975, df) * np.sqrt(wa + wb)
    assert jbod["efficiency"] == pytest.approx(195 / 210)
    assert jbod["efficiency_lo"] == pytest.approx(195 / 210 * np.exp(-half))
    assert jbod["efficiency_hi"] == pytest.approx(195 / 210 * np.exp(half))
    # tax 1 - 185 / 195 = 0.0513, tested on the logs: difference of mean logs d, Welch's se and degrees of freedom
    btrfs_logs, jbod_logs = np.log([180.0, 190.0, 185.0]), np.log([190.0, 200.0, 195.0])
    d = btrfs_logs.mean() - jbod_logs.mean()
    wa, wb = btrfs_logs.var(ddof=1) / 3, jbod_logs.var(ddof=1) / 3
    se = np.sqrt(wa + wb)
    half = scipy.stats.t.ppf(0.975, 2) * se  # Hsu's degrees of freedom: 3 - 1
    assert btrfs["tax"] == pytest.approx(1 - 185 / 195)
    assert btrfs["tax_lo"] == pytest.approx(1 - np.exp(d + half))
    assert btrfs["tax_hi"] == pytest.approx(1 - np.exp(d - half))
    assert btrfs["tax_lo"] < 0 < btrfs["tax_hi"] and btrfs["tax_p"] > 0.05
    # 5.1% against the 2% margin, its interval -4.1% to 13.5% across the margin's edge: undecided; at the spread
    # measured, n runs a side narrow the interval to t(n - 1) s sqrt(2 / n) < |d - log(0.98)|
    assert btrfs["tax_verdict"] == "inconclusive" and btrfs["tax_margin"] == pytest.approx(0.02)
    s = se / np.sqrt(2 / 3)
    edge = abs(d - np.log(0.98))
    decides = [n for n in range(4, 100) if scipy.stats.t.ppf(0.975, n - 1) * s * np.sqrt(2 / n) < edge]
    assert btrfs["tax_reps_needed"] == decides[0]
    assert (btrfs["best_reps"], btrfs["reference_reps"]) == (3, 3)
    # the reference against itself, and the baseline point against itself, are exact
    assert (jbod["tax_lo"], jbod["tax_hi"], jbod["tax_verdict"]) == (0.0, 0.0, "reference")
    assert (single["efficiency_lo"], single["efficiency_hi"]) == (1.0, 1.0)
    assert single["tax_verdict"] == "unknown"  # no jbod at 1 device


def _simulated(rng: np.random.Generator, tax: float, draws: int, noise: float = 0.02, reps: int = 3) -> pd.DataFrame:
    """One independent draw per device count (2 ... draws + 1): jbod at 1000 MB/s and btrfs at 1000 (1 - tax),
    each repetition times a Gaussian (1 + noise) factor; a single-device baseline."""
    rows = _rows("single", 1, [500.0] * reps)
    for devices in range(2, draws + 2):
        for layout, level in (("jbod", 1000.0), ("btrfs", 1000.0 * (1 - tax))):
            rows += _rows(layout, devices, level * (1 + noise * rng.standard_normal(reps)))
    return pd.DataFrame(rows)


@pytest.mark.parametrize("tax, noise, reps, margin, verdict, least", [
    (0.08, 0.02, 5, 0.02, "tax", 0.97),  # measured 99% (400 draws while designing)
    (0.08, 0.02, 3, 0.02, "tax", 0.40),  # Welch's on Hsu's 2 df 47.5% (pooled: 84%): three runs leave the interval
    # near the edge
    (0.08, 0.02, 3, 0.0, "tax", 0.63),  # margin 0: the plain significance test, Welch's 72% (pooled: ~95%)
    (0.0, 0.005, 3, 0.02, "equivalent", 0.45),  # Welch's 53% (pooled: 89%): the emulated array's spread
    (0.0, 0.02, 3, 0.02, "inconclusive", 0.90),  # 99.5%: at real devices' spread three runs cannot show equivalence
])
def test_verdicts_keep_their_promise_on_simulated_tables(tax, noise, reps, margin, verdict, least):
    """200 draws of btrfs against jbod with a Gaussian spread ``noise``: the verdict against ``margin`` is the
    expected one in at least ``least`` of them; no tax is called a tax or a gain beyond the margin in more than 5%
    (2.5% expected a side at 95%); only the five verdicts occur."""
    out = summary_intervals(_simulated(np.random.default_rng(10), tax, 200, noise, reps), reference="jbod",
                            margin=margin)
    btrfs = out[out["layout"] == "btrfs"]
    assert len(btrfs) == 200
    assert (btrfs["tax_verdict"] == verdict).mean() >= least
    assert set(btrfs["tax_verdict"]) <= {"tax", "gain", "equivalent", "inconclusive"}
    if tax == 0:
        assert btrfs["tax_verdict"].isin(["tax", "gain"]).mean() <= 0.05


def test_the_runs_said_to_decide_an_inconclusive_tax_mostly_do():
    """No tax, 2% spread: three runs are inconclusive and name the runs that would decide (about 22 a side); a
    campaign with that many is decided (equivalent) in most draws."""
    first = summary_intervals(_simulated(np.random.default_rng(12), 0.0, 50), reference="jbod")
    btrfs = first[first["layout"] == "btrfs"]
    undecided = btrfs["tax_verdict"] == "inconclusive"
    assert undecided.mean() >= 0.9 and btrfs.loc[~undecided, "tax_reps_needed"].isna().all()
    asked = btrfs.loc[undecided, "tax_reps_needed"]  # NaN: an estimate on the margin's edge, no number decides
    assert asked.notna().mean() >= 0.9 and (asked.dropna() > 3).all()
    assert 10 <= asked.median() <= 60  # one draw's estimate is noisy: 4 to 200 were seen
    again = summary_intervals(_simulated(np.random.default_rng(13), 0.0, 50, reps=int(asked.median())),
                              reference="jbod")
    assert (again.loc[again["layout"] == "btrfs", "tax_verdict"] == "equivalent").mean() >= 0.7


def test_a_tax_margin_that_is_not_a_fraction_is_refused_naming_it(results):
    for bad in (2, -0.01, "2%", True):
        with pytest.raises(ConfigError, match=re.escape(repr(bad))):
            summary_intervals(results, reference="jbod", margin=bad)


def test_the_interval_overlap_rule_would_have_missed_the_tax():
    """The same 8% tax: most draws have overlapping 95% t intervals, which the old rule called noise (the test
    alone, margin 0): 49% of draws overlap, and Welch's test calls 48% of those a tax (the pooled test: over 80%)."""
    out = summary_intervals(_simulated(np.random.default_rng(11), 0.08, 200), reference="jbod", margin=0.0)
    btrfs = out[out["layout"] == "btrfs"].reset_index(drop=True)
    jbod = out[out["layout"] == "jbod"].reset_index(drop=True)
    overlap = btrfs["best_bw_bytes_hi"] >= jbod["best_bw_bytes_lo"]
    assert overlap.mean() > 0.25 and (btrfs.loc[overlap, "tax_verdict"] == "tax").mean() > 0.3


@pytest.mark.parametrize("btrfs, verdict", [([185.0, 185.1, 184.9], "tax"), ([205.0, 205.1, 204.9], "gain")])
def test_tax_verdict_when_the_interval_excludes_zero(btrfs, verdict):
    rows = _rows("single", 1, [100.0, 100.1, 99.9])
    rows += _rows("jbod", 2, [195.0, 195.1, 194.9]) + _rows("btrfs", 2, btrfs)
    out = summary_intervals(pd.DataFrame(rows), reference="jbod").set_index("layout")
    assert out.loc["btrfs", "tax_verdict"] == verdict


def test_one_repetition_gives_no_interval_and_says_no_verdict_can_be_given():
    rows = _rows("single", 1, [100.0]) + _rows("jbod", 2, [190.0]) + _rows("btrfs", 2, [180.0])
    out = summary_intervals(pd.DataFrame(rows), reference="jbod").set_index("layout")
    assert np.isnan(out.loc["btrfs", "tax_lo"]) and out.loc["btrfs", "tax_verdict"] == "one run: no interval"
    assert np.isnan(out.loc["btrfs", "efficiency_lo"]) and np.isnan(out.loc["btrfs", "best_bw_bytes_lo"])
    assert out.loc["btrfs", "tax"] == pytest.approx(1 - 180 / 190)  # the point estimate is still there


def test_summary_intervals_bootstrap_narrower_than_t_and_the_tax_test_the_same(results):
    t = summary_intervals(results, reference="jbod").set_index("layout")
    boot = summary_intervals(results, reference="jbod", method="bootstrap").set_index("layout")
    t_width = t.loc["btrfs", "best_bw_bytes_hi"] - t.loc["btrfs", "best_bw_bytes_lo"]
    boot_width = boot.loc["btrfs", "best_bw_bytes_hi"] - boot.loc["btrfs", "best_bw_bytes_lo"]
    assert 0 < boot_width < t_width
    assert boot.loc["btrfs", "tax_p"] == t.loc["btrfs", "tax_p"]  # the method of the point intervals only


def test_runs_too_short_and_precondition_rows_are_not_repetitions(results):
    frame = results.assign(too_short=False, phase="measure")
    extra = pd.DataFrame(_rows("btrfs", 2, [900.0], numjobs=2)).assign(rep=7, too_short=True, phase="measure")
    pre = pd.DataFrame(_rows("btrfs", 2, [5.0], numjobs=2)).assign(rep=8, too_short=False, phase="precondition")
    out = summary_intervals(pd.concat([frame, extra, pre], ignore_index=True), reference="jbod")
    btrfs = out.set_index("layout").loc["btrfs"]
    assert btrfs["best_reps"] == 3 and btrfs["best_bw_bytes"] == pytest.approx(185 * MB)
    assert repetition_stats(pd.concat([frame, extra, pre])).set_index("layout").loc["btrfs", "reps"] == 3


@pytest.mark.parametrize("kwargs, word", [({"confidence": 1.0}, "1.0"), ({"method": "jackknife"}, "'jackknife'")])
def test_bad_parameters_are_named(results, kwargs, word):
    with pytest.raises(ConfigError, match=word):
        summary_intervals(results, reference="jbod", **kwargs)


def test_inputs_not_mutated(results):
    before = results.copy(deep=True)
    repetition_stats(results)
    summary_intervals(results, reference="jbod", method="bootstrap")
    pd.testing.assert_frame_equal(results, before)


@pytest.mark.parametrize("baseline_reps", [[100.0, 160.0], [100.0, 101.0], [50.0, 150.0]])
def test_efficiency_interval_always_holds_the_efficiency_and_is_positive(baseline_reps):
    """Two repetitions: the baseline's t interval (t = 12.7) crosses zero for [100, 160] and [50, 150]; dividing the
    bounds gave an efficiency_hi below zero. On the log scale the interval stays around the efficiency."""
    rows = _rows("single", 1, baseline_reps) + _rows("jbod", 2, [190.0, 200.0])
    out = summary_intervals(pd.DataFrame(rows), reference="jbod").set_index("layout").loc["jbod"]
    raw = np.mean(baseline_reps) - 12.706 * np.std(baseline_reps, ddof=1) / np.sqrt(2)  # the classic t interval's
    assert raw < 0 or baseline_reps == [100.0, 101.0]
    assert interval_t(np.array(baseline_reps) * MB)[0] > 0
    assert 0 < out["efficiency_lo"] < out["efficiency"] < out["efficiency_hi"] < np.inf
    assert out["efficiency"] == pytest.approx(195 / (2 * np.mean(baseline_reps)))
    assert out["layout_efficiency_lo"] <= out["layout_efficiency"] <= out["layout_efficiency_hi"]


def test_efficiency_interval_needs_two_repetitions_a_side():
    rows = _rows("single", 1, [100.0]) + _rows("jbod", 2, [190.0, 200.0])
    out = summary_intervals(pd.DataFrame(rows), reference="jbod").set_index("layout").loc["jbod"]
    assert np.isnan(out["efficiency_lo"]) and np.isnan(out["efficiency_hi"])


def test_a_baseline_from_another_stage_gives_the_efficiency_and_its_interval(results):
    """03_layout_tax takes 01_baseline's single-device rows: the efficiency and its interval use them."""
    layouts = results[results["devices"] > 1]
    out = summary_intervals(layouts, reference="jbod", base_frame=results).set_index("layout")
    own = summary_intervals(results, reference="jbod").set_index("layout")
    for column in ("efficiency", "efficiency_lo", "efficiency_hi"):
        for layout in ("jbod", "btrfs"):
            assert out.loc[layout, column] == pytest.approx(own.loc[layout, column])
    # btrfs is not the reference: its tax is tested against jbod's repetitions, not set to the reference's constants
    # (a 5% tax, 185 against 195 MB/s, with s = 5 MB/s at n = 3: its interval holds 0)
    assert out.loc["btrfs", "tax_lo"] == pytest.approx(own.loc["btrfs", "tax_lo"])
    assert out.loc["btrfs", "tax_lo"] < 0 < out.loc["btrfs", "tax_hi"]
    assert out.loc["btrfs", "tax_verdict"] == own.loc["btrfs", "tax_verdict"] == "inconclusive"
    alone = summary_intervals(layouts, reference="jbod").set_index("layout")
    assert np.isnan(alone.loc["jbod", "efficiency"]) and np.isnan(alone.loc["jbod", "efficiency_lo"])
