"""Undo what flashscale made, from its manifest: the live teardown and ``flashscale reap`` share this code.

Each kind of thing recorded in a teardown manifest has an ``undo`` (idempotent: it does nothing when the thing is
already gone, and never touches something that is no longer what was recorded) and a ``present`` check, read from
``/proc/self/mountinfo``, the loop devices' backing files (what ``losetup`` shows) and ``/proc/mdstat``. Undo is
verified with ``present``, never assumed.

``reap(manifests)`` undoes, last first, what each manifest of an interrupted run lists, and nothing else. A manifest
whose writing process is still alive is left alone: it belongs to a run in progress.
"""
from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from .commands import Runner
from .devices import System
from ..errors import ConfigError, FlashscaleError, UnsupportedError
from .teardown import Entry, Teardown

log = logging.getLogger("flashscale.reap")

OWN_FILE_PREFIX = "flashscale-"  # files fio makes in our directories are named after our job sections


def _gone(what: str, kind: str) -> None:
    raise UnsupportedError(f"{kind} {what} is still there after it was undone")


def _members_still_ours(details: dict, system: System) -> list[str]:
    """Recorded member devices that still carry the identity they had; the others are no longer ours."""
    paths = []
    for member in details.get("members", []):
        try:
            if system.identify(member["path"]).id == member["id"]:
                paths.append(member["path"])
        except FlashscaleError:
            pass
    return paths


def _same_source(now: str, recorded: str, system: System) -> bool:
    """Whether a mount's source is still the one recorded: the same block device, or the same text (tmpfs...)."""
    if now.startswith("/dev/") and recorded.startswith("/dev/"):
        return system.name_of(now) == system.name_of(recorded)
    return now == recorded


def _undo_file(d: dict, runner: Runner, system: System) -> None:
    """A file of ours: only inside a directory flashscale made (``flashscale-*``), never through a symlink."""
    path = Path(d["path"])
    if not path.parent.name.startswith(OWN_FILE_PREFIX) or path.is_symlink():
        log.warning("%s is not in a directory of flashscale's: leaving it", path)
        return
    path.unlink(missing_ok=True)


def _undo_mount(d: dict, runner: Runner, system: System) -> None:
    mount = system.mounted(d["path"])
    if mount is None:
        return
    if d.get("source") and not _same_source(mount.source, d["source"], system):
        log.warning("%s is now a mount of %s, not of %s: leaving it", d["path"], mount.source, d["source"])
        return
    runner.run(["umount", d["path"]])


def _undo_dir(d: dict, runner: Runner, system: System) -> None:
    folder = Path(d["path"])
    if not folder.is_dir() or folder.is_symlink():
        return
    for child in folder.iterdir():
        if child.name.startswith(OWN_FILE_PREFIX) and child.is_file() and not child.is_symlink():
            child.unlink()
    folder.rmdir()


def _undo_loop(d: dict, runner: Runner, system: System) -> None:
    if system.loop_backing(d["path"]) == d["backing_file"]:
        runner.run(["losetup", "--detach", d["path"]])


def _undo_cgroup(d: dict, runner: Runner, system: System) -> None:
    folder = Path(d["path"])
    if folder.is_dir():
        procs = (folder / "cgroup.procs").read_text().split() if (folder / "cgroup.procs").exists() else []
        if procs:
            raise UnsupportedError(f"cgroup {folder} still holds processes {procs}; not removing it")
        folder.rmdir()


def _undo_btrfs(d: dict, runner: Runner, system: System) -> None:
    paths = _members_still_ours(d, system)
    if paths:
        runner.run(["btrfs", "device", "scan", "--forget", *paths])


def _undo_md(d: dict, runner: Runner, system: System) -> None:
    if system.exists(d["path"]):
        runner.run(["mdadm", "--stop", d["path"]])
        settle(runner)
    if present("md", d, system):
        _gone(d["path"], "md array")
    for path in _members_still_ours(d, system):
        runner.run(["mdadm", "--zero-superblock", path])


def _undo_lv(d: dict, runner: Runner, system: System) -> None:
    if system.exists(d["path"]):
        runner.run(["lvremove", "--yes", f"{d['vg']}/{d['lv']}"])
        settle(runner)


def _undo_vg(d: dict, runner: Runner, system: System) -> None:
    runner.run(["vgremove", "--yes", d["vg"]], ok_codes=(0, 5))  # 5: no such volume group: already gone


def _undo_pv(d: dict, runner: Runner, system: System) -> None:
    paths = _members_still_ours(d, system)
    if paths:
        runner.run(["pvremove", "--yes", *paths], ok_codes=(0, 5))


def settle(runner: Runner) -> None:
    """Wait for udev to create or remove device nodes, where there is a udev."""
    if runner.which("udevadm"):
        runner.run(["udevadm", "settle", "--timeout=30"])


def _md_listed(d: dict, system: System) -> bool | None:
    if not system.exists(d["path"]):
        return False
    mdstat = system.mdstat()
    if mdstat is None:
        return None
    name = system.name_of(d["path"])
    return any(line.split(":")[0].strip() == name for line in mdstat.splitlines())


def _path_exists(d: dict, system: System) -> bool:
    return system.exists(d["path"])


UNDO: dict[str, Callable[[dict, Runner, System], None]] = {
    "mount": _undo_mount,
    "mountpoint": lambda d, r, s: Path(d["path"]).rmdir() if Path(d["path"]).is_dir() else None,
    "dir": _undo_dir,
    "file": _undo_file,
    "loop": _undo_loop,
    "cgroup": _undo_cgroup,
    "btrfs-devices": _undo_btrfs,
    "md": _undo_md,
    "lvm-lv": _undo_lv,
    "lvm-vg": _undo_vg,
    "lvm-pv": _undo_pv,
}

PRESENT: dict[str, Callable[[dict, System], bool | None]] = {
    "mount": lambda d, s: s.mounted(d["path"]) is not None,
    "mountpoint": _path_exists,
    "dir": _path_exists,
    "file": _path_exists,
    "loop": lambda d, s: s.loop_backing(d["path"]) == d["backing_file"],
    "cgroup": _path_exists,
    "md": _md_listed,
    "lvm-lv": _path_exists,
}


def undo(kind: str, details: dict, runner: Runner, system: System) -> None:
    """Undo one recorded thing and verify it is gone; unknown kinds are an error, never guessed at."""
    if kind not in UNDO:
        raise ConfigError(f"manifest kind {kind!r} is unknown; known: {', '.join(UNDO)}")
    UNDO[kind](details, runner, system)
    if present(kind, details, system):
        _gone(details.get("path", details), kind)


def present(kind: str, details: dict, system: System) -> bool | None:
    """Whether a recorded thing is there now; None when it cannot be told from the machine."""
    check = PRESENT.get(kind)
    return None if check is None else check(details, system)


@dataclass
class Outcome:
    manifest: str
    state: str  # reaped | running | unknown-owner | left-behind | planned | unreadable
    entries: list[dict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def owner_pid(data: dict) -> int | None:
    """The pid of the run that wrote a manifest: its top-level "pid", else the one its entries carry."""
    if isinstance(data.get("pid"), int):
        return data["pid"]
    pids = {e.get("pid") for e in data.get("created", []) if isinstance(e.get("pid"), int)}
    return pids.pop() if len(pids) == 1 else None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def reap_one(manifest: Path, runner: Runner, system: System, *, named: bool, dry_run: bool = False) -> Outcome:
    """Undo what one manifest lists, if its run is over; see ``reap``."""
    try:
        data = json.loads(manifest.read_text())
        entries = [dict(e) for e in data["created"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"manifest {manifest} cannot be read as a flashscale manifest: {exc}") from None
    pid = owner_pid(data)
    if pid is not None and pid != os.getpid() and alive(pid):
        return Outcome(str(manifest), "running", entries, [f"process {pid} that wrote it is still running"])
    if pid is None and not named:
        return Outcome(str(manifest), "unknown-owner", entries,
                       ["no pid recorded: name this manifest to reap it if its run is over"])
    if dry_run:
        return Outcome(str(manifest), "planned", entries)
    teardown = Teardown(manifest)
    teardown.entries = [Entry(e["kind"], {k: v for k, v in e.items() if k != "kind"},
                              lambda e=e: undo(e["kind"], e, runner, system)) for e in entries]
    try:
        teardown.close()
    except FlashscaleError as exc:
        return Outcome(str(manifest), "left-behind", entries, [str(exc)])
    still = [f"{e['kind']} {e.get('path', '')}" for e in entries if present(e["kind"], e, system)]
    return Outcome(str(manifest), "left-behind" if still else "reaped", entries, still)


def reap(manifests: Sequence[Path] = (), directory: Path | None = None, *, runner: Runner | None = None,
         system: System | None = None, dry_run: bool = False) -> list[Outcome]:
    """Reap the named manifests, or every finished run's manifest in ``directory``; returns what happened to each.

    A manifest named explicitly is reaped even when it records no pid; one found by scanning is reaped only when
    the process that wrote it is known to be gone. The newest manifest goes first: a layout's mounts before the
    array of loop devices under them.
    """
    runner = runner or Runner()
    system = system or System(runner=runner)
    named = [Path(m) for m in manifests]
    found = list(Path(directory).glob("*.json")) if directory is not None and not named else []
    ordered = sorted(named + found, key=lambda m: m.stat().st_mtime if m.exists() else 0, reverse=True)
    outcomes = []
    for manifest in ordered:
        try:
            outcomes.append(reap_one(manifest, runner, system, named=manifest in named, dry_run=dry_run))
        except ConfigError as exc:
            if manifest in named:
                raise
            outcomes.append(Outcome(str(manifest), "unreadable", [], [str(exc)]))
    return outcomes
