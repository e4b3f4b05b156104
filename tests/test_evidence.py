"""Issue 10: tax sentences as strong as their verdict, each layout's own ideal, and the runs the analysis must not
count (preconditioning, too short, above the known truth). Tables worked by hand (MB = 1e6 bytes)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from flashscale.analysis import baseline_and_tax, evidence, findings, stats
from flashscale.errors import AnalysisError
from flashscale.measure.units import ONE_RUN

MB = 1e6
MIB = 1048576


def _rows(layout, devices, rw, bws, numjobs=1, bs=MIB, **extra):
    return [dict(layout=layout, devices=devices, rw=rw, bs=bs, numjobs=numjobs, iodepth=1, rep=rep, warmup=False,
                 bw_bytes=bw * MB, **extra) for rep, bw in enumerate(bws, start=1)]


@pytest.fixture
def table() -> pd.DataFrame:
    # baselines: write 100, read 200 MB/s. At 4 devices jbod writes 400 and reads 800 (the references).
    rows = _rows("single", 1, "write", [100, 100.5, 99.5]) + _rows("single", 1, "read", [200, 201, 199])
    rows += _rows("jbod", 4, "write", [400, 401, 399]) + _rows("jbod", 4, "read", [800, 801, 799])
    rows += _rows("btrfs-raid10", 4, "write", [204, 203, 205])  # 51% of 4 x 100: 102% of the mirror's 50%
    rows += _rows("btrfs-raid10", 4, "read", [700, 701, 699])  # reads of a mirror: the full 4 x 200
    rows += _rows("md-raid10", 4, "write", [160, 161, 159])  # 40%: of the 60% shortfall 50 design, 10 overhead
    rows += _rows("btrfs-raid0", 4, "write", [368, 370, 369])  # tax 1 - 369 / 400 = 7.75%, tight: real
    rows += _rows("md-raid0", 4, "write", [380, 420, 400])  # tax 0, spread 5%: inconclusive against a 2% margin
    rows += _rows("lvm-striped", 4, "write", [398.0, 398.1, 397.9])  # a 0.5% tax the test can tell: equivalent
    rows += _rows("lvm", 4, "write", [390])  # one run: no interval
    return pd.DataFrame(rows)


def _said(sentences, start):
    found = [s for s in sentences if s.startswith(start)]
    assert len(found) == 1, (start, sentences)
    return found[0]


def test_each_layout_has_its_own_ideal(table):
    out = baseline_and_tax.summarize(table, reference="jbod").set_index(["layout", "rw"])
    raid10 = out.loc[("btrfs-raid10", "write")]
    assert raid10["efficiency"] == pytest.approx(204 / 400)  # unchanged: against devices x baseline
    assert raid10["ideal_bw_bytes"] == pytest.approx(200 * MB)  # 4 x 100 x 1/2
    assert raid10["layout_efficiency"] == pytest.approx(204 / 200) and raid10["design_tax"] == pytest.approx(0.5)
    read = out.loc[("btrfs-raid10", "read")]
    assert read["ideal_bw_bytes"] == pytest.approx(800 * MB) and read["design_tax"] == pytest.approx(0.0)
    raid0 = out.loc[("btrfs-raid0", "write")]
    assert raid0["layout_efficiency"] == raid0["efficiency"] and raid0["design_tax"] == pytest.approx(0.0)


@pytest.mark.parametrize("layout, rw, share", [
    ("btrfs-raid10", "write", 0.5), ("md-raid1", "randwrite", 0.5), ("md-raid10", "read", 1.0),
    ("btrfs-raid10", "randrw", 2 / 3), ("jbod", "write", 1.0), ("somebody-elses-raid", "write", 1.0),
])
def test_design_share_by_layout_and_direction(layout, rw, share):
    # a 50/50 mix on a mirror: half the bytes cost 1 device-byte, half cost 2: 1.5 per byte, share 2/3
    assert baseline_and_tax.design_share(layout, rw) == pytest.approx(share)


def test_conclusions_split_a_mirror_shortfall_into_design_and_overhead(table):
    said = findings.conclusions(baseline_and_tax.summarize(table, reference="jbod"))
    assert _said(said, "btrfs-raid10 reaches 51%").endswith(
        "for write (204 MB/s of 400 MB/s); a mirror writes every block twice, so its own ideal is 50%: 102% of "
        "that ideal, no overhead beyond the mirror's")
    assert _said(said, "md-raid10 reaches 40%").endswith(
        "its own ideal is 50%: 80% of that ideal, so of the 60% shortfall 50% is the mirror's design and 10% is "
        "overhead")
    assert "mirror" not in _said(said, "btrfs-raid10 reaches 88%")  # reads: no design cost


def test_tax_sentences_follow_the_verdict(table):
    summary = stats.summary_intervals(table, reference="jbod").set_index(["layout", "rw"])
    raid0, md, lvm = (summary.loc[(layout, "write")] for layout in ("btrfs-raid0", "md-raid0", "lvm-striped"))
    assert (raid0["tax_verdict"], md["tax_verdict"], lvm["tax_verdict"]) == ("tax", "inconclusive", "equivalent")
    # within the margin, and no longer "significant": jbod's runs spread 0.25%, lvm's 0.025%, and the pooled test,
    # lending jbod lvm's spread, called the 0.5% difference real (p 0.026, interval +0.10% to +0.90%); Welch's,
    # each side its own spread, does not (p 0.072, -0.11% to +1.11%)
    assert -0.02 < lvm["tax_lo"] < 0 < lvm["tax_hi"] < 0.02 and lvm["tax_p"] > 0.05
    said = findings.conclusions(summary.reset_index())
    assert _said(said, "btrfs-raid0 costs") == (
        f"btrfs-raid0 costs a 7.8% tax against jbod for write at 4 devices "
        f"(95% interval {raid0['tax_lo']:+.1%} to {raid0['tax_hi']:+.1%}, n = 3; beyond the 2% margin)")
    assert raid0["tax_lo"] < 0.0775 < raid0["tax_hi"]
    assert _said(said, "lvm-striped performs as jbod") == (
        f"lvm-striped performs as jbod for write at 4 devices: its tax, {lvm['tax']:+.1%}, is within the 2% "
        f"margin (95% interval {lvm['tax_lo']:+.1%} to {lvm['tax_hi']:+.1%}, n = 3)")
    undecided = _said(said, "md-raid0 against jbod")
    assert undecided.startswith("md-raid0 against jbod for write at 4 devices is undecided: 0.0% tax, but its "
                                "interval reaches across the 2% margin")
    assert undecided.endswith(f"; about {int(md['tax_reps_needed'])} runs a side would decide it")
    assert "costs" not in undecided and md["tax_reps_needed"] > 3
    assert _said(said, "lvm measured") == ("lvm measured 2.5% below jbod for write at 4 devices (1 run of lvm, 3 of jbod; "
                                           "one run: no interval: no verdict against the 2% margin can be given)")


def test_one_run_each_says_so():
    rows = _rows("single", 1, "read", [100]) + _rows("jbod", 2, "read", [200]) + _rows("raid0", 2, "read", [180])
    said = findings.conclusions(stats.summary_intervals(pd.DataFrame(rows), reference="jbod"))
    assert ("raid0 measured 10.0% below jbod for read at 2 devices (one run each; one run: no interval: no verdict "
            "against the 2% margin can be given)") in said
    assert not any("costs" in line for line in said)  # one run names no tax: it cannot tell one from noise


def test_a_real_gain_is_faster_with_its_interval():
    rows = _rows("single", 1, "read", [100, 100]) + _rows("jbod", 2, "read", [200, 201, 199])
    rows += _rows("raid0", 2, "read", [220, 221, 219])
    summary = stats.summary_intervals(pd.DataFrame(rows), reference="jbod")
    raid0 = summary.set_index("layout").loc["raid0"]
    assert raid0["tax_verdict"] == "gain" and raid0["tax_lo"] < -0.10 < raid0["tax_hi"] < 0
    assert _said(findings.conclusions(summary), "raid0 is 10.0% faster than jbod") == (
        f"raid0 is 10.0% faster than jbod for read at 2 devices "
        f"(95% interval {-raid0['tax_hi']:.1%} to {-raid0['tax_lo']:.1%} faster, n = 3; beyond the 2% margin)")


def test_precondition_rows_are_never_analysed(table):
    pre = pd.DataFrame(_rows("jbod", 4, "write", [9999])).assign(rep=9, phase="precondition")
    frame = pd.concat([table.assign(phase="measure"), pre], ignore_index=True)
    assert len(baseline_and_tax.measured(frame)) == len(table)
    jbod = baseline_and_tax.summarize(frame, reference="jbod").set_index(["layout", "rw"]).loc[("jbod", "write")]
    assert jbod["best_bw_bytes"] == pytest.approx(400 * MB)
    assert len(baseline_and_tax.measured(table)) == len(table)  # an older table without phase: every row measured


def test_runs_too_short_are_no_rate(table):
    fast = pd.DataFrame(_rows("single", 1, "write", [5000], numjobs=8)).assign(too_short=True, runtime_s=0.1)
    frame = pd.concat([table.assign(too_short=False, runtime_s=30.0), fast], ignore_index=True)
    assert len(baseline_and_tax.measured(frame)) == len(frame)  # kept as measured runs
    assert len(baseline_and_tax.rates(frame)) == len(table)  # but not rates
    assert baseline_and_tax.baseline(frame).set_index("rw").loc["write", "baseline_bw_bytes"] == pytest.approx(100 * MB)
    assert not ((baseline_and_tax.point_means(frame)["numjobs"] == 8).any())
    assert evidence.too_short_sentences(frame) == [
        "single (1 device(s)) write 1 MiB with 8 job(s) took 0.10 s: too fast to measure at this size; give it more "
        "data (a larger size or a longer runtime)."]
    assert evidence.too_short_sentences(table) == []


def test_a_metadata_run_too_short_names_its_files():
    rows = pd.DataFrame([dict(layout="single", devices=1, rw="filestat", bs=4096, numjobs=4, iodepth=1, rep=r,
                              warmup=False, bw_bytes=1e6, nrfiles=16000, runtime_s=0.1, too_short=True)
                         for r in (1, 2)])
    assert evidence.too_short_sentences(rows) == [
        "filestat of 64,000 files took 0.10 s (2 runs): too fast to measure at this size; give it more files."]


def test_every_run_too_short_is_refused_by_name(table):
    with pytest.raises(AnalysisError, match=r"every one of the 31 measured row\(s\) is flagged too_short"):
        baseline_and_tax.point_means(table.assign(too_short=True))


def test_runs_above_the_truth_are_named_with_their_ratio(table):
    frame = table.assign(truth_bw_bytes=table["devices"] * 100 * MB, above_truth=False)
    frame.loc[(frame["layout"] == "btrfs-raid0"), "above_truth"] = True  # 369 MB/s is not above 400; flags only
    frame.loc[(frame["layout"] == "jbod") & (frame["rw"] == "read") & (frame["rep"] == 2), "above_truth"] = True
    above = baseline_and_tax.truth_check(frame)
    assert len(above) == 4
    jbod = above[above["layout"] == "jbod"].iloc[0]
    assert jbod["truth_ratio"] == pytest.approx(801 / 400)
    said = evidence.truth_sentences(frame)
    assert len(said) == 1 and said[0].startswith("4 run(s) came out above the emulated array's known cap: ")
    assert "jbod (4 device(s)) read 1 MiB with 1 job(s) rep 2: 801 MB/s against 400 MB/s (200%)" in said[0]
    assert said[0].endswith("— a measurement error to investigate, not a result.")
    assert baseline_and_tax.truth_check(table).empty and evidence.truth_sentences(table) == []


def _fit(**change) -> pd.DataFrame:
    row = dict(layout="jbod", devices=4, rw="read", plateau_bw_bytes=800 * MB, knee_numjobs=8.0,
               plateau_reached=True, last_step_gain=0.01, usl_sigma=0.05, usl_kappa=0.001,
               usl_peak_numjobs=31.0, usl_peak_extrapolated=False, fit_note="")
    return pd.DataFrame([{**row, **change}])


@pytest.mark.parametrize("change, words", [
    ({}, "95% of the plateau (800 MB/s) is reached at 8 job(s); the USL fit gives contention sigma = 0.050 and "
         "coherency kappa = 0.0010; the USL puts the peak at 31 jobs."),
    ({"plateau_reached": False, "knee_numjobs": np.nan, "last_step_gain": 0.23},
     "no plateau within the measured range: throughput still rises 23% at the last step;"),
    ({"usl_peak_numjobs": np.inf, "usl_kappa": 0.0}, "(kappa is indistinguishable from 0): no peak is established."),
    ({"usl_peak_numjobs": 90.0, "usl_peak_extrapolated": True},
     "the USL puts the peak at 90 jobs, beyond the largest measured (an extrapolation)."),
])
def test_knee_sentences_claim_only_what_the_fit_supports(change, words):
    said = findings.knee_sentences(_fit(**change))
    assert len(said) == 1 and said[0].startswith("jbod on 4 device(s), read: ") and words in said[0]
    if change.get("plateau_reached") is False:
        assert "95% of the plateau" not in said[0]


def test_inputs_not_mutated(table):
    frame = table.assign(too_short=False, above_truth=False, phase="measure", truth_bw_bytes=np.nan)
    before = frame.copy(deep=True)
    summary = stats.summary_intervals(frame, reference="jbod")
    kept = summary.copy(deep=True)
    findings.conclusions(summary), evidence.too_short_sentences(frame), evidence.truth_sentences(frame)
    pd.testing.assert_frame_equal(frame, before)
    pd.testing.assert_frame_equal(summary, kept)


def test_tax_by_threads_tests_each_thread_count_and_the_sentence_counts_them():
    from flashscale.analysis import layout_tax

    rows = _rows("jbod", 4, "write", [400, 401, 399], numjobs=1) + _rows("jbod", 4, "write", [800, 801, 799], numjobs=4)
    rows += _rows("raid0", 4, "write", [380, 420, 400], numjobs=1)  # tax 0 in 5% noise: inconclusive
    rows += _rows("raid0", 4, "write", [720, 721, 719], numjobs=4)  # a tight 10% tax
    rows += _rows("lvm", 4, "write", [390], numjobs=1) + _rows("lvm", 4, "write", [700], numjobs=4)
    taxes = layout_tax.tax_by_threads(pd.DataFrame(rows), "jbod").set_index(["layout", "numjobs"])
    assert taxes.loc[("raid0", 1), "tax_verdict"] == "inconclusive" and taxes.loc[("raid0", 4), "tax_verdict"] == "tax"
    assert taxes.loc[("jbod", 4), "tax_verdict"] == "reference" and taxes.loc[("lvm", 4), "tax_verdict"] == ONE_RUN
    checks = layout_tax.consistency(taxes.reset_index()).set_index("layout")
    assert (checks.loc["raid0", "taxes_real"], checks.loc["raid0", "taxes_tested"]) == (1, 2)
    won = layout_tax.winners(pd.DataFrame([dict(rw="write", devices=4, layout="jbod", best_bw_bytes=800 * MB)]))
    said = findings.winner_sentences(won, checks.reset_index())
    assert _said(said, "raid0 write:").endswith("(steady); beyond the margin at 1 of the 2 tested.")
    assert _said(said, "lvm write:").endswith("; too few runs to test any against the noise.")


def test_a_truth_check_that_passes_says_every_run_was_within_its_cap(table):
    frame = table.assign(truth_bw_bytes=table["devices"] * 1000 * MB, above_truth=False)
    assert evidence.truth_sentences(frame) == [
        f"Every run within its known cap: all {len(table)} run(s) with a known truth (devices x cap) came out at or "
        "below it, within the throttle's tolerance."]
    uncapped = table.assign(truth_bw_bytes=np.nan, above_truth=False)  # plain directories: no truth to check
    assert evidence.truth_sentences(uncapped) == []


def test_the_precondition_says_what_it_wrote_and_how_long_it_took(table):
    pre = pd.DataFrame(_rows("jbod", 4, "write", [900, 950])).assign(
        phase="precondition", io_bytes=[2**30, 2**30], runtime_s=[1.25, 1.5], round=[1, 2])
    frame = pd.concat([table.assign(phase="measure"), pre], ignore_index=True)
    done = evidence.precondition(frame).set_index("layout")
    assert done.loc["jbod", "io_bytes"] == 2 * 2**30 and done.loc["jbod", "runtime_s"] == pytest.approx(2.75)
    assert evidence.precondition_sentences(frame) == [
        "jbod: the precondition wrote 2 GiB in 2 rounds in 2.75 s before the first point: every byte the points "
        "may read."]
    assert evidence.precondition_sentences(table) == ["No precondition ran before the points."]


def test_an_undecided_tax_no_number_of_runs_would_decide_says_so(table):
    """An estimate on the margin's edge: reps_to_decide finds no n (NaN), and the sentence says why."""
    summary = stats.summary_intervals(table, reference="jbod")
    summary.loc[summary["layout"] == "md-raid0", "tax_reps_needed"] = float("nan")
    said = _said(findings.conclusions(summary), "md-raid0 against jbod")
    assert said.endswith("; more runs at this spread would not decide it: the estimate sits on the margin's edge")
