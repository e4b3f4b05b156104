"""An application's rate of bytes is held to the emulated array's truth as fio's runs are: devices x the cap of each
direction it moves every byte in, checked over the time of its own run, and named by the evidence sentences when
it comes out above (issue 23, part 7). The real programs on loop devices: test_bonnie_loop, test_transfer_loop."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from flashscale.analysis import applications as app_analysis, evidence
from flashscale.arrays.layouts import Layout
from flashscale.measure.workloads import common
from flashscale.measure import truth

CAP = 200_000_000
JBOD = Layout("jbod", 2, ("/mnt/a", "/mnt/b"), "loop", "two file systems")


class Recorder:
    """What ``metric_row`` asks of the campaign's recorder: the header of a row, the caps of the known truth."""

    def __init__(self, caps):
        self.caps = caps

    def header(self, layout, phase, workload):
        return {"layout": layout.name, "devices": layout.devices, "phase": phase, "workload": workload}

    def truth_caps(self, cgroup_procs):
        return {d: self.caps[d] for d in ("read", "write") if d in self.caps} if cgroup_procs else {}


def row(recorder, metric, value, unit, seconds, directions=(), cgroup=(Path("/cgroup/procs"),)):
    return common.metric_row(recorder, JBOD, cgroup, workload="transfer", metric=metric, value=value, unit=unit,
                             raw=Path("raw"), point="s4", rep=0, numjobs=4, bs=2**20, runtime_s=seconds,
                             started="now", directions=directions)


def test_the_truth_is_the_devices_times_the_slower_direction_the_bytes_move_in():
    recorder = Recorder({"read": 300_000_000, "write": CAP})
    assert common.truth(recorder, JBOD, ["procs"], ("write",)) == 2 * CAP
    assert common.truth(recorder, JBOD, ["procs"], ("read",)) == 600_000_000
    assert common.truth(recorder, JBOD, ["procs"], ("read", "write")) == 2 * CAP  # a copy, a rewrite
    assert math.isnan(common.truth(recorder, JBOD, [], ("write",)))  # outside the throttled cgroup: no truth
    assert math.isnan(common.truth(Recorder({"write": CAP}), JBOD, ["procs"], ("read", "write")))


def test_a_rate_above_its_truth_beyond_the_throttles_tolerance_is_flagged():
    recorder = Recorder({"read": CAP, "write": CAP})
    allowed = common.tolerance(5.0)
    assert allowed == pytest.approx(truth.tolerance(5.0) + truth.THROTTLE_SLICE_S / 5.0)
    within = row(recorder, "write_bw", 2 * CAP * 1.019, "bytes/s", 5.0, ("write",))
    sliced = row(recorder, "write_bw", 2 * CAP * (1 + allowed * 0.9), "bytes/s", 5.0, ("write",))
    above = row(recorder, "write_bw", 2 * CAP * (1 + allowed * 1.1), "bytes/s", 5.0, ("write",))
    assert within["truth_bw_bytes"] == 2 * CAP and not within["above_truth"] and not within["too_short"]
    # more than 2% above, within what the throttle's slices explain: no rate, not an error
    assert sliced["too_short"] and not sliced["above_truth"]
    assert above["above_truth"] and above["bw_bytes"] == above["value"]
    assert row(recorder, "write_bw", CAP, "bytes/s", 0.5, ("write",))["too_short"]
    files = row(recorder, "write_files", 40.0, "files/s", 5.0)
    assert "truth_bw_bytes" not in files and files["iops"] == pytest.approx(40.0)  # files/s is no rate of bytes
    uncapped = row(recorder, "write_bw", 10 * CAP, "bytes/s", 5.0, ("write",), cgroup=())
    assert math.isnan(uncapped["truth_bw_bytes"]) and not uncapped["above_truth"]
    unknown = row(recorder, "block_read", float("nan"), "bytes/s", float("nan"), ("read",))  # bonnie++'s +++++
    assert unknown["truth_bw_bytes"] == 2 * CAP and not unknown["above_truth"] and not unknown["too_short"]


def _table(above: bool) -> pd.DataFrame:
    fio = dict(layout="jbod", devices=2, rw="write", bs=2**20, numjobs=4, iodepth=1, rep=0, phase="measure",
               workload="fio", status="ok", bw_bytes=4e8, truth_bw_bytes=4e8, above_truth=False, runtime_s=2.0)
    write = dict(fio, rw="write_bw", metric="write_bw", point="transfer-s4", phase="workload", workload="transfer",
                 bw_bytes=4.4e8 if above else 3.9e8, value=4.4e8 if above else 3.9e8, above_truth=above)
    files = dict(write, rw="write_files", metric="write_files", bw_bytes=np.nan, truth_bw_bytes=np.nan,
                 above_truth=False)
    return pd.DataFrame([fio, write, files])


def test_the_evidence_names_an_application_rate_above_its_truth():
    said = evidence.truth_sentences(_table(above=True))
    assert said == ["1 run(s) came out above the emulated array's known cap: jbod (2 device(s)) write_bw of "
                    "transfer-s4 rep 0: 440 MB/s against 400 MB/s (110%) — a measurement error to investigate, not "
                    "a result."]
    assert evidence.truth_sentences(_table(above=False)) == [
        "Every run within its known cap: all 2 run(s) with a known truth (devices x cap) came out at or below it, "
        "within the throttle's tolerance."]


def test_the_transfer_s_433_mb_s_on_devices_that_allow_400_gives_no_rate():
    """What the applications' report accepted: the transfer's write phase, about a second, wrote 433 MB/s to two
    devices capped at 200 MB/s (1.08 x), excused by the throttle's first slice (then a tolerance of 19% at 1.07 s).
    It is too short to give a rate, and the evidence says why; no application's rate above 2% of its truth is
    published (its tax is none)."""
    recorder = Recorder({"read": CAP, "write": CAP})
    short = row(recorder, "write_bw", 433e6, "bytes/s", 1.07, ("write",))
    assert short["too_short"] and not short["above_truth"]
    table = pd.DataFrame([dict(layout="jbod", devices=2, rw="write", bs=2**20, numjobs=4, iodepth=1, rep=0,
                               phase="measure", workload="fio", status="ok", bw_bytes=4e8, truth_bw_bytes=4e8,
                               above_truth=False, too_short=False, runtime_s=6.0),
                          {**short, "status": "ok", "iodepth": 1, "warmup": False}])
    said = evidence.too_short_sentences(table)
    assert said == ["jbod (2 device(s)) write_bw of transfer-s4 took 1.07 s: it came out 8.3% above the devices' "
                    "cap, and the throttle's first 0.1 s slice is 9.3% of its 1.07 s: no rate within 2% of its truth "
                    "(runs of 5 s or more give one)."]
    assert evidence.truth_sentences(table) == [
        "Every run within its known cap: all 2 run(s) with a known truth (devices x cap) came out at or below it, "
        "within the throttle's tolerance (1 of them more than 2% above it by the throttle's first slice: too short to "
        "give a rate, named below)."]
    shown = app_analysis.rated(table).iloc[1]  # the transfer's row as a report shows it: no value, and why
    assert pd.isna(shown["value"]) and pd.isna(shown["bw_bytes"]) and shown["missing_reason"] == app_analysis.SHORT
    taxes = app_analysis.tax(table)
    assert taxes["tax"].isna().all() and taxes["missing_reason"].str.contains("too short").all()
