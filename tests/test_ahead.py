"""A run's fio started ahead and held at a gate (START_AHEAD, measure.ahead): real fio on a folder does nothing until
its gate opens, nothing at all when the gate is closed for good or its holder dies, and a sweep started ahead keeps
every run its own row and raw files, as a sweep whose runs wait their turn."""
from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from tqdm.std import tqdm

from flashscale.arrays import layouts
from flashscale.measure import ahead, fio, fio_output, resume, results
from flashscale.measure.recorder import Recorder
from flashscale.measure.sweep import Sweep
from flashscale.system.commands import RecordingRunner, Runner

SIZE = 4 * 2**20


def folder_job(tmp_path, rw="read", ramp_s=0) -> fio.FioJob:
    """A job on a folder whose file already exists at its full size (what the precondition leaves)."""
    target = tmp_path / "target"
    target.mkdir(exist_ok=True)
    (target / "flashscale-t0.0.0").write_bytes(b"\x5a" * SIZE)
    return fio.FioJob(rw, 2**16, (str(target),), runtime_s=1, ramp_s=ramp_s, size=SIZE, direct=False)


def test_a_held_run_does_nothing_until_its_gate_opens(tmp_path):
    job = folder_job(tmp_path)
    held = ahead.start(job, tmp_path / "run", Runner())
    assert held is not None
    try:
        time.sleep(2.5)  # more than the 1 s job and fio's start: only its gate can have held it
        assert held.proc.poll() is None
        assert not (tmp_path / "run" / "fio.json").read_bytes()  # fio writes its output when it ends
    finally:
        held.open()
    data = held.result()
    assert fio_output.parse(data)["io_bytes"] > 0
    assert data["global options"]["exec_prerun"] == ahead.PRERUN
    assert (tmp_path / "run" / "job.fio").read_text() == fio.render(job, log_dir=(tmp_path / "run").resolve())


def test_a_cancelled_run_writes_nothing_and_leaves_no_folder(tmp_path):
    job = folder_job(tmp_path, rw="write")
    written = tmp_path / "target" / "flashscale-t0.0.0"
    before = written.stat().st_mtime_ns
    held = ahead.start(job, tmp_path / "run", Runner())
    time.sleep(1.0)  # its jobs set up and waiting at the gate
    held.cancel()
    assert held.proc.poll() is not None
    assert not (tmp_path / "run").exists()
    assert written.read_bytes() == b"\x5a" * SIZE and written.stat().st_mtime_ns == before


def test_a_run_whose_holder_dies_writes_nothing(tmp_path):
    """The gate's lock goes with its holder, but gate.open was never made: fio's jobs end without I/O."""
    folder_job(tmp_path, rw="write")  # the file the job would write
    written = tmp_path / "target" / "flashscale-t0.0.0"
    script = ("import sys, os; from pathlib import Path; from flashscale.measure import ahead, fio;"
              f"job = fio.FioJob('write', 2**16, ({str(written.parent)!r},), runtime_s=1, ramp_s=0, size={SIZE},"
              " direct=False); from flashscale.system.commands import Runner;"
              f"held = ahead.start(job, Path({str(tmp_path / 'run')!r}), Runner()); os._exit(0)")
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    output = tmp_path / "run" / "fio.json"
    for _ in range(600):  # fio ends on its own once its jobs' prerun fails
        if output.exists() and output.read_bytes().rstrip().endswith(b"}"):
            break
        time.sleep(0.1)
    data = fio_output.load_output(output.read_text())
    assert all(entry["write"]["io_bytes"] == 0 for entry in data["jobs"])
    assert written.read_bytes() == b"\x5a" * SIZE


def test_only_a_run_that_cannot_touch_the_run_before_is_started_ahead(tmp_path):
    job = folder_job(tmp_path)
    assert ahead.startable(job)
    assert not ahead.startable(fio.FioJob("read", 2**16, (str(tmp_path / "target"),), size=2 * SIZE))  # laid out
    assert not ahead.startable(fio.FioJob("read", 2**16, (str(tmp_path / "target"),), numjobs=2, size=SIZE))
    assert not ahead.startable(fio.FioJob("read", 2**16, (str(tmp_path / "target"),), size=SIZE, name="a;b"))
    assert not ahead.startable(fio.FioJob("read", 2**16, (str(tmp_path / "target"),), size=SIZE,
                                          extra=(("filename_format", "x"),)))
    assert ahead.startable(fio.FioJob("read", 2**16, (str(tmp_path / "target"),), size=SIZE,
                                      extra=(("write_bw_log", "bw"),)))
    assert not ahead.startable(fio.FioJob("filecreate", 4096, (str(tmp_path / "target"),), nrfiles=4))
    assert ahead.startable(fio.FioJob("read", 2**16, ("/dev/loop7",)))  # a device is opened, never laid out
    # two jobs leave their preruns one after another: they would not start together (the module's text)
    assert not ahead.startable(fio.FioJob("read", 2**16, ("/dev/loop7",), numjobs=2))
    assert not ahead.startable(fio.FioJob("read", 2**16, ("/dev/loop7", "/dev/loop8"), numjobs=2))
    assert ahead.start(job, tmp_path / "recorded", RecordingRunner()) is None
    assert not (tmp_path / "recorded").exists()
    assert ahead.start(job, tmp_path / "no-flock", NoFlock()) is None  # its every prerun would fail
    assert not (tmp_path / "no-flock").exists()


class NoFlock(Runner):
    """A machine without util-linux's flock."""

    def which(self, program):
        return None if program == "flock" else super().which(program)


def test_a_line_cancels_what_it_held_when_the_plan_changes_or_ends(tmp_path):
    job = folder_job(tmp_path, ramp_s=1)
    line = ahead.Line(Runner())
    line.run(job, tmp_path / "rep0", then=(job, tmp_path / "rep1"))
    assert line.held is not None and line.held.outdir == tmp_path / "rep1"
    line.run(job, tmp_path / "other", then=(job, tmp_path / "rep2"))  # not rep1: rep1's fio is cancelled
    assert not (tmp_path / "rep1").exists() and line.held.outdir == tmp_path / "rep2"
    line.close()
    assert line.held is None and not (tmp_path / "rep2").exists()
    assert fio_output.parse(json.loads((tmp_path / "other" / "fio.json").read_text()))["io_bytes"] > 0


@pytest.mark.parametrize("start_ahead", [True, False])
def test_a_sweep_started_ahead_keeps_each_run_its_own_row_and_files(tmp_path, start_ahead):
    sweep = Sweep(rw=["write", "read"], numjobs=(1,), repetitions=2, runtime_s=1, ramp_s=1, size=SIZE,
                  direct=False, precondition=True, start_ahead=start_ahead, cpu_latency_us=None)
    target = tmp_path / "target"
    target.mkdir()
    runner = Runner()
    recorder = Recorder("a", "localhost", sweep, tmp_path / "c", runner, "run", {"read": None, "write": None},
                        tqdm(disable=True), {})
    recorder.sweep(layouts.Layout("single", 1, (str(target),), "directory", "a folder"), [])
    table = results.rebuild_table(tmp_path / "c")
    measured = table[table["phase"] == "measure"]
    assert len(measured) == 4 and set(measured["status"]) == {"ok"}
    gated = [(tmp_path / "c" / raw / ahead.GATE_OPEN).exists() for raw in measured["raw_dir"]]
    assert gated == [start_ahead] * 4
    started = [argv for argv in runner.history if f"--exec_prerun={ahead.PRERUN}" in argv]
    assert len(started) == (4 if start_ahead else 0)
    assert recorder.line.held is None  # nothing left waiting once the layout is done
    for row in measured.itertuples():
        assert (tmp_path / "c" / row.raw_dir / "job.fio").is_file() and row.bw_bytes > 0


def test_a_campaign_from_before_start_ahead_resumes():
    before = {"spec": {"sweep": {"repetitions": 3}}, "environment": {}}
    assert resume.differences(before, {"sweep": {"repetitions": 3, "start_ahead": True}}, {}) == []
    assert resume.differences(before, {"sweep": {"repetitions": 4, "start_ahead": True}}, {}) == [
        "sweep.repetitions: 3 then, 4 now"]


class BrokenStart(Runner):
    """A machine on which starting the process fails after its folder was made."""

    def spawn(self, argv, log_file, *, cgroup_procs=(), gate=(), cwd=None):
        log_file.write_text("")
        raise OSError("no more processes")


def test_a_start_that_fails_removes_only_what_it_made(tmp_path):
    job = folder_job(tmp_path)
    with pytest.raises(OSError, match="no more processes"):
        ahead.start(job, tmp_path / "run", BrokenStart())
    assert not (tmp_path / "run").exists()  # job.fio, gate.lock, fio.stderr: all its own, then its folder
    assert (tmp_path / "target" / "flashscale-t0.0.0").read_bytes() == b"\x5a" * SIZE
    line = ahead.Line(BrokenStart())  # a line whose next run cannot start runs this one when its turn comes
    assert fio_output.parse(line.run(job, tmp_path / "rep0", then=(job, tmp_path / "rep1")))["io_bytes"] > 0
