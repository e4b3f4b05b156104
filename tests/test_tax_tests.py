"""One loop tests every tax (``stats.tax_tests``): the summary (``stats.summary_intervals``), the tax at each thread
count (``layout_tax.tax_by_threads``) and the job file's groups (``jobfile.summarize``) give the numbers they gave
before they shared it. The expected values were recorded from the three loops as they were, on one synthetic
table: jbod (the reference), btrfs (a tax on reads, a gain on writes), md (noise on reads, a tax on writes, its
best write point at another numjobs than jbod's) at 2 devices, 2 rw (the job file's groups scan and log), 2 numjobs,
3 repetitions; single at 1 device (no reference there) and lvm with one repetition (nothing to test)."""
from __future__ import annotations

import pandas as pd
import pytest

from flashscale.analysis import findings, jobfile, layout_tax, stats
from flashscale.measure.units import ONE_RUN

MB = 1e6
NAN = float("nan")
LEVELS = {  # (layout, devices, rw, numjobs): the repetitions in MB/s
    ("jbod", 2, "read", 1): [400, 404, 397], ("jbod", 2, "read", 2): [790, 801, 796],
    ("btrfs", 2, "read", 1): [380, 377, 386], ("btrfs", 2, "read", 2): [700, 712, 705],
    ("md", 2, "read", 1): [402, 395, 399], ("md", 2, "read", 2): [798, 785, 793],
    ("jbod", 2, "write", 1): [300, 306, 297], ("jbod", 2, "write", 2): [560, 566, 571],
    ("btrfs", 2, "write", 1): [310, 305, 316], ("btrfs", 2, "write", 2): [600, 590, 596],
    ("md", 2, "write", 1): [250, 252, 249], ("md", 2, "write", 2): [240, 246, 243],
    ("single", 1, "read", 1): [210, 205, 208], ("single", 1, "write", 1): [150, 152, 149],
    ("lvm", 2, "read", 1): [390], ("lvm", 2, "read", 2): [780],
}


def sweep() -> pd.DataFrame:
    rows = [dict(layout=layout, devices=devices, rw=rw, bs=1 << 20, numjobs=numjobs, iodepth=1, rep=rep,
                 warmup=False, bw_bytes=bw * MB)
            for (layout, devices, rw, numjobs), bws in LEVELS.items() for rep, bw in enumerate(bws, start=1)]
    return pd.DataFrame(rows)


def job_file_runs() -> pd.DataFrame:
    rows = sweep()
    return rows.assign(group=rows["rw"].map({"read": "scan", "write": "log"}), workload="jobfile", too_short=False,
                       read_bw_bytes=rows["bw_bytes"].where(rows["rw"] == "read", 0.0),
                       write_bw_bytes=rows["bw_bytes"].where(rows["rw"] == "write", 0.0), phase="workload")


SUMMARY_COLUMNS = ["layout", "rw", "tax_lo", "tax_hi", "tax_p", "tax_verdict", "best_reps", "reference_reps"]
# Welch's test (the default, on Hsu's 2 degrees of freedom where the pooled test has 4): wider than the values
# recorded with the pooled test (SUMMARY_STUDENT), and btrfs's write gain, -7.4% to -3.1% pooled, now reaches
# across the margin's edge (-8.7% to -1.9%): inconclusive. btrfs's read recomputed by hand with scipy: the same.
SUMMARY = [
    ("btrfs", "read", 0.08857097391015911, 0.13700794990612852, 0.0027827557684780777, "tax", 3, 3),
    ("btrfs", "write", -0.08673429565084612, -0.019254405523176477, 0.02057963031978909, "inconclusive", 3, 3),
    ("jbod", "read", 0.0, 0.0, NAN, "reference", 3, 3),
    ("jbod", "write", 0.0, 0.0, NAN, "reference", 3, 3),
    ("lvm", "read", NAN, NAN, NAN, ONE_RUN, 1, 3),
    ("md", "read", -0.022449656989601108, 0.030963564673931576, 0.5354365696473153, "inconclusive", 3, 3),
    ("md", "write", 0.5446305260332642, 0.5699004652764574, 6.623104115803156e-05, "tax", 3, 3),
    ("single", "read", NAN, NAN, NAN, "unknown", 3, 0),
    ("single", "write", NAN, NAN, NAN, "unknown", 3, 0),
]
SUMMARY_STUDENT = [  # the pooled test's, the default before Welch's
    ("btrfs", "read", 0.09735567556105507, 0.12860915152905805, 4.599231788140439e-05, "tax", 3, 3),
    ("btrfs", "write", -0.07444855941954387, -0.030909026555583585, 0.0023608136470938445, "gain", 3, 3),
    ("jbod", "read", 0.0, 0.0, NAN, "reference", 3, 3),
    ("jbod", "write", 0.0, 0.0, NAN, "reference", 3, 3),
    ("lvm", "read", NAN, NAN, NAN, ONE_RUN, 1, 3),
    ("md", "read", -0.012766205193836422, 0.021698230224878046, 0.4993399998191868, "inconclusive", 3, 3),
    ("md", "write", 0.5492182058141423, 0.5655232722206024, 2.6312914607636523e-08, "tax", 3, 3),
    ("single", "read", NAN, NAN, NAN, "unknown", 3, 0),
    ("single", "write", NAN, NAN, NAN, "unknown", 3, 0),
]
# Welch's test at 90%: other bounds where both sides were measured; btrfs's write interval, narrower, now lies
# beyond the 2% margin: a gain where at 95% it reached across the margin's edge.
WELCH_90_BOUNDS = {
    ("btrfs", "read"): (0.09653309054864123, 0.12940253205512742, 0.0027827557684780777),
    ("btrfs", "write"): (-0.0755980964216234, -0.029807250645282224, 0.02057963031978909),
    ("md", "read"): (-0.013673017296756074, 0.02257339989991336, 0.5354365696473153),
    ("md", "write"): (0.5487887089069733, 0.5659368399094031, 6.623104115803156e-05),
}
SUMMARY_WELCH_90 = [(layout, rw, *WELCH_90_BOUNDS[layout, rw], *rest) if (layout, rw) in WELCH_90_BOUNDS else row
                    for row in SUMMARY for layout, rw, _, _, _, *rest in [row]]
SUMMARY_WELCH_90 = [row[:5] + ("gain",) + row[6:] if row[:2] == ("btrfs", "write") else row
                    for row in SUMMARY_WELCH_90]
# Without jbod's write rows every other layout's write has no reference: unknown, with no reference repetitions.
SUMMARY_NO_JBOD_WRITE = [(layout, rw, NAN, NAN, NAN, "unknown", best, 0) if rw == "write" else row
                         for row in SUMMARY for layout, rw, *_, best, _ in [row] if (layout, rw) != ("jbod", "write")]
THREADS_COLUMNS = ["layout", "rw", "numjobs", "tax_verdict", "tax_lo", "tax_hi", "reps"]
THREADS = [
    ("btrfs", "read", 1, "inconclusive", 0.012511973877607274, 0.08281892013443759, 3),
    ("btrfs", "read", 2, "tax", 0.08857097391015911, 0.13700794990612852, 3),
    ("btrfs", "write", 1, "inconclusive", -0.09255114007202403, 0.0271231208731445, 3),
    ("btrfs", "write", 2, "inconclusive", -0.08673429565084612, -0.019254405523176477, 3),
    ("jbod", "read", 1, "reference", 0.0, 0.0, 3),
    ("jbod", "read", 2, "reference", 0.0, 0.0, 3),
    ("jbod", "write", 1, "reference", 0.0, 0.0, 3),
    ("jbod", "write", 2, "reference", 0.0, 0.0, 3),
    ("lvm", "read", 1, ONE_RUN, NAN, NAN, 1),
    ("lvm", "read", 2, ONE_RUN, NAN, NAN, 1),
    ("md", "read", 1, "inconclusive", -0.02707164488262359, 0.03444863688912003, 3),
    ("md", "read", 2, "inconclusive", -0.022449656989601108, 0.030963564673931576, 3),
    ("md", "write", 1, "tax", 0.1337602476410248, 0.201412697313463, 3),
    ("md", "write", 2, "tax", 0.5533125034089174, 0.5868850536763679, 3),
    ("single", "read", 1, "unknown", NAN, NAN, 3),
    ("single", "write", 1, "unknown", NAN, NAN, 3),
]
# Without jbod's write at one job, the other layouts' writes at one job have no reference.
THREADS_NO_JBOD_WRITE_1 = [(layout, rw, n, "unknown", NAN, NAN, reps) if (rw, n) == ("write", 1) else row
                           for row in THREADS for layout, rw, n, *_, reps in [row]
                           if (layout, rw, n) != ("jbod", "write", 1)]
JOBFILE_COLUMNS = ["layout", "group", "tax_lo", "tax_hi", "tax_p", "tax_verdict"]
GROUP_OF = {"read": "scan", "write": "log"}  # job_file_runs' groups


def as_job_file(summary: list[tuple]) -> list[tuple]:
    """A summary's rows as the job file's table states them: by group."""
    return sorted((layout, GROUP_OF[rw], lo, hi, p, verdict) for layout, rw, lo, hi, p, verdict, *_ in summary)


JOBFILE = as_job_file(SUMMARY)
JOBFILE_90 = [
    ("btrfs", "log", -0.0755980964216234, -0.029807250645282224, 0.02057963031978909, "gain"),
    ("btrfs", "scan", 0.09653309054864123, 0.12940253205512742, 0.0027827557684780777, "tax"),
    ("jbod", "log", 0.0, 0.0, NAN, "reference"),
    ("jbod", "scan", 0.0, 0.0, NAN, "reference"),
    ("lvm", "scan", NAN, NAN, NAN, ONE_RUN),
    ("md", "log", 0.5487887089069733, 0.5659368399094031, 6.623104115803156e-05, "tax"),
    ("md", "scan", -0.013673017296756074, 0.02257339989991336, 0.5354365696473153, "inconclusive"),
    ("single", "log", NAN, NAN, NAN, "unknown"),
    ("single", "scan", NAN, NAN, NAN, "unknown"),
]
JOBFILE_NO_JBOD_LOG = as_job_file(SUMMARY_NO_JBOD_WRITE)


# The recorded numbers are scipy's, computed on one machine: another CPU or library gives other last bits (tax_hi
# differed in its last digits on a fresh clone elsewhere), so they are held to 1e-9 of themselves, not bit for bit.
REL = 1e-9


def _same(found: pd.DataFrame, expected: list[tuple], columns: list[str]) -> None:
    """``found``'s ``columns`` hold ``expected`` (numbers within ``REL`` of them, NaN where NaN, words exactly), with
    the dtypes they had."""
    want = pd.DataFrame(expected, columns=columns)
    want = want.astype({c: found[c].dtype for c in columns})
    pd.testing.assert_frame_equal(found[columns].reset_index(drop=True), want, check_exact=False, rtol=REL, atol=0)


@pytest.mark.parametrize("kwargs, expected", [({}, SUMMARY), ({"confidence": 0.9}, SUMMARY_WELCH_90),
                                              ({"tax_method": "student"}, SUMMARY_STUDENT)])
def test_the_summarys_tax_tests_are_the_recorded_ones(kwargs, expected):
    out = stats.summary_intervals(sweep(), reference="jbod", **kwargs)
    _same(out, expected, SUMMARY_COLUMNS)
    assert (out["tax_confidence"] == kwargs.get("confidence", 0.95)).all()
    assert [str(out[c].dtype) for c in ("tax_lo", "tax_hi", "tax_p", "best_reps", "reference_reps")] == \
        ["float64", "float64", "float64", "int64", "int64"]


def test_a_summary_without_the_reference_in_a_group_leaves_that_group_unknown():
    frame = sweep()
    out = stats.summary_intervals(frame[~((frame["layout"] == "jbod") & (frame["rw"] == "write"))], reference="jbod")
    _same(out, SUMMARY_NO_JBOD_WRITE, SUMMARY_COLUMNS)


@pytest.mark.parametrize("drop, expected", [(False, THREADS), (True, THREADS_NO_JBOD_WRITE_1)])
def test_the_tax_at_each_thread_count_is_the_recorded_one(drop, expected):
    frame = sweep()
    gone = (frame["layout"] == "jbod") & (frame["rw"] == "write") & (frame["numjobs"] == 1)
    out = layout_tax.tax_by_threads(frame[~gone] if drop else frame, "jbod")
    _same(out, expected, THREADS_COLUMNS)
    assert [str(out[c].dtype) for c in ("tax_lo", "tax_hi", "reps")] == ["float64", "float64", "int64"]
    assert "tax_p" not in out.columns and "reference_reps" not in out.columns


@pytest.mark.parametrize("drop, confidence, expected", [(False, 0.95, JOBFILE), (False, 0.9, JOBFILE_90),
                                                        (True, 0.95, JOBFILE_NO_JBOD_LOG)])
def test_the_job_files_tax_tests_are_the_recorded_ones(drop, confidence, expected):
    frame = job_file_runs()
    gone = (frame["layout"] == "jbod") & (frame["group"] == "log")
    out = jobfile.summarize(frame[~gone] if drop else frame, reference="jbod", confidence=confidence)
    _same(out, expected, JOBFILE_COLUMNS)
    assert [str(out[c].dtype) for c in ("tax_lo", "tax_hi", "tax_p")] == ["float64"] * 3


def test_the_three_tables_test_the_same_points_alike():
    """btrfs's best read point (numjobs 2) against jbod's: one test, whichever table asks."""
    summary = stats.summary_intervals(sweep(), reference="jbod").set_index(["layout", "rw"]).loc[("btrfs", "read")]
    threads = layout_tax.tax_by_threads(sweep(), "jbod").set_index(["layout", "rw", "numjobs"]).loc[("btrfs", "read", 2)]
    job = jobfile.summarize(job_file_runs(), reference="jbod").set_index(["layout", "group"]).loc[("btrfs", "scan")]
    for bound in ("tax_lo", "tax_hi"):
        assert summary[bound] == pytest.approx(threads[bound], rel=REL)
        assert summary[bound] == pytest.approx(job[bound], rel=REL)
    assert summary["tax_p"] == pytest.approx(job["tax_p"], rel=REL)
    assert summary["tax_verdict"] == threads["tax_verdict"] == job["tax_verdict"]
    # and the reference's own rows alike: 'reference', bounds 0 and 0
    own = [stats.summary_intervals(sweep(), reference="jbod").set_index(["layout", "rw"]).loc[("jbod", "read")],
           layout_tax.tax_by_threads(sweep(), "jbod").set_index(["layout", "rw", "numjobs"]).loc[("jbod", "read", 2)],
           jobfile.summarize(job_file_runs(), reference="jbod").set_index(["layout", "group"]).loc[("jbod", "scan")]]
    assert [r["tax_verdict"] for r in own] == ["reference"] * 3
    assert [(r["tax_lo"], r["tax_hi"]) for r in own] == [pytest.approx((0.0, 0.0), abs=1e-12)] * 3


def test_inputs_are_not_mutated():
    frame, runs = sweep(), job_file_runs()
    before, runs_before = frame.copy(deep=True), runs.copy(deep=True)
    stats.summary_intervals(frame, reference="jbod")
    layout_tax.tax_by_threads(frame, "jbod")
    jobfile.summarize(runs, reference="jbod")
    pd.testing.assert_frame_equal(frame, before)
    pd.testing.assert_frame_equal(runs, runs_before)


def test_a_summary_by_bs_tests_each_bs_on_its_own_repetitions():
    """by="bs": each block size is its own group, so its tax test is the one its rows alone give."""
    small = sweep().assign(bs=4096)
    small = small.assign(bw_bytes=small["bw_bytes"].where(small["layout"] != "md", small["bw_bytes"] * 0.5))
    both = pd.concat([sweep(), small], ignore_index=True)
    by_bs = stats.summary_intervals(both, reference="jbod", by="bs")
    for bs, alone in ((1 << 20, sweep()), (4096, small)):
        expected = stats.summary_intervals(alone, reference="jbod")
        got = by_bs[by_bs["bs"] == bs].reset_index(drop=True)
        pd.testing.assert_frame_equal(got[SUMMARY_COLUMNS], expected[SUMMARY_COLUMNS])


def built_twice(first: list[float], second: list[float]) -> pd.DataFrame:
    """jbod's 4 runs (the tax reference runs to the most), then btrfs built twice (BUILDS=2), each build's runs run
    to a decision of its own (PRECISION: ``reps_reason`` decided, at most 4 runs), in MB/s."""
    rows = [dict(layout="jbod", devices=2, rw="read", bs=1 << 20, numjobs=1, iodepth=1, rep=rep, warmup=False,
                 build=0, bw_bytes=bw * MB, reps_reason="max", reps_most=4)
            for rep, bw in enumerate([400.0, 402.0, 398.0, 401.0])]
    for build, runs in enumerate((first, second)):
        rows += [dict(layout="btrfs", devices=2, rw="read", bs=1 << 20, numjobs=1, iodepth=1, rep=4 * build + rep,
                      warmup=False, build=build, bw_bytes=bw * MB, reps_reason="decided", reps_most=4)
                 for rep, bw in enumerate(runs)]
    return pd.DataFrame(rows)


def test_builds_that_agree_give_their_verdict_and_builds_that_disagree_give_none():
    """A look per build, as the campaign decided each (stats._tax_verdict): two builds each 10% slower than jbod
    are a tax; one 10% slower and one as fast are inconclusive, whatever each build's look said alone. (Each build
    has 3 runs or more: 2 leave Welch's test on Hsu's degrees of freedom 1, too few to decide anything at the first
    look's level; the build as fast has 4, the most, to show equivalence.)"""
    tax, same = [360.0, 361.0, 359.5], [400.5, 399.5, 400.2, 400.0]
    agree = stats.summary_intervals(built_twice(tax, [359.0, 360.5, 361.5]), reference="jbod",
                                    baseline_bs=None).set_index("layout").loc["btrfs"]
    assert (agree["tax_verdict"], agree["tax_test"], agree["best_reps"]) == ("tax", "group-sequential", 6)
    assert 0.02 < agree["tax_lo"] < agree["tax_hi"] < 0.2
    alone = [stats.summary_intervals(built_twice(runs, runs), reference="jbod", baseline_bs=None)
             .set_index("layout").loc["btrfs", "tax_verdict"] for runs in (tax, same)]
    assert alone == ["tax", "equivalent"]  # each build's runs, read alone
    split = stats.summary_intervals(built_twice(tax, same), reference="jbod",
                                    baseline_bs=None).set_index("layout").loc["btrfs"]
    assert split["tax_verdict"] == "inconclusive" and split["tax_test"] == "group-sequential"
    assert split["tax_lo"] < 0.0 < 0.05 < split["tax_hi"]  # the interval spans both builds'


def test_the_tax_the_test_reads_is_named_where_it_shows_apart_from_the_tax_said():
    """tax is 1 - the ratio of the means; the test reads the ratio of the geometric means (its interval's centre),
    ``tax_tested``. A noisy layout whose runs average jbod's (300, 420, 480 MB/s against 399, 400, 401): tax 0.0%,
    tested 1 - 392.3 / 400.0 = 1.9%, and the sentence names it; where the two agree to the tenth (the synthetic
    table's btrfs read) nothing is added."""
    rows = [dict(layout=layout, devices=2, rw="read", bs=1 << 20, numjobs=1, iodepth=1, rep=rep, warmup=False,
                 bw_bytes=bw * MB)
            for layout, bws in (("jbod", [399.0, 400.0, 401.0]), ("btrfs", [300.0, 420.0, 480.0]))
            for rep, bw in enumerate(bws)]
    summary = stats.summary_intervals(pd.DataFrame(rows), reference="jbod", baseline_bs=None)
    btrfs = summary.set_index("layout").loc["btrfs"]
    geometric = (300.0 * 420.0 * 480.0) ** (1 / 3) / (399.0 * 400.0 * 401.0) ** (1 / 3)
    assert btrfs["tax"] == pytest.approx(0.0, abs=1e-12) and btrfs["tax_tested"] == pytest.approx(1 - geometric)
    assert btrfs["tax_lo"] < btrfs["tax_tested"] < btrfs["tax_hi"]
    said = [s for s in findings.conclusions(summary) if s.startswith("btrfs against")]
    assert len(said) == 1
    assert "around a +1.9% tax, the ratio of the runs' geometric means that the test reads" in said[0]
    plain = [s for s in findings.conclusions(stats.summary_intervals(sweep(), reference="jbod")) if "btrfs" in s]
    assert plain and not any("geometric" in s for s in plain)
    assert stats.summary_intervals(sweep(), reference="jbod").set_index(["layout", "rw"]).loc[
        ("jbod", "read"), "tax_tested"] == pytest.approx(0.0, abs=1e-15)
