"""The one place flashscale runs external commands.

Every command is an argv list (never a shell string), is logged, and has its exit status checked. Tests swap the
``Runner`` for a ``RecordingRunner`` to assert the exact command plan of steps this machine cannot run (mdadm, LVM,
nvme-cli) without running anything.
"""
from __future__ import annotations

import logging
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from .errors import CommandError, UnsupportedError

log = logging.getLogger("flashscale.commands")


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


@dataclass
class Runner:
    """Runs commands for real. ``history`` keeps every argv run, in order."""

    history: list[tuple[str, ...]] = field(default_factory=list)

    def run(
        self,
        argv: Sequence[str],
        *,
        ok_codes: Iterable[int] = (0,),
        cgroup_procs: Sequence[Path] = (),
        timeout: float | None = None,
    ) -> Completed:
        argv = tuple(str(a) for a in argv)
        if not argv:
            raise ValueError("empty command")
        self.history.append(argv)
        log.info("run: %s", " ".join(argv))
        try:
            proc = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=timeout,
                preexec_fn=_join_cgroup(list(cgroup_procs)) if cgroup_procs else None,
                stdin=subprocess.DEVNULL,
            )
        except FileNotFoundError as exc:
            raise UnsupportedError(f"{argv[0]!r} is not installed on this machine") from exc
        result = Completed(argv, proc.returncode, proc.stdout, proc.stderr)
        if proc.returncode not in tuple(ok_codes):
            log.warning("failed (%s): %s: %s", proc.returncode, " ".join(argv), proc.stderr.strip())
            raise CommandError(argv, proc.returncode, proc.stderr)
        return result

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

    def run(self, argv, *, ok_codes=(0,), cgroup_procs=(), timeout=None) -> Completed:
        argv = tuple(str(a) for a in argv)
        self.history.append(argv)
        reply: Completed | int = 0
        for prefix in sorted(self.replies, key=len, reverse=True):
            if argv[: len(prefix)] == prefix:
                reply = self.replies[prefix]
                break
        result = reply if isinstance(reply, Completed) else Completed(argv, reply)
        if result.returncode not in tuple(ok_codes):
            raise CommandError(argv, result.returncode, result.stderr)
        return result

    def which(self, program: str) -> str | None:
        if self.installed is None:
            return f"/usr/sbin/{program}"
        return f"/usr/sbin/{program}" if program in self.installed else None
