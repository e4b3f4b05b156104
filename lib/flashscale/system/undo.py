"""Undo one thing flashscale made, by kind, and verify it is gone: the one undo of the teardown and of reap.

Each kind of thing a teardown records has an ``undo`` (idempotent: it does nothing when the thing is already gone,
and never touches something that is no longer what was recorded) and, where the machine can tell, a ``present``
check read through ``System``: the mount table, the loop devices' backing files, ``/proc/mdstat``, the paths.
``undo`` runs the one and then asks the other: undo is verified, never assumed.

    mount          umount, if the mount point is still a mount of the recorded source
    mountpoint     an empty directory we made to mount on
    dir            a directory we made: the files fio named after our jobs (``flashscale-*``, or with the fio client's
                   IPv4 address first, as a fio server names them) in it, then itself
    file           a file we made, only inside a ``flashscale-*`` directory and never through a symlink
    loop           losetup --detach, if the loop device still has the recorded backing file
    cgroup         an empty cgroup we made (refused while it holds processes)
    btrfs-devices  btrfs device scan --forget, on each member that still carries its recorded identity; nothing to
                   do without /dev/btrfs-control or for a member the kernel does not know; verified unmounted
    md             mdadm --stop, then --zero-superblock on the members still ours
    lvm-lv, lvm-vg, lvm-pv   lvremove, vgremove, pvremove
    process        SIGTERM, then SIGKILL, to its process group, only while the pid still has the recorded start time;
                   one recorded without a start time is never signalled, and named as left behind while its pid runs
    qdisc          tc qdisc del of the root qdisc on a link of ours, if the link is still the one recorded
    veth           ip link del of our end of a veth pair (which removes both ends), if still the one recorded
    netns          ip netns del of a network namespace we named (``flashscale-`` and a random token)
    scratch        a directory an application workload made (``flashscale-<name>-*`` holding our marker file, not a
                   symlink): removed with everything in it (bonnie++'s files, a PostgreSQL cluster's data directory)
    nullb          a null_blk device we made through configfs (``<configfs>/nullb/fs<token><i>``): power=0, read back,
                   then rmdir of its configfs directory, only while that directory still has the recorded name of ours
    remote         what an SSH campaign made on a real host (``system.ssh.shipped.undo_remote``): the host, reached as the
                   campaign's contacts say (never as the manifest says), is given a fresh zip checked by its SHA-256,
                   which undoes the manifests kept there and removes the folders shipped to; a host that cannot be
                   reached keeps the entry, for a later reap
"""
from __future__ import annotations

import logging
import re
import secrets
import shutil
import time
from pathlib import Path
from typing import Callable

from . import processes
from .ssh import shipped
from .commands import Runner
from .devices import System
from ..errors import CommandError, ConfigError, FlashscaleError, UnsupportedError

log = logging.getLogger("flashscale.undo")

OWN_FILE_PREFIX = "flashscale-"  # files fio makes in our directories are named after our job sections
# ... and, made by a fio server for a client, after the client's address first: 127.0.0.1.flashscale-t0.0.0
OWN_FILE = re.compile(rf"(?:(?:\d{{1,3}}\.){{4}})?{OWN_FILE_PREFIX}")
BTRFS_UNKNOWN = "No such file or directory"  # btrfs --forget of a device the kernel has no record of (ENOENT)
NULLB_NAME = re.compile(r"fs[0-9a-f]{8}[0-9]+")  # a null_blk device of ours: fs, a token of 8 hex digits, its index
NULLB_FOLDER = "nullb"  # null_blk's folder in configfs, the parent of every device's


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
        if OWN_FILE.match(child.name) and child.is_file() and not child.is_symlink():
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
    """Forget the members still ours, one at a time (given several paths, btrfs's exit status tells of the last only).

    Without ``/dev/btrfs-control`` (no udev made it) nothing can be forgotten, and nothing needs to be: the kernel
    holds an unmounted member open no longer, and the next scan or mount of it replaces its record. A member the
    kernel has no record of is already forgotten. Whether one is still mounted is then ``present``'s to say.
    """
    control = system.dev / "btrfs-control"
    if not control.exists():
        log.info("%s is missing: no btrfs device can be, or needs to be, forgotten", control)
        return
    for path in _members_still_ours(d, system):
        try:
            runner.run(["btrfs", "device", "scan", "--forget", path])
        except CommandError as exc:
            if BTRFS_UNKNOWN not in exc.stderr:
                raise
            log.info("the kernel has no record of btrfs device %s: nothing to forget", path)


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


def _our_link(d: dict, system: System) -> bool:
    """Whether the link named in ``d`` is there and still has the recorded ifindex (when one was recorded)."""
    index = system.net_links().get(d["link"])
    return index is not None and d.get("ifindex") in (None, index)


def _undo_qdisc(d: dict, runner: Runner, system: System) -> None:
    if _our_link(d, system):
        runner.run(["tc", "qdisc", "del", "dev", d["link"], "root"], ok_codes=(0, 2))  # 2: none there any more


def _undo_veth(d: dict, runner: Runner, system: System) -> None:
    if _our_link(d, system):
        runner.run(["ip", "link", "del", d["link"]], ok_codes=(0, 1))  # 1: removed with its namespace meanwhile
    deadline = time.monotonic() + 5  # a pair whose namespace went first is removed by the kernel a little later
    while _our_link(d, system) and time.monotonic() < deadline:
        time.sleep(0.05)


def _undo_process(d: dict, runner: Runner, system: System) -> None:
    """A background process of ours (``processes.stop``). One recorded without a start time cannot be told from a
    program that took its pid since: it is not signalled, and while its pid is in use it is left behind, named."""
    if d.get("start") is None and processes.may_still_run(d["process"], None, system):
        raise UnsupportedError(f"process {d['process']} ({' '.join(d.get('argv', []))}) was recorded without its "
                               f"start time, so it cannot be told from another program that took its pid since: not "
                               f"signalled; stop it if it is flashscale's, then reap again")
    processes.stop(d["process"], d.get("start"), system)


def _undo_netns(d: dict, runner: Runner, system: System) -> None:
    if d["name"] in system.netns_names():
        runner.run(["ip", "netns", "del", d["name"]])


SCRATCH_PREFIX = OWN_FILE_PREFIX
SCRATCH_MARKER = ".flashscale-scratch"


def make_scratch(parent: Path, name: str, teardown, mode: int | None = None) -> Path:
    """A fresh directory ``flashscale-<name>-XXXXXXXX`` in ``parent`` holding our marker, recorded in ``teardown``
    (kind ``scratch``) before it is made: its undo removes it with everything in it. ``mode`` 0o700: no one else
    can enter it (the umask's otherwise)."""
    folder = Path(parent) / f"{SCRATCH_PREFIX}{name}-{secrets.token_hex(4)}"
    teardown.record("scratch", path=str(folder))
    folder.mkdir()
    if mode is not None:
        folder.chmod(mode)
    (folder / SCRATCH_MARKER).write_text("made by flashscale; removed with everything in it\n")
    return folder


def _undo_scratch(d: dict, runner: Runner, system: System) -> None:
    """A workload's scratch directory: only one named ours, not a symlink, that still holds our marker."""
    folder = Path(d["path"])
    if not folder.is_dir() or folder.is_symlink():
        return
    if not folder.name.startswith(SCRATCH_PREFIX) or not (folder / SCRATCH_MARKER).is_file():
        log.warning("%s is not a scratch directory of flashscale's (no marker): leaving it", folder)
        return
    inside = [m.mountpoint for m in system.mounts() if f"{m.mountpoint}/".startswith(f"{folder}/")]
    if inside:  # removing it would remove what is mounted there too (a chroot's /dev, /sys)
        raise UnsupportedError(f"{folder} is not removed: {', '.join(inside)} is mounted in it")
    shutil.rmtree(folder)


def write_attribute(path: Path, value: str) -> None:
    """Write a configfs or sysfs attribute and read it back: UnsupportedError naming the file and the value when the
    kernel refuses it or keeps something else."""
    try:
        with open(path, "w") as fh:
            fh.write(value)
        kept = path.read_text().strip()
    except OSError as exc:
        raise UnsupportedError(f"the kernel refused {value!r} in {path}: {exc.strerror or exc}") from None
    if kept != value:
        raise UnsupportedError(f"wrote {value!r} to {path} but the kernel kept {kept!r}")


def remove_configfs_item(folder: Path) -> None:
    """Remove a configfs item: rmdir, which takes its attribute files with it (the kernel's doing, not ours)."""
    folder.rmdir()


def _ours_by_name(d: dict) -> bool:
    """Whether a recorded null_blk configfs directory is named as ours (``NULLB_NAME``, the recorded name) and sits in
    null_blk's configfs folder."""
    folder = Path(d["path"])
    named = folder.name == d.get("name") and bool(NULLB_NAME.fullmatch(folder.name))
    return named and folder.parent.name == NULLB_FOLDER


def _undo_nullb(d: dict, runner: Runner, system: System) -> None:
    """Power the device off (the kernel removes its disk), checked, then remove its configfs directory."""
    folder = Path(d["path"])
    if not _ours_by_name(d):
        log.warning("%s is not a null_blk device of flashscale's (recorded name %r): leaving it", folder, d.get("name"))
        return
    if not folder.is_dir():
        return
    if (folder / "power").exists() and (folder / "power").read_text().strip() != "0":
        write_attribute(folder / "power", "0")
    remove_configfs_item(folder)


def _undo_remote(d: dict, runner: Runner, system: System, contacts=None) -> None:
    """A real host's share of an SSH campaign, undone there (verified there: the host reports what it left), the
    host reached through ``contacts`` (``shipped.Contacts``: the campaign's, never the manifest's)."""
    problems = shipped.undo_remote(d, contacts)
    if problems:
        raise UnsupportedError(f"host {d['name']} left things behind: " + "; ".join(problems))


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


def _btrfs_mounted(d: dict, system: System) -> bool | None:
    """True while a member still ours is in a mounted btrfs (``/sys/fs/btrfs``); otherwise None: whether the kernel
    still keeps a record of an unmounted member, it shows nowhere."""
    mounted = {name for members in system.btrfs_members().values() for name in members}
    ours = {system.name_of(path) for path in _members_still_ours(d, system)}
    return True if mounted & ours else None


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
    "process": _undo_process,
    "qdisc": _undo_qdisc,
    "veth": _undo_veth,
    "netns": _undo_netns,
    "scratch": _undo_scratch,
    "nullb": _undo_nullb,
    "remote": _undo_remote,
}

PRESENT: dict[str, Callable[[dict, System], bool | None]] = {
    "mount": lambda d, s: s.mounted(d["path"]) is not None,
    "mountpoint": _path_exists,
    "dir": _path_exists,
    "file": _path_exists,
    "loop": lambda d, s: s.loop_backing(d["path"]) == d["backing_file"],
    "cgroup": _path_exists,
    "btrfs-devices": _btrfs_mounted,
    "md": _md_listed,
    "lvm-lv": _path_exists,
    "process": lambda d, s: processes.still_ours(d["process"], d.get("start"), s),
    "qdisc": lambda d, s: None,  # tc cannot tell our qdisc from one put there since; the link's undo removes it
    "veth": _our_link,
    "netns": lambda d, s: d["name"] in s.netns_names(),
    "scratch": lambda d, s: Path(d["path"]).is_dir() and (Path(d["path"]) / SCRATCH_MARKER).is_file(),
    "nullb": lambda d, s: Path(d["path"]).is_dir() if _ours_by_name(d) else None,  # not ours: never looked at
    "remote": lambda d, s: None,  # on another machine: its undo asks the host, which reports what it left
}


def undo(kind: str, details: dict, runner: Runner, system: System, contacts=None) -> None:
    """Undo one recorded thing and verify it is gone; unknown kinds are an error, never guessed at. ``contacts``: how
    the hosts of ``remote`` entries are reached (the only kind that needs them)."""
    if kind not in UNDO:
        raise ConfigError(f"manifest kind {kind!r} is unknown; known: {', '.join(UNDO)}")
    UNDO[kind](details, runner, system, **({"contacts": contacts} if kind == "remote" else {}))
    if present(kind, details, system):
        members = ", ".join(m["path"] for m in details.get("members", []))
        _gone(details.get("path") or members or details, kind)


def present(kind: str, details: dict, system: System) -> bool | None:
    """Whether a recorded thing is there now; None when it cannot be told from the machine."""
    check = PRESENT.get(kind)
    return None if check is None else check(details, system)
