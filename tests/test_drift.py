"""The tax reference measured again after the layouts (BRACKET): its drift read, said, and the verdicts it touches
withheld (analysis.drift, stats.tax_tests). The drift rule's rate of withholding at no drift is held to its stated
5% by Monte Carlo on our own function over the runs, spreads and margins a user may choose, and a drift of the
size a warming device or another tenant makes is found."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from flashscale.analysis import drift, evidence, findings, layout_tax, stats
from flashscale.measure import results

MC_DRAWS = 2000
RATE = 400e6


def _rows(layout, devices, rates, phase="measure", start=0, rw="write", build=0):
    return [{"layout": layout, "devices": devices, "rw": rw, "bs": 2**20, "numjobs": 1, "iodepth": 1,
             "rep": start + k, "point": f"{rw}-bs1048576-nj1-qd1", "bw_bytes": r, "runtime_s": 5.0, "phase": phase,
             "status": "ok", "warmup": False, "build": build} for k, r in enumerate(rates)]


def _table(reference, layout, after, rw="write", reference_name="jbod"):
    rows = (_rows(reference_name, 2, reference, rw=rw) + _rows("btrfs-raid0", 2, layout, rw=rw)
            + _rows(reference_name, 2, after, phase="bracket", start=len(reference), rw=rw, build=1))
    return results.to_frame(rows)


@pytest.mark.parametrize("runs, spread, margin", [(2, 0.02, 0.02), (3, 0.02, 0.02), (3, 0.001, 0.005),
                                                  (5, 0.2, 0.02), (10, 0.02, 0.005), (3, 0.0, 0.02),
                                                  (5, 0.05, 0.1)])
def test_a_reference_that_did_not_move_is_withheld_at_most_its_stated_rate(runs, spread, margin):
    rng = np.random.default_rng(runs * 100 + int(spread * 1000) + int(margin * 1000))
    before = np.round(RATE * np.exp(rng.normal(0, spread, (MC_DRAWS, runs))) / 1024) * 1024  # whole KiB/s, as fio
    after = np.round(RATE * np.exp(rng.normal(0, spread, (MC_DRAWS, runs))) / 1024) * 1024
    withheld = np.mean([drift.drift_test(b, a, margin).drifted for b, a in zip(before, after)])
    mc = math.sqrt(0.05 * 0.95 / MC_DRAWS)
    assert withheld <= 0.05 + 3 * mc, withheld


@pytest.mark.parametrize("runs, spread, found_at_least", [(3, 0.003, 0.99), (5, 0.01, 0.95), (10, 0.02, 0.6)])
def test_a_reference_5_percent_slower_after_is_found(runs, spread, found_at_least):
    rng = np.random.default_rng(runs)
    before = RATE * np.exp(rng.normal(0, spread, (MC_DRAWS, runs)))
    after = 0.95 * RATE * np.exp(rng.normal(0, spread, (MC_DRAWS, runs)))
    found = np.mean([drift.drift_test(b, a, 0.02).drifted for b, a in zip(before, after)])
    assert found >= found_at_least, found


def test_within_the_margin_or_one_run_a_side_nothing_is_withheld():
    assert not drift.drift_test([RATE] * 3, [0.99 * RATE] * 3, 0.02).drifted  # certain, but within 2%
    one = drift.drift_test([RATE], [0.5 * RATE], 0.02)
    assert not one.drifted and np.isnan(one.lo) and one.drift == pytest.approx(0.5)
    tied = drift.drift_test([RATE] * 3, [0.95 * RATE] * 3, 0.02)  # ties are bounded by what a rate resolves
    assert tied.drifted and tied.drift == pytest.approx(0.05) and tied.lo < 0.05 < tied.hi


@given(st.lists(st.floats(1e3, 1e12), min_size=1, max_size=8), st.lists(st.floats(1e3, 1e12), min_size=1, max_size=8),
       st.floats(0.0, 0.5))
@settings(max_examples=200, deadline=None)
def test_the_rule_answers_any_runs(before, after, margin):
    d = drift.drift_test(before, after, margin)
    assert isinstance(d.drifted, bool)
    assert not d.drifted or abs(d.drift) > margin


def test_the_verdicts_a_drift_touches_are_withheld_and_said_and_the_others_stand():
    rng = np.random.default_rng(3)
    def runs(level, n=3):
        return list(level * RATE * np.exp(rng.normal(0, 0.002, n)))
    frame = results.to_frame(
        _rows("jbod", 2, runs(1.0)) + _rows("btrfs-raid0", 2, runs(0.95))
        + _rows("jbod", 2, runs(0.975), phase="bracket", start=3, build=1)  # one device of two 5% slower: 2.5%
        + _rows("jbod", 2, runs(1.0), rw="read") + _rows("btrfs-raid0", 2, runs(0.90), rw="read")
        + _rows("jbod", 2, runs(1.0), rw="read", phase="bracket", start=3, build=1))
    summary = stats.summary_intervals(frame, reference="jbod", baseline_bs=2**20, margin=0.02)
    got = summary.set_index(["layout", "rw"])
    assert got.loc[("btrfs-raid0", "write"), "tax_verdict"] == drift.WITHHELD
    assert got.loc[("btrfs-raid0", "write"), "reference_drift"] == pytest.approx(0.025, abs=0.005)
    assert np.isnan(got.loc[("btrfs-raid0", "write"), "tax_claim_p_tax"])
    assert pd_isna(got.loc[("btrfs-raid0", "write"), "tax_held"])  # no claim: not in the family
    assert got.loc[("btrfs-raid0", "read"), "tax_verdict"] == "tax"  # the reference held: the verdict stands
    assert abs(got.loc[("btrfs-raid0", "read"), "reference_drift"]) < 0.01
    said = evidence.measurement_sentences(frame, 0.02)
    moved = [line for line in said if "drifted" in line]
    assert len(moved) == 1 and re.search(r"read 2\.[0-9]% slower at write", moved[0]) and "withheld" in moved[0]
    assert not [line for line in said if "built 2 times" in line]  # the bracket is a build, not a replicate
    told = findings.conclusions(summary)
    assert any("no verdict (withheld)" in line and re.search(r"read 2\.[0-9]% slower", line) for line in told), told
    by_threads = layout_tax.tax_by_threads(frame, "jbod", margin=0.02).set_index(["layout", "rw"])
    assert by_threads.loc[("btrfs-raid0", "write"), "tax_verdict"] == drift.WITHHELD
    assert by_threads.loc[("btrfs-raid0", "read"), "tax_verdict"] == "tax"


def test_against_n_x_single_the_single_device_s_bracket_is_the_reference_s():
    rng = np.random.default_rng(5)
    rows = (_rows("single", 1, list(RATE / 2 * np.exp(rng.normal(0, 0.002, 3))))
            + _rows("btrfs-raid0", 2, list(0.97 * RATE * np.exp(rng.normal(0, 0.002, 3))))
            + _rows("single", 1, list(0.9 * RATE / 2 * np.exp(rng.normal(0, 0.002, 3))), phase="bracket",
                    start=3, build=1))
    summary = stats.summary_intervals(results.to_frame(rows), reference="jbod", baseline_bs=2**20, margin=0.02)
    row = summary[summary["layout"] == "btrfs-raid0"].iloc[0]
    assert row["reference"] == "2 x single" and row["tax_verdict"] == drift.WITHHELD
    assert row["reference_drift"] == pytest.approx(0.1, abs=0.01)
    said = drift.sentences(results.to_frame(rows), "single", 0.02)
    assert len(said) == 1 and "single drifted" in said[0] and re.search(r"read (9\.[5-9]|10\.[0-4])% slower", said[0])


def test_no_bracket_no_drift_column_values_and_a_steady_bracket_says_so():
    rng = np.random.default_rng(9)
    plain = results.to_frame(_rows("jbod", 2, [RATE] * 3) + _rows("btrfs-raid0", 2, [0.9 * RATE] * 3))
    summary = stats.summary_intervals(plain, reference="jbod", baseline_bs=2**20)
    assert summary["reference_drift"].isna().all() and drift.sentences(plain, "jbod") == []
    assert not [line for line in evidence.measurement_sentences(plain) if "BRACKET" in line]
    steady = _table(list(RATE * np.exp(rng.normal(0, 0.002, 3))), [0.9 * RATE] * 3,
                    list(RATE * np.exp(rng.normal(0, 0.002, 3))))
    said = drift.sentences(steady, "jbod", 0.02)
    assert len(said) == 1 and "did not drift beyond the 2.0% margin" in said[0] and "no verdict withheld" in said[0]
    assert stats.summary_intervals(steady, reference="jbod", baseline_bs=2**20).set_index("layout").loc[
        "btrfs-raid0", "tax_verdict"] == "tax"


def test_bracket_rows_are_never_read_as_the_reference_s_runs():
    frame = _table([RATE] * 3, [0.9 * RATE] * 3, [0.5 * RATE] * 3)
    summary = stats.summary_intervals(frame, reference="jbod", baseline_bs=2**20).set_index("layout")
    assert summary.loc["jbod", "best_bw_bytes"] == pytest.approx(RATE) and summary.loc["jbod", "best_reps"] == 3


def pd_isna(value) -> bool:
    import pandas as pd
    return bool(pd.isna(value))


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_bracket_must_be_true_or_false_and_a_cluster_refuses_it(bad):
    from flashscale.errors import ConfigError
    from flashscale.measure.sweep import Sweep
    with pytest.raises(ConfigError, match="bracket="):
        Sweep(bracket=bad)
    from flashscale.campaigns.cluster import ClusterSpec
    with pytest.raises(ConfigError, match=r"a cluster campaign refuses bracket=True: .*no reference is swept again"):
        ClusterSpec("c", sweep=Sweep(bracket=True))


def test_the_bracket_s_runs_are_numbered_after_every_build_s():
    from flashscale.measure.sweep import Sweep
    sweep = Sweep(repetitions=3, builds=2, bracket=True)
    assert sweep.bracket_build() == 2 and sweep.reps(sweep.bracket_build()) == [(6, False), (7, False), (8, False)]
    precise = Sweep(precision=0.02, max_repetitions=5, bracket=True)  # the reference runs to its most: 0-4, then 5-
    assert precise.reps(precise.bracket_build())[0] == (5, False)


def test_bench_stats_drift_procedure_counts_its_withheld_points():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import bench_stats
    found = bench_stats.run(("drift", {"n": 3, "m": 3, "spread": 0.002, "margin": 0.02}, 200, 1))
    assert found["drift"] <= 0.05 + 3 * bench_stats.error(0.05, 200) and found["found"] > 0.95
    assert bench_stats.held(found, 200)[0][0] == "drift"
