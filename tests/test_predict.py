"""The prediction model: known truths recovered (simulated curves, the emulated array's golden run) and the seed
studies' published numbers predicted from their own per-device figures, with the error stated."""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from flashscale.measure import campaign_folder
from flashscale import cli
from flashscale.campaigns import preregistered
from flashscale.analysis.prediction import predict, scoring
from flashscale.analysis.prediction.ceilings import pcie_rate
from flashscale.errors import AnalysisError, ConfigError
from flashscale.measure.fio import FioJob

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "data" / "reference"
GOLDEN = ROOT / "tests" / "golden" / "quickstart_results.csv"
MiB = 1048576
GB = 1e9


def _parameters(name: str) -> dict:
    return pd.read_csv(REFERENCE / name).set_index("parameter")["value"].to_dict()


def _rows(layout, devices, rw, values_by_numjobs, bs=MiB, iodepth=1, **extra) -> list[dict]:
    return [dict(layout=layout, devices=devices, rw=rw, bs=bs, numjobs=nj, iodepth=iodepth, rep=rep, bw_bytes=v,
                 **{k: (e[nj][rep] if isinstance(e, dict) else e) for k, e in extra.items()})
            for nj, values in values_by_numjobs.items() for rep, v in enumerate(values)]


@pytest.mark.parametrize("numjobs, devices", [(1, 4), (3, 4), (4, 4), (6, 4), (13, 12), (132, 12)])
def test_jbod_spreads_jobs_as_fio_spreads_them_over_targets(numjobs, devices):
    job = FioJob(rw="read", bs=MiB, targets=tuple(f"/mnt/{i}" for i in range(devices)), numjobs=numjobs)
    assert predict.jobs_per_device(numjobs, devices) == job.jobs_per_target()


# A device that saturates at 2 jobs: 300 MB/s with one, 500 from two on.
TRUTH = {1: 300e6, 2: 500e6, 4: 500e6, 8: 500e6}


def _single(rng, noise=0.02, reps=3) -> pd.DataFrame:
    draws = {nj: list(mean * np.exp(rng.normal(0, noise, reps))) for nj, mean in TRUTH.items()}
    return pd.DataFrame(_rows("single", 1, "read", draws))


def test_jbod_and_a_stripe_recover_the_known_curve():
    base = pd.DataFrame([dict(rw="read", bs=MiB, iodepth=1, numjobs=nj, bw_bytes=v, bw_bytes_lo=v, bw_bytes_hi=v,
                              reps=3, cpu_s_per_byte=np.nan) for nj, v in TRUTH.items()])
    points = [dict(devices=4, rw="read", bs=MiB, numjobs=nj, iodepth=1) for nj in (1, 2, 4, 6, 8)]
    jbod = predict.predict(base, "jbod", points).set_index("numjobs")
    # jobs over 4 devices as fio spreads them: 1 -> [1,0,0,0], 6 -> [2,2,1,1], 8 -> [2,2,2,2]
    assert jbod["predicted_bw_bytes"].to_dict() == pytest.approx(
        {1: 300e6, 2: 600e6, 4: 1200e6, 6: 2 * 500e6 + 2 * 300e6, 8: 2000e6})
    assert jbod["busy_devices"].to_dict() == {1: 1, 2: 2, 4: 4, 6: 4, 8: 4}
    stripe = predict.predict(base, "md-raid0", points, chunk_bytes=128 * 1024).set_index("numjobs")
    # 1 MiB over 128 KiB chunks spans all 4 members: each holds a piece of every request, numjobs in flight
    assert stripe["routing"].eq("every member").all() and stripe["member_outstanding"].to_dict() == {
        1: 1, 2: 2, 4: 4, 6: 6, 8: 8}
    assert stripe.loc[1, "predicted_bw_bytes"] == pytest.approx(4 * 300e6)
    assert stripe.loc[6, "predicted_bw_bytes"] == pytest.approx(4 * 500e6)
    assert stripe.loc[8, "predicted_bw_bytes"] == pytest.approx(4 * 500e6)
    assert set(stripe["predicted_limit"]) == {"devices"}


def test_the_interval_covers_the_true_layout_about_95_percent_of_the_time():
    """Simulated: single-device runs with 2% noise, 3 runs a point; the jbod's truth is the sum of its devices'."""
    rng = np.random.default_rng(1)
    points = [dict(devices=4, rw="read", bs=MiB, numjobs=nj, iodepth=1) for nj in (4, 8)]
    truth = np.array([4 * 300e6, 4 * 500e6])
    covered = []
    for _ in range(300):
        got = predict.predict(predict.curve(_single(rng)), "jbod", points)
        covered.append((got["predicted_lo"].to_numpy() <= truth) & (truth <= got["predicted_hi"].to_numpy()))
    rate = np.mean(covered, axis=0)
    assert ((rate > 0.91) & (rate < 0.99)).all(), rate  # 95% t intervals; at 300 draws +/-3 sd is 0.912-0.988


def test_a_mirror_writes_each_byte_twice_and_reads_from_every_device():
    base = predict.figures({"read": 1 * GB, "write": 1 * GB})
    points = [dict(devices=4, rw=rw, bs=MiB, numjobs=4, iodepth=1) for rw in ("read", "write")]
    got = predict.predict(base, "btrfs-raid10", points, predict.Ceilings(pcie_link_bw_bytes=1.5 * GB)).set_index("rw")
    assert got.loc["write", "layout_share"] == pytest.approx(0.5) and got.loc["read", "layout_share"] == pytest.approx(1.0)
    assert got.loc["write", "predicted_bw_bytes"] == pytest.approx(2 * GB)
    assert got.loc["write", "pcie_limit_bw_bytes"] == pytest.approx(4 * 1.5 * GB * 0.5)  # the copy crosses PCIe
    assert got.loc["read", "predicted_bw_bytes"] == pytest.approx(4 * GB)


@pytest.mark.parametrize("limits, bound, value", [
    (predict.Ceilings(pcie_link_bw_bytes=0.5 * GB), "pcie", 8 * 0.5 * GB),
    (predict.Ceilings(uplink_bw_bytes=3 * GB, devices_per_uplink=4), "uplink", 2 * 3 * GB),
    (predict.Ceilings(network_link_bw_bytes=2.5 * GB, hosts=2), "network", 5 * GB),
    (predict.Ceilings(network_link_bw_bytes=2.5 * GB, network_links=3), "network", 7.5 * GB),
    (predict.Ceilings(memory_bw_bytes=4 * GB, hosts=1), "memory", 4 * GB),
    (predict.Ceilings(pcie_link_bw_bytes=2 * GB, memory_bw_bytes=20 * GB), "devices", 8 * GB),
])
def test_the_smallest_term_binds_and_each_term_is_shown(limits, bound, value):
    got = predict.predict(predict.figures({"read": 1 * GB}), "jbod",
                          [dict(devices=8, rw="read", bs=MiB, numjobs=8, iodepth=1)], limits).iloc[0]
    assert got["predicted_limit"] == bound
    assert got["predicted_bw_bytes"] == pytest.approx(value)
    assert got[f"{bound}_limit_bw_bytes"] == pytest.approx(value)
    assert got["devices_limit_bw_bytes"] == pytest.approx(8 * GB)


def test_the_cpu_a_point_cost_is_its_least_repetition_not_what_else_ran_meanwhile():
    """Busy CPUs count everything the machine did: a run right after the precondition found the kernel still busy
    (1.2 cores at 200 MB/s, the quickstart's single writes), the next ones 0.1. The cost is the least of them, so the
    CPU does not bind 4 devices that reached 800 MB/s on 0.3 cores."""
    rows = pd.DataFrame(_rows("single", 1, "write", {1: [2e8, 2e8, 2e8]}))
    rows["cpu_busy_cores"] = [1.2, 0.1, 0.2]
    base = predict.curve(rows)
    assert base["cpu_s_per_byte"].iloc[0] == pytest.approx(0.1 / 2e8)
    got = predict.predict(base, "jbod", [dict(devices=4, rw="write", bs=MiB, numjobs=4, iodepth=1)],
                          predict.Ceilings(cores=2)).iloc[0]
    assert got["predicted_limit"] == "devices" and got["predicted_bw_bytes"] == pytest.approx(8e8)


def test_a_device_held_at_its_cap_gives_no_cpu_term():
    """A capped device waits on its throttle: its busy CPUs (1.1 cores at 200 MB/s while a test ran beside it) say
    what else the machine did, not what the CPU can carry, so only the devices bind."""
    rows = pd.DataFrame(_rows("single", 1, "read", {1: [2e8, 2e8, 2e8]}))
    rows["cpu_busy_cores"], rows["cap_bps"] = [1.1, 1.0, 1.2], 2e8
    base = predict.curve(rows)
    assert np.isnan(base["cpu_s_per_byte"].iloc[0])
    got = predict.predict(base, "jbod", [dict(devices=4, rw="read", bs=MiB, numjobs=4, iodepth=1)],
                          predict.Ceilings(cores=2)).iloc[0]
    assert got["predicted_limit"] == "devices" and got["predicted_bw_bytes"] == pytest.approx(8e8)
    assert np.isnan(got["cpu_limit_bw_bytes"])
    uncapped = predict.curve(rows.assign(cap_bps=np.nan))  # the same runs uncapped: the CPU term is theirs
    assert uncapped["cpu_s_per_byte"].iloc[0] == pytest.approx(1.0 / 2e8)


def test_the_cpu_term_comes_from_the_cpu_the_single_device_cost():
    """One device at 1 GB/s keeps half a core busy (fio's usr + sys = 50% of one CPU): 2 GB/s a core."""
    rows = pd.DataFrame(_rows("single", 1, "read", {1: [1e9, 1e9]}, usr_cpu=20.0, sys_cpu=30.0))
    base = predict.curve(rows)
    assert base["cpu_s_per_byte"].iloc[0] == pytest.approx(0.5 / 1e9)
    point = [dict(devices=4, rw="read", bs=MiB, numjobs=4, iodepth=1)]
    got = predict.predict(base, "jbod", point, predict.Ceilings(cores=1)).iloc[0]
    assert got["predicted_limit"] == "cpu" and got["predicted_bw_bytes"] == pytest.approx(2e9)
    assert predict.predict(base, "jbod", point, predict.Ceilings(cores=4)).iloc[0]["predicted_limit"] == "devices"
    unmeasured = predict.predict(predict.figures({"read": 1e9}), "jbod", point, predict.Ceilings(cores=1)).iloc[0]
    assert unmeasured["predicted_limit"] == "devices" and "no CPU cost from the single device" in unmeasured["predicted_note"]


@pytest.mark.parametrize("busy, close", [(0.98, "cpu"), (1.0, "cpu"), (0.95, ""), (1.02, "devices")])
def test_limits_that_meet_are_named_together(busy, close):
    """Uncapped loop devices as measured here: one reads 5 GB/s on about one core (its loop worker), so two on 2
    cores meet the devices' limit and the CPU's at once; within 5% of each other both are named, and the sentences
    say so; 5% apart or more, only the smaller."""
    rows = pd.DataFrame(_rows("single", 1, "read", {1: [5e9, 5e9]}, cpu_busy_cores=busy))
    point = [dict(devices=2, rw="read", bs=MiB, numjobs=2, iodepth=1)]
    got = predict.predict(predict.curve(rows), "jbod", point, predict.Ceilings(cores=2)).iloc[0]
    assert got["predicted_limit"] == ("cpu" if busy > 1 else "devices") and got["predicted_close"] == close
    assert got["predicted_bw_bytes"] == pytest.approx(min(10e9, 2 / busy * 5e9))
    measured = pd.DataFrame(_rows("jbod", 2, "read", {2: [9.0e9, 9.1e9, 9.2e9]}))  # 9% below, 3 runs tell it
    said = predict.outside_sentences(predict.score(pd.DataFrame([got]), measured))
    words = f"{got['predicted_limit']} ({close} within 5%)" if close else got["predicted_limit"]
    assert len(said) == 1 and said[0].endswith(f"; the {words} bound")
    shown = scoring.for_people(predict.score(pd.DataFrame([got]), measured))
    assert shown["predicted_limit"].tolist() == [words]


def test_jbod_at_one_job_against_the_single_device_is_the_machine_s_repeatability():
    """jbod's 1-job point runs one device as the single device did, minutes later: its error against the single
    device is the machine's drift, whatever ceiling bound its prediction; 2 jobs keep 2 devices busy and say
    nothing of it, nor does a point the single device was not measured at (its nearest stood in)."""
    single = pd.DataFrame(_rows("single", 1, "read", {1: [5e9, 5e9]}) + _rows("single", 1, "write", {1: [3e9, 3e9]}))
    points = [dict(devices=4, rw=rw, bs=bs, numjobs=n, iodepth=1) for rw in ("read", "write") for n in (1, 2)
              for bs in (MiB, 4 * MiB)]
    stated = predict.predict(predict.curve(single), "jbod", points, predict.Ceilings(memory_bw_bytes=4e9))
    measured = pd.DataFrame([row for rw, one, two in (("read", 5.5e9, 9e9), ("write", 2.85e9, 6e9))
                             for bs in (MiB, 4 * MiB)
                             for row in _rows("jbod", 4, rw, {1: [one, one], 2: [two, two]}, bs=bs)])
    got = scoring.repeatability(predict.score(stated, measured))
    assert got[["rw", "bs"]].values.tolist() == [["read", MiB], ["write", MiB]]
    assert got["error"].tolist() == pytest.approx([0.1, -0.05])
    said = scoring.repeatability_sentences(predict.score(stated, measured))
    assert len(said) == 1 and said[0].startswith("jbod at 1 job keeps one device busy")
    assert "read 5,500 MB/s against its 5,000 MB/s (+10.0%), write 2,850 MB/s against its 3,000 MB/s (-5.0%)" in \
        said[0] and "within 10.0%" in said[0]
    assert scoring.repeatability(predict.score(stated[stated["numjobs"] == 2], measured)).empty
    assert stated.set_index(["rw", "bs", "numjobs"])["predicted_exact"].to_dict() == {  # a job a device, 1 or 2
        (rw, bs, n): bs == MiB for rw in ("read", "write") for bs in (MiB, 4 * MiB) for n in (1, 2)}
    later = pd.DataFrame([row for rw in ("read", "write") for row in _rows("single", 1, rw, {2: [6e9, 6e9]})])
    held = predict.predict(predict.curve(later), "jbod", points)  # no 1-job point: the 2-job one held for it
    assert not held["predicted_exact"].any() and scoring.repeatability(predict.score(held, measured)).empty
    deeper = pd.concat([single, single.assign(iodepth=4)], ignore_index=True)  # two points of the single device
    stated = predict.predict(predict.curve(deeper), "jbod", [{**p, "iodepth": qd} for p in points for qd in (1, 4)])
    both = pd.concat([measured, measured.assign(iodepth=4)], ignore_index=True)
    said = scoring.repeatability_sentences(predict.score(stated, both))[0]
    assert "read (bs 1048576, iodepth 1) 5,500 MB/s against its 5,000 MB/s (+10.0%), read (bs 1048576, iodepth 4)" \
        in said


def test_a_miss_is_held_to_the_machine_s_own_drift_in_its_rw_measured_at_another_point():
    """A point beyond the margin is said to be inside the drift of its rw (jbod's 1-job point against the single
    device, ``scoring.drift``) or beyond it: writes that drift 10% cannot tell a +5% miss from drift, reads that
    drift 1.6% can tell a +4% one; the best points are held to it too. The drift is measured at another point than
    the one it excuses: jbod's 1-job write is the drift's own point, its +10% is the drift, and nothing excuses it
    (it was 'inside this machine's write drift (10.0%)', excused by itself); without a 1-job point nothing is said."""
    single = pd.DataFrame(_rows("single", 1, "read", {1: [5e9, 5e9]}) + _rows("single", 1, "write", {1: [3e9, 3e9]}))
    points = [dict(devices=4, rw=rw, bs=MiB, numjobs=n, iodepth=1) for rw in ("read", "write") for n in (1, 2)]
    stated = predict.predict(predict.curve(single), "jbod", points)
    measured = pd.DataFrame(_rows("jbod", 4, "read", {1: [5.08e9] * 2, 2: [10.4e9] * 2})
                            + _rows("jbod", 4, "write", {1: [3.3e9] * 2, 2: [6.3e9] * 2}))
    got = predict.score(stated, measured)
    assert scoring.drift(got) == pytest.approx({"read": 0.016, "write": 0.1})
    one_job_write = got[(got["rw"] == "write") & (got["numjobs"] == 1)].iloc[0]
    assert scoring.drift(got, leave_out=one_job_write) == pytest.approx({"read": 0.016})
    said = scoring.outside_sentences(got)
    assert len(said) == 3 and said[0].startswith("jbod read, 4 devices, bs 1048576, 2 jobs") and said[0].endswith(
        "+4.0%; the devices bound; beyond this machine's read drift (1.6%)"), said
    assert [line.split(", ")[3] for line in said[1:]] == ["1 job", "2 jobs"]
    assert said[1].endswith("+10.0%; the devices bound")  # the drift's own point: nothing measured elsewhere
    assert said[2].endswith("; inside this machine's write drift (10.0%): not told from it")
    best = scoring.at_best_sentences(got)
    assert best[0].endswith("+4.0%; the devices bound; beyond this machine's read drift (1.6%)")
    assert best[1].endswith("+5.0%; the devices bound; inside this machine's write drift (10.0%): not told from it")
    for error in (0.003, -0.015):  # within the 2% margin: no miss to own, inside the drift or not
        assert predict.drift_words(error, "read", {"read": 0.001}) == predict.drift_words(error, "read", {"read": 0.05})
        assert predict.drift_words(error, "read", {"read": 0.05}) == ""
    assert predict.drift_words(-0.03, "read", {"read": 0.001}).startswith("; beyond this machine's read drift (0.1%)")
    alone = got[got["numjobs"] == 2]
    assert not scoring.drift(alone) and predict.outside_sentences(alone)[0] == said[0].split("; beyond")[0]
    repeats = scoring.repeatability_sentences(got)[0]
    assert repeats.endswith("held against the errors at the other points, never against jbod's own at 1 job, where "
                            "it was measured.")


def test_the_report_s_margin_is_the_drift_sentence_s_margin():
    """A -3% miss on a machine that drifts 1%: beyond the drift at the default 2% margin, and nothing to own at a
    report's 5% margin, whose outside and best sentences say the same as its tax's verdict."""
    single = pd.DataFrame(_rows("single", 1, "read", {1: [5e9, 5e9]}))
    points = [dict(devices=4, rw="read", bs=MiB, numjobs=n, iodepth=1) for n in (1, 2)]
    measured = pd.DataFrame(_rows("jbod", 4, "read", {1: [5.05e9] * 2, 2: [9.7e9] * 2}))
    got = predict.score(predict.predict(predict.curve(single), "jbod", points), measured, margin=0.02)
    best = scoring.at_best_sentences(got)[0]
    assert best.endswith("-3.0%; the devices bound; beyond this machine's read drift (1.0%)")
    assert scoring.outside_sentences(got)[0].endswith("beyond this machine's read drift (1.0%)")
    wide = predict.score(predict.predict(predict.curve(single), "jbod", points), measured, margin=0.05)
    assert scoring.at_best_sentences(wide, 0.05)[0].endswith("-3.0%; the devices bound")
    assert scoring.outside_sentences(wide, 0.05) == []


def test_harness_check_the_golden_quickstart_repeats_itself_within_2_percent_at_the_cap():
    """A harness check: real fio on 4 loop devices capped at 200 MB/s, jbod's 1-job points land within 2% of the
    single device's, the cap being the truth of both (the throttle's precision, not the model's)."""
    frame = pd.read_csv(GOLDEN)
    got = scoring.repeatability(predict.score(predict.predict_results(frame), frame))
    assert set(got["rw"]) == {"read", "write"} and (got["layout"] == "jbod").all()
    assert got["error"].abs().max() < 0.02


def test_harness_check_the_capped_golden_run_sums_its_caps_and_btrfs_writes_are_undecided():
    """A harness check, not evidence of the model's accuracy: the golden quickstart run, 4 loop devices capped at
    200 MB/s. Each device is held at its cap, so N busy devices x the cap is the truth by construction, and jbod's
    prediction within 2% of it checks the cap, the curve and the sum, not the model. btrfs-raid0's reads too;
    btrfs-raid0's writes (buffered by btrfs) fall 43% short at one job, what the model does not explain, but their
    three runs spread from 16 to 890 MB/s: by the one rule that is undecided, not a miss beyond the margin."""
    frame = pd.read_csv(GOLDEN)
    scored = predict.score(predict.predict_results(frame), frame)
    assert set(scored["predicted_limit"]) == {"devices"}
    jbod = scored[scored["layout"] == "jbod"]
    assert (jbod["predicted_bw_bytes"] / (jbod["busy_devices"] * 200e6)).between(0.99, 1.02).all()
    reads = scored[scored["rw"] == "read"]
    assert reads["error"].abs().max() < 0.02 and not reads["beyond_margin"].any()
    assert (jbod["error"].abs() < 0.02).all() and not jbod["beyond_margin"].any()
    assert set(jbod["agreement"]) == {"same", "undecided"}  # none differs: within the truth, or too few runs
    writes = scored[(scored["layout"] == "btrfs-raid0") & (scored["rw"] == "write")].set_index("numjobs")
    assert writes.loc[1, "unexplained"] > 0.3 and writes.loc[1, "agreement"] == "undecided"
    assert 0 < writes.loc[1, "measured_bw_bytes_lo"] < 0.25 * writes.loc[1, "predicted_bw_bytes"]  # log scale: 172 MB/s
    assert writes.loc[1, "devices_tax"] == pytest.approx(writes.loc[1, "unexplained"])  # the devices bound
    assert predict.outside_sentences(scored) == []  # nothing is beyond the margin by the rule


# Seed 003: 132 P4600 (33 storage targets x 4) behind 11 EDR links. Published: 132 GB/s read, 121 GB/s write,
# "the network is the limiting factor". The model is a ceiling: the published numbers must lie below it, and the
# tolerance stated is the authors' own rounding (97% and 89% of the network).
def _seed003() -> pd.DataFrame:
    system = _parameters("seed003_system.csv")
    drives = int(pd.read_csv(REFERENCE / "seed003_drives.csv").set_index("quantity")["value"]["drives"])
    base = predict.figures({"read": system["device_read_bw_bytes"], "write": system["device_write_bw_bytes"]})
    limits = predict.Ceilings.from_mapping(system)
    published = pd.read_csv(REFERENCE / "seed003_results.csv")
    points = published.assign(bs=MiB, iodepth=1, devices=drives)
    prediction = predict.predict(base, "beegfs", points, limits)
    measured = points.assign(rep=0, bw_bytes=points["best_bw_bytes"])
    return predict.score(prediction, measured).set_index("rw")


def test_seed003_is_predicted_network_bound_at_136_4_gb_s():
    got = _seed003()
    assert got.loc["read", "devices_limit_bw_bytes"] == pytest.approx(422.4e9)  # the authors' "422 GB/s"
    assert got.loc["write", "devices_limit_bw_bytes"] == pytest.approx(171.6e9)  # "172 GB/s"
    assert set(got["predicted_limit"]) == {"network"}
    assert got["predicted_bw_bytes"].tolist() == pytest.approx([136.4e9, 136.4e9])
    assert got.loc["read", "error"] == pytest.approx(-0.032, abs=5e-4)  # 132 / 136.4 - 1
    assert got.loc["write", "error"] == pytest.approx(-0.113, abs=5e-4)  # 121 / 136.4 - 1
    assert (got["error"] < 0).all()  # never above a ceiling


# Seed 000: 12 P3700 on an SGI UV 300, from the single card's 2.78 / 2.05 GB/s (IOR, 6 threads, 1 MB). One XFS per
# card (Test 2) is predicted within 2%; md RAID-0 (Test 5a), no chunk in the table, is routed by md's default 512 KiB
# chunk (said): a 4 MB read reaches 8 of the 12 cards, which hold the 528 pieces in flight unevenly (32.6 GB/s);
# it reads 8.7% below that: the model does not explain the rest of md's read tax (the authors' 9.4% against jbod).
def _seed000() -> pd.DataFrame:
    table = pd.read_csv(REFERENCE / "seed000_results.csv")
    base = predict.curve(table)
    limits = predict.Ceilings.from_mapping(_parameters("seed000_system.csv"))
    parts = [predict.predict(base, layout, group[["devices", "rw", "bs", "numjobs", "iodepth"]], limits)
             for layout, group in table[table["layout"].isin(["jbod", "md-raid0"])].groupby("layout")]
    return predict.score(pd.concat(parts, ignore_index=True), table).set_index(["layout", "rw"])


@pytest.mark.parametrize("layout, rw, predicted, error", [
    ("jbod", "read", 12 * 2.78e9, -0.014), ("jbod", "write", 12 * 2.05e9, -0.020),
    ("md-raid0", "read", 3.2642e10, -0.087), ("md-raid0", "write", 12 * 2.05e9, -0.028),
])
def test_seed000_layouts_from_the_single_card(layout, rw, predicted, error):
    got = _seed000().loc[(layout, rw)]
    assert got["predicted_bw_bytes"] == pytest.approx(predicted, rel=1e-4)  # the closed network's, to 5 digits
    assert got["predicted_limit"] == "devices"
    assert got["pcie_limit_bw_bytes"] == pytest.approx(12 * pcie_rate(3, 4))  # 47.3 GB/s: not binding
    assert got["error"] == pytest.approx(error, abs=0.0005)  # the published numbers' three digits
    if layout == "md-raid0":
        assert "single device measured at bs 1048576" in got["predicted_note"]
        assert "md's default chunk (mdadm 3.1 and later) 512 KiB taken" in got["predicted_note"]


def test_bad_input_is_refused_by_name():
    with pytest.raises(ConfigError, match="pcie_link_bw_bytes = -1"):
        predict.Ceilings(pcie_link_bw_bytes=-1)
    with pytest.raises(ConfigError, match="hosts = 1.5"):
        predict.Ceilings(hosts=1.5)
    with pytest.raises(ConfigError, match="uplink_bw_bytes and devices_per_uplink"):
        predict.Ceilings(uplink_bw_bytes=1e9)
    base = predict.figures({"read": 1e9})
    with pytest.raises(ConfigError, match="numjobs = 0"):
        predict.predict(base, "jbod", [dict(devices=2, rw="read", bs=MiB, numjobs=0, iodepth=1)])
    with pytest.raises(ConfigError, match="'iodepth'"):
        predict.predict(base, "jbod", [dict(devices=2, rw="read", bs=MiB, numjobs=2)])
    with pytest.raises(ConfigError, match="'write' = 0"):
        predict.figures({"write": 0})
    with pytest.raises(AnalysisError, match="no single-device"):
        predict.curve(pd.DataFrame(_rows("jbod", 2, "read", {1: [1e9]})))
    unknown = predict.predict(base, "jbod", [dict(devices=2, rw="write", bs=MiB, numjobs=2, iodepth=1)]).iloc[0]
    assert np.isnan(unknown["predicted_bw_bytes"]) and unknown["predicted_note"] == "no single-device write rows"


def test_analyze_predict_prints_predicted_against_measured(capsys):
    assert cli.main(["analyze", str(GOLDEN), "--predict", "--wide"]) == 0
    out = capsys.readouterr().out
    assert "predicted MB/s" in out.splitlines()[0] and "error %" in out.splitlines()[0]  # the units, said once
    row = next(line for line in out.splitlines() if line.split()[:3] == ["btrfs-raid0", "4", "write"])
    assert row.split()[7:12] == ["800", "(798–802)", "453", "-43.4", "devices"] and " undecided " in row
    # btrfs: no calibration; jbod's 4 devices at 2 jobs each never beyond the single device's 8: the host unmeasured
    # the model's end open, the table's own 90% interval scores it: its 3 runs (250-556 MB/s) are the new run's noise
    assert row.endswith("at most 802 MB/s, lower end open: the layer's CPU cost and the host's shared paths; the "
                        "table's 90%: 368–1,739 MB/s yes (the table's 90%)")
    assert "10 point(s) undecided: the interval of measured over predicted reaches across the 2% margin" in out
    assert "e+" not in out and "beyond the margin" not in out  # no point differs by the one rule
    assert cli.main(["analyze", str(GOLDEN), "--predict", "--format", "csv"]) == 0
    got = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert len(got) == 16 and {"predicted_bw_bytes", "error", "predicted_limit", "agreement"} <= set(got.columns)
    assert cli.main(["analyze", str(GOLDEN)]) == 1
    assert "--reference LAYOUT is required" in capsys.readouterr().err


def test_analyze_stated_scores_what_the_campaign_said_before_not_a_new_prediction(tmp_path, capsys):
    """--stated reads the campaign directory's predictions.csv: here jbod's were stated at 150 MB/s a device, half
    a device short of what the golden run measured, and the command scores that, not the 200 MB/s a prediction made
    now would give; each layout's best point and the machine's repeatability follow."""
    frame = pd.read_csv(GOLDEN)
    frame.to_parquet(tmp_path / campaign_folder.TABLE_FILE)
    said = predict.predict_results(frame)
    said = said[said["layout"] == "jbod"].assign(**{c: said[c] * 0.75 for c in ("devices_limit_bw_bytes",
                                                                                   "predicted_bw_bytes")})
    preregistered.record(tmp_path, said)
    assert cli.main(["analyze", str(tmp_path), "--predict", "--stated", "--wide"]) == 0  # sentences not folded
    out = capsys.readouterr().out
    best = [line for line in out.splitlines() if line.startswith("at its best: ")]
    assert [line.split(":")[1].strip() for line in best] == ["jbod read", "jbod write"]  # only jbod was stated
    assert all("(4 devices, bs 1048576, 8 jobs, iodepth 1), predicted 600 MB/s, +3" in line for line in best), best
    assert "the devices bound" in best[0] and "btrfs-raid0" not in out
    assert out.count("repeatability: jbod at 1 job keeps one device busy") == 1 and "(+33." in out
    for args, wrong in ((["--stated"], "give it with --predict"),
                        (["--predict", "--stated", "--ceilings", str(tmp_path / "c.yaml")], "drop --ceilings")):
        assert cli.main(["analyze", str(tmp_path), *args]) == 1 and wrong in capsys.readouterr().err
    assert cli.main(["analyze", str(GOLDEN), "--predict", "--stated"]) == 1
    assert f"{str(GOLDEN)!r} holds no stated predictions" in capsys.readouterr().err


def test_the_tax_re_read_names_the_term_that_held_the_prediction():
    def group(layout, unexplained, limits):
        return pd.DataFrame({"layout": layout, "devices": 2, "rw": "read", "unexplained": unexplained,
                             "predicted_limit": limits})
    frame = pd.concat([group("jbod", [0.01, -0.01], ["devices", "devices"]),
                       group("md", [0.10, 0.20], ["memory", "memory"]),
                       group("btrfs", [-0.30, -0.10], ["memory", "devices"])], ignore_index=True)
    said = scoring.unexplained_sentences(frame, margin=0.02)
    assert said == [
        "btrfs on 2 devices, read: 10.0% to 30.0% above its prediction: more than the terms that bound (devices, "
        "memory) should allow, which the model does not explain either.",
        "jbod on 2 devices, read: within 2% of its prediction at every point: its devices alone explain it, nothing "
        "is left for the layout to cost.",
        "md on 2 devices, read: 10.0% to 20.0% below its prediction: what the memory ceiling allowed at these jobs "
        "and this layout did not deliver, its cost the model of N devices does not explain."]
