"""A device's curve indexed by the I/O outstanding on it (``flashscale.analysis.prediction.curve``): interpolated on that axis,
Little's law below its least measured point from the device's own latency. The truth is null_blk's
(``system.nullblk.expected_bw``: min(jobs x iodepth, queue depth) x bs / latency a device, measured in the VM lab
within 0.82-1.02 of it), never a cap of our choosing."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from flashscale.analysis.prediction import curve, predict
from flashscale.system import nullblk

LATENCY = 2_000_000  # ns
DEPTH = 8  # null_blk's tags
BS = 4096


def _rows(points, latency_column: str | None = "lat_mean_ns") -> pd.DataFrame:
    """Single-device rows of a null_blk device at (numjobs, iodepth), two runs each, as fio reports them."""
    rows = []
    for numjobs, iodepth in points:
        bw = nullblk.expected_bw(BS, numjobs, iodepth, LATENCY, DEPTH)
        lat = min(numjobs * iodepth, DEPTH) and numjobs * iodepth * BS * 1e9 / bw  # Little's law on the truth
        for rep in (0, 1):
            rows.append(dict(layout="single", devices=1, rw="randread", bs=BS, numjobs=numjobs, iodepth=iodepth,
                             rep=rep, bw_bytes=bw, **({latency_column: lat} if latency_column else {})))
    return pd.DataFrame(rows)


def test_the_curve_carries_what_is_in_flight_and_the_latency():
    got = curve.curve(_rows([(1, 4), (2, 4), (1, 16)]))
    assert got[["numjobs", "iodepth", "outstanding"]].values.tolist() == [[1, 4, 4], [2, 4, 8], [1, 16, 16]]
    assert got["lat_ns"].tolist() == pytest.approx([LATENCY, LATENCY, 2 * LATENCY])  # 16 in flight on 8 tags


@pytest.mark.parametrize("column", ["lat_mean_ns", "clat_mean_ns"])
def test_below_the_least_measured_point_little_s_law_gives_the_truth(column):
    """Measured at iodepth 4 and 8 only (null_blk's 8 tags: no bend between them): 1, 2 and 3 in flight follow
    from the device's latency at 4 (2 ms), exactly as null_blk delivers them, the point at the interval's lower end;
    the old indexing (by job count, same iodepth) had nothing to say below 4."""
    where, note = curve.at(curve.curve(_rows([(1, 4), (1, 8)], column)), "randread", BS)
    assert note == ""
    for outstanding in (1, 2, 3):
        got = where.rate(outstanding)
        truth = nullblk.expected_bw(BS, 1, outstanding, LATENCY, DEPTH)
        assert got.bw_bytes == pytest.approx(truth, rel=1e-9) and got.bound_lo == pytest.approx(truth, rel=1e-9)
        assert got.bound_hi == pytest.approx(nullblk.expected_bw(BS, 1, 4, LATENCY, DEPTH), rel=1e-9)
        assert not got.exact and "Little's law from its latency there (2 ms)" in got.note
        assert "Little's law itself (its two least measured loads lie on its line)" in got.note
    assert where.latency_s(2) == pytest.approx(LATENCY / 1e9, rel=1e-9)


def test_below_a_bend_the_saturating_curve_is_the_point_and_the_truth_lies_in_the_bounds():
    """Measured at 4 and 16 in flight (saturated at 8 tags between them): the curve X(n) = n / (a + b n) through
    those two gives 4/3, 6/5 and 12/11 of null_blk's rate at 1, 2 and 3 in flight (by hand: 1 / X(4) = 1 / 4u,
    1 / X(16) = 1 / 8u, so a = 2 / 3u, b = 1 / 12u); null_blk's own rate, Little's law, is the lower end."""
    where, _ = curve.at(curve.curve(_rows([(1, 4), (1, 16)])), "randread", BS)
    for outstanding, over in ((1, 4 / 3), (2, 6 / 5), (3, 12 / 11)):
        got = where.rate(outstanding)
        truth = nullblk.expected_bw(BS, 1, outstanding, LATENCY, DEPTH)
        assert got.bw_bytes == pytest.approx(over * truth, rel=1e-9)
        assert got.bound_lo == pytest.approx(truth, rel=1e-9) and got.bound_hi > got.bw_bytes
        assert "the saturating curve through its two least measured loads" in got.note


def test_without_a_latency_column_the_line_through_the_first_point_stands_in():
    where, _ = curve.at(curve.curve(_rows([(1, 4), (1, 8)], None)), "randread", BS)
    got = where.rate(2)
    assert got.bw_bytes == pytest.approx(nullblk.expected_bw(BS, 1, 2, LATENCY, DEPTH), rel=1e-9)
    assert "the line through its rate there" in got.note
    one, _ = curve.at(curve.curve(_rows([(1, 4)], None)), "randread", BS)  # one load: the geometric middle
    assert one.rate(1).bw_bytes == pytest.approx((0.25 * 1.0) ** 0.5 * one.rate(4).bw_bytes, rel=1e-9)
    assert "their geometric middle (one load measured)" in one.rate(1).note


def test_the_axis_is_what_the_device_receives_not_the_job_count():
    """A jbod of 4 null_blk devices, 8 jobs at iodepth 2: each device runs 2 jobs, 4 in flight. The single device
    was measured with one job at iodepths 1, 2, 4, 8 only: the old model looked for 2 jobs at iodepth 2 and, finding
    none, held 1 job (2 in flight); on the outstanding axis the device at 4 in flight is the truth."""
    base = curve.curve(_rows([(1, qd) for qd in (1, 2, 4, 8)]))
    got = predict.predict(base, "jbod", [dict(devices=4, rw="randread", bs=BS, numjobs=8, iodepth=2)]).iloc[0]
    assert got["predicted_bw_bytes"] == pytest.approx(nullblk.expected_bw(BS, 8, 2, LATENCY, DEPTH, devices=4))
    assert got["member_outstanding"] == 4 and got["busy_devices"] == 4
    assert not got["predicted_exact"]  # 2 jobs at iodepth 2 were not measured: 1 job at iodepth 4 stood in


def test_between_measured_counts_linear_and_beyond_them_held():
    where, _ = curve.at(curve.curve(_rows([(1, 2), (1, 8), (1, 32)])), "randread", BS)
    assert where.rate(5).bw_bytes == pytest.approx(5 * BS * 1e9 / LATENCY)  # the truth is linear up to the tags
    held = where.rate(64)
    assert held.bw_bytes == pytest.approx(DEPTH * BS * 1e9 / LATENCY) and "held there" in held.note
    measured = where.rate(8, numjobs=1, iodepth=8)
    assert measured.exact and measured.note == ""
    assert where.rate(0).bw_bytes == pytest.approx(0.0)


def test_where_jobs_and_iodepth_give_the_same_count_the_asked_iodepth_comes_first():
    """2 jobs at iodepth 1 and 1 job at iodepth 2 are both 2 in flight: a loop device's copies spread over two CPUs
    with two jobs; a member asked at iodepth 1 reads the 2-job point, and with no iodepth asked, the better."""
    rows = pd.DataFrame([dict(layout="single", devices=1, rw="read", bs=2**20, numjobs=nj, iodepth=qd, rep=0,
                              bw_bytes=bw) for nj, qd, bw in ((1, 1, 4e9), (2, 1, 7e9), (1, 2, 5e9))])
    where, _ = curve.at(curve.curve(rows), "read", 2**20)
    assert where.rate(2, iodepth=1).bw_bytes == pytest.approx(7e9)
    assert where.rate(2, iodepth=2).bw_bytes == pytest.approx(5e9)
    assert where.rate(2).bw_bytes == pytest.approx(7e9)
    assert np.isnan(where.latency_s(0))
