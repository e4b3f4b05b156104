"""The one place flashscale runs external commands.

Every command is an argv list (never a shell string), is logged, and has its exit status checked. Tests swap the
``Runner`` for a ``RecordingRunner`` to assert the exact command plan of steps this machine cannot run (mdadm, LVM,
nvme-cli) without running anything.

``run`` runs a command to its end; ``spawn`` starts one that keeps running in the background (a fio server,
qemu-nbd, postgres), its output to a log file: ``flashscale.system.processes`` records it and stops it.
"""
from __future__ import annotations

import io
import logging
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Sequence

from ..errors import CommandError, UnsupportedError
from .. import faults

log = logging.getLogger("flashscale.commands")

NO_PID = 2**22 + 1  # above the largest pid Linux gives (PID_MAX_LIMIT): names no process, nothing can signal it


@dataclass(frozen=True)
class Completed:
    argv: tuple[str, ...]
    returncode: int
    stdout: str = ""
    stderr: str = ""


def _join_cgroup(procs_files: Sequence[Path]) -> Callable[[], None]:
    """A pre-exec hook that moves the child into the given cgroups before it starts any I/O."""

    def hook() -> None:
        for procs in procs_files:
            with open(procs, "w") as fh:
                fh.write(str(os.getpid()))

    return hook


def reaped(proc: subprocess.Popen, block: bool = False) -> bool:
    """Whether ``proc`` has ended and been reaped, reaping it here (``os.waitpid``; ``block``: waiting for it) and
    setting its ``returncode``. Not Popen's own poll and wait: they take a lock that a KeyboardInterrupt landing
    between its acquire and its try (CPython's ``Popen._wait`` with a timeout, which ``wait`` uses) leaves held, so
    that poll never reaps and wait blocks forever on the zombie (seen: a campaign interrupted by SIGINT, hung in
    ``stop_group``'s wait). A child Popen reaped already is reaped."""
    if proc.returncode is not None:
        return True
    try:
        pid, status = os.waitpid(proc.pid, 0 if block else os.WNOHANG)
    except ChildProcessError:  # reaped by Popen in another frame: its returncode is its own
        return True
    if pid == 0:
        return False
    proc.returncode = os.waitstatus_to_exitcode(status)
    return True


def stop_group(proc: subprocess.Popen, grace_s: float = 5.0) -> None:
    """Stop the process group ``proc`` leads (TERM, then KILL) and wait, bounded, until no member is left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            reaped(proc)  # reap the leader so that an empty group disappears
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            continue
        break
    reaped(proc, block=True)  # the leader was sent SIGKILL at the latest: it has ended, or ends now
    for pipe in (proc.stdin, proc.stdout, proc.stderr):  # what it had not said is lost with it; free the pipes
        if pipe is not None:
            pipe.close()
    log.warning("stopped %s (pid %s) and its process group", proc.args[0], proc.pid)


def wait(proc: subprocess.Popen, timeout: float) -> int:
    """Wait for a process ``Runner.spawn`` started, at most ``timeout`` seconds: its exit status. Past that, or on
    Ctrl-C, its process group is stopped (``stop_group``); CommandError then names the timeout."""
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_group(proc)
        raise CommandError(tuple(proc.args), -1, f"timed out after {timeout} s and was stopped") from None
    except BaseException:
        stop_group(proc)
        raise


@dataclass
class Ended:
    """What ``RecordingRunner.spawn`` gives back for a background process: one that ran nothing and has ended with
    its reply's exit status; ``pid`` is ``NO_PID``, so nothing can be signalled or waited for through it."""

    args: tuple[str, ...]
    returncode: int
    pid: int = NO_PID
    stdin: BinaryIO = field(default_factory=io.BytesIO)

    def poll(self) -> int:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        return self.returncode


@dataclass
class Runner:
    """Runs commands for real. ``history`` keeps every argv run or spawned, in order."""

    history: list[tuple[str, ...]] = field(default_factory=list)
    ahead = True  # what it spawns runs for real: a run can be started ahead of its turn (``measure.ahead``)

    def _program(self, argv: Sequence[str]) -> tuple[str, ...]:
        """``argv`` as strings, refused when empty or when its program is not installed."""
        argv = tuple(str(a) for a in argv)
        if not argv:
            raise ValueError("empty command")
        if self.which(argv[0]) is None:
            raise UnsupportedError(f"{argv[0]!r} is not installed on this machine")
        return argv

    def run(
        self,
        argv: Sequence[str],
        *,
        ok_codes: Iterable[int] = (0,),
        cgroup_procs: Sequence[Path] = (),
        timeout: float | None = None,
        stdin: Path | None = None,
    ) -> Completed:
        """Run ``argv`` (``stdin``: a file it reads, else nothing) and wait, at most ``timeout`` seconds."""
        argv = tuple(str(a) for a in argv)
        if not argv:
            raise ValueError("empty command")
        self.history.append(argv)
        log.info("run: %s", " ".join(argv))
        with open(stdin, "rb") if stdin is not None else open(os.devnull, "rb") as given:
            return self._run(argv, ok_codes, cgroup_procs, timeout, given)

    def _run(self, argv: tuple[str, ...], ok_codes: Iterable[int], cgroup_procs: Sequence[Path],
             timeout: float | None, stdin) -> Completed:
        try:
            proc = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=stdin,
                text=True,
                start_new_session=True,  # its own process group: fio's forked jobs are stopped with it
                preexec_fn=_join_cgroup(list(cgroup_procs)) if cgroup_procs else None,
            )
        except FileNotFoundError as exc:
            raise UnsupportedError(f"{argv[0]!r} is not installed on this machine") from exc
        if Path(argv[0]).name == "fio":
            faults.reached("fio-running")
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_group(proc)
            raise CommandError(argv, -1, f"timed out after {timeout} s and was stopped") from None
        except BaseException:  # Ctrl-C, SIGTERM turned into an exception: stop the whole group, then re-raise
            stop_group(proc)
            raise
        result = Completed(argv, proc.returncode, stdout, stderr)
        if proc.returncode not in tuple(ok_codes):
            log.warning("failed (%s): %s: %s", proc.returncode, " ".join(argv), stderr.strip())
            raise CommandError(argv, proc.returncode, stderr)
        return result

    def spawn(self, argv: Sequence[str], log_file: Path, *, cgroup_procs: Sequence[Path] = (),
              gate: Sequence[str] = (), cwd: Path | None = None) -> subprocess.Popen:
        """Start ``argv`` in the background (in folder ``cwd``, else this one) and return at once: in its own process
        group (optionally inside cgroups, as ``run``), stdout and stderr appended to ``log_file``, its stdin a pipe.
        With a ``gate`` (``processes.GATE``), the gate runs first and execs ``argv`` when told to on that pipe.
        Stopping it and collecting its exit are the caller's (``processes.start``, ``measure.ahead``: ``wait``)."""
        argv = self._program(argv)
        self.history.append(argv)
        log.info("start: %s", " ".join(argv))
        with open(log_file, "ab") as out:
            try:
                return subprocess.Popen((*gate, *argv), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.PIPE,
                                        start_new_session=True, cwd=cwd,
                                        preexec_fn=_join_cgroup(list(cgroup_procs)) if cgroup_procs else None)
            except FileNotFoundError as exc:
                raise UnsupportedError(f"{(*gate, *argv)[0]!r} is not installed on this machine") from exc

    def which(self, program: str) -> str | None:
        return shutil.which(program)


@dataclass
class RecordingRunner(Runner):
    """Records commands instead of running them; answers from ``replies`` keyed by the argv's first words.

    ``replies`` maps a tuple prefix of argv to a ``Completed`` (or a returncode) to return. Unknown commands
    succeed with empty output, so a test asserts the whole plan with ``history``.
    """

    replies: dict[tuple[str, ...], Completed | int] = field(default_factory=dict)
    installed: frozenset[str] | None = None
    ahead = False  # what it spawns has ended at once: a recorded plan runs each command when its turn comes

    def _reply(self, argv: tuple[str, ...]) -> Completed:
        reply: Completed | int = 0
        for prefix in sorted(self.replies, key=len, reverse=True):
            if argv[: len(prefix)] == prefix:
                reply = self.replies[prefix]
                break
        return reply if isinstance(reply, Completed) else Completed(argv, reply)

    def run(self, argv, *, ok_codes=(0,), cgroup_procs=(), timeout=None, stdin=None) -> Completed:
        argv = tuple(str(a) for a in argv)
        self.history.append(argv)
        result = self._reply(argv)
        if result.returncode not in tuple(ok_codes):
            raise CommandError(argv, result.returncode, result.stderr)
        return result

    def spawn(self, argv, log_file, *, cgroup_procs=(), gate=(), cwd=None) -> Ended:
        """Record ``argv`` and start nothing: its reply's stdout and stderr go to ``log_file``, and what comes back
        has already ended with the reply's exit status."""
        argv = self._program(argv)
        self.history.append(argv)
        result = self._reply(argv)
        with open(log_file, "a") as out:
            out.write(result.stdout + result.stderr)
        return Ended(argv, result.returncode)

    def which(self, program: str) -> str | None:
        if self.installed is None:
            return f"/usr/sbin/{program}"
        return f"/usr/sbin/{program}" if program in self.installed else None
