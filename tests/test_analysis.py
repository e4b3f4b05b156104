"""The analysis of issue 2 against numbers worked by hand (MB = 1e6 bytes; MiB = 1048576)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from flashscale.analysis.baseline_and_tax import baseline, measured, point_means, summarize
from flashscale.analysis.findings import conclusions
from flashscale.errors import AnalysisError

MB = 1e6
MIB = 1048576
KIB4 = 4096


def _rows(layout, devices, rw, bs, numjobs, bws, iodepth=1, warmup_bw=None):
    """Rows of one point: an optional warm-up (rep 0) then one row per measured repetition (rep 1, 2, ...)."""
    out = []
    if warmup_bw is not None:
        out.append(dict(layout=layout, devices=devices, rw=rw, bs=bs, numjobs=numjobs, iodepth=iodepth,
                        rep=0, warmup=True, bw_bytes=warmup_bw * MB, iops=warmup_bw * MB / bs))
    for rep, bw in enumerate(bws, start=1):
        out.append(dict(layout=layout, devices=devices, rw=rw, bs=bs, numjobs=numjobs, iodepth=iodepth,
                        rep=rep, warmup=False, bw_bytes=bw * MB, iops=bw * MB / bs))
    return out


@pytest.fixture
def results() -> pd.DataFrame:
    rows = []
    # single, 1 device. read at 1 MiB: nj1 mean (180+190)/2 = 185, nj4 mean (200+200)/2 = 200 -> baseline 200 MB/s.
    # The warm-up of 999 MB/s must be ignored, or it would become the baseline.
    rows += _rows("single", 1, "read", MIB, 1, [180, 190], warmup_bw=999)
    rows += _rows("single", 1, "read", MIB, 4, [200, 200], warmup_bw=999)
    rows += _rows("single", 1, "read", KIB4, 4, [50, 50])
    # write at 1 MiB: nj1 = 150, nj4 = 150: a tie, the smaller numjobs (1) wins -> baseline 150 MB/s at nj 1.
    # write at 4 KiB is faster (300) but is not at the baseline bs: it counts for best, not for the baseline.
    rows += _rows("single", 1, "write", MIB, 1, [150, 150])
    rows += _rows("single", 1, "write", MIB, 4, [140, 160])
    rows += _rows("single", 1, "write", KIB4, 1, [300])
    # jbod, 4 devices. read 1 MiB nj4: (780+788)/2 = 784 -> efficiency 784 / (4 x 200) = 0.98.
    rows += _rows("jbod", 4, "read", MIB, 4, [780, 788], warmup_bw=10)
    rows += _rows("jbod", 4, "read", KIB4, 4, [200, 200])
    # write 1 MiB: nj4 = 600 and nj8 = 600 tie -> nj4; efficiency 600 / (4 x 150) = 1.0.
    rows += _rows("jbod", 4, "write", MIB, 4, [600, 600])
    rows += _rows("jbod", 4, "write", MIB, 8, [600])
    # btrfs-raid0, 4 devices. read 1 MiB = 760 -> tax 1 - 760/784 = 24/784 = 0.030612; eff 760/800 = 0.95.
    rows += _rows("btrfs-raid0", 4, "read", MIB, 4, [760])
    # read 4 KiB = 220 -> against jbod's 200 at 4 KiB: tax 1 - 220/200 = -0.10 (only with by=bs).
    rows += _rows("btrfs-raid0", 4, "read", KIB4, 4, [220])
    # write 1 MiB = 570 -> tax 1 - 570/600 = 0.05; eff 570/600 = 0.95.
    rows += _rows("btrfs-raid0", 4, "write", MIB, 4, [570])
    return pd.DataFrame(rows)


def _row(summary: pd.DataFrame, **keys) -> pd.Series:
    match = summary
    for name, value in keys.items():
        match = match[match[name] == value]
    assert len(match) == 1, keys
    return match.iloc[0]


def test_measured_drops_warmup_rows(results):
    rows = measured(results)
    assert len(rows) == len(results) - 3  # three warm-up rows in the fixture
    assert not rows["warmup"].any()


def test_measured_without_warmup_column_keeps_every_row(results):
    frame = results.drop(columns=["warmup"])
    assert len(measured(frame)) == len(frame)


def test_measured_reads_warmup_written_as_text(results):
    frame = results.assign(warmup=results["warmup"].map({True: "True", False: "False"}))
    assert len(measured(frame)) == len(results) - 3


def test_measured_names_missing_columns(results):
    with pytest.raises(AnalysisError, match=r"results lack column\(s\).*'bw_bytes'"):
        measured(results.drop(columns=["bw_bytes"]))
    with pytest.raises(AnalysisError, match=r"'numjobs', 'bw_bytes'"):
        measured(results.drop(columns=["numjobs", "bw_bytes"]))


def test_measured_refuses_nan_bandwidth(results):
    frame = results.copy()
    frame.loc[5, "bw_bytes"] = np.nan
    with pytest.raises(AnalysisError, match=r"1 row\(s\) with a missing or negative bw_bytes"):
        measured(frame)


def test_measured_refuses_only_warmup(results):
    with pytest.raises(AnalysisError, match="no measured rows"):
        measured(results[results["warmup"]])


def test_point_means_average_repetitions(results):
    points = point_means(results)
    # 13 points in the fixture: 6 single + 4 jbod + 3 btrfs-raid0, one per call to _rows.
    assert len(points) == 13
    p = _row(points, layout="single", rw="read", bs=MIB, numjobs=1)
    assert p["bw_bytes"] == pytest.approx(185 * MB)  # (180 + 190) / 2, warm-up 999 excluded
    assert p["reps"] == 2
    assert p["iops"] == pytest.approx(185 * MB / MIB)
    assert _row(points, layout="jbod", rw="write", numjobs=8)["reps"] == 1


def test_baseline_best_single_device_at_baseline_bs(results):
    base = baseline(results).set_index("rw")
    assert list(base.columns) == ["baseline_bw_bytes", "baseline_numjobs", "baseline_iodepth", "baseline_layout",
                                  "baseline_bs", "baseline_note"]
    assert base.loc["read", "baseline_bw_bytes"] == pytest.approx(200 * MB)
    assert base.loc["read", "baseline_numjobs"] == 4
    # write: 150 at nj1 ties with (140 + 160) / 2 = 150 at nj4 -> smallest numjobs; 300 at 4 KiB is ignored.
    assert base.loc["write", "baseline_bw_bytes"] == pytest.approx(150 * MB)
    assert base.loc["write", "baseline_numjobs"] == 1
    assert base.loc["write", "baseline_layout"] == "single"


def test_baseline_at_another_block_size(results):
    base = baseline(results, baseline_bs=KIB4).set_index("rw")
    assert base.loc["read", "baseline_bw_bytes"] == pytest.approx(50 * MB)
    assert base.loc["write", "baseline_bw_bytes"] == pytest.approx(300 * MB)


def test_baseline_missing_names_rw_and_bs(results):
    no_write = results[~((results["devices"] == 1) & (results["rw"] == "write") & (results["bs"] == MIB))]
    with pytest.raises(AnalysisError, match=r"missing baseline.*bs 1048576.*'write'"):
        baseline(no_write)
    with pytest.raises(AnalysisError, match=r"bs 65536 for rw 'read', 'write'"):
        baseline(results, baseline_bs=65536)


def test_summarize_best_efficiency_and_tax(results):
    summary = summarize(results, reference="jbod")
    assert list(summary.columns[:10]) == [
        "layout", "devices", "rw", "best_bw_bytes", "best_bs", "best_numjobs", "best_iodepth",
        "baseline_bw_bytes", "efficiency", "tax"]
    assert len(summary) == 6  # 3 layouts x 2 rw
    jbod_read = _row(summary, layout="jbod", rw="read")
    assert jbod_read["best_bw_bytes"] == pytest.approx(784 * MB)
    assert (jbod_read["best_bs"], jbod_read["best_numjobs"], jbod_read["best_iodepth"]) == (MIB, 4, 1)
    assert jbod_read["efficiency"] == pytest.approx(0.98)  # 784 / (4 x 200)
    assert jbod_read["tax"] == pytest.approx(0.0)  # the reference against itself
    btrfs_read = _row(summary, layout="btrfs-raid0", rw="read")
    assert btrfs_read["efficiency"] == pytest.approx(0.95)  # 760 / 800
    assert btrfs_read["tax"] == pytest.approx(24 / 784)  # 1 - 760 / 784 = 0.030612
    btrfs_write = _row(summary, layout="btrfs-raid0", rw="write")
    assert btrfs_write["tax"] == pytest.approx(0.05)  # 1 - 570 / 600


def test_summarize_ties_prefer_smallest_numjobs(results):
    jbod_write = _row(summarize(results, reference="jbod"), layout="jbod", rw="write")
    assert jbod_write["best_numjobs"] == 4  # 600 at nj4 ties with 600 at nj8
    assert jbod_write["efficiency"] == pytest.approx(1.0)  # 600 / (4 x 150)


def test_summarize_ties_then_iodepth_then_bs():
    rows = _rows("single", 1, "read", MIB, 2, [100], iodepth=8)
    rows += _rows("single", 1, "read", MIB, 2, [100], iodepth=4)  # same numjobs: iodepth 4 wins
    rows += _rows("single", 1, "read", KIB4, 2, [100], iodepth=4)  # same numjobs and iodepth: bs 4 KiB wins
    rows += _rows("single", 1, "read", MIB, 4, [100], iodepth=1)  # larger numjobs loses whatever its iodepth
    best = _row(summarize(pd.DataFrame(rows), reference="single"), layout="single")
    assert (best["best_numjobs"], best["best_iodepth"], best["best_bs"]) == (2, 4, KIB4)


def test_summarize_best_may_be_at_another_bs(results):
    single_write = _row(summarize(results, reference="single"), layout="single", rw="write")
    assert single_write["best_bs"] == KIB4  # 300 MB/s at 4 KiB beats 150 at 1 MiB
    assert single_write["efficiency"] == pytest.approx(2.0)  # 300 / (1 x 150)


def test_summarize_tax_nan_without_reference_row(results):
    summary = summarize(results, reference="jbod")
    assert np.isnan(_row(summary, layout="single", rw="read")["tax"])  # no jbod at 1 device


def test_summarize_by_bs(results):
    summary = summarize(results, reference="jbod", by=("bs",))
    assert list(summary.columns[:4]) == ["layout", "devices", "rw", "bs"]
    small = _row(summary, layout="btrfs-raid0", rw="read", bs=KIB4)
    assert small["tax"] == pytest.approx(-0.10)  # 1 - 220 / 200
    assert small["efficiency"] == pytest.approx(220 / 200)  # against the 4 KiB baseline: 4 x 50
    assert small["baseline_bw_bytes"] == pytest.approx(50 * MB)
    large = _row(summary, layout="btrfs-raid0", rw="read", bs=MIB)
    assert large["tax"] == pytest.approx(24 / 784)
    # btrfs-raid0 has no write at 4 KiB, jbod has none either: 2 bs for read + 1 for write per layout.
    assert len(summary[summary["layout"] == "btrfs-raid0"]) == 3


def test_summarize_accepts_by_as_a_string(results):
    summary = summarize(results, reference="jbod", by="bs")
    assert "bs" in summary.columns


def test_summarize_unknown_reference_lists_layouts(results):
    with pytest.raises(AnalysisError, match=r"'md-raid0'.*layouts present: 'btrfs-raid0', 'jbod', 'single'"):
        summarize(results, reference="md-raid0")


def test_summarize_unknown_by(results):
    with pytest.raises(AnalysisError, match=r"unknown by value\(s\) 'numjobs'"):
        summarize(results, reference="jbod", by=("numjobs",))


def test_summarize_without_a_baseline_still_gives_tax(results):
    summary = summarize(results[results["devices"] > 1], reference="jbod")
    raid = _row(summary, layout="btrfs-raid0", rw="read")
    assert raid["tax"] == pytest.approx(24 / 784) and np.isnan(raid["efficiency"])
    assert raid["efficiency_note"] == "no single-device (devices == 1) read rows at bs 1048576"


def test_inputs_not_mutated(results):
    before = results.copy(deep=True)
    measured(results)
    point_means(results)
    baseline(results)
    summary = summarize(results, reference="jbod", by=("bs",))
    summary_before = summary.copy(deep=True)
    conclusions(summary)
    pd.testing.assert_frame_equal(results, before)
    pd.testing.assert_frame_equal(summary, summary_before)


def test_conclusions_in_words(results):
    sentences = conclusions(summarize(results, reference="jbod"))
    assert "jbod reaches 98% of 4 x the single-device baseline for read (784 MB/s of 800 MB/s)" in sentences
    assert ("btrfs-raid0 costs a 3.1% tax against jbod for read at 4 devices"
            " (not tested against the noise: no repetitions given)") in sentences  # 24/784 = 3.06%
    assert ("btrfs-raid0 costs a 5.0% tax against jbod for write at 4 devices"
            " (not tested against the noise: no repetitions given)") in sentences
    assert not any(s.startswith("single") for s in sentences)  # 1 device: no efficiency, NaN tax


def test_conclusions_by_bs_and_negative_tax(results):
    sentences = conclusions(summarize(results, reference="jbod", by=("bs",)))
    assert ("btrfs-raid0 is 10.0% faster than jbod for read with 4 KiB blocks at 4 devices"
            " (not tested against the noise: no repetitions given)") in sentences
    assert "jbod reaches 100% of 4 x the single-device baseline for read with 4 KiB blocks (200 MB/s of 200 MB/s)" \
        in sentences


def test_conclusions_refuse_a_frame_that_is_not_a_summary(results):
    with pytest.raises(AnalysisError, match="'efficiency'"):
        conclusions(results)


def test_tax_is_one_definition_that_every_table_uses(results):
    """summarize, tax_by_threads and summary_intervals all give baseline_and_tax.tax at the same keys."""
    from flashscale.analysis import baseline_and_tax, layout_tax, significance, stats

    assert baseline_and_tax.tax(784.0, 800.0) == pytest.approx(0.02) and baseline_and_tax.tax(110.0, 100.0) == pytest.approx(-0.1)
    four = results[results["devices"] == 4]
    summary = summarize(results, reference="jbod").set_index(["layout", "devices", "rw"])
    raid = summary.loc[("btrfs-raid0", 4, "read")]
    assert raid["tax"] == baseline_and_tax.tax(raid["best_bw_bytes"], summary.loc[("jbod", 4, "read"), "best_bw_bytes"])
    by_threads = layout_tax.tax_by_threads(four, "jbod")
    assert (by_threads["tax"] == baseline_and_tax.tax(by_threads["bw_bytes"], by_threads["reference_bw_bytes"])).all()
    best = by_threads.loc[by_threads.groupby(["layout", "rw"])["bw_bytes"].idxmax()].set_index(["layout", "rw"])
    assert best.loc[("btrfs-raid0", "read"), "bw_bytes"] == raid["best_bw_bytes"]
    more = pd.DataFrame(_rows("btrfs-raid0", 4, "read", MIB, 4, [750, 770])).assign(rep=[2, 3])  # after rep 1
    repeated = pd.concat([results, more])
    bounds = stats.summary_intervals(repeated, reference="jbod").set_index(["layout", "devices", "rw"])
    row = bounds.loc[("btrfs-raid0", 4, "read")]
    # the interval is the tax test's on the repetitions of both best points: btrfs-raid0 760, 750, 770; jbod 780, 788
    test = significance.tax_test([760e6, 750e6, 770e6], [780e6, 788e6])
    assert (row["tax_lo"], row["tax_hi"], row["tax_p"]) == (test.lo, test.hi, test.p_value)
    assert row["tax_lo"] < row["tax"] == raid["tax"] < row["tax_hi"] and row["tax"] == pytest.approx(test.tax)
