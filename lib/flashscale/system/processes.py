"""Background processes flashscale starts and must stop: a fio server on each host of a cluster.

``start`` runs an argv list in its own process group (optionally inside cgroups, as ``Runner.run`` does) and records
it in the teardown as a ``process`` with its pid and start time (``System.process_start``) before the program
runs: the child waits at a gate (``GATE``, reading its stdin) until the record is written. A pid alone can be reused once the process is
gone; a pid with its start time names one process for good, so ``stop`` signals the group only while the pid still
has the recorded start time: SIGTERM, then SIGKILL after ``grace_s``, never another program's processes.
"""
from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from .commands import _join_cgroup
from .devices import System
from ..errors import UnsupportedError

if TYPE_CHECKING:  # the teardown imports undo, which imports this module
    from .teardown import Teardown

log = logging.getLogger("flashscale.processes")


# The child waits at this gate until the parent has recorded its pid and start time, then becomes the program
# (exec keeps the pid and the start time). If the parent dies first, ``read`` meets end of file and nothing runs.
GATE = ("sh", "-c", 'read -r go && exec "$@"', "flashscale-gate")


def stop(pid: int, start: int, system: System, grace_s: float = 5.0) -> None:
    """Stop the process group led by ``pid`` (TERM, then KILL), only while ``pid`` still started at ``start``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if system.process_start(pid) != start:
            return
        log.info("sending %s to the process group of %s", sig.name, pid)
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and system.process_start(pid) == start:
            _reap(pid)
            time.sleep(0.05)
    _reap(pid)


def _reap(pid: int) -> None:
    """Collect ``pid``'s exit status if it is a child of ours, so it does not linger as a zombie."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


@dataclass
class Process:
    """A background process of ours: its argv, pid, start time and the file its output goes to."""

    argv: tuple[str, ...]
    pid: int
    start: int
    log_file: Path
    popen: subprocess.Popen
    system: System

    def running(self) -> bool:
        return self.popen.poll() is None and self.system.process_start(self.pid) == self.start

    def stop(self, grace_s: float = 5.0) -> None:
        stop(self.pid, self.start, self.system, grace_s)
        self.popen.wait()

    def output(self) -> str:
        return self.log_file.read_text(errors="replace") if self.log_file.exists() else ""


def start(argv: Sequence[str], teardown: "Teardown", log_file: Path, *, cgroup_procs: Sequence[Path] = (),
          system: System | None = None) -> Process:
    """Start ``argv`` in the background, its output to ``log_file``, recorded before it executes."""
    system = system or teardown.system
    argv = tuple(str(a) for a in argv)
    if shutil.which(argv[0]) is None:
        raise UnsupportedError(f"{argv[0]!r} is not installed on this machine")
    log.info("start: %s", " ".join(argv))
    with open(log_file, "ab") as out:
        popen = subprocess.Popen((*GATE, *argv), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.PIPE,
                                 start_new_session=True,
                                 preexec_fn=_join_cgroup(list(cgroup_procs)) if cgroup_procs else None)
    try:
        started = system.process_start(popen.pid)
        teardown.record("process", process=popen.pid, start=started, argv=list(argv))  # "pid" is the run's
    except BaseException:
        popen.stdin.close()  # the gate meets end of file: the program never runs
        popen.wait()
        raise
    popen.stdin.write(b"go\n")
    popen.stdin.close()
    return Process(argv, popen.pid, started, Path(log_file), popen, system)
