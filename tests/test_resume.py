"""Campaigns that survive (issue 11): interrupted on loop devices, resumed, nothing lost, nothing measured twice,
nothing left on the machine (killed at every named point in turn: ``test_kill_points.py``). The campaign runs in a subprocess (``campaign.run``) so it can
be killed like ``flashscale run``'s kernel is."""
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
from flashscale.measure import results
from flashscale.system.lock import LOCK_FILE
from flashscale.system.teardown import manifest_dir
from flashscale.system.throttle import detect

from conftest import interruptible, leftover_mounts, loop_devices_backed_under

pytestmark = pytest.mark.root

SCRIPT = """
import json, sys
from flashscale.campaigns import campaign
params = json.loads(sys.argv[1])
result = campaign.run(campaign.CampaignSpec.from_parameters(**params), progress=False)
print(json.dumps({"notes": result.notes, "rows": len(result.table)}))
"""
TINY = dict(CAMPAIGN="survive", DEVICES=2, DEVICE_SIZE=2**30, LAYOUTS=["single", "jbod"], RW=["write", "read"],
            BS=[1048576], NUMJOBS=[1], IODEPTH=[1], REPETITIONS=2, RUNTIME_S=1, RAMP_S=0, FILE_SIZE=16 * 2**20)
MEASURED_PER_LAYOUT = 4  # 2 rw x 2 repetitions


def start(tmp_path: Path, env_extra: dict | None = None, **extra) -> subprocess.Popen:
    params = {**TINY, "DATA_DIR": str(tmp_path / "data"), "BACKING_DIR": str(tmp_path), **extra}
    return subprocess.Popen([sys.executable, "-c", SCRIPT, json.dumps(params)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=interruptible,
                            env={**os.environ, **(env_extra or {})})


def folder(tmp_path: Path) -> Path:
    return tmp_path / "data" / "survive"


def rows(tmp_path: Path) -> list[dict]:
    found, _ = campaign_folder.read_rows(folder(tmp_path))
    return found


def wait_for(proc: subprocess.Popen, condition, what: str, timeout: float = 90) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return
        if proc.poll() is not None:
            pytest.fail(f"the campaign ended before {what}: {proc.communicate()[1][-3000:]}")
        time.sleep(0.05)
    proc.kill()
    pytest.fail(f"timed out waiting for {what}")


def fio_running(tmp_path: Path) -> bool:
    """A measured run has started (its job file is there) and has no row yet."""
    return any(not (job.parent / "env.json").exists()
               for job in folder(tmp_path).glob("raw/*/*/rep*/job.fio"))


def kill(proc: subprocess.Popen, sig: int) -> str:
    proc.send_signal(sig)
    return proc.communicate(timeout=120)[1]


def finish(tmp_path: Path, **extra) -> dict:
    proc = start(tmp_path, RESUME=True, **extra)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def measured_rows(found: list[dict]) -> dict:
    return {(r["layout"], r["point"], r["rep"]): r for r in found if r["phase"] == "measure"}


def assert_whole_and_clean(tmp_path: Path, kept: dict, pid_lists: list[int]) -> pd.DataFrame:
    table = results.rebuild_table(folder(tmp_path))
    runs = table[table["phase"] == "measure"]
    keys = list(zip(runs["layout"], runs["point"], runs["rep"]))
    assert len(keys) == len(set(keys)) == 2 * MEASURED_PER_LAYOUT, keys  # every run exactly once
    final = measured_rows(rows(tmp_path))
    for key, row in kept.items():  # what finished before a kill is there, unchanged
        assert final[key] == row
    assert (runs["status"] == "ok").all() and (runs["bw_bytes"] > 0).all()
    assert len(analysis.measured(table)) == 2 * MEASURED_PER_LAYOUT
    assert loop_devices_backed_under(tmp_path) == []
    assert leftover_mounts(folder(tmp_path)) == []
    cgroups = list(detect()[1].glob("flashscale-*"))
    assert not [c for c in cgroups if any(f"flashscale-{pid}-" in c.name for pid in pid_lists)]
    assert not [m for m in manifest_dir().glob("*.json")
                if json.loads(m.read_text()).get("pid") in pid_lists]
    assert list(tmp_path.glob("flashscale-array-*")) == []
    assert not (folder(tmp_path) / LOCK_FILE).exists()
    return table


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_interrupted_by_a_signal_then_resumed(tmp_path, sig):
    proc = start(tmp_path)
    wait_for(proc, lambda: len(measured_rows(rows(tmp_path))) >= 2 and fio_running(tmp_path), "a fio run")
    stderr = kill(proc, sig)
    assert "KeyboardInterrupt" in stderr and loop_devices_backed_under(tmp_path) == []
    kept = measured_rows(rows(tmp_path))
    summary = finish(tmp_path)
    assert any("Resumed" in note for note in summary["notes"])
    assert_whole_and_clean(tmp_path, kept, [proc.pid])


def test_a_second_run_refuses_while_the_first_lives_and_a_change_is_refused(tmp_path):
    first = start(tmp_path)
    wait_for(first, lambda: (folder(tmp_path) / LOCK_FILE).exists(), "the lock")
    holder = json.loads((folder(tmp_path) / LOCK_FILE).read_text())["pid"]
    second = start(tmp_path, RESUME=True)
    _, err = second.communicate(timeout=60)
    assert second.returncode != 0 and f"in use by process {holder}" in err
    wait_for(first, lambda: fio_running(tmp_path), "a fio run")
    kill(first, signal.SIGKILL)
    changed = start(tmp_path, RESUME=True, CAP_READ_BPS=50_000_000)
    _, err = changed.communicate(timeout=120)
    assert changed.returncode != 0 and "array.read_bps: 200000000 then, 50000000 now" in err
    assert "FORCE_RESUME" in err
    forced = finish(tmp_path, FORCE_RESUME=True, CAP_READ_BPS=50_000_000)
    assert any("FORCE_RESUME" in note and "read_bps" in note for note in forced["notes"])
    assert loop_devices_backed_under(tmp_path) == []


def test_a_failing_fio_run_is_a_failed_row_and_the_sweep_goes_on(tmp_path):
    """Eight jobs of 200 MiB each do not fit on one 512 MiB device: fio fails with no space left; one job does, and
    the sweep goes on to the read points after the failure."""
    proc = start(tmp_path, LAYOUTS=["single"], DEVICE_SIZE=512 * 2**20, RW=["write", "read"], NUMJOBS=[1, 8],
                 REPETITIONS=1, FILE_SIZE=200 * 2**20, PRECONDITION=False)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]
    table = results.rebuild_table(folder(tmp_path)).set_index(["rw", "numjobs"])
    failed = table.loc[("write", 8)]
    assert failed["status"] == "failed" and "No space left on device" in failed["error"], failed["error"]
    assert pd.isna(failed["bw_bytes"]) and pd.isna(failed["io_bytes"])
    for ok in [("write", 1), ("read", 1)]:  # before the failure, and after it
        assert table.loc[ok, "status"] == "ok" and table.loc[ok, "bw_bytes"] > 0
    assert ("write", 8) not in set(zip(*[analysis.measured(table.reset_index())[c] for c in ("rw", "numjobs")]))
    notes = json.loads(out.strip().splitlines()[-1])["notes"]
    assert any(note.startswith("Failed run: single write-bs1048576-nj8") for note in notes), notes
    assert loop_devices_backed_under(tmp_path) == []
    # resumed, the failed runs are measured again (and fail again: the disk is still too small); the others are kept
    before = {(r["rw"], r["numjobs"]): r for r in rows(tmp_path)}
    failed = sorted(k for k, r in before.items() if r["status"] == "failed")
    assert ("write", 8) in failed and ("write", 1) not in failed
    again = finish(tmp_path, LAYOUTS=["single"], DEVICE_SIZE=512 * 2**20, RW=["write", "read"], NUMJOBS=[1, 8],
                   REPETITIONS=1, FILE_SIZE=200 * 2**20, PRECONDITION=False)
    said = f"{len(failed)} failed run(s) on single were set aside"
    assert any(said in note for note in again["notes"]), again["notes"]
    after = {(r["rw"], r["numjobs"]): r for r in rows(tmp_path)}
    assert len(rows(tmp_path)) == len(before)  # each run once
    for key in set(before) - set(failed):
        assert after[key] == before[key]  # not run again
    for key in failed:  # run again: a new row, at a later time or in a new raw folder
        assert after[key]["status"] == "failed" and after[key] != before[key]
    aside = [json.loads(line) for line in (folder(tmp_path) / "rows.set-aside.jsonl").read_text().splitlines()]
    assert sorted((r["rw"], r["numjobs"]) for r in aside) == failed  # nothing measured is lost
    assert (folder(tmp_path) / (before[("write", 8)]["raw_dir"] + ".set-aside") / "env.json").exists()
    assert loop_devices_backed_under(tmp_path) == []
