"""Repetition statistics and propagated intervals, worked by hand (MB = 1e6 bytes)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from flashscale.errors import ConfigError
from flashscale.analysis.stats import describe, interval_bootstrap, interval_t, repetition_stats, summary_intervals

MB = 1e6
MIB = 1048576
T975_2 = 4.302652729911275  # t quantile 0.975 with 2 degrees of freedom (tables: 4.303)
H = T975_2 * 5 / np.sqrt(3)  # half-width of the t interval of 3 repetitions with s = 5: 12.42068


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
    # mean 105, s = sqrt((25 + 25 + 0) / 2) = 5, half = 4.3027 x 5 / sqrt(3) = 12.4207
    lo, hi = interval_t(np.array([100.0, 110.0, 105.0]), 0.95)
    assert (lo, hi) == (pytest.approx(105 - H), pytest.approx(105 + H))
    assert H == pytest.approx(12.4207, abs=1e-4)


def test_interval_of_one_value_is_nan_without_warnings():
    assert all(np.isnan(interval_t(np.array([3.0]))))
    assert all(np.isnan(interval_bootstrap(np.array([3.0]))))
    d = describe(np.array([3.0]))
    assert d["reps"] == 1 and d["mean"] == 3.0 and np.isnan(d["std"]) and np.isnan(d["cv"])


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
    assert single["bw_bytes_lo"] == pytest.approx((105 - H) * MB)
    assert single["bw_bytes_hi"] == pytest.approx((105 + H) * MB)


def test_repetition_stats_of_iops_column(results):
    frame = results.assign(iops=results["bw_bytes"] / MIB)
    single = repetition_stats(frame, value="iops").set_index("layout").loc["single"]
    assert single["iops"] == pytest.approx(105 * MB / MIB)
    assert single["iops_cv"] == pytest.approx(5 / 105)
    assert single["iops_lo"] == pytest.approx((105 - H) * MB / MIB)


def test_summary_intervals_by_hand(results):
    out = summary_intervals(results, reference="jbod").set_index("layout")
    jbod, btrfs, single = out.loc["jbod"], out.loc["btrfs"], out.loc["single"]
    # efficiency 195 / (2 x 105); lo = (195 - H) / (2 (105 + H)); hi = (195 + H) / (2 (105 - H))
    assert jbod["efficiency"] == pytest.approx(195 / 210)
    assert jbod["efficiency_lo"] == pytest.approx((195 - H) / (2 * (105 + H)))
    assert jbod["efficiency_hi"] == pytest.approx((195 + H) / (2 * (105 - H)))
    # tax 1 - 185 / 195 = 0.0513; lo = 1 - (185 + H) / (195 - H) < 0 < hi = 1 - (185 - H) / (195 + H): noise
    assert btrfs["tax"] == pytest.approx(1 - 185 / 195)
    assert btrfs["tax_lo"] == pytest.approx(1 - (185 + H) / (195 - H))
    assert btrfs["tax_hi"] == pytest.approx(1 - (185 - H) / (195 + H))
    assert btrfs["tax_verdict"] == "noise"
    # the reference against itself, and the baseline point against itself, are exact
    assert (jbod["tax_lo"], jbod["tax_hi"], jbod["tax_verdict"]) == (0.0, 0.0, "reference")
    assert (single["efficiency_lo"], single["efficiency_hi"]) == (1.0, 1.0)
    assert single["tax_verdict"] == "unknown"  # no jbod at 1 device


@pytest.mark.parametrize("btrfs, verdict", [([185.0, 185.1, 184.9], "tax"), ([205.0, 205.1, 204.9], "gain")])
def test_tax_verdict_when_the_interval_excludes_zero(btrfs, verdict):
    rows = _rows("single", 1, [100.0, 100.1, 99.9])
    rows += _rows("jbod", 2, [195.0, 195.1, 194.9]) + _rows("btrfs", 2, btrfs)
    out = summary_intervals(pd.DataFrame(rows), reference="jbod").set_index("layout")
    assert out.loc["btrfs", "tax_verdict"] == verdict


def test_one_repetition_gives_unknown_not_a_number():
    rows = _rows("single", 1, [100.0]) + _rows("jbod", 2, [190.0]) + _rows("btrfs", 2, [180.0])
    out = summary_intervals(pd.DataFrame(rows), reference="jbod").set_index("layout")
    assert np.isnan(out.loc["btrfs", "tax_lo"]) and out.loc["btrfs", "tax_verdict"] == "unknown"
    assert out.loc["btrfs", "tax"] == pytest.approx(1 - 180 / 190)  # the point estimate is still there


def test_summary_intervals_bootstrap_narrower_than_t(results):
    t = summary_intervals(results, reference="jbod").set_index("layout")
    boot = summary_intervals(results, reference="jbod", method="bootstrap").set_index("layout")
    t_width = t.loc["btrfs", "tax_hi"] - t.loc["btrfs", "tax_lo"]
    boot_width = boot.loc["btrfs", "tax_hi"] - boot.loc["btrfs", "tax_lo"]
    assert 0 < boot_width < t_width


@pytest.mark.parametrize("kwargs, word", [({"confidence": 1.0}, "1.0"), ({"method": "jackknife"}, "'jackknife'")])
def test_bad_parameters_are_named(results, kwargs, word):
    with pytest.raises(ConfigError, match=word):
        summary_intervals(results, reference="jbod", **kwargs)


def test_inputs_not_mutated(results):
    before = results.copy(deep=True)
    repetition_stats(results)
    summary_intervals(results, reference="jbod", method="bootstrap")
    pd.testing.assert_frame_equal(results, before)
