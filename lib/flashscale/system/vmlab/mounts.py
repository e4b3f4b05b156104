"""What the VM lab's guest sees of the host's folders, and the virtme-ng options that let it see the rest.

    mounts = guest_mounts(reads=[checkout, venv], writes=[data_root])
    mounts.options   # vng's --rwdir/--rodir options
    mounts.first     # shell commands the guest runs before anything else

The guest (virtme-ng's) reads the host's own files, read-only, at their own paths, except under the folders its
init mounts a tmpfs of its own over (``GUEST_OWN``: ``/var/tmp``, ``/run``, ``/dev/shm``...; ``/tmp`` is an
overlay of the host's, which it sees). A checkout cloned under ``/var/tmp``, as many CI systems do, is not there
in the guest, and neither is its ``.venv/bin/python``: such a read is mounted read-only at its own path
(``--rodir``). A folder the guest writes (``--rwdir``) inside one of those is a case of its own: vng mounts every
``--rwdir`` before every ``--rodir``, so the read-only checkout would hide the results folder inside it. That folder
is mounted at ``/run/flashscale-rw<N>`` instead and bound to its own path by the guest's first command.
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


@dataclass(frozen=True)
class GuestMounts:
    """vng's options for the host's folders, and the commands (``sh``) the guest runs first, before its command."""

    options: tuple[str, ...]
    first: tuple[str, ...]


def guest_mounts(reads: Sequence[Path], writes: Sequence[Path]) -> GuestMounts:
    """Every one of ``writes`` read-write at its own path in the guest; of ``reads`` (the checkout, the Python
    environment, the command's folder), those the guest would not see, read-only at theirs (the outermost of
    nested ones, and none inside a write folder, which shows it already)."""
    writes = [_absolute(w) for w in writes]
    hidden = {_absolute(r) for r in reads if not_seen(r)}
    hidden = sorted(r for r in hidden if not any(_within(r, other) for other in hidden - {r})
                    and not any(_within(r, w) for w in writes))
    options, first = [], []
    for index, folder in enumerate(writes):
        if any(_within(folder, r) for r in hidden):  # mounted before the read-only folder over it: bind it after
            staged = f"{STAGING}{index}"
            options.append(f"--rwdir={staged}={folder}")
            first.append(f"mount --bind {staged} {shlex.quote(str(folder))}")
        else:
            options.append(f"--rwdir={folder}")
    options += [f"--rodir={r}" for r in hidden]
    return GuestMounts(tuple(options), tuple(first))


def not_seen(path: Path) -> bool:
    """Whether the guest would not see the host's ``path`` unless it is mounted: it lies under one of ``GUEST_OWN``."""
    return any(_within(_absolute(path), own) for own in GUEST_OWN)


def _absolute(path: Path) -> Path:
    """``path`` absolute and normal, symbolic links kept: the guest opens the same string the host would."""
    return Path(os.path.abspath(path))


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
