"""One run of a campaign at a time, and what a run that died left behind, undone before the next one starts.

A campaign's folder holds ``flashscale.lock``: the pid of the run that holds it and that process's start time
(``System.process_start``: a pid with its start time names one process for good, a pid alone can be reused). A
second run refuses while the holder lives, naming its pid; a lock whose holder is gone (``kill -9``, a kernel that
shut itself down) is stale and taken over, after ``recover`` has undone what that holder left: the manifests it
wrote (``teardown.manifest_dir``) reaped through ``reap.reap``, the same code as ``flashscale reap``, once the fio
processes it left running in its own cgroup are stopped.
"""
from __future__ import annotations

import json
import logging
import os
import signal
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from .commands import Runner
from .devices import System
from ..errors import FlashscaleError, RefusedError
from . import private, processes, reap as reaping
from .teardown import manifest_dir

log = logging.getLogger("flashscale.lock")

LOCK_FILE = "flashscale.lock"


class CampaignBusy(FlashscaleError):
    """Another run of the same campaign is alive; nothing was touched."""


@dataclass(frozen=True)
class Holder:
    pid: int
    start: int | None
    started_at: str
    host: str = ""


def read(path: Path) -> Holder | None:
    """The holder a lock file names; None when there is none (or it is unreadable: a lock torn by a crash)."""
    try:
        data = json.loads(Path(path).read_text())
        return Holder(int(data["pid"]), data.get("start"), str(data.get("started_at", "")), str(data.get("host", "")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def alive(holder: Holder, system: System) -> bool:
    """Whether the process that took the lock may still run (same pid, same start time: ``processes.may_still_run``)."""
    return processes.may_still_run(holder.pid, holder.start, system)


def stale_holder(path: Path, system: System) -> Holder | None:
    """The dead holder of the lock at ``path`` (to recover from), None when there is no lock; CampaignBusy when its
    holder is alive."""
    holder = read(path)
    if holder is None:
        return None
    if holder.pid != os.getpid() and alive(holder, system):
        raise CampaignBusy(f"{path.parent} is in use by process {holder.pid} (started {holder.started_at}); wait "
                           f"for it to finish or stop it, then run again")
    return holder


@dataclass
class Lock:
    """``with Lock.take(folder, system):`` this process holds ``folder/flashscale.lock`` until the block ends."""

    path: Path

    @classmethod
    def take(cls, folder: Path, system: System) -> "Lock":
        path = Path(folder) / LOCK_FILE
        stale_holder(path, system)
        me = Holder(os.getpid(), system.process_start(os.getpid()),
                    datetime.now(timezone.utc).isoformat(timespec="seconds"), os.uname().nodename)
        tmp = path.with_name(f".{LOCK_FILE}.{os.getpid()}")
        tmp.write_text(json.dumps(asdict(me)))
        tmp.replace(path)
        return cls(path)

    def release(self) -> None:
        """Give the folder up, unless this process's teardown left something behind (a manifest of its pid): the
        lock then stays, so the next run finds this one and undoes it (``recover``)."""
        holder = read(self.path)
        if holder is None or holder.pid != os.getpid():
            return
        if owned_manifests(os.getpid()):
            log.warning("keeping %s: this run left things behind; the next run undoes them", self.path)
            return
        self.path.unlink(missing_ok=True)

    def __enter__(self) -> "Lock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def owned_manifests(pid: int, directory: Path | None = None) -> list[Path]:
    """The manifests (``teardown.manifest_dir``) that process ``pid`` wrote; one that is not the user's alone
    (``private.owned``: mode 0600) is not read, as reap reads none."""
    found = []
    for manifest in reaping.manifests_in(directory or manifest_dir()):
        try:
            if reaping.owner_pid(json.loads(private.owned(manifest, 0o600).read_text())) == pid:
                found.append(manifest)
        except (OSError, ValueError, AttributeError, RefusedError):
            continue
    return found


def _members(folder: Path) -> set[int]:
    """The pids in the cgroup ``folder`` (none when it is gone)."""
    try:
        return {int(p) for p in (folder / "cgroup.procs").read_text().split()}
    except FileNotFoundError:
        return set()


def _signal_members(folder: Path, sig: signal.Signals) -> int:
    """Send ``sig`` to each process in the cgroup ``folder``; how many were sent. Each process is held by a pidfd
    and signalled through it only if it is in the cgroup once held: a pid that ended and was reused by another
    program meanwhile is never signalled."""
    sent = 0
    for pid in _members(folder):
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            if pid in _members(folder):
                signal.pidfd_send_signal(fd, sig)
                sent += 1
        except ProcessLookupError:
            pass
        finally:
            os.close(fd)
    return sent


def _stop_leftovers(manifests: list[Path], wait_s: float) -> None:
    """Stop the processes a dead run left in its own cgroups (fio keeps running when the run that started it dies):
    TERM, then KILL after ``wait_s``. Only cgroups its manifests record are looked in, and only their members are
    signalled (``_signal_members``)."""
    folders = []
    for manifest in manifests:
        try:
            created = json.loads(manifest.read_text()).get("created", [])
        except (OSError, ValueError):
            continue
        folders += [Path(e["path"]) for e in created if e.get("kind") == "cgroup" and e.get("path")]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not sum(_signal_members(folder, sig) for folder in folders):
            return
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and any(_members(folder) for folder in folders):
            time.sleep(0.2)


def recover(holder: Holder, runner: Runner, system: System, directory: Path | None = None,
            attempts: int = 10, wait_s: float = 1.0, contacts=None) -> list[str]:
    """Undo what the dead ``holder`` left: every manifest its pid wrote, reaped as ``flashscale reap`` would (what
    it left on real hosts reached as ``contacts`` say). Returns one line per manifest saying what was undone;
    FlashscaleError when something is still left behind after ``attempts`` tries (a mount kept busy by the dead
    run's last fio, until it ends)."""
    manifests, lines = owned_manifests(holder.pid, directory), []
    _stop_leftovers(manifests, wait_s=5 * wait_s)
    for attempt in range(attempts):
        outcomes = reaping.reap(manifests, runner=runner, system=system, contacts=contacts) if manifests else []
        for o in outcomes:
            if o.state == "reaped":
                things = ", ".join(f"{e['kind']} {e.get('path') or e.get('vg') or ''}".strip() for e in o.entries)
                lines.append(f"undid what the interrupted run (pid {holder.pid}) left in {o.manifest}: {things}")
        manifests = [Path(o.manifest) for o in outcomes if o.state == "left-behind"]
        if not manifests:
            break
        log.info("still busy after the interrupted run %s, retrying: %s", holder.pid, manifests)
        time.sleep(wait_s)
    if manifests:
        raise FlashscaleError(f"the interrupted run (pid {holder.pid}) left things that could not be undone; see "
                              f"{', '.join(map(str, manifests))} and run flashscale reap")
    return lines
