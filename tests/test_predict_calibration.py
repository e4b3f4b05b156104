"""A layer's own cost (``flashscale.analysis.prediction.calibration``), measured on fewer devices than it predicts: known
layers recovered (a fixed time per request on null_blk members, a CPU cost per byte on a machine of two cores),
the calibration's points matched to the larger layout's, and never the layout it is scored on."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from flashscale.analysis.prediction import calibration, predict
from flashscale.system import nullblk
from flashscale.errors import AnalysisError

LATENCY = 1_000_000  # ns: null_blk members of 1 ms
DEPTH = 8
BS = 4096
LAYER_S = 0.0005  # the layer's own time per request: 0.5 ms
MiB = 2**20


def _single() -> pd.DataFrame:
    rows = []
    for qd in (1, 2, 4, 8, 16, 32, 64):
        bw = nullblk.expected_bw(BS, 1, qd, LATENCY, DEPTH)
        rows += [dict(layout="single", devices=1, rw="randread", bs=BS, numjobs=1, iodepth=qd, rep=rep, bw_bytes=bw,
                      lat_mean_ns=min(qd, DEPTH) and qd * BS * 1e9 / bw) for rep in (0, 1)]
    return pd.DataFrame(rows)


def _with_layer(base: pd.DataFrame, devices: int, depths) -> pd.DataFrame:
    """What a stripe of ``devices`` null_blk members behind a layer that adds ``LAYER_S`` to each request
    delivers: k requests in flight each take the members' time plus the layer's (Little's law)."""
    points = [dict(devices=devices, rw="randread", bs=BS, numjobs=1, iodepth=qd) for qd in depths]
    raw = predict.predict(base, "md-raid0", points, chunk_bytes=BS)
    work = raw["iodepth"] * BS
    truth = work / (work / raw["predicted_bw_bytes"] + LAYER_S)
    return pd.DataFrame([dict(layout="md-raid0", devices=devices, rw="randread", bs=BS, numjobs=1, iodepth=qd,
                              rep=rep, bw_bytes=bw) for qd, bw in zip(raw["iodepth"], truth) for rep in (0, 1)])


def _measured_on_two(base: pd.DataFrame, depths) -> tuple[pd.DataFrame, pd.DataFrame]:
    """md-raid0 measured on 2 devices at ``depths`` with the layer's known cost, and the raw model's prediction of
    those points."""
    measured = _with_layer(base, 2, depths)
    raw = predict.predict(base, "md-raid0", measured[["devices", "rw", "bs", "numjobs", "iodepth"]].drop_duplicates(),
                          chunk_bytes=BS)
    return measured, raw


def _calibrated_on_two(base: pd.DataFrame, depths) -> calibration.LayerCost:
    measured, raw = _measured_on_two(base, depths)
    return calibration.calibrate(raw, measured, "md-raid0", 2)


def test_a_layer_of_a_known_time_per_request_is_recovered_on_two_devices_and_predicts_four():
    base = predict.curve(_single())
    depths = (1, 4, 16, 64)
    cost = _calibrated_on_two(base, depths)
    assert cost.points["layer_s_per_io"].tolist() == pytest.approx([LAYER_S] * len(depths))
    assert cost.source == "md-raid0 on 2 devices"
    points = [dict(devices=4, rw="randread", bs=BS, numjobs=1, iodepth=qd) for qd in depths]
    got = predict.predict(base, "md-raid0", points, chunk_bytes=BS, layer=cost).set_index("iodepth")
    truth = _with_layer(base, 4, depths).groupby("iodepth")["bw_bytes"].mean()
    assert got["predicted_bw_bytes"].to_dict() == pytest.approx(truth.to_dict())
    assert (got["predicted_limit"] == "layer").all() and "layer cost from md-raid0 on 2 devices" in got[
        "predicted_note"].iloc[0]
    without = predict.predict(base, "md-raid0", points, chunk_bytes=BS).set_index("iodepth")
    assert (without["predicted_bw_bytes"] > truth * 1.05).any()  # the raw model misses what the layer costs


def test_a_point_the_calibration_did_not_measure_takes_its_nearest_and_says_so():
    base = predict.curve(_single())
    cost = _calibrated_on_two(base, (1, 16))
    seconds, _, note = cost.at("randread", BS, 1, 8)
    assert seconds == pytest.approx(LAYER_S) and "nearest point" in note and "iodepth 16" in note
    seconds, _, _ = cost.at("randread", 2 * BS, 1, 16)  # one block size measured: its cost is taken per byte
    assert seconds == pytest.approx(2 * LAYER_S)
    assert np.isnan(cost.at("randwrite", BS, 1, 1)[0])


def test_a_layer_s_cpu_per_byte_binds_on_a_machine_of_two_cores():
    """One device reads 5 GB/s on a core (0.2 ns a byte, the loop worker's copy); the layer costs 0.2 ns a byte
    more. Two cores carry 5 GB/s through it, whatever the devices: the calibration on 2 devices finds the 0.2 ns
    and the cpu term holds 4 devices at 5 GB/s."""
    single = pd.DataFrame([dict(layout="single", devices=1, rw="read", bs=MiB, numjobs=nj, iodepth=1, rep=rep,
                                bw_bytes=5e9 * nj, cpu_busy_cores=1.0 * nj) for nj in (1, 2, 4) for rep in (0, 1)])
    base = predict.curve(single)
    limits = predict.Ceilings(cores=2)
    layered = pd.DataFrame([dict(layout="btrfs-raid0", devices=2, rw="read", bs=MiB, numjobs=nj, iodepth=1, rep=rep,
                                 bw_bytes=5e9, cpu_busy_cores=2.0) for nj in (2, 4) for rep in (0, 1)])
    points = layered[["devices", "rw", "bs", "numjobs", "iodepth"]].drop_duplicates()
    cost = calibration.calibrate(predict.predict(base, "btrfs-raid0", points, limits), layered, "btrfs-raid0", 2)
    assert cost.points["layer_cpu_s_per_byte"].tolist() == pytest.approx([0.2e-9, 0.2e-9])
    got = predict.predict(base, "btrfs-raid0", [dict(devices=4, rw="read", bs=MiB, numjobs=4, iodepth=1)], limits,
                          layer=cost).iloc[0]
    assert got["predicted_bw_bytes"] == pytest.approx(5e9)
    assert got["cpu_limit_bw_bytes"] == pytest.approx(5e9) and got["layer_cpu_s_per_byte"] == pytest.approx(0.2e-9)


def test_per_request_and_per_byte_are_told_apart_at_two_block_sizes():
    """At two block sizes, the layer's time per request a + b x bs is fitted: 0.1 ms a request and 1 ns a byte."""
    frame = pd.DataFrame([dict(rw="read", bs=bs, numjobs=1, iodepth=1, predicted_bw_bytes=1e9, cpu_s_per_byte=np.nan)
                          for bs in (64 * 1024, MiB)])
    measured = pd.DataFrame([dict(layout="lvm-striped", devices=2, rw="read", bs=bs, numjobs=1, iodepth=1, rep=0,
                                  bw_bytes=bs / (bs / 1e9 + 1e-4 + 1e-9 * bs)) for bs in (64 * 1024, MiB)])
    cost = calibration.calibrate(frame.assign(devices=2), measured, "lvm-striped", 2)
    assert cost.points["per_io_s"].tolist() == pytest.approx([1e-4] * 2)
    assert cost.points["per_byte_s"].tolist() == pytest.approx([1e-9] * 2)
    seconds, _, _ = cost.at("read", 256 * 1024, 1, 1)
    assert seconds == pytest.approx(1e-4 + 1e-9 * 256 * 1024)


def test_a_calibration_never_measures_what_it_is_scored_on():
    base = predict.curve(_single())
    measured, raw = _measured_on_two(base, (1, 4))
    cost = calibration.calibrate(raw, measured, "md-raid0", 2)
    with pytest.raises(AnalysisError, match="measured on 2 devices, the layout and count it would predict"):
        predict.predict(base, "md-raid0", [dict(devices=2, rw="randread", bs=BS, numjobs=1, iodepth=1)],
                        chunk_bytes=BS, layer=cost)
    with pytest.raises(AnalysisError, match="no lvm-striped rows on 2 devices"):
        calibration.calibrate(raw, measured, "lvm-striped", 2)


def test_devices_that_do_not_add_up_show_the_host_s_ceiling_and_a_layer_held_by_it_does_not_grow():
    """The VM lab's emulated devices, served by the same two cores as the guest: one device reads 1.6 GB/s, two in a
    jbod 1.7 (they share the host), md on two 1.0. The host's ceiling is jbod's 1.7; held by it, md on four reads what
    md on two did, where the raw devices' 4 x 1.6 with md's time per request added would say 1.2."""
    single = pd.DataFrame([dict(layout="single", devices=1, rw="read", bs=MiB, numjobs=nj, iodepth=1, rep=rep,
                                bw_bytes=1.6e9 * (1 + 0.01 * rep)) for nj in (1, 2) for rep in (0, 1, 2)])
    base = predict.curve(single)

    def two(layout, one_job, two_jobs):
        return pd.DataFrame([dict(layout=layout, devices=2, rw="read", bs=MiB, numjobs=nj, iodepth=1, rep=rep,
                                  bw_bytes=bw * (1 + 0.01 * rep)) for nj, bw in ((1, one_job), (2, two_jobs))
                             for rep in (0, 1, 2)])
    jbod, md = two("jbod", 1.6e9, 1.7e9), two("md-raid0", 0.9e9, 1.0e9)
    points = jbod[["devices", "rw", "bs", "numjobs", "iodepth"]].drop_duplicates()
    host = calibration.host_ceiling(predict.predict(base, "jbod", points), jbod)
    assert host == pytest.approx({"read": 1.7e9 * 1.01})  # its best point's mean
    raw = predict.predict(base, "md-raid0", points, chunk_bytes=128 * 1024, host=host)
    cost = calibration.calibrate(raw, md, "md-raid0", 2)
    four = predict.predict(base, "md-raid0", [dict(devices=4, rw="read", bs=MiB, numjobs=2, iodepth=1)],
                           chunk_bytes=128 * 1024, layer=cost, host=host).iloc[0]
    assert four["predicted_bw_bytes"] == pytest.approx(1.0e9 * 1.01) and four["predicted_limit"] == "layer"
    assert four["host_limit_bw_bytes"] == pytest.approx(1.7e9 * 1.01) and "host: several devices" in four[
        "predicted_note"]
    loose = predict.predict(base, "md-raid0", [dict(devices=4, rw="read", bs=MiB, numjobs=2, iodepth=1)],
                            chunk_bytes=128 * 1024, layer=calibration.calibrate(
                                predict.predict(base, "md-raid0", points, chunk_bytes=128 * 1024), md, "md-raid0", 2))
    assert loose["predicted_bw_bytes"].iloc[0] == pytest.approx(1 / (1 / 6.464e9 + 1 / 1.01e9 - 1 / 3.232e9))  # grows
    added_up = two("jbod", 1.6e9, 3.2e9)
    assert calibration.host_ceiling(predict.predict(base, "jbod", points), added_up) == {}


def test_analyze_calibrates_a_layout_from_its_own_points_on_fewer_devices_and_recovers_the_known_layer():
    """``predict_results`` (``analyze --predict``) takes a layout's own points on the largest count of at least 2
    below the one it predicts as its calibration (``predict.own_calibration``). A table whose md-raid0 spends a
    known 2 ms a request in its layer on top of the raw model's own prediction, on 2 and on 4 devices: the 4's
    prediction recovers the truth, and its lower end is no longer open for the layer's cost; without the 2-device
    rows it is (and misses the truth by what the layer costs)."""
    model = predict
    single = pd.DataFrame([dict(layout="single", devices=1, rw="read", bs=2**22, numjobs=j, iodepth=1, rep=r,
                                bw_bytes=1e9 * j / (1 + j / 2) * (1 + 0.001 * (r - 1))) for j in (1, 2, 4)
                           for r in range(3)])
    base, layer = model.curve(single), 0.002
    rows = []
    for count in (2, 4):
        points = pd.DataFrame([dict(devices=count, rw="read", bs=2**22, numjobs=count * j, iodepth=1)
                               for j in (1, 2)])
        raw = model.predict(base, "md-raid0", points, chunk_bytes=2**16)
        work = raw["numjobs"] * raw["iodepth"] * raw["bs"]
        truth = work / (work / raw["predicted_bw_bytes"] + layer)
        rows += [dict(layout="md-raid0", devices=count, rw="read", bs=2**22, numjobs=int(p.numjobs), iodepth=1,
                      rep=r, bw_bytes=t * (1 + 0.001 * (r - 1)), chunk_bytes=2**16)
                 for p, t in zip(raw.itertuples(), truth) for r in range(3)]
    table = pd.concat([single, pd.DataFrame(rows)], ignore_index=True)
    got = model.predict_results(table).set_index(["devices", "numjobs"])
    four = got.loc[4]
    truths = table[table["devices"] == 4].groupby("numjobs")["bw_bytes"].mean()
    assert four["predicted_bw_bytes"].to_numpy() == pytest.approx(truths.to_numpy(), rel=0.01)
    assert four["layer_s_per_io"].to_numpy() == pytest.approx([layer, layer], rel=0.02)
    assert not four["predicted_unknown"].str.contains("the layer's CPU cost").any()
    assert four["predicted_note"].str.contains("layer cost from md-raid0 on 2 devices").all()
    alone = model.predict_results(table[table["devices"] != 2]).set_index("numjobs")
    assert alone["predicted_unknown"].str.startswith("the layer's CPU cost").all()
    assert (alone["predicted_bw_bytes"] > truths * 1.05).all()
