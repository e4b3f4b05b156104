"""make bench-cost (benchmarks/bench_cost.py, bench_cost_score.py): its accounting on real capped loop devices
(device time is the runs x (runtime + ramp); each run measured under the cap the bench drew and set before it; the
coverage scored against the truth of the caps it set), and its scoring and store on rows made by hand."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_cost  # noqa: E402
import bench_cost_score as scoring  # noqa: E402

SPREAD = 0.05  # the caps' log sd run to run: ten times the throttle's own run-to-run spread at 1 s runs


@pytest.mark.root
def test_the_accounting_on_capped_loop_devices_two_campaigns_of_1_s_runs(tmp_path):
    with bench_cost.emulated_source(tmp_path / "raw") as (source, fit):
        rows = bench_cost.measure(source, {"varying": SPREAD}, campaigns=2, runtime_s=1, ramp_s=0, most=4,
                                  say=lambda *_: None)
    frame = pd.DataFrame(rows)
    assert not fit.adjusted and fit.cap * 5 <= 0.5 * fit.ceiling  # the caps asked at most half the harness's ceiling
    for m, mode in enumerate(("fixed", "precise")):  # the caps in each row are the seeded draws, in the order run
        rng, got = np.random.default_rng([0, 0, m]), frame[frame["mode"] == mode]
        for row in got.itertuples():
            level = dict((q, lv) for q, _, lv in bench_cost.QUESTIONS)[row.question]
            assert row.caps_set == bench_cost.draw(rng, SPREAD, level, len(row.caps_set))
    # each run measured what the caps set before it allow: the rate follows the draw (log sd 5%) to within the
    # throttle's first slice at 1 s runs (measured +2.4% to +3.0% on 20 runs, steady to 0.2%)
    ratio = np.log(frame["bw_bytes"] / frame["caps_set"].map(sum))
    assert ratio.between(np.log(0.98), np.log(1.12)).all()
    assert ratio.std() < 0.3 * np.log(frame["caps_set"].map(sum) / frame["truth_bps"]).std()
    assert set(frame[frame["mode"] == "fixed"]["reps_reason"]) == {"fixed"}
    assert len(frame[frame["mode"] == "fixed"]) == 2 * 3 * 3
    table = scoring.score(frame).set_index("mode")
    for mode, got in frame.groupby("mode"):  # device time: every run x (runtime + ramp), a campaign's mean
        assert table.loc[mode, "device_s"] == pytest.approx(len(got) * (1 + 0) / 2, rel=1e-12)
        covered = [lo <= truth <= hi for lo, hi, truth in by_hand(got)]
        assert table.loc[mode, "baseline_covered"] == pytest.approx(np.mean(covered), abs=1e-12)


def by_hand(runs: pd.DataFrame):
    """Each campaign's single-device interval (the log-scale t interval of the mean, written out) and the truth:
    the cap the bench set on the device, at its mean."""
    from scipy import stats as sps
    for _, got in runs[runs["question"] == "single"].groupby("campaign"):
        bw = got["bw_bytes"].to_numpy(float)
        half = sps.t.ppf(0.975, bw.size - 1) * bw.std(ddof=1) / bw.mean() / np.sqrt(bw.size)
        yield bw.mean() * np.exp(-half), bw.mean() * np.exp(half), bench_cost.CAP


def rows_of(campaign: int, single, jbod, btrfs, mode="fixed", most=0) -> list[dict]:
    made = []
    for question, values, truth in (("single", single, 1e8), ("jbod", jbod, 2e8), ("btrfs-raid0", btrfs, 1.84e8)):
        made += [{"scenario": "s", "mode": mode, "campaign": campaign, "question": question, "rep": k,
                  "bw_bytes": v, "truth_bps": truth, "run_s": 3, "runtime_s": 2.0, "most": most}
                 for k, v in enumerate(values)]
    return made


def test_a_campaign_is_scored_against_its_truths_and_a_stored_run_rescores_the_same(tmp_path):
    hit = rows_of(0, [0.99e8, 1.0e8, 1.01e8], [1.98e8, 2.0e8, 2.02e8], [1.83e8, 1.84e8, 1.85e8])
    miss = rows_of(1, [1.05e8, 1.051e8, 1.052e8], [2.1e8, 2.1e8, 2.101e8], [2.1e8, 2.1e8, 2.101e8])
    table = scoring.score(pd.DataFrame(hit + miss)).iloc[0]
    assert table["campaigns"] == 2 and table["device_s"] == pytest.approx(27.0, rel=1e-12)
    assert table["baseline_covered"] == pytest.approx(0.5, abs=1e-12)  # the second is 5% above its truth
    assert table["tax_covered"] == pytest.approx(0.5, abs=1e-12)  # its tax is 0, the truth 8%
    assert table["right"] == pytest.approx(0.5, abs=1e-12)  # equivalent where the truth is a tax
    scoring.store(tmp_path / "run", hit + miss, {"campaigns": 2})
    again = scoring.score(scoring.load(tmp_path / "run"))
    assert scoring.markdown(again) == scoring.markdown(scoring.score(pd.DataFrame(hit + miss)))


def test_the_precise_mode_takes_the_sequential_tests_verdict():
    runs = pd.DataFrame(rows_of(0, [0.99e8, 1.01e8], [1.99e8, 2.01e8], [1.83e8, 1.85e8], mode="precise", most=10))
    said = scoring.score_campaign(runs)
    assert said["verdict"] == scoring.verdict(np.array([1.83e8, 1.85e8]), np.array([1.99e8, 2.01e8]), 10)
    assert said["runs"] == 6 and said["device_s"] == pytest.approx(18.0, rel=1e-12)


def test_the_kept_run_rescores_to_the_table_docs_validation_shows():
    kept = ROOT / "benchmarks" / "results" / "cost" / "20261207T1654Z"
    table = scoring.markdown(scoring.score(scoring.load(kept)))
    assert table in (ROOT / "docs" / "validation.md").read_text()


def test_the_precise_campaign_samples_jbod_as_the_tax_decision_needs_it():
    """Simulated runs (the sum of the caps drawn), caps varying 1% run to run: jbod, the tax reference, runs until
    precise and then as btrfs-raid0's looks need it, the two interleaved, each run's caps the seeded draw in the
    order run; jbod ends with the look's runs, not the most, and the verdict scored is that look's."""
    rows = pd.DataFrame(bench_cost.measure(bench_cost.Simulated(), {"varying": 0.01}, campaigns=3, runtime_s=2,
                                           ramp_s=1, say=lambda *_: None))
    rng = np.random.default_rng([0, 0, 1])
    precise = rows[rows["mode"] == "precise"]
    for row in precise.itertuples():  # the order run is the order kept
        level = dict((q, lv) for q, _, lv in bench_cost.QUESTIONS)[row.question]
        assert row.caps_set == bench_cost.draw(rng, 0.01, level, len(row.caps_set))
    for _, got in precise.groupby("campaign"):
        jbod, btrfs = (got[got["question"] == q]["bw_bytes"].to_numpy(float) for q in ("jbod", "btrfs-raid0"))
        look = scoring.significance.sequential_tax(btrfs, jbod, bench_cost.MOST, scoring.MARGIN, reference_grows=True)
        assert look.decided and look.look == min(len(jbod), len(btrfs)) and len(jbod) < bench_cost.MOST
        assert got.groupby("question")["reps_reason"].last().to_dict() == {
            "single": "precise", "jbod": "reference", "btrfs-raid0": "decided"}
        assert scoring.score_campaign(got)["verdict"] == look.verdict == "tax"
        order = got["question"].tolist()
        assert order.index("btrfs-raid0") < len(order) - 1 - order[::-1].index("jbod")  # jbod ran after btrfs began
