"""One device of the emulated array drifting 5% slower over the campaign: the reference measured again after the
layouts (BRACKET) shows it, the report names the drift, and no tax verdict it touches is given (analysis.drift).

The drift is made as a device warming or another tenant would make it: once the layout after the reference has
begun, the write cap of one of the two capped loop devices, in the campaign's own throttled cgroup, is lowered 5%
and left there. jbod runs a job on each device, so its bracket reads 2.5-5% slower at the write point, beyond the 2%
margin; the read caps are untouched, so the read point's verdict stands. The resume of a campaign killed in its
bracket is here too."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from flashscale.analysis import drift, evidence, stats
from flashscale.campaigns import campaign
from conftest import our_cgroups, run_beside

from test_resume import MEASURED_PER_LAYOUT, assert_whole_and_clean, finish, measured_rows, rows, start, wait_for

CAP = 100_000_000
SLOWER = 0.95


def _drift_one_device(data: Path, done: threading.Event, said: list) -> None:
    """Once btrfs-raid0's first run has a job file, the first device's write cap in our cgroups at 95%, for good."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not done.is_set():
        if list(data.glob("**/raw/btrfs-raid0/write-*/rep0/job.fio")):
            break
        time.sleep(0.05)
    else:
        said.append("btrfs-raid0 never started")
        return
    lowered = 0
    for group in our_cgroups():
        caps = group / "blkio.throttle.write_bps_device"
        rules = [line.split() for line in caps.read_text().splitlines() if line.strip()]
        if rules:
            majmin, bps = rules[0]
            caps.write_text(f"{majmin} {int(int(bps) * SLOWER)}")
            lowered += 1
    said.append(f"lowered one device in {lowered} cgroup(s)")


@pytest.mark.root
@pytest.mark.long
def test_a_device_drifting_5_percent_is_named_and_the_verdicts_it_touches_are_withheld(tmp_path, fast_backing):
    spec = campaign.CampaignSpec.from_parameters(
        CAMPAIGN="drift", DATA_DIR=str(tmp_path / "data"), BACKING_DIR=str(fast_backing), DEVICES=2,
        DEVICE_SIZE=2**30, CAP_READ_BPS=CAP, CAP_WRITE_BPS=CAP, LAYOUTS=["btrfs-raid0", "jbod"], RW=["write", "read"],
        BS=[2**20], NUMJOBS=[2], IODEPTH=[1], REPETITIONS=4, RUNTIME_S=2, RAMP_S=1, FILE_SIZE=64 * 2**20,
        BRACKET=True, TAX_MARGIN=0.02)
    result, said = run_beside(spec, _drift_one_device, tmp_path / "data")
    assert said and said[0].startswith("lowered one device in ") and not said[0].endswith(" 0 cgroup(s)"), said
    table = result.table
    # jbod first (BRACKET moves the reference before the layouts it brackets), btrfs-raid0, then jbod once more
    assert any("jbod was measured before btrfs-raid0" in note for note in result.notes), result.notes
    bracket = table[table["phase"] == "bracket"]
    assert sorted(bracket["layout"].unique()) == ["jbod"] and len(bracket) == 8
    assert set(bracket["build"]) == {1} and sorted(bracket["rep"].unique()) == [4, 5, 6, 7]
    assert (table[table["phase"] == "measure"]["build"] == 0).all()
    found = drift.drifts(table, "jbod", 0.02).set_index("rw")
    # one device of two at 95%: jbod's bracket between 2.5% (its two devices' rates summed) and 5% slower at write
    # (measured 3.5% and 4.0% at 3 runs a side: the job on the slower device also fsyncs its file system slower,
    # and the run's rate is the group's bytes over its longest job), unchanged at read (-0.3%)
    assert 0.02 < found.loc["write", "drift"] < 0.06 and found.loc["write", "drifted"], found
    # (the same campaign with nothing lowered, by hand: -0.07% at write, -0.03% at read, neither drifted)
    assert abs(found.loc["read", "drift"]) < 0.01 and not found.loc["read", "drifted"]
    summary = stats.summary_intervals(table, reference="jbod", baseline_bs=2**20, margin=0.02).set_index(
        ["layout", "rw"])
    assert summary.loc[("btrfs-raid0", "write"), "tax_verdict"] == drift.WITHHELD
    assert summary.loc[("btrfs-raid0", "read"), "tax_verdict"] != drift.WITHHELD
    sentences = [line for line in evidence.measurement_sentences(table, 0.02) if "drifted" in line]
    assert len(sentences) == 1 and "jbod drifted over the campaign" in sentences[0] and "at write" in sentences[0]


@pytest.mark.root
def test_a_campaign_killed_in_its_bracket_resumes_it_and_measures_each_run_once(tmp_path):
    """Killed (SIGKILL) once the bracket's first row is written: the resume measures the bracket's other runs, not
    the layouts before it again, and every run of the sweep and of the bracket is there exactly once."""
    bracketed = dict(LAYOUTS=["single", "btrfs-raid0"], BRACKET=True)  # against 2 x single: single is bracketed
    proc = start(tmp_path, **bracketed)
    wait_for(proc, lambda: any(r.get("phase") == "bracket" for r in rows(tmp_path)), "the bracket's first row",
             timeout=180)
    proc.kill()
    proc.communicate(timeout=60)
    kept = measured_rows(rows(tmp_path))
    before = [r for r in rows(tmp_path) if r.get("phase") == "bracket"]
    summary = finish(tmp_path, **bracketed)
    assert any("single was measured again after the layouts" in note for note in summary["notes"]), summary["notes"]
    table = assert_whole_and_clean(tmp_path, kept, [proc.pid])
    bracket = table[table["phase"] == "bracket"]
    keys = list(zip(bracket["point"], bracket["rep"]))
    assert len(keys) == len(set(keys)) == MEASURED_PER_LAYOUT and set(bracket["layout"]) == {"single"}
    assert all(r in rows(tmp_path) for r in before)  # what the bracket measured before the kill is kept
    assert (bracket["rep"] >= 2).all() and (bracket["build"] == 1).all()  # after the sweep's reps 0 and 1


def test_a_campaign_with_nothing_to_bracket_says_so_and_counts_no_bracket_among_its_runs(tmp_path):
    """BRACKET on plain directories with no layout taxed against jbod (the single device is never): nothing is
    swept again, the notes say why, and the progress counts only the sweeps that ran, ending at 0 left."""
    spec = campaign.CampaignSpec.from_parameters(
        CAMPAIGN="nobracket", DATA_DIR=str(tmp_path / "data"), BACKING_DIR=str(tmp_path), EMULATION="directory",
        DEVICES=2, LAYOUTS=["single", "jbod"], RW=["write"], BS=[2**20], NUMJOBS=[1], IODEPTH=[1], REPETITIONS=1,
        RUNTIME_S=1, RAMP_S=0, FILE_SIZE=16 * 2**20, BRACKET=True)
    result = campaign.run(spec, progress=False)
    assert (result.table["phase"] != "bracket").all() and set(result.table["layout"]) == {"single", "jbod"}
    assert any(note.startswith("BRACKET: nothing was bracketed: the campaign measured jbod") for note in result.notes)
    lines = (result.directory / "progress.log").read_text().splitlines()
    assert " on 2 layout(s)" in lines[0] and lines[-1].endswith("jbod done — 0 left"), lines
