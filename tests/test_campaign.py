"""Campaigns end to end with real fio: on the emulated array (root) and on plain directories (anywhere)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from flashscale.measure import campaign_folder
from flashscale.analysis import baseline_and_tax as analysis
from flashscale.campaigns import campaign
from flashscale.measure import harness, results
from flashscale.errors import ConfigError, UnsupportedError
from flashscale.system.devices import System
from flashscale.system.throttle import detect
from flashscale.system import idle

from conftest import interruptible, leftover_mounts, loop_devices_backed_under, sha256

# 2 s without a ramp, not 1 s after one: a capped read of 1 s after a 1 s ramp came out 1.04-1.09 x its cap (the
# throttle's first slice: too short to give a rate, measure.truth), of 2 s without one 0.99-1.00 x; the same 2 s a run
TINY = dict(RW=["write", "read"], BS=[1048576], NUMJOBS=[1, 2], IODEPTH=[1], REPETITIONS=1, RUNTIME_S=2, RAMP_S=0,
            FILE_SIZE=32 * 2**20, DEVICE_SIZE=2**30)


def spec(tmp_path: Path, **overrides) -> campaign.CampaignSpec:
    params = {"CAMPAIGN": "t", "DATA_DIR": str(tmp_path / "data"), "BACKING_DIR": str(tmp_path), **TINY,
              **overrides}
    return campaign.CampaignSpec.from_parameters(**params)


def test_bad_parameters_are_named_before_anything_runs(tmp_path):
    with pytest.raises(ConfigError, match="'raid5'"):
        spec(tmp_path, LAYOUTS=["single", "raid5"])
    with pytest.raises(ConfigError, match="EMULATION='qemu'"):
        spec(tmp_path, EMULATION="qemu")
    with pytest.raises(ConfigError, match="'../x'"):
        spec(tmp_path, CAMPAIGN="../x")
    assert not (tmp_path / "data").exists()


def test_a_cap_of_zero_is_uncapped_and_below_zero_is_refused(tmp_path):
    """CAP_READ_BPS / CAP_WRITE_BPS 0 (runners/uncapped.yaml): nothing throttled, so no cap_bps and no truth."""
    uncapped = spec(tmp_path, CAP_READ_BPS=0, CAP_WRITE_BPS=0)
    assert all(cap != cap for cap in uncapped.array.rw_caps().values())  # NaN: truth.evidence has no truth
    assert all(cap != cap for cap in uncapped.array.rw_caps("btrfs-raid0").values())
    assert spec(tmp_path, CAP_WRITE_BPS=0).array.rw_caps()["read"] == 200_000_000
    with pytest.raises(ConfigError, match="CAP_READ_BPS=-1"):
        spec(tmp_path, CAP_READ_BPS=-1)


@pytest.mark.parametrize("problem", [None, "flashscale is not running as root"], ids=["loop", "no-loop"])
def test_the_campaign_runs_where_its_place_says_it_will(tmp_path, monkeypatch, problem):
    """One decision of the place (``campaign.choose``): what a campaign runs on is what the notebooks' "what this
    machine can build" asks (``campaign.layout_support``: the same place), on a machine with and without loop
    devices; only emulation='loop' without them is refused instead, naming why."""
    monkeypatch.setattr(System, "loop_support_problem", lambda self: problem)
    bed = tmp_path / "bed.yaml"
    bed.write_text("devices: []\n")
    expected = {("auto", None): "directory" if problem else "loop", ("loop", None): "loop",
                ("directory", None): "directory", ("auto", str(bed)): "testbed"}
    for (emulation, testbed), backend in expected.items():
        spec = campaign.CampaignSpec("t", emulation=emulation, testbed=testbed)
        if emulation == "loop" and problem and not testbed:
            with pytest.raises(UnsupportedError, match=f"emulation='loop' was asked for but {problem}"):
                campaign.choose(spec)
            continue
        place = campaign.choose(spec)
        assert place.backend == backend == campaign.place_here(emulation, testbed).backend, (emulation, testbed)
        assert (place.notes == []) == (backend == "loop")
        assert problem is None or emulation != "auto" or testbed or problem in place.notes[0]


def test_directory_fallback_measures_and_says_so(tmp_path):
    result = campaign.run(spec(tmp_path, EMULATION="directory", DEVICES=2, LAYOUTS=["single", "jbod", "btrfs-raid0"],
                               NUMJOBS=[2], RW=["write"], WARMUP=True), progress=False)
    assert result.backend == "directory"
    assert any("plain directories" in n for n in result.notes) and any("btrfs-raid0" in n for n in result.notes)
    table = result.table
    assert set(table["layout"]) == {"single", "jbod"} and set(table["backend"]) == {"directory"}
    assert table["cap_bps"].isna().all() and (table["bw_bytes"] > 0).all()
    # each layout starts with its precondition, then the warm-up and the measured run of its one point
    assert list(table["phase"]) == ["precondition", "measure", "measure"] * 2
    assert list(table["warmup"]) == [False, True, False] * 2
    # off the emulated array there is no known truth to hold a row to
    assert table["truth_bw_bytes"].isna().all() and not table["above_truth"].any()
    assert table.loc[table["layout"] == "jbod", "devices"].unique().tolist() == [2]
    # every run keeps its job file and fio's JSON, and the table can be rebuilt from the line log
    for raw in table["raw_dir"]:
        assert (result.directory / raw / "job.fio").exists() and (result.directory / raw / "fio.json").exists()
        env = json.loads((result.directory / raw / "env.json").read_text())
        assert env["fio"].startswith("fio-") and env["backend"] == "directory" and env["row"]["raw_dir"] == raw
    pd.testing.assert_frame_equal(results.rebuild_table(result.directory), table)
    # the scratch directories and fio's files are gone
    assert [p.name for p in result.directory.iterdir() if p.name.startswith("scratch-")] == []
    # jbod was predicted from single's rows before its first run; every run says how many CPUs were busy
    stated = result.predictions
    assert set(stated["layout"]) == {"jbod"} and stated["predicted_at"].max() <= table.loc[
        table["layout"] == "jbod", "started_at"].min()
    assert (table["cpu_busy_cores"] > 0).all() and (table["fio_usr_cpu"] + table["fio_sys_cpu"] > 0).all()
    # and to what idle latency its CPUs were held (0: they polled), where this machine lets a process hold one
    held = table["cpu_latency_us"]
    assert (held == 0).all() if idle.why_not() is None else held.isna().all()


def test_a_rerun_keeps_the_earlier_campaign(tmp_path):
    first = campaign.run(spec(tmp_path, EMULATION="directory", LAYOUTS=["single"], RW=["read"], NUMJOBS=[1]),
                         progress=False)
    os.utime(first.directory, (0, 0))
    second = campaign.run(spec(tmp_path, EMULATION="directory", LAYOUTS=["single"], RW=["read"], NUMJOBS=[1]),
                          progress=False)
    assert second.directory == first.directory
    kept = tmp_path / "data" / "t.19700101T000000Z"
    assert (kept / campaign_folder.ROWS_FILE).exists() and (kept / "raw").is_dir()


@pytest.mark.root
def test_emulated_campaign_finds_the_known_answer_and_leaves_nothing(tmp_path, fast_backing, foreign_loop, monkeypatch):
    rows_when_stated = {}
    append = campaign_folder.append_predictions

    def stating(directory, prediction):  # what rows.jsonl held when each layout's prediction was written
        rows_when_stated[prediction["layout"].iloc[0]] = campaign_folder.read_rows(directory)[0]
        append(directory, prediction)

    monkeypatch.setattr(campaign_folder, "append_predictions", stating)
    result = campaign.run(spec(tmp_path, DEVICES=2, CAP_READ_BPS=100_000_000, CAP_WRITE_BPS=100_000_000,
                               LAYOUTS=["single", "jbod", "btrfs-raid0"], BACKING_DIR=str(fast_backing)),
                          progress=False)
    # the caps were kept and the backing files are in memory: nothing to say (harness.json)
    assert result.backend == "loop" and result.notes == []
    assert all(not fit.adjusted for fit in harness.read(result.directory).values())
    table = result.table[result.table["phase"] == "measure"]  # each layout's precondition is not a measurement
    assert (result.table["phase"] == "precondition").sum() == 3
    # every measured row agrees with the known truth of the emulated array: devices x cap, and no more
    assert (table["truth_bw_bytes"] == table["devices"] * 100_000_000).all() and not table["above_truth"].any()
    summary = analysis.summarize(table, reference="jbod")
    jbod = summary[summary["layout"] == "jbod"].set_index("rw")
    assert jbod.loc["read", "efficiency"] == pytest.approx(1.0, abs=0.1)
    assert jbod.loc["write", "efficiency"] == pytest.approx(1.0, abs=0.1)
    base = analysis.baseline(table).set_index("rw")["baseline_bw_bytes"]
    assert base["read"] == pytest.approx(100_000_000, rel=0.1) and base["write"] == pytest.approx(100_000_000, rel=0.1)
    assert set(summary["layout"]) == {"single", "jbod", "btrfs-raid0"}
    # each layout after the baseline was predicted before it was built: single's rows only, then its own first run
    assert sorted(rows_when_stated) == ["btrfs-raid0", "jbod"]
    assert {r["layout"] for r in rows_when_stated["jbod"]} == {"single"}
    assert {r["layout"] for r in rows_when_stated["btrfs-raid0"]} == {"single", "jbod"}
    stated = result.predictions
    for layout, first in result.table.groupby("layout")["started_at"].min().drop("single").items():
        assert stated.loc[stated["layout"] == layout, "predicted_at"].max() <= first
    # the known truth predicted by the devices' term: 2 jobs keep both capped devices busy, 1 job one; the devices
    # bind: a capped device's CPU cost is fio's own time per byte (predict.curve: a floor), so the cpu term, where
    # fio recorded any, lies far above them. A harness check, not evidence of the model's accuracy: N x the cap is
    # the truth by construction
    jbod = stated[stated["layout"] == "jbod"].set_index(["rw", "numjobs"])
    for rw in ("read", "write"):
        assert jbod.loc[(rw, 2), "devices_limit_bw_bytes"] == pytest.approx(200_000_000, rel=0.1)
        assert jbod.loc[(rw, 1), "devices_limit_bw_bytes"] == pytest.approx(100_000_000, rel=0.1)
    cpu = stated["cpu_limit_bw_bytes"]
    assert (cpu.isna() | (cpu > stated["devices_limit_bw_bytes"])).all() and (stated["predicted_limit"] == "devices").all()
    assert (stated["predicted_bw_bytes"] == stated["devices_limit_bw_bytes"]).all()
    assert stated["predicted_note"].str.contains("read at its cap from fio's own time|no CPU cost from the single").all()
    assert (table["cpu_busy_cores"] > 0).all()
    assert loop_devices_backed_under(fast_backing) == []
    assert leftover_mounts(result.directory) == []
    assert sha256(foreign_loop["path"]) == foreign_loop["sha256"]


INTERRUPTED = """
import sys
from flashscale.campaigns import campaign
spec = campaign.CampaignSpec.from_parameters(CAMPAIGN="int", DATA_DIR=sys.argv[1] + "/data", BACKING_DIR=sys.argv[1],
    DEVICES=2, DEVICE_SIZE=2**30, LAYOUTS=["jbod"], RW=["write"], NUMJOBS=[2], RUNTIME_S=30, RAMP_S=0,
    FILE_SIZE=32 * 2**20)
campaign.run(spec, progress=False)
"""


@pytest.mark.root
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl_c", "sigterm"])
def test_an_interrupt_tears_everything_down_and_keeps_what_was_measured(tmp_path, foreign_loop, sig):
    proc = subprocess.Popen([sys.executable, "-c", INTERRUPTED, str(tmp_path)], stderr=subprocess.PIPE, text=True,
                            preexec_fn=interruptible)
    deadline = time.time() + 60
    while time.time() < deadline and not list((tmp_path / "data").glob("int/raw/jbod/*/rep0/job.fio")):
        time.sleep(0.2)
    time.sleep(2)  # fio is running on the mounted array now
    if not loop_devices_backed_under(tmp_path):
        proc.kill()
        pytest.fail(f"the array was not built or already gone: {proc.communicate()[1][-2000:]}")
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=120)
    assert "KeyboardInterrupt" in stderr
    assert loop_devices_backed_under(tmp_path) == []
    assert leftover_mounts(tmp_path / "data" / "int") == []
    assert not list(detect()[1].glob(f"flashscale-{proc.pid}-*"))  # the cgroup root, v1 or v2
    assert list(tmp_path.glob("flashscale-array-*")) == []
    assert json.loads((tmp_path / "data" / "int" / "campaign.json").read_text())["spec"]["name"] == "int"
    assert sha256(foreign_loop["path"]) == foreign_loop["sha256"]
