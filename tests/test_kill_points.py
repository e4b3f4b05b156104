"""A campaign killed with SIGKILL at every named fault point (``flashscale.faults``), resumed after each, ends whole: every
run measured exactly once, every raw folder consistent with the rows, nothing left on the machine.

One campaign on loop devices (runs of 1 s after a ramp of 1 s, so the next run is started ahead while one measures:
``measure.ahead``) is started with ``FLASHSCALE_FAULT`` naming the first point, killed there by its own switch,
resumed with the next point armed, and so on; the last resume runs to the end. A leg that was not killed at its
point fails the test: the point was not reached, and the test would prove nothing of it."""
from __future__ import annotations

import json
import os
import signal
import sys
import subprocess

import pytest

from flashscale.measure import campaign_folder
from flashscale import faults
from flashscale.system.teardown import manifest_dir

from conftest import sha256
from test_resume import assert_whole_and_clean, finish, folder, measured_rows, rows, start

pytestmark = pytest.mark.root

# The legs, in order. Each resume recovers what the kill left (reaping its manifests: layout-tearing-down@1 kills
# that reap), measures the harness (2 fio runs) and builds its layout again, preconditions it (1 run), then goes on
# with its measured runs: the counts put the kills on measured runs (run-folder-made@4: the first measured run's
# folder, empty, as issue 49's started-ahead folder was), and each leg keeps what the one before finished.
LEGS = ("manifest-recorded", "manifest-writing@2", "layout-building", "run-folder-made@4", "ahead-held",
        "fio-running@4", "fio-exited@2", "row-env-written@2", "row-half-written@3", "layout-tearing-down",
        "run-folder-made@7")
AHEAD = dict(RAMP_S=1, CAP_READ_BPS=50_000_000, CAP_WRITE_BPS=50_000_000)  # a ramp of ahead.RAMP_LEAST_S: the
# next run is started while one ramps; caps low enough for a loaded machine to carry (the truth is not what is tested)


def test_the_legs_cover_every_named_point():
    assert {leg.split("@")[0] for leg in LEGS} == set(faults.POINTS)


def test_a_switch_naming_no_point_is_refused(monkeypatch):
    monkeypatch.setenv(faults.ENV, "fio-runing")
    with pytest.raises(Exception, match="'fio-runing' names no fault point"):
        faults.reached("fio-running")


def _killed_at(tmp_path, leg: str, resume: bool) -> int:
    """The pid of a campaign killed at ``leg`` by its own switch."""
    proc = start(tmp_path, **AHEAD, **({"RESUME": True} if resume else {}), env_extra={faults.ENV: leg})
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL, f"not killed at {leg} (rc {proc.returncode}): {err[-3000:]}"
    return proc.pid


def _finished_without_row(tmp_path) -> dict:
    """The runs whose env.json was written and whose row was not (a kill in between): raw folder -> its text."""
    written = {r["raw_dir"] for r in rows(tmp_path)}
    return {str(env.parent.relative_to(folder(tmp_path))): env.read_text()
            for env in folder(tmp_path).glob(f"raw/**/{campaign_folder.RUN_ENV_JSON}")
            if str(env.parent.relative_to(folder(tmp_path))) not in written}


@pytest.mark.long
def test_killed_at_every_point_and_resumed_each_time(tmp_path, foreign_loop):
    pids, kept, unwritten = [], {}, {}
    for number, leg in enumerate(LEGS):
        pids.append(_killed_at(tmp_path, leg, resume=number > 0))
        found = measured_rows(rows(tmp_path))
        assert all(found.get(key) == row for key, row in kept.items()), f"a row kept before {leg} changed"
        kept.update(found)
        for raw, text in _finished_without_row(tmp_path).items():
            unwritten.setdefault(raw, (text, leg))
    assert {leg for leg in LEGS if leg.startswith("row-")} <= {leg for _, leg in unwritten.values()}, unwritten
    summary = finish(tmp_path, **AHEAD)
    assert any(f"pid {pids[-1]}" in note for note in summary["notes"]), summary["notes"]  # what it undid, said
    assert_whole_and_clean(tmp_path, kept, pids)
    final = {r["raw_dir"]: r for r in rows(tmp_path)}
    for raw_dir, (text, leg) in unwritten.items():  # the run killed before its row: its row taken, not run again
        assert (folder(tmp_path) / raw_dir / campaign_folder.RUN_ENV_JSON).read_text() == text, f"{leg}: run again"
        assert final[raw_dir] == json.loads(text)["row"], leg
    # every raw folder of a measured run holds its env.json, and every row's folder is there
    measured = {r["raw_dir"] for r in rows(tmp_path)}
    leaves = {str(p.relative_to(folder(tmp_path))) for p in folder(tmp_path).glob("raw/*/*/rep*")}
    assert leaves == {d for d in measured if "/rep" in d}, leaves ^ measured
    assert all((folder(tmp_path) / d / campaign_folder.RUN_ENV_JSON).exists() for d in measured)
    assert not [m for m in manifest_dir().glob("*.tmp") if any(f'"pid": {p},' in m.read_text() for p in pids)]
    assert sha256(foreign_loop["path"]) == foreign_loop["sha256"]


def test_an_empty_run_folder_left_by_a_kill_runs_again(tmp_path):
    """What a kill between a run's mkdir and its job file leaves (the started-ahead folder of issue 49): resumed, the
    run is measured, not refused with FileExistsError."""
    _killed_at(tmp_path, "run-folder-made@4", resume=False)  # after the harness's folders: the first measured run's
    empty = [p for p in folder(tmp_path).glob("raw/*/*/rep*") if not any(p.iterdir())]
    assert empty, "the kill left no empty run folder: the test proves nothing"
    summary = finish(tmp_path, **AHEAD)
    assert any(str(empty[0].relative_to(folder(tmp_path))) in note for note in summary["notes"]), summary["notes"]
    assert summary["rows"] > 0 and all((p / campaign_folder.RUN_ENV_JSON).exists() for p in empty)


def test_fault_points_cost_nothing_unarmed(monkeypatch):
    monkeypatch.delenv(faults.ENV, raising=False)
    for point in faults.POINTS:
        faults.reached(point)  # not killed
    assert not faults.armed_at("row-half-written")


def test_the_switch_kills_only_at_its_count(monkeypatch):
    """``point@n``: the first n-1 arrivals pass (here, a subprocess reaching the point three times, armed @3)."""
    code = ("from flashscale import faults\n"
            "for i in range(5):\n    print(i, flush=True)\n    faults.reached('fio-exited')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, faults.ENV: "fio-exited@3"})
    assert out.returncode == -signal.SIGKILL and out.stdout.split() == ["0", "1", "2"]
