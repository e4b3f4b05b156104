"""What the VM lab's guest sees of the host's folders, and the virtme-ng options that let it see the rest.

    mounts = guest_mounts(reads=[checkout, venv], writes=[data_root], cached=[Path("/usr"), venv, checkout])
    mounts.options   # vng's --rwdir/--rodir options
    mounts.first     # shell commands the guest runs before anything else
    HOST_SHARE       # the QEMU option that shares the host's / read-only for the cached folders

The guest (virtme-ng's) reads the host's own files, read-only, at their own paths, except under the folders its
init mounts a tmpfs of its own over (``GUEST_OWN``: ``/var/tmp``, ``/run``, ``/dev/shm``...; ``/tmp`` is an
overlay of the host's, which it sees). A checkout cloned under ``/var/tmp``, as many CI systems do, is not there
in the guest, and neither is its ``.venv/bin/python``: such a read is mounted read-only at its own path
(``--rodir``). A folder the guest writes (``--rwdir``) inside one of those is a case of its own: vng mounts every
``--rwdir`` before every ``--rodir``, so the read-only checkout would hide the results folder inside it. That folder
is mounted at ``/run/flashscale-rw<N>`` instead and bound to its own path by the guest's first command.

vng's share of the host's root has no page cache in the guest: every Python import reads its files again over 9p,
which under TCG is most of a Python process's start (``import pandas``: 46-59 s uncached, 28.6 s cached, measured
in one TCG guest of this project's machine; ``import papermill`` 119 s, 85 s). The folders no boot writes (the
Python installation, the venv, the checkout: ``cached``) are bound, read-only, from a second share of the host's
``/`` (``HOST_SHARE``, tag ``HOST_TAG``) mounted with ``cache=loose``: the guest then reads each file once. A
folder the guest writes inside one of them is staged and bound after it, as inside a hidden read.
"""
from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

# The folders virtme-ng's init (1.42) mounts over in the guest: a host path under one is not seen there
GUEST_OWN = tuple(Path(p) for p in (
    "/var/tmp", "/var/log", "/var/cache", "/var/lib/apt", "/var/lib/private", "/var/lib/portables",
    "/var/lib/machines", "/var/lib/sudo", "/var/lib/snapd/cookie", "/var/spool/rsyslog", "/run", "/dev", "/proc",
    "/sys"))
STAGING = "/run/flashscale-rw"  # a write folder's mount point in the guest before it is bound to its own path
HOST_TAG, HOST_MOUNT = "flashscale-host", "/run/flashscale-host"  # the cached share of the host's / and its mount
HOST_SHARE = f"-virtfs local,path=/,mount_tag={HOST_TAG},security_model=none,readonly=on"


@dataclass(frozen=True)
class GuestMounts:
    """vng's options for the host's folders, and the commands (``sh``) the guest runs first, before its command."""

    options: tuple[str, ...]
    first: tuple[str, ...]
    staged: tuple[tuple[Path, str], ...] = ()  # each write folder mounted first elsewhere, and where

    def at_boot(self, path: Path) -> Path:
        """Where the guest finds the host's ``path`` before its first steps have run: inside a staged write folder,
        at the staging mount point; anywhere else, at its own path."""
        path = _absolute(path)
        inside = [(folder, staged) for folder, staged in self.staged if _within(path, folder)]
        if not inside:
            return path
        folder, staged = max(inside, key=lambda pair: len(pair[0].parts))
        return Path(staged) / path.relative_to(folder)


def guest_mounts(reads: Sequence[Path], writes: Sequence[Path], cached: Sequence[Path] = ()) -> GuestMounts:
    """Every one of ``writes`` read-write at its own path in the guest; of ``reads`` (the checkout, the Python
    environment, the command's folder), those the guest would not see, read-only at theirs (the outermost of
    nested ones, and none inside a write folder, which shows it already); each of ``cached`` bound read-only from
    the cached share (``HOST_SHARE``, which the lab's QEMU must be given), unless a write folder holds it."""
    writes = [_absolute(w) for w in writes]
    hidden, cached = (_outermost({_absolute(r) for r in folders}, writes)
                      for folders in ([r for r in reads if not_seen(r)], cached))
    options, first, after, staged = [], [], [], []
    if cached:
        first += [f"mkdir -p {HOST_MOUNT}", f"mount -t 9p -o ro,trans=virtio,version=9p2000.L,access=any,"
                  f"msize=524288,cache=loose {HOST_TAG} {HOST_MOUNT}"]
        first += [f"mount --bind {shlex.quote(HOST_MOUNT + str(c))} {shlex.quote(str(c))}" for c in cached]
    for index, folder in enumerate(writes):
        if any(_within(folder, r) for r in [*hidden, *cached]):  # a read-only folder goes over it: bind it after
            staged.append((folder, f"{STAGING}{index}"))
            options.append(f"--rwdir={STAGING}{index}={folder}")
            after.append(f"mount --bind {STAGING}{index} {shlex.quote(str(folder))}")
        else:
            options.append(f"--rwdir={folder}")
    options += [f"--rodir={r}" for r in hidden]
    return GuestMounts(tuple(options), tuple(first + after), tuple(staged))


def _outermost(folders: set[Path], writes: Sequence[Path]) -> list[Path]:
    """``folders`` without those inside another of them or inside a write folder, in order."""
    return sorted(f for f in folders if not any(_within(f, other) for other in folders - {f})
                  and not any(_within(f, w) for w in writes))


def not_seen(path: Path) -> bool:
    """Whether the guest would not see the host's ``path`` unless it is mounted: it lies under one of ``GUEST_OWN``."""
    return any(_within(_absolute(path), own) for own in GUEST_OWN)


def _absolute(path: Path) -> Path:
    """``path`` absolute and normal, symbolic links kept: the guest opens the same string the host would."""
    return Path(os.path.abspath(path))


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
