"""What a kill leaves in a campaign folder, read back on resume without root: runs cut short go, runs that finished
keep their rows, nothing a row names is touched (``campaign_folder.recover_rows``, ``clear_cut_short``); and what it
leaves in the manifests' folder, reaped (``reap.manifests_in``, a reap's rewrite keeping its run's name)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings, strategies as st

from flashscale.measure import campaign_folder
from flashscale import faults
from flashscale.system import reap
from flashscale.system.commands import RecordingRunner
from flashscale.system.devices import System
from flashscale.system.teardown import Teardown

RUN = "raw/jbod/write-bs1048576-nj1-qd1"
DEAD = 2**22 + 7  # a pid no process has (pid_max is at most 2**22)


def _run(folder: Path, rep: int, *files: str, row: bool | None = None) -> Path:
    """A run's folder holding ``files`` (empty ones), and when ``row`` is not None an env.json with its row, which
    is also in rows.jsonl when ``row`` is True."""
    run = folder / RUN / f"rep{rep}"
    run.mkdir(parents=True)
    for name in files:
        (run / name).write_text("")
    if row is not None:
        kept = {"layout": "jbod", "point": "write-bs1048576-nj1-qd1", "rep": rep, "phase": "measure",
                "raw_dir": f"{RUN}/rep{rep}", "bw_bytes": 100_000_000 + rep}
        campaign_folder.write_run_environment(folder, Path(RUN, f"rep{rep}"), {"row": kept})
        if row:
            campaign_folder.append_rows(folder, [kept])
    return run


def test_an_empty_run_folder_is_cut_short_and_said(tmp_path):
    """A kill between a run's mkdir and its job file (a run started ahead, or in its turn) leaves its folder empty:
    it goes, so the run is made again, and the point's folder, emptied, goes with it (unsaid)."""
    _run(tmp_path, 0)
    assert campaign_folder.clear_cut_short(tmp_path) == [f"{RUN}/rep0"]
    assert not (tmp_path / RUN).exists() and (tmp_path / "raw").is_dir()


def test_a_job_file_without_env_json_is_cut_short_but_a_finished_run_stays(tmp_path):
    _run(tmp_path, 0, "job.fio", "fio.json", row=True)
    _run(tmp_path, 1, "job.fio", "gate.lock")
    assert campaign_folder.clear_cut_short(tmp_path) == [f"{RUN}/rep1"]
    assert (tmp_path / RUN / "rep0" / "fio.json").exists()


def test_a_run_killed_before_its_row_gets_its_row_from_env_json_and_is_not_run_again(tmp_path):
    _run(tmp_path, 0, "job.fio", "fio.json", row=True)
    _run(tmp_path, 1, "job.fio", "fio.json", row=False)
    said = campaign_folder.recover_rows(tmp_path)
    assert said and f"{RUN}/rep1" in said
    rows, _ = campaign_folder.read_rows(tmp_path)
    assert [r["rep"] for r in rows] == [0, 1] and rows[1]["bw_bytes"] == 100_000_001
    assert campaign_folder.recover_rows(tmp_path) is None  # once
    assert campaign_folder.clear_cut_short(tmp_path) == []


def test_a_torn_row_whose_env_json_is_whole_is_recovered_whole(tmp_path):
    _run(tmp_path, 0, "job.fio", row=False)
    with open(tmp_path / campaign_folder.ROWS_FILE, "a") as fh:
        fh.write('{"layout": "jbod", "po')
    assert campaign_folder.drop_torn_line(tmp_path)
    campaign_folder.recover_rows(tmp_path)
    rows, torn = campaign_folder.read_rows(tmp_path)
    assert torn is None and [r["rep"] for r in rows] == [0]


def test_an_env_json_naming_another_folder_is_not_taken_as_a_row(tmp_path):
    """A crafted or misplaced env.json gives no row: only one whose row names its own folder does."""
    run = _run(tmp_path, 0, "job.fio")
    (run / "env.json").write_text(json.dumps({"row": {"raw_dir": "raw/other/rep0", "layout": "x"}}))
    assert campaign_folder.recover_rows(tmp_path) is None
    assert campaign_folder.clear_cut_short(tmp_path) == [f"{RUN}/rep0"]


def test_set_aside_folders_and_links_out_of_the_folder_are_not_touched(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "job.fio").write_text("mine")
    aside = tmp_path / RUN / "rep0.set-aside"
    aside.mkdir(parents=True)
    (aside / "job.fio").write_text("")
    (tmp_path / RUN / "rep9").symlink_to(outside)
    assert campaign_folder.clear_cut_short(tmp_path) == []
    assert (outside / "job.fio").read_text() == "mine" and (aside / "job.fio").exists()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["empty", "job", "env", "row"]), min_size=1, max_size=6))
def test_after_a_resume_every_run_folder_left_has_its_row(states):
    """Whatever mix of states a kill leaves, after recovery every run folder left holds an env.json whose row is in
    rows.jsonl, and every row's folder is there: the raw folders are consistent with the rows."""
    import tempfile
    with tempfile.TemporaryDirectory() as given_dir:
        folder = Path(given_dir)
        for rep, state in enumerate(states):
            _run(folder, rep, *([] if state == "empty" else ["job.fio"]),
                 row={"empty": None, "job": None, "env": False, "row": True}[state])
        campaign_folder.recover_rows(folder)
        campaign_folder.clear_cut_short(folder)
        rows, _ = campaign_folder.read_rows(folder)
        left = {str(p.relative_to(folder)) for p in folder.glob(f"{RUN}/rep*")}
        assert left == {r["raw_dir"] for r in rows}
        assert len(rows) == sum(state in ("env", "row") for state in states)


def _teardown(path: Path, runner: RecordingRunner, **kw) -> Teardown:
    return Teardown(path, runner, System(runner=runner), **kw)


def test_a_first_manifest_left_as_tmp_is_reaped(tmp_path):
    """Killed while writing its first manifest, a run leaves only ``<name>.tmp``; it may have made what the file
    lists (a folder made by mkdtemp, then recorded): reap finds it and undoes it."""
    (tmp_path / "made").mkdir()
    manifest = tmp_path / "m.json"
    down = _teardown(manifest, RecordingRunner(), writer=(DEAD, None))
    down.record("dir", path=str(tmp_path / "made"))
    manifest.rename(manifest.with_suffix(".tmp"))
    assert reap.manifests_in(tmp_path) == [manifest.with_suffix(".tmp")]
    os.chmod(tmp_path, 0o700)
    outcome, = reap.reap(directory=tmp_path, runner=RecordingRunner())
    assert outcome.state == "reaped" and not (tmp_path / "made").exists()
    assert list(tmp_path.iterdir()) == []


def test_a_tmp_beside_its_manifest_is_not_a_manifest_and_goes_with_it(tmp_path):
    manifest = tmp_path / "m.json"
    down = _teardown(manifest, RecordingRunner())
    down.record("dir", path=str(tmp_path / "gone"))
    manifest.with_suffix(".tmp").write_text(manifest.read_text())
    assert reap.manifests_in(tmp_path) == [manifest]
    down.close()
    assert list(tmp_path.iterdir()) == []


def test_a_reap_killed_half_way_leaves_the_rest_under_the_dead_runs_name(tmp_path):
    """A reap rewrites the manifest after each undo under the dead run's pid and start, not its own: killed there
    (the fault point layout-tearing-down), the rest is found again by that run's pid (``lock.recover``)."""
    made = [tmp_path / "first", tmp_path / "second"]
    manifests = tmp_path / "manifests"
    manifests.mkdir(mode=0o700)
    down = _teardown(manifests / "m.json", RecordingRunner(), writer=(DEAD, 12345))
    for folder in made:
        folder.mkdir()
        down.record("dir", path=str(folder))
    code = "import sys; from flashscale.system import reap; reap.reap(directory=sys.argv[1])"
    out = subprocess.run([sys.executable, "-c", code, str(manifests)], capture_output=True, text=True,
                         env={**os.environ, faults.ENV: "layout-tearing-down"})
    assert out.returncode == -signal.SIGKILL, out.stderr
    data = json.loads((manifests / "m.json").read_text())
    assert (data["pid"], data["start"]) == (DEAD, 12345) and [e["path"] for e in data["created"]] == [str(made[0])]
    assert made[0].exists() and not made[1].exists()
