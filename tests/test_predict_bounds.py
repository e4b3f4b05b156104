"""Facts before guesses, and bounds where the data cannot pin a number (issue 41): the layout's own stripe unit or
its tool's default, said; a request no larger than the least chunk possible on one member; every prediction an
interval whose ends come from what is unknown."""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from flashscale import cli
from flashscale.analysis.prediction import bounds, calibration, predict, scoring
from flashscale.analysis.prediction.ceilings import pcie_rate

KiB = 1024


def _random_reads() -> pd.DataFrame:
    """A device measured at 4 KiB random reads, 1 job, iodepth 1, 4 and 16: 27, 100 and 300 MB/s, 3 runs each."""
    rows = [dict(layout="single", devices=1, rw="randread", bs=4 * KiB, numjobs=1, iodepth=depth, rep=rep,
                 bw_bytes=bw * (1 + 0.01 * (rep - 1)), lat_mean_ns=lat)
            for depth, bw, lat in ((1, 27e6, 151e3), (4, 100e6, 163e3), (16, 300e6, 218e3)) for rep in range(3)]
    return pd.DataFrame(rows)


def test_a_4k_random_read_on_md_raid0_with_no_chunk_reaches_one_member():
    """The issue's case: 3-device md RAID-0, no chunk in the table, 4 KiB random read at 1 job and iodepth 1: one
    member's rate at one in flight (27 MB/s), not 3 x (81 MB/s); the note says md's default chunk was taken."""
    base = predict.curve(_random_reads())
    got = predict.predict(base, "md-raid0", [dict(devices=3, rw="randread", bs=4 * KiB, numjobs=1, iodepth=1)]).iloc[0]
    assert got["predicted_bw_bytes"] == pytest.approx(27e6, rel=1e-9)  # the single device's mean at 1 in flight
    assert got["routing"] == "at random" and got["members_per_request"] == 1
    assert "md's default chunk (mdadm 3.1 and later) 512 KiB taken: no chunk given" in got["predicted_note"]
    unknown = predict.predict(base, "xvm", [dict(devices=3, rw="randread", bs=4 * KiB, numjobs=1, iodepth=1)]).iloc[0]
    assert unknown["predicted_bw_bytes"] == pytest.approx(27e6, rel=1e-9)  # no default, the same fact
    assert "reaches one member whatever the chunk" in unknown["predicted_note"]


REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference"
MiB = 2**20


def _seed000(ceilings: predict.Ceilings = predict.Ceilings()) -> pd.DataFrame:
    """Seed 000's table (12 x P3700, one run a point, no chunk, no CPU figures) predicted from its own single card
    and scored, as ``flashscale analyze --predict`` does."""
    table = pd.read_csv(REFERENCE / "seed000_results.csv")
    return predict.score(predict.predict_results(table, ceilings), table).set_index(["layout", "rw"])


def test_seed000_every_prediction_is_an_interval_whose_ends_say_what_is_unknown():
    """jbod at 11 in flight a card (the card measured at 6): held at 6 (the point), its lower end open, for nobody
    measured the host's shared paths (PCIe root, memory, 12 cards' aggregate) carrying 12 cards before (12 x the
    card at 6 in flight, 33.4 GB/s, would assume they cost nothing: jbod measured 32.9), its upper end the cards'
    PCIe links where given (47.3 GB/s), open without them. Every stripe (md, GPFS, XVM: no calibration) its lower
    end open, the layer's CPU cost not measured, the host's shared paths closed by jbod's 12 cards measured beyond
    the card's 6 in flight, which hold their point too (32.9 GB/s read, 24.1 write: the host term), not their ends.
    Every measured point lies inside its interval; the median point error is 4.4% of 12."""
    bare = _seed000()
    assert bare["predicted_lo_bw_bytes"].isna().all() and bare["interval_meets"].all()
    assert bare["predicted_hi_bw_bytes"].isna().all()  # every point beyond the card's 6 in flight, no ceiling given
    jbod = bare.loc[("jbod", "read")]
    assert jbod["predicted_bw_bytes"] == pytest.approx(12 * 2.78e9, rel=1e-9)  # the card held at 6 in flight
    assert jbod["predicted_unknown"] == "the host's shared paths,load beyond the curve"
    assert jbod["predicted_width"] == np.inf and np.isnan(jbod["host_limit_bw_bytes"])  # never held to itself
    assert "never measured carrying 12 devices together" in jbod["predicted_note"]
    stripes = bare.drop(index="jbod")
    carried = {"read": 32.9e9, "write": 24.1e9}
    assert [row["host_limit_bw_bytes"] for _, row in stripes.iterrows()] == pytest.approx(
        [carried[rw] for _, rw in stripes.index], rel=1e-9)
    assert (stripes["predicted_bw_bytes"] <= stripes["host_limit_bw_bytes"]).all()
    assert stripes["predicted_unknown"].str.startswith("the layer's CPU cost,load beyond").all()  # host: measured
    assert bare["error"].abs().median() == pytest.approx(0.0441, abs=5e-4)  # gpfs-1m 4.0% and gpfs-4m 4.9% read
    linked = _seed000(predict.Ceilings(pcie_link_bw_bytes=pcie_rate(3, 4)))
    assert linked.loc[("jbod", "read"), "predicted_hi_bw_bytes"] == pytest.approx(12 * pcie_rate(3, 4), rel=1e-9)
    assert linked["interval_meets"].all() and linked["predicted_lo_bw_bytes"].isna().all()
    assert (linked["measured_bw_bytes"] <= linked["predicted_hi_bw_bytes"]).all()
    assert (linked["predicted_bw_bytes"] <= linked["predicted_hi_bw_bytes"]).all()


def test_the_reference_closes_the_host_s_lower_end_only_where_it_ran_beyond_the_curve():
    """What jbod carried on 12 cards is a fact about the host only where each card held at least the single card's
    largest measured load (6 in flight): at 132 jobs (11 a card) it is; at 24 jobs (2 a card) the cards were not
    saturated, so it says nothing of the host's ceiling and the stripes' host term is gone."""
    table = pd.read_csv(REFERENCE / "seed000_results.csv")
    base = predict.curve(table)
    jbod = table[table["layout"] == "jbod"]
    assert calibration.reference_ceiling(base, jbod) == pytest.approx({"read": 32.9e9, "write": 24.1e9}, rel=1e-12)
    assert calibration.reference_ceiling(base, jbod.assign(numjobs=24)) == {}
    light = pd.concat([table[table["layout"] != "jbod"], jbod.assign(numjobs=24)])
    got = predict.predict_results(light).set_index(["layout", "rw"])
    assert got.drop(index="jbod")["host_limit_bw_bytes"].isna().all()
    assert got.drop(index="jbod")["predicted_unknown"].str.startswith("the layer's CPU cost,the host's shared").all()


def _stripe_rows(cores: float) -> pd.DataFrame:
    """One device at 1 MiB reads, 1 and 4 in flight (1 and 3 GB/s), busy ``cores`` CPU cores at 4, 3 runs."""
    return pd.DataFrame([dict(layout="single", devices=1, rw="read", bs=MiB, numjobs=1, iodepth=depth, rep=rep,
                              bw_bytes=bw * (1 + 0.01 * (rep - 1)), cpu_busy_cores=cores * depth / 4)
                         for depth, bw in ((1, 1e9), (4, 3e9)) for rep in range(3)])


def test_a_layer_s_cpu_cost_not_measured_is_held_below_the_host_s_cpus_with_its_lower_end_open():
    """md RAID-0 on 4, 4 jobs at iodepth 4, 1 MiB, chunk 1 MiB given: 16 in flight land on 4 members. The device
    costs 0.5 cores at 3.03 GB/s (its cheapest run); on 2 cores the host carries 2 / (0.5 / 3.03e9) = 12.1 GB/s at
    that cost: the upper end is at most that; the lower end is open."""
    base = predict.curve(_stripe_rows(0.5))
    point = [dict(devices=4, rw="read", bs=MiB, numjobs=4, iodepth=4)]
    got = predict.predict(base, "md-raid0", point, predict.Ceilings(cores=2), chunk_bytes=MiB).iloc[0]
    assert got["cpu_limit_bw_bytes"] == pytest.approx(2 / (0.5 / 3.03e9), rel=1e-6)
    assert np.isnan(got["predicted_lo_bw_bytes"])
    assert got["predicted_hi_bw_bytes"] <= got["cpu_limit_bw_bytes"] * (1 + 1e-9)
    assert got["predicted_unknown"].split(",")[0] == "the layer's CPU cost"
    assert got["predicted_bw_bytes"] <= got["predicted_hi_bw_bytes"]
    jbod = predict.predict(base, "jbod", point, predict.Ceilings(cores=2)).iloc[0]  # no layer; the host unmeasured
    assert np.isnan(jbod["predicted_lo_bw_bytes"]) and jbod["predicted_unknown"].startswith("the host's shared paths")
    assert np.isfinite(jbod["predicted_hi_bw_bytes"]) and "the layer's CPU cost" not in jbod["predicted_unknown"]
    carried = predict.predict(base, "jbod", point, predict.Ceilings(cores=2), reference={"read": 20e9}).iloc[0]
    assert carried["predicted_lo_bw_bytes"] == pytest.approx(carried["predicted_lo"], rel=1e-9)  # the runs' own
    assert "the host's shared paths" not in carried["predicted_unknown"]  # the host measured carrying 20 GB/s


def test_below_the_least_load_between_little_s_law_and_the_rate_there():
    """jbod of 4, 4 jobs at iodepth 1, a device measured only at 4 in flight (3 GB/s, 3 runs): each device at 1 in
    flight lies between Little's law (a quarter of the rate at 4, from its interval's low end) and the rate at 4
    (its interval's high end); the point is their geometric middle (one load measured)."""
    rows = _stripe_rows(0.5)
    base = predict.curve(rows[rows["iodepth"] == 4])
    host = {"read": 100e9}  # the host measured carrying these 4 devices at 100 GB/s: its shared paths bound nothing
    got = predict.predict(base, "jbod", [dict(devices=4, rw="read", bs=MiB, numjobs=4, iodepth=1)],
                          reference=host).iloc[0]
    at4 = base.iloc[0]
    assert got["predicted_lo_bw_bytes"] == pytest.approx(4 * at4["bw_bytes_lo"] / 4, rel=1e-9)
    assert got["predicted_hi_bw_bytes"] == pytest.approx(4 * at4["bw_bytes_hi"], rel=1e-9)
    assert got["predicted_bw_bytes"] == pytest.approx(4 * (at4["bw_bytes"] * at4["bw_bytes"] / 4) ** 0.5, rel=1e-9)
    assert got["predicted_unknown"].split(",")[0] == "load below the curve"


def test_a_stripe_with_no_chunk_and_no_default_spans_the_chunks_it_could_have():
    """An imported stripe flashscale does not know (xvm), 1 MiB reads at 1 job, iodepth 1 on 4: every member
    (the point, as before) gives 4 x the device at 1 in flight a member; a chunk of 1 MiB or more puts each request
    on one member: 1 GB/s. The interval spans both, and says the stripe unit made it wide."""
    base = predict.curve(_stripe_rows(0.5))
    got = predict.predict(base, "xvm", [dict(devices=4, rw="read", bs=MiB, numjobs=1, iodepth=1)]).iloc[0]
    assert got["predicted_unknown"].split(",")[:3] == ["the layer's CPU cost", "the host's shared paths", "stripe unit"]
    assert "chunks of 4096 to 1048576 bytes give" in got["predicted_note"]
    assert got["predicted_hi_bw_bytes"] >= got["predicted_bw_bytes"] * 0.999
    assert np.isnan(got["predicted_lo_bw_bytes"])  # a layer: open below whatever the chunk


def test_meets_and_width():
    assert bounds.meets(1.0, 2.0, 1.5, np.nan) and bounds.meets(1.0, 2.0, np.nan, 0.5) is False
    assert bounds.meets(3.0, 3.0, np.nan, np.nan) and not bounds.meets(3.0, 3.0, 3.1, 4.0)
    assert bounds.width(2.0, 3.0) == pytest.approx(1.5) and bounds.width(np.nan, 3.0) == np.inf
    assert bounds.words(np.nan, 3e9) == "at most 3,000 MB/s, lower end open: the layer's CPU cost"
    assert bounds.words(1e9, np.nan) == "at least 1,000 MB/s, upper end open: load beyond the curve, no ceiling known"


def test_analyze_predict_shows_the_interval_and_whether_the_measurement_meets_it(capsys):
    """``flashscale analyze --predict`` on seed 000: each row its interval in words and whether the measured meets
    it; the csv carries the columns the benchmark scores with."""
    table = str(REFERENCE / "seed000_results.csv")
    assert cli.main(["analyze", table, "--predict", "--wide"]) == 0  # the interval in words: every column
    out = capsys.readouterr().out
    jbod = next(line for line in out.splitlines() if line.split()[:3] == ["jbod", "12", "read"])
    assert "open at both ends (the host's shared paths; load beyond the curve, no ceiling known)" in jbod
    assert jbod.split("known)")[1].strip().startswith("; the table's 90%: 26.0–42.8 GB/s yes (the table's 90%)")
    md = next(line for line in out.splitlines() if line.split()[:3] == ["md-raid0", "12", "read"])
    assert "open at both ends (the layer's CPU cost; load beyond the curve, no ceiling known)" in md
    assert cli.main(["analyze", table, "--predict", "--format", "csv"]) == 0
    got = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert {"predicted_lo_bw_bytes", "predicted_hi_bw_bytes", "predicted_unknown", "interval_meets",
            "predicted_width", "error"} <= set(got.columns)
    assert got["interval_meets"].sum() == 12  # every point (the test above)
    assert (got["predicted_lo_bw_bytes"].isna() | got["predicted_hi_bw_bytes"].isna()).all()  # each one open
    assert ("12 of 12 scored point(s) had an interval with two ends (0 the model's, 12 the table's own at 90% where "
            "the model left an end open): the measurement lay inside 11 of them (92%). Median |error| 4.4% over 12 "
            "point(s).") in out
    assert ("md-raid0 on 2 devices would measure its layer's cost and close the lower end of its 2 point(s) on 12 "
            "devices (the layer's CPU cost)") in out
    assert ("the single device measured at 11 in flight, or a ceiling given (--ceilings), would close the upper end "
            "of 6 read point(s) (load beyond the curve)") in out
    assert got["scored_inside"].sum() == 11 and (got["scored_from"] == "the table").all()


def test_only_an_interval_closed_at_both_ends_is_scored_as_met_and_the_headline_names_both_shares():
    """Four points: two closed (one met, one missed), one open at its lower end (met, as an open end always is),
    one not scored."""
    scored = pd.DataFrame({"predicted_lo_bw_bytes": [1e9, 1e9, np.nan, 1e9],
                           "predicted_hi_bw_bytes": [2e9, 2e9, 2e9, 2e9],
                           "interval_meets": pd.array([True, False, True, pd.NA], dtype="boolean")})
    assert scoring.meets_words(scored) == ["yes", "no", scoring.OPEN, "unknown"]
    assert scoring.interval_sentences(scored) == [
        "2 of 3 scored point(s) had a predicted interval closed at both ends: the measurement met 1 of them (50%); "
        "1 had an open end, not scored as met (an open end meets everything on its side)."]
    assert scoring.interval_sentences(scored.iloc[:2]) == [
        "2 of 2 scored point(s) had a predicted interval closed at both ends: the measurement met 1 of them (50%)."]
    assert bounds.closed(1.0, 2.0) and not bounds.closed(np.nan, 2.0) and not bounds.closed(1.0, np.inf)


GOLDEN = Path(__file__).resolve().parent / "golden" / "capped_cpu_results.csv"


def test_a_capped_device_s_cpu_cost_is_read_from_fio_s_own_time_and_holds_the_layer_below_the_host():
    """The issue's case, on real runs (tests/golden/capped_cpu_results.csv: the quickstart's single device, jbod and
    btrfs-raid0 writes on 4 loop devices capped at 200 MB/s, 1 and 4 jobs, 3 runs of 3 s, while other work ran on
    the 2 cores: the machine showed 1.3 to 1.8 busy cores beside the capped device). At the cap the single device's
    CPU per byte is fio's own usr + sys time per byte, the least of its runs (a floor: the loop workers uncounted),
    not the machine's busy cores; btrfs-raid0, with no calibration, is held below what 2 cores carry at it, its
    lower end open, and both its measured points meet that interval (as the 593 MB/s the issue saw on a fresh
    machine would: below the devices' 800 MB/s, with nothing below it)."""
    table = pd.read_csv(GOLDEN)
    base = predict.curve(table)
    single = table[(table["layout"] == "single") & (table["phase"] == "measure")]
    own = (single["fio_usr_cpu"] + single["fio_sys_cpu"]) / 100 / single["bw_bytes"]
    for jobs in (1, 4):
        floor = own[single["numjobs"] == jobs].min()
        row = base[base["numjobs"] == jobs].iloc[0]
        assert row["cpu_s_per_byte"] == pytest.approx(floor, rel=1e-9) and bool(row["cpu_at_cap"])
        busy = single.loc[single["numjobs"] == jobs, "cpu_busy_cores"] / single.loc[single["numjobs"] == jobs,
                                                                                    "bw_bytes"]
        assert row["cpu_s_per_byte"] < busy.min() / 10  # the machine's busy CPUs were not taken as the device's
    points = [dict(devices=4, rw="write", bs=MiB, numjobs=jobs, iodepth=1) for jobs in (1, 4)]
    got = predict.predict(base, "btrfs-raid0", points, predict.Ceilings(cores=2))
    floors = base.set_index("numjobs")["cpu_s_per_byte"]
    assert got["cpu_limit_bw_bytes"].tolist() == pytest.approx([2 / floors[1], 2 / floors[4]], rel=1e-9)
    assert (got["predicted_hi_bw_bytes"] <= got["cpu_limit_bw_bytes"]).all()
    assert got["predicted_lo_bw_bytes"].isna().all() and (got["predicted_bw_bytes"] <= got["predicted_hi_bw_bytes"]).all()
    assert got["predicted_unknown"].str.startswith("the layer's CPU cost").all()
    assert got["predicted_note"].str.contains("read at its cap from fio's own time").all()
    assert not got["predicted_note"].str.contains("no cpu term").any()
    scored = predict.score(got, table)
    assert scored["interval_meets"].all() and (scored["measured_bw_bytes"] < scored["predicted_hi_bw_bytes"]).all()
    # where the cores carry less than the devices at that floor (a hundredth of a core: 286 MB/s at 1 job's
    # 3.5e-11 CPU-s a byte), the cpu term binds and is the interval's upper end
    scarce = predict.predict(base, "btrfs-raid0", points[:1], predict.Ceilings(cores=1e-2)).iloc[0]
    assert scarce["predicted_limit"] == "cpu"
    assert scarce["predicted_hi_bw_bytes"] == pytest.approx(1e-2 / floors[1], rel=1e-9)
