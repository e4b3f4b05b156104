"""The tax without jbod (issue 42, the recipe `LAYOUTS=[single, md-raid0]`): measured against N x the single device
(`analysis.stand_in`), the campaign's rule letting it through, and every table saying what it was measured against.
The answers are worked by hand on tables of known runs."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from flashscale import cli
from flashscale.analysis import layout_tax, stand_in
from flashscale.analysis.stats import summary_intervals
from flashscale.campaigns.rules import rule_problems

MB = 1e6
MIB = 1048576


def _rows(layout, devices, bws, rw="write", numjobs=1):
    base = dict(layout=layout, devices=devices, rw=rw, bs=MIB, numjobs=numjobs, iodepth=1, warmup=False)
    return [dict(base, rep=i, bw_bytes=bw * MB) for i, bw in enumerate(bws, start=1)]


@pytest.fixture
def without_jbod() -> pd.DataFrame:
    # the single device's best: 100, 102, 98 at 4 jobs (mean 100), below it 60 at 1 job; md-raid0 on 4 devices
    # at 16 jobs: 360, 368, 352 (mean 360): 90% of 4 x 100, a 10% tax against 4 x single
    rows = _rows("single", 1, [60, 61, 59]) + _rows("single", 1, [100, 102, 98], numjobs=4)
    rows += _rows("md-raid0", 4, [300, 310, 290], numjobs=4) + _rows("md-raid0", 4, [360, 368, 352], numjobs=16)
    return pd.DataFrame(rows)


def test_without_jbod_the_tax_is_against_n_times_single_worked_by_hand(without_jbod):
    out = summary_intervals(without_jbod, reference="jbod").set_index("layout")
    assert sorted(out.index) == ["md-raid0", "single"]  # the stand-in is no measured layout: no row of its own
    md = out.loc["md-raid0"]
    assert md["reference"] == "4 x single" and md["reference_bw_bytes"] == pytest.approx(400 * MB, rel=1e-12)
    assert md["tax"] == pytest.approx(1 - 360 / 400, rel=1e-12)
    assert md["tax"] == pytest.approx(1 - md["efficiency"], rel=1e-12)  # against N x single: 1 - efficiency
    # tested on the logs of md's runs against 4 x the single device's: the spreads are 360 +/- 8 and 400 +/- 8
    mine, theirs = np.log([360.0, 368.0, 352.0]), np.log([400.0, 408.0, 392.0])
    d = mine.mean() - theirs.mean()
    wa, wb = mine.var(ddof=1) / 3, theirs.var(ddof=1) / 3  # Welch's: each side its own spread
    se = np.sqrt(wa + wb)
    half = scipy.stats.t.ppf(0.975, 2) * se  # on Hsu's degrees of freedom: 3 runs a side, 2
    assert md["tax_lo"] == pytest.approx(1 - np.exp(d + half), rel=1e-9)
    assert md["tax_hi"] == pytest.approx(1 - np.exp(d - half), rel=1e-9)
    assert md["tax_verdict"] == "tax" and (md["best_reps"], md["reference_reps"]) == (3, 3)
    assert out.loc["single", "tax_verdict"] == "unknown"  # nothing stands in on one device


def test_a_measured_jbod_stays_the_reference(without_jbod):
    jbod = pd.DataFrame(_rows("jbod", 4, [390, 392, 388], numjobs=16))
    out = summary_intervals(pd.concat([without_jbod, jbod], ignore_index=True), reference="jbod").set_index("layout")
    assert set(out["reference"]) == {"jbod"} and out.loc["md-raid0", "tax"] == pytest.approx(1 - 360 / 390, rel=1e-12)


def test_the_stand_in_is_named_by_its_device_counts_and_the_table_is_not_changed(without_jbod):
    before = without_jbod.copy()
    frame, reference = stand_in.resolve(without_jbod, "jbod")
    pd.testing.assert_frame_equal(without_jbod, before)
    assert reference == "4 x single" and len(frame) == len(before) + 6  # the single device's 6 runs, once
    scaled = frame[frame["layout"] == reference]
    assert set(scaled["devices"]) == {4}
    assert sorted(scaled["bw_bytes"]) == pytest.approx(sorted(4 * before.loc[before["layout"] == "single", "bw_bytes"]),
                                                       rel=1e-12)
    two = pd.concat([without_jbod, pd.DataFrame(_rows("btrfs-raid0", 2, [190, 192, 188]))], ignore_index=True)
    assert stand_in.resolve(two, "jbod")[1] == "N x single"
    # another reference, or no single device: unchanged, for the caller to refuse by name as before
    assert stand_in.resolve(without_jbod, "lvm-striped")[1] == "lvm-striped"
    no_single = without_jbod[without_jbod["layout"] != "single"]
    assert stand_in.resolve(no_single, "jbod") == (no_single, "jbod")


def test_the_tax_by_threads_is_against_n_times_single_at_the_same_jobs(without_jbod):
    taxes = layout_tax.tax_by_threads(without_jbod, "jbod").set_index(["layout", "numjobs"])
    assert set(taxes.index.get_level_values("layout")) == {"md-raid0", "single"}
    assert set(taxes["reference"]) == {"4 x single"}
    assert taxes.loc[("md-raid0", 4), "tax"] == pytest.approx(1 - 300 / 400, rel=1e-12)
    assert np.isnan(taxes.loc[("md-raid0", 16), "tax"])  # the single device did not run 16 jobs


@pytest.mark.parametrize("layouts, refused", [
    (["single", "md-raid0"], None),
    (["single", "jbod", "md-raid0"], None),
    (["md-raid0", "lvm-striped"], "or add 'single' (the tax is then measured against N x single)"),
    (["single"], "or add an array beside 'single'"),
])
def test_the_rule_refuses_only_where_neither_jbod_nor_single_and_an_array_are_measured(layouts, refused):
    said = rule_problems({"REFERENCE": "jbod", "LAYOUTS": layouts}, ["LAYOUTS"])
    assert (said == []) if refused is None else (len(said) == 1 and refused in said[0]), said


def test_another_reference_must_still_be_measured():
    said = rule_problems({"REFERENCE": "md-raid0", "LAYOUTS": ["single", "lvm-striped"]}, ["LAYOUTS"])
    assert len(said) == 1 and "REFERENCE='md-raid0' is not among LAYOUTS" in said[0] and "N x single" not in said[0]


def test_analyze_says_what_the_tax_was_measured_against(tmp_path, capsys, without_jbod):
    path = tmp_path / "results.csv"
    without_jbod.to_csv(path, index=False)
    assert cli.main(["analyze", str(path), "--reference", "jbod"]) == 0
    out = capsys.readouterr().out
    assert "tax: against 4 x single (jbod was not measured" in out, out


def test_a_job_file_s_tax_without_jbod_is_against_n_times_single(without_jbod):
    """11_job_file's table (``jobfile.summarize``): each group's best against N x the single device's best of it."""
    from flashscale.analysis import jobfile

    frame = without_jbod.assign(workload="jobfile", group="g0", read_bw_bytes=0.0,
                                write_bw_bytes=without_jbod["bw_bytes"])
    out = jobfile.summarize(frame, reference="jbod").set_index("layout")
    assert sorted(out.index) == ["md-raid0", "single"] and set(out["reference"]) == {"4 x single"}
    assert out.loc["md-raid0", "tax"] == pytest.approx(1 - 360 / 400, rel=1e-12)
    assert out.loc["md-raid0", "tax_verdict"] == "tax"
