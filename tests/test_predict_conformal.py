"""Predictions that can miss (issue 50, item 6): the table's own two-ended interval (``conformal``) keeps its stated
90% on new points, misses where it should, never stands on zero noise, and what it gives on the seeds' tables.

Monte Carlo, on our own functions end to end (``predict.predict_results``, ``predict.score``,
``conformal.two_ended``): TABLES = 20 simulated tables of a known device curve X(k) = 2 GB/s x k / (1 + k / 2),
lognormal run noise of 2%, 1 to 5 runs a point (drawn per point), the single device at 1, 2 and 4 jobs, jbod on 2,
4 and 8 devices, md-raid0 on 4 and lvm-striped on 8, at 1, 2 and 3 jobs a device, read and write (30 points); jbod's
truth N x X(j) x a tax of exp(N(0, 2%)), the stripes' N x X(j) x exp(-|N(0, 10%)|) (a layer only costs; the model,
which sees no layer, errs by up to 60%). No prediction uses another point's measurement (split conformal's
condition). Each table is split at random SPLITS = 10 times into 20 points that calibrate and 10 new ones, each new
one held to the interval the 20 give. Stated: at least 90%. Measured (seed 1): 91.6% of 2,000 new points inside
(conformal's exact rate for 20 calibrating points is 19/21 = 90.5%, more where the noise floor widens an interval),
a table's share 82% to 100%, so a point can miss. Per layout (``residuals``: jbod from its own points, the stripes
scaled by theirs): jbod 91.7%, md-raid0 91.2%, lvm-striped 91.7%. Pooled and unclipped, as before layouts were told
apart, the same 20 tables gave 91.1%: jbod 100% (median log width 1.51, against 0.12 now), md-raid0 78.5%,
lvm-striped 76.9% (the layers' cost is the pooled errors' whole tail; measured once with ``residuals``' first two
tiers and the clip switched off, not a test). The clip to the
model's closed end: refused at 38.1% of the new points (a jbod may beat its devices, so "at most" breaks on the
table), taken at 14.1%; where a jbod never beats them, taken at 26.9%, 92.0% inside (10 tables).

Without the model (``conformal_half`` alone, DRAWS = 4,000 draws of 12 errors, seed 000's count: 11 calibrate, one
new): stated 90%, measured 90.9% for half-normal errors, 92.0% for a skewed mix of 30% exponential among 70%
small ones (conformal's exact rate is 11/12 = 91.7%, whatever the distribution).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from flashscale.analysis.prediction import conformal, predict, residuals, scoring
from flashscale.errors import ConfigError

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference"
MiB = 2**20
TABLES, SPLITS, CALIBRATING = 20, 10, 20  # of 30 points: 10 new
DRAWS = 4000


def device(jobs: float) -> float:
    return 2e9 * jobs / (1 + jobs / 2)


LAYOUTS = {"jbod": (2, 4, 8), "md-raid0": (4,), "lvm-striped": (8,)}  # no layer on two counts: no own calibration


def simulated(rng: np.random.Generator, jbod_gains: bool = True) -> pd.DataFrame:
    """A table whose truth is known (module doc). No prediction uses another point's measurement: each layer on one
    count (nothing to calibrate from), each device below the single device's largest load (no reference).
    ``jbod_gains``: a jbod's tax may be a gain (exp(N(0, 2%))) or never is (exp(-|N(0, 2%)|): the model's "at most"
    then holds but for the runs' noise)."""
    rows = []
    for rw in ("read", "write"):
        for jobs in (1, 2, 4):
            rows += [dict(layout="single", devices=1, rw=rw, bs=4 * MiB, numjobs=jobs, iodepth=1, rep=r,
                          bw_bytes=device(jobs) * rng.lognormal(0, 0.02)) for r in range(rng.integers(1, 6))]
        for layout, counts in LAYOUTS.items():
            for count in counts:
                for jobs in (1, 2, 3):
                    gain = rng.normal(0, 0.02) if jbod_gains else -abs(rng.normal(0, 0.02))
                    tax = math.exp(gain if layout == "jbod" else -abs(rng.normal(0, 0.1)))
                    rows += [dict(layout=layout, devices=count, rw=rw, bs=4 * MiB, numjobs=count * jobs, iodepth=1,
                                  rep=r, bw_bytes=count * device(jobs) * tax * rng.lognormal(0, 0.02))
                             for r in range(rng.integers(1, 6))]
    return pd.DataFrame(rows).assign(chunk_bytes=64 * 1024)


def held_out(tables: int, jbod_gains: bool) -> pd.DataFrame:
    """Every new point of every split of ``tables`` simulated tables: its layout, its table, whether it lay inside,
    its interval's log width, its tier and whether it was clipped (or refused)."""
    rng = np.random.default_rng(1)
    out = []
    for table in range(tables):
        frame = simulated(rng, jbod_gains)
        scored = predict.score(predict.predict_results(frame), frame)
        for _ in range(SPLITS):
            calibrating = pd.Series(False, index=scored.index)
            calibrating[rng.choice(scored.index, CALIBRATING, replace=False)] = True
            held = conformal.two_ended(scored, frame, calibration=calibrating)[~calibrating]
            out.append(held[["layout", "scored_inside", "scored_from", "scored_tier", "scored_clipped",
                             "scored_unclipped"]].assign(
                table=table, width=np.log(held["scored_hi_bw_bytes"] / held["scored_lo_bw_bytes"])))
    return pd.concat(out, ignore_index=True)


@pytest.fixture(scope="module")
def new_points() -> pd.DataFrame:
    return held_out(TABLES, jbod_gains=True)


def test_the_table_s_interval_holds_a_new_point_at_least_90_percent_of_the_time(new_points):
    """Measured 91.6% of 2,000 (module doc); conformal promises >= 90%. The bound allows 3 standard errors of the
    20 tables' spread (1.0 point)."""
    assert (new_points["scored_from"] == conformal.TABLE).all()  # the model leaves an end of each of these open
    per_table = new_points.groupby("table")["scored_inside"].mean()
    share, se = per_table.mean(), per_table.std(ddof=1) / math.sqrt(TABLES)
    assert share >= 0.90 - 3 * se and share == pytest.approx(0.916, abs=0.001), share
    assert share < 0.97  # not inside by construction: it can miss
    assert per_table.min() < 1.0  # and in a table it does


def test_each_layout_keeps_near_the_level_not_only_the_layouts_together(new_points):
    """Per layout (module doc): jbod from its own points alone (about 12 calibrating), the stripes (about 4 each)
    scaled by their own errors; each within 3 standard errors of 90% (1.5 points at 400 new points) and none at
    100% (pooled, the three read 100%, 78.5% and 76.9%). The jbod's interval is narrow (median log width 0.12: about
    +/-6%), the stripes' as wide as their layers' cost (about 2.0: their log errors reach -0.8, -55%)."""
    by_layout = new_points.groupby("layout").agg(inside=("scored_inside", "mean"), n=("scored_inside", "size"),
                                                 width=("width", "median"))
    assert by_layout["inside"].to_dict() == pytest.approx(
        {"jbod": 0.917, "lvm-striped": 0.917, "md-raid0": 0.912}, abs=0.001)
    for layout, row in by_layout.iterrows():
        assert 0.90 - 3 * math.sqrt(0.09 / row["n"]) <= row["inside"] < 0.97, layout
    assert by_layout.loc["jbod", "width"] < 0.15 < 1.5 < by_layout.loc["md-raid0", "width"]
    tiers = new_points.groupby("layout")["scored_tier"].agg(lambda t: t.value_counts().idxmax())
    assert tiers.to_dict() == {"jbod": residuals.OWN, "lvm-striped": residuals.SCALED, "md-raid0": residuals.SCALED}


def test_the_clip_keeps_the_level_and_is_refused_where_the_model_s_closed_end_broke(new_points):
    """Where a jbod may beat its devices by 2% the model's "at most" breaks: the clip is refused at 38.1% of the new
    points (59.7% of jbod's) and taken at 14.1%; where a jbod never beats them (10 tables, 1,000 new points), it is
    taken at 26.9% and refused at 11.7% (the runs' noise alone can pass a closed end), and the level holds: 92.0%."""
    assert new_points["scored_clipped"].mean() == pytest.approx(0.1405, abs=1e-4)
    assert new_points["scored_unclipped"].mean() == pytest.approx(0.3805, abs=1e-4)
    honest = held_out(10, jbod_gains=False)
    per_table = honest.groupby("table")["scored_inside"].mean()
    assert per_table.mean() == pytest.approx(0.920, abs=0.001)
    assert per_table.mean() >= 0.90 - 3 * per_table.std(ddof=1) / math.sqrt(10)
    assert honest["scored_clipped"].mean() == pytest.approx(0.269, abs=1e-3)
    assert honest["scored_unclipped"].mean() == pytest.approx(0.117, abs=1e-3)


@pytest.mark.parametrize("draw, measured", [
    (lambda rng, n: np.abs(rng.normal(0, 0.05, n)), 0.909),
    (lambda rng, n: np.where(rng.random(n) < 0.3, rng.exponential(0.2, n), np.abs(rng.normal(0, 0.01, n))), 0.920)])
def test_conformal_half_keeps_its_level_whatever_the_errors_distribution(draw, measured):
    """Seed 000's count: 11 points calibrate the 12th. Exact rate 11/12 = 91.7%; 4,000 draws, se 0.4 points."""
    rng = np.random.default_rng(3)
    inside = 0
    for _ in range(DRAWS):
        errors = draw(rng, 12)
        inside += errors[-1] <= conformal.conformal_half(errors[:-1], 0.9)
    assert inside / DRAWS == pytest.approx(measured, abs=0.001)
    assert inside / DRAWS >= 0.9 - 3 * math.sqrt(0.09 / DRAWS)


def test_too_few_other_points_leave_the_interval_open():
    assert conformal.least_others(0.9) == 9 and conformal.least_others(0.95) == 19
    assert math.isnan(conformal.conformal_half([0.1] * 8, 0.9))
    assert conformal.conformal_half([0.1] * 8 + [0.3], 0.9) == pytest.approx(0.3)  # the largest of 9
    assert conformal.conformal_half([0.1] * 18 + [0.3], 0.9) == pytest.approx(0.1)  # the 18th of 19


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=40),
       st.floats(min_value=0.01, max_value=0.99))
def test_conformal_half_on_any_floats_is_one_of_them_or_nan(scores, level):
    """NaN left out; an infinite score (past its model's closed end) is kept: it may be the quantile."""
    got = conformal.conformal_half(scores, level)
    assert math.isnan(got) or got in [s for s in scores if not math.isnan(s)]


@pytest.mark.parametrize("level", [0, 1, 1.5, -0.1, True, "0.9", None])
def test_a_bad_level_is_refused_naming_it(level):
    with pytest.raises(ConfigError, match=repr(level).replace("(", r"\(").replace(".", r"\.")):
        conformal.check_level(level)


def test_the_run_noise_is_never_zero_and_says_where_it_came_from():
    """A one-run table takes the house's 2% (said); repeated points pool their log variance; runs that tie read at
    the least spread the measurement resolves (``significance.log_sd_floor``), not nothing."""
    one = pd.DataFrame(dict(layout="single", devices=1, rw="read", bs=MiB, numjobs=[1, 2], iodepth=1,
                            bw_bytes=[1e9, 2e9]))
    sd, df, said = conformal.run_noise(one)
    assert sd == pytest.approx(0.02) and conformal.DEFAULT_NOISE == pytest.approx(0.02)
    assert df == math.inf and "no point run twice" in said
    twice = pd.concat([one, one.assign(bw_bytes=one["bw_bytes"] * np.exp([0.02, -0.04]))], ignore_index=True)
    sd, df, said = conformal.run_noise(twice)
    assert sd == pytest.approx(math.sqrt((0.02**2 / 2 + 0.04**2 / 2) / 2)) and df == 2 and "pooled over 2" in said
    tied = pd.concat([one, one], ignore_index=True)
    scored = one[conformal.POINT].assign(
        predicted_bw_bytes=one["bw_bytes"], measured_bw_bytes=one["bw_bytes"], measured_reps=2)
    got = conformal.two_ended(scored, tied)
    assert (got["run_noise_half"] > 0).all() and (got["run_noise_from"] == "its own 2 runs").all()


def test_on_its_own_points_a_table_misses_only_its_largest_errors():
    """Leave-one-out on the table: a point misses exactly where its error is among the n - k largest (k = ceil(0.9
    x n)): the share inside is the construction's, at least k / n, and the misses are named."""
    errors = np.array([0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.10, 0.30, 0.50])
    scored = pd.DataFrame(dict(layout=[f"l{i}" for i in range(12)], devices=4, rw="read", bs=MiB, numjobs=4,
                               iodepth=1, predicted_bw_bytes=1e9, measured_bw_bytes=1e9 * np.exp(-errors),
                               measured_reps=1))
    frame = scored.rename(columns={"measured_bw_bytes": "bw_bytes"})
    got = conformal.two_ended(scored, frame)
    assert got["scored_inside"].tolist() == [True] * 11 + [False]  # k = 11 of 12
    assert got["scored_hi_bw_bytes"].iloc[0] == pytest.approx(1e9 * math.exp(0.50))  # the largest of the others


def seed_003() -> pd.DataFrame:
    """Seed 003's BeeGFS predicted from its drives' figures behind its links, as ``make bench-predict`` does."""
    system = pd.read_csv(REFERENCE / "seed003_system.csv").set_index("parameter")["value"].to_dict()
    drives = int(pd.read_csv(REFERENCE / "seed003_drives.csv").set_index("quantity")["value"]["drives"])
    figures = predict.figures({"read": system["device_read_bw_bytes"], "write": system["device_write_bw_bytes"]})
    table = pd.read_csv(REFERENCE / "seed003_results.csv").assign(bs=MiB, iodepth=1, devices=drives)
    said = predict.predict(figures, "beegfs", table[["devices", "rw", "bs", "numjobs", "iodepth"]],
                           predict.Ceilings.from_mapping(system))
    return predict.score(said, table.assign(rep=0, bw_bytes=table["best_bw_bytes"]))


def test_the_seeds_tables_record_the_done_when_numbers():
    """Issue 50's "done when" on the seeds. Seed 000 (12 points, one run each): 12 of 12 with two ends (the table's
    at 90%: the model leaves every one open), median |error| 4.4%, 11 of 12 inside (92%; gpfs-1m write, -22.0%,
    misses: the table's largest error); each layout has one other point, too few for a scale: all 12 pooled, none
    clipped (no closed end). Seed 003 (2 points): 0 of 2 with two ends: one other point is too few for the table's
    interval (9 needed), and the model's lower end is open for what only a run measures (BeeGFS's own cost, the
    host's shared paths), so nothing closes it honestly and its done-when is not met; the headline names the two
    runs that would; median |error| 7.3% (read -3.2%, write -11.3%), both under the model's closed "at most 136.4
    GB/s" (the 11 links)."""
    frame = pd.read_csv(REFERENCE / "seed000_results.csv")
    zero = predict.score(predict.predict_results(frame), frame)
    assert zero["scored_inside"].notna().all() and len(zero) == 12
    assert zero["error"].abs().median() == pytest.approx(0.0441, abs=5e-4)
    assert zero["scored_inside"].mean() == pytest.approx(11 / 12)
    assert zero.loc[~zero["scored_inside"].astype(bool), ["layout", "rw"]].values.tolist() == [["gpfs-1m", "write"]]
    assert (zero["scored_tier"] == residuals.POOLED).all() and not zero["scored_clipped"].any()
    three = seed_003()
    assert three["scored_inside"].isna().all() and (three["scored_from"] == "").all()
    assert three["predicted_hi_bw_bytes"].tolist() == pytest.approx([136.4e9] * 2)
    assert three["predicted_lo_bw_bytes"].isna().all()
    assert scoring.interval_sentences(three)[1:] == [
        "beegfs on 2 devices would measure its layer's cost and close the lower end of its 2 point(s) on 132 devices "
        "(the layer's CPU cost)",
        "a jbod on 132 devices, each device at the single device's largest measured load or beyond, would close the "
        "lower end of 2 point(s) (beegfs; the host's shared paths)"]
    assert three["error"].abs().median() == pytest.approx(0.073, abs=1e-3)


def test_a_closed_model_interval_is_scored_widened_by_the_measurement_s_noise_and_the_headline_names_each_share():
    """Three points: the model's interval closed (scored by it, widened by the point's own runs' noise), and two
    the model left open, with too few other points for the table's interval: left open, said."""
    scored = pd.DataFrame(dict(layout=["a", "b", "c"], devices=2, rw="read", bs=MiB, numjobs=2, iodepth=1,
                               predicted_bw_bytes=1e9, predicted_lo_bw_bytes=[0.9e9, np.nan, np.nan],
                               predicted_hi_bw_bytes=[1.1e9, 1.1e9, np.nan], measured_bw_bytes=[1.12e9, 0.5e9, 1e9],
                               measured_reps=1, error=[0.12, -0.5, 0.0]))
    frame = scored.rename(columns={"measured_bw_bytes": "bw_bytes"})
    got = conformal.two_ended(scored, frame)
    half = 1.6448536 * conformal.DEFAULT_NOISE  # one run, no point run twice: the house's 2%, z at 90%
    assert got["scored_from"].tolist() == [conformal.MODEL, "", ""]
    assert got["scored_hi_bw_bytes"].iloc[0] == pytest.approx(1.1e9 * math.exp(half), rel=1e-6)
    assert got["scored_inside"].tolist()[0] is True and got["scored_inside"].isna().tolist() == [False, True, True]
    assert scoring.interval_sentences(got)[0] == (
        "1 of 3 scored point(s) had an interval with two ends (1 the model's, 0 the table's own at 90% where the model "
        "left an end open): the measurement lay inside 1 of them (100%); 2 left open, not scored (the table's interval "
        "needs 9 other points at 90%, each had 2). Median |error| 12.0% over 3 point(s).")
    assert scoring.meets_words(got) == ["yes", scoring.OPEN, scoring.OPEN]
