"""Background processes flashscale starts and must stop: a fio server on each host of a cluster, qemu-nbd, postgres.

``start`` runs an argv list through ``Runner.spawn`` (its own process group, optionally inside cgroups, as
``Runner.run`` does) and records it in the teardown as a ``process`` with its pid and start time
(``System.process_start``) before the program runs: the child waits at a gate (``GATE``, reading its stdin) until
the record is written. A pid alone can be reused once the process is gone; a pid with its start time names one
process for good. ``still_ours`` is the one way to ask whether a recorded process is still the one that was started
(the lock's holder and a manifest's writer are asked the same way, through ``may_still_run``), so ``stop`` signals
the group only while the pid still has the recorded start time: SIGTERM, then SIGKILL after ``grace_s``, never
another program's processes. A record without a start time proves nothing: its pid is never signalled.
"""
from __future__ import annotations

import logging
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from .devices import System

if TYPE_CHECKING:  # the teardown imports undo, which imports this module
    from subprocess import Popen

    from .teardown import Teardown

log = logging.getLogger("flashscale.processes")


# The child waits at this gate until the parent has recorded its pid and start time, then becomes the program
# (exec keeps the pid and the start time). If the parent dies first, ``read`` meets end of file and nothing runs.
GATE = ("sh", "-c", 'read -r go && exec "$@"', "flashscale-gate")


def still_ours(pid: int, start: int | None, system: System) -> bool:
    """Whether process ``pid`` is still the one recorded as started at ``start`` (``System.process_start``): the
    same pid with the same start time. A pid reused by another program has another start time; a record without
    a start time proves nothing, so it is never ours."""
    return start is not None and system.process_start(pid) == start


def may_still_run(pid: int, start: int | None, system: System) -> bool:
    """Whether the process recorded as ``pid`` (started at ``start``) may still be running: it is (``still_ours``),
    or no start time was recorded and the pid is in use, which cannot be told from another process that took the
    pid since. A run that may be in progress is never taken over or reaped."""
    return still_ours(pid, start, system) or (start is None and system.process_start(pid) is not None)


def stop(pid: int, start: int | None, system: System, grace_s: float = 5.0) -> None:
    """Stop the process group led by ``pid`` (TERM, then KILL), only while ``pid`` is still ours (``still_ours``),
    and wait, bounded, until the group is gone (``_group_gone``): a leader that shows as exited may still have
    threads at work, and a process not yet collected still counts in its cgroup."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not still_ours(pid, start, system):
            return
        log.info("sending %s to the process group of %s", sig.name, pid)
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + grace_s
        while not _group_gone(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _group_gone(pid):
            return


def _group_gone(pid: int) -> bool:
    """Whether no process is left in the group ``pid`` led, once ``pid``'s exit is collected if it is a child of
    ours (until then it stays in its group, as a zombie)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return True
    return False


@dataclass
class Process:
    """A background process of ours: its argv, pid, start time and the file its output goes to."""

    argv: tuple[str, ...]
    pid: int
    start: int | None
    log_file: Path
    popen: "Popen"
    system: System

    def running(self) -> bool:
        return self.popen.poll() is None and still_ours(self.pid, self.start, self.system)

    def stop(self, grace_s: float = 5.0) -> None:
        stop(self.pid, self.start, self.system, grace_s)
        self.popen.wait()

    def output(self) -> str:
        return self.log_file.read_text(errors="replace") if self.log_file.exists() else ""


def start(argv: Sequence[str], teardown: "Teardown", log_file: Path, *, cgroup_procs: Sequence[Path] = (),
          system: System | None = None, keep_stdin: bool = False) -> Process:
    """Start ``argv`` in the background through the teardown's runner (``Runner.spawn``), its output to
    ``log_file``, recorded before it executes; UnsupportedError naming its program when that is not installed.
    ``keep_stdin``: its stdin stays the open pipe ``popen.stdin`` writes to (else it meets end of file at once)."""
    system = system or teardown.system
    argv = tuple(str(a) for a in argv)
    popen = teardown.runner.spawn(argv, log_file, cgroup_procs=cgroup_procs, gate=GATE)
    try:
        started = system.process_start(popen.pid)
        teardown.record("process", process=popen.pid, start=started, argv=list(argv))  # "pid" is the run's
    except BaseException:
        popen.stdin.close()  # the gate meets end of file: the program never runs
        popen.wait()
        raise
    popen.stdin.write(b"go\n")
    popen.stdin.flush()
    if not keep_stdin:
        popen.stdin.close()
    return Process(argv, popen.pid, started, Path(log_file), popen, system)
