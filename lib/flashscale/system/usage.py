"""What uses a device: mounts, swap, holders (md, dm, LVM), btrfs members and the boot file systems, read from
sysfs and /proc; and which devices hold a path. A part of ``devices.System`` (its ``Usage``), which the guard asks
before every destructive step; it only reads.
"""
from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

from .machine import read as _read

BOOT_MOUNTPOINTS = ("/", "/boot", "/boot/efi", "/efi")


@dataclass(frozen=True)
class Mount:
    majmin: str
    mountpoint: str
    fstype: str
    source: str
    options: str = ""  # the super options: a cgroup v1 mount names its controllers here (``rw,blkio``)


def _unescape(field_text: str) -> str:
    """Undo the octal escapes (``\\040`` for a space) of /proc/self/mountinfo and /proc/swaps."""
    out, i = [], 0
    while i < len(field_text):
        if field_text[i] == "\\" and field_text[i + 1:i + 4].isdigit():
            out.append(chr(int(field_text[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field_text[i])
            i += 1
    return "".join(out)


class Usage:
    """Why a device is in use, and which devices hold a path: the ``System`` methods that read mounts and holders
    (``self.proc``, ``self.sys``, ``self.node``, ``self.name_of``, ``self.partitions``, ``self.parent_of`` are
    ``System``'s)."""

    def mounts(self) -> list[Mount]:
        rows = []
        for line in (self.proc / "self" / "mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(fields) >= 5 and len(tail) >= 2:
                rows.append(Mount(fields[2], _unescape(fields[4]), tail[0], _unescape(tail[1]),
                                  tail[2] if len(tail) > 2 else ""))
        return rows

    def mounted(self, mountpoint: str) -> Mount | None:
        return next((m for m in self.mounts() if m.mountpoint == str(mountpoint)), None)

    def swaps(self) -> list[str]:
        lines = (self.proc / "swaps").read_text().splitlines()[1:] if (self.proc / "swaps").exists() else []
        return [_unescape(line.split()[0]) for line in lines if line.split()]

    def holders(self, name: str) -> list[str]:
        folder = self.node(name) / "holders"
        return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []

    def btrfs_members(self) -> dict[str, list[str]]:
        """Devices of every mounted btrfs, by file system id (/sys/fs/btrfs/<fsid>/devices)."""
        root = self.sys / "fs" / "btrfs"
        found = {}
        for fsid in sorted(root.iterdir()) if root.is_dir() else []:
            if (fsid / "devices").is_dir():
                found[fsid.name] = sorted(p.name for p in (fsid / "devices").iterdir())
        return found

    def mdstat(self) -> str | None:
        path = self.proc / "mdstat"
        return path.read_text() if path.exists() else None

    def _names_by_majmin(self) -> dict[str, str]:
        folder = self.sys / "class" / "block"
        return {_read(p / "dev"): p.name for p in folder.iterdir()} if folder.is_dir() else {}

    def _mount_names(self, mount: Mount, by_majmin: dict[str, str]) -> set[str]:
        names = {by_majmin[mount.majmin]} if mount.majmin in by_majmin else set()
        if mount.source.startswith("/dev/"):
            names.add(self.name_of(mount.source))
        return names

    def _lineage(self, name: str) -> set[str]:
        """``name``, the disk it is a partition of, and recursively every device under it (md/dm slaves)."""
        seen, todo = set(), [name]
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            parent = self.parent_of(current) if self.node(current).exists() else None
            todo += ([parent] if parent else []) + self._slaves(current)
        return seen

    def _slaves(self, name: str) -> list[str]:
        folder = self.node(name) / "slaves"
        return [p.name for p in folder.iterdir()] if folder.is_dir() else []

    def usage(self, path: str) -> list[str]:
        """Every reason the device at ``path`` is in use; empty when it is free. Reads only sysfs and /proc."""
        name = self.name_of(path)
        own = [name, *self.partitions(name)]
        what = {n: ("it" if n == name else f"its partition {n}") for n in own}
        by_majmin, reasons = self._names_by_majmin(), []
        for mount in self.mounts():
            for n in sorted(self._mount_names(mount, by_majmin) & set(own)):
                reasons.append(f"{what[n]} is mounted at {mount.mountpoint} ({mount.fstype})")
            if mount.mountpoint in BOOT_MOUNTPOINTS:
                under = set().union(*(self._lineage(n) for n in self._mount_names(mount, by_majmin)))
                if name in under:
                    role = "root" if mount.mountpoint == "/" else f"boot ({mount.mountpoint})"
                    reasons.append(f"it holds the {role} file system, or is the disk or array member under it")
        for fsid, members in self.btrfs_members().items():
            for n in sorted(set(members) & set(own)):
                reasons.append(f"{what[n]} is a member of the mounted btrfs {fsid}")
        for n in own:
            held = self.holders(n)
            if held:
                reasons.append(f"{what[n]} is held by {', '.join(held)} (an md, dm or LVM device)")
        for swap in self.swaps():
            if swap.startswith("/dev/") and self.name_of(swap) in own:
                reasons.append(f"{what[self.name_of(swap)]} is active swap")
        return list(dict.fromkeys(reasons))

    def exclusive_problem(self, path: str) -> str | None:
        """Why ``path`` cannot be opened exclusively (O_EXCL), or None when it can (it is closed at once)."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
        except OSError as exc:
            if exc.errno == errno.EBUSY:
                return "it cannot be opened exclusively (O_EXCL): another program holds it"
            return f"it cannot be opened: {exc.strerror}"
        os.close(fd)
        return None

    def mount_of(self, path: str | Path) -> Mount | None:
        """The mount that holds ``path`` (symlinks resolved): the one of the longest mount point above it; None
        where no mount is known."""
        real = os.path.realpath(path)
        mounts = [m for m in self.mounts() if real == m.mountpoint or real.startswith(m.mountpoint.rstrip("/") + "/")]
        return max(mounts, key=lambda m: len(m.mountpoint), default=None)

    def devices_under(self, path: str | Path) -> list[str]:
        """The block devices holding ``path`` (kernel names): its mount's device, every member of its btrfs, and
        every device under those (md and dm slaves, recursively). Empty on a file system without block devices."""
        mount = self.mount_of(path)
        if mount is None:
            return []
        names = {n for n in self._mount_names(mount, self._names_by_majmin()) if self.node(n).exists()}
        for members in self.btrfs_members().values():
            names |= set(members) if names & set(members) else set()
        seen, todo = set(), sorted(names)
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo += self._slaves(name)
        return sorted(seen)
