"""A run's fio process started ahead, while the run before it ramps, and held at a gate until that run has ended.

fio pays about 0.25 s a process outside its run time (``make bench``): its exec, its clock's calibration, a fixed
100 ms wait for its jobs to be set up (fio's backend.c, ``run_threads``), their files opened. A stonewalled group in
one process pays most of it again (``measure.batch``). Started ahead, the next run's fio pays all of that while the
run before it is in its ramp, which measures nothing; then each of its jobs waits in fio's ``exec_prerun`` (run when
the job is set up, before its clock starts: backend.c, ``thread_main``) for a shared lock on ``gate.lock`` that this
module holds exclusively until the run before has ended, and goes only if ``gate.open`` exists beside it. Opened,
the run starts in about 0.05 s. Should flashscale die, its lock goes with it but ``gate.open`` was never made: each
job's prerun fails and fio ends having done no I/O (``cancel`` does the same on purpose).

A run is started ahead only where that cannot touch the run before it nor its own measurement (``startable``): it
runs one job (each job leaves its own prerun, and jobs that leave it one after another do not start together: the
last measures alone for a while on a cap the others shared, and in the VM lab striped runs of 2 jobs for 2 s so came
out up to 2.4% above their truth, 6 of 18 above 1.017, against at most 1.0105 started when their turn came, and
still when the gate opened 0.3 s after the run before); the run before ramps for at least ``RAMP_LEAST_S``; the
run makes no files (no metadata job; every file it will use in a directory exists at its full size, so fio lays
nothing out while another run measures); its extra options are only logs; its job's
name is a plain word (fio puts it in the prerun's shell command); the runner runs for real (``Runner.spawn``)
and finds ``flock`` (util-linux).
Otherwise it starts when its turn comes, as before. What differs in its raw files: fio.json's global options name
the exec_prerun; fio's ``disk_util`` is off (its count would span the run before it: the devices are sampled by
``monitoring`` over the run itself); ``<job>.prerun.txt`` (empty) and ``gate.lock``, ``gate.open`` beside them.
The run before's CPU count (``cpu_busy_cores``) includes the next one's start, about 0.1 CPU-s, in its ramp.
"""
from __future__ import annotations

import fcntl
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..errors import CommandError, UnsupportedError
from .. import faults
from ..system.commands import Runner, stop_group, wait
from . import fio
from .fio import LOG_OPTIONS, LOG_SETTINGS, NBD, FioJob, command, outcome, render

log = logging.getLogger(__name__)

GATE_LOCK, GATE_OPEN = "gate.lock", "gate.open"
PRERUN = f"flock --shared {GATE_LOCK} test -e {GATE_OPEN}"  # fixed words; fio runs it in the run's folder
OPTIONS = (f"--exec_prerun={PRERUN}", "--disk_util=0")
RAMP_LEAST_S = 1  # the run before must ramp this long for the next one's start to fall in it (measured: 0.25 s)
PLAIN = re.compile(r"[A-Za-z0-9_.-]+")
MADE = ("job.fio", "fio.json", "fio.stderr", GATE_LOCK, GATE_OPEN)  # what a cancelled run's folder may hold


def startable(job: FioJob) -> bool:
    """Whether ``job`` can be started ahead without touching the run before it or its own measurement (see the
    module's text)."""
    if job.numjobs != 1 or job.is_metadata or not PLAIN.fullmatch(job.name):
        return False
    if (any(k not in (*LOG_OPTIONS, *LOG_SETTINGS) for k, _ in job.extra)
            or any(target.startswith(NBD) for target in job.targets)):
        return False
    return all(not path.is_symlink() and path.is_file() and path.stat().st_size >= size
               for path, size in fio.files(job).items())  # nothing for fio to lay out


def _remove(outdir: Path) -> None:
    """A run's folder that never ran, emptied of what this module and fio made there (by name), then removed."""
    for path in [*(outdir / name for name in MADE), *outdir.glob("*.prerun.txt")]:
        path.unlink(missing_ok=True)
    try:
        outdir.rmdir()
    except OSError as exc:
        log.warning("a run started ahead and cancelled left %s: %s", outdir, exc)


@dataclass
class Held:
    """A fio process started ahead for ``job``, held at its gate in ``outdir`` (``lock``: the gate's lock, held)."""

    job: FioJob
    outdir: Path
    proc: Any  # the process Runner.spawn started
    lock: int | None

    def open(self) -> None:
        """Let the run go: ``gate.open`` made, then the lock let go."""
        os.close(os.open(self.outdir / GATE_OPEN, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
        self._unlock()

    def result(self) -> dict:
        """Wait for the opened run (at most its run time and 600 s) and read its output as ``fio.run_file`` does."""
        jobfile = self.outdir / "job.fio"
        faults.reached("fio-running")
        returncode = wait(self.proc, self.job.runtime_s + self.job.ramp_s + 600)  # stopped past it, or on Ctrl-C
        stderr_file = self.outdir / "fio.stderr"
        stderr = stderr_file.read_text(errors="replace")
        if not stderr:
            stderr_file.unlink()
        return outcome(jobfile, returncode, stderr)

    def cancel(self) -> None:
        """Close the gate for good: each job's prerun fails and fio ends with no I/O done; the folder's files (this
        module's and fio's, by name) removed, then the folder, which was made for this run."""
        self._unlock()
        try:
            wait(self.proc, 30)
        except CommandError:  # it did not end at its gate: stopped with its group
            pass
        _remove(self.outdir)

    def _unlock(self) -> None:
        if self.lock is not None:
            os.close(self.lock)  # the flock goes with its only descriptor
            self.lock = None


def start(job: FioJob, outdir: Path, runner: Runner, *, cgroup_procs: Sequence[Path] = ()) -> Held | None:
    """``job``'s fio started in ``outdir`` (which must not exist yet), held at its gate; None where it may not be
    (``startable``) or the runner starts nothing ahead (it records): then it runs when its turn comes."""
    if not startable(job) or not getattr(runner, "ahead", False) or runner.which("flock") is None:
        return None  # without flock(1) (util-linux) every prerun would fail, and every run with it
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=False)
    faults.reached("run-folder-made")
    jobfile = outdir / "job.fio"
    jobfile.write_text(render(job, log_dir=outdir.resolve()))
    lock = os.open(outdir / GATE_LOCK, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        proc = runner.spawn(command(jobfile, OPTIONS), outdir / "fio.stderr", cgroup_procs=cgroup_procs, cwd=outdir)
        proc.stdin.close()  # fio reads nothing from it
    except BaseException:
        os.close(lock)
        _remove(outdir)
        raise
    return Held(job, outdir, proc, lock)


@dataclass
class Line:
    """Runs one after another, each started ahead where it may be: ``run`` a job, told the one after it (``then``),
    whose fio it starts as soon as this one is let go. ``close`` cancels what is held (the recorder's layout ends,
    fails or is interrupted). ``enabled`` False: each run starts when its turn comes (``fio.run``)."""

    runner: Runner
    enabled: bool = True
    held: Held | None = None

    def run(self, job: FioJob, outdir: Path, *, cgroup_procs: Sequence[Path] = (),
            then: tuple[FioJob, Path] | None = None) -> dict:
        current = self._take(Path(outdir))
        if current is None and self.enabled:
            current = self._start(job, outdir, cgroup_procs)
        if current is None:
            return fio.run(job, outdir, self.runner, cgroup_procs=cgroup_procs)  # looked up now: tests stand in
        try:
            current.open()
            if then is not None and self.enabled and job.ramp_s >= RAMP_LEAST_S:
                self.held = self._start(then[0], then[1], cgroup_procs)
                if self.held is not None:
                    faults.reached("ahead-held")
            return current.result()
        except BaseException:  # an error, Ctrl-C: this run stopped with its group, the next one cancelled
            if current.proc.poll() is None:
                stop_group(current.proc)
            self.close()
            raise

    def _start(self, job: FioJob, outdir: Path, cgroup_procs: Sequence[Path]) -> Held | None:
        """``start``; None where the process could not start (its folder removed): it runs when its turn comes."""
        try:
            return start(job, outdir, self.runner, cgroup_procs=cgroup_procs)
        except (OSError, CommandError, UnsupportedError) as exc:
            log.warning("could not start %s ahead: %s", outdir, exc)
            return None

    def close(self) -> None:
        held, self.held = self.held, None
        if held is not None:
            held.cancel()

    def _take(self, outdir: Path) -> Held | None:
        """The run held for ``outdir``; one held for another is cancelled (the plan changed: a point stopped)."""
        held, self.held = self.held, None
        if held is not None and held.outdir != outdir:
            held.cancel()
            return None
        return held

