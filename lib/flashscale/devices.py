"""Block devices: identity, and the erase that every layout starts from.

A ``Device`` is a path plus the stable identity it had when flashscale took it. Before any destructive step the
identity is resolved again from the path; if something else now sits there, the step is refused.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from .commands import Runner
from .errors import RefusedError

SYS_BLOCK = Path("/sys/block")


@dataclass(frozen=True)
class Device:
    path: str
    id: str


def majmin(path: str) -> str:
    """``MAJ:MIN`` of a block device path; RefusedError if it is not a block device."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise RefusedError(f"{path}: no such device") from None
    if not stat.S_ISBLK(st.st_mode):
        raise RefusedError(f"{path}: not a block device")
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


def loop_backing_file(path: str, sys_block: Path = SYS_BLOCK) -> str | None:
    """The file behind a loop device, or None if the path is not an attached loop device."""
    backing = sys_block / Path(path).name / "loop" / "backing_file"
    try:
        return backing.read_text().strip()
    except FileNotFoundError:
        return None


def identify(path: str) -> Device:
    """The device at ``path`` with its identity; a loop device is known by its backing file."""
    majmin(path)
    backing = loop_backing_file(path)
    if backing is not None:
        return Device(path, f"loop:{backing}")
    wwid = SYS_BLOCK / Path(path).name / "device" / "wwid"
    if wwid.exists():
        return Device(path, wwid.read_text().strip())
    raise RefusedError(f"{path}: no stable identity found (not a loop device, no wwid)")


def check_identity(device: Device) -> None:
    """Refuse unless the device at ``device.path`` is still the one named by ``device.id``."""
    now = identify(device.path)
    if now.id != device.id:
        raise RefusedError(f"{device.path} is now {now.id!r}, not {device.id!r}: refusing to touch it")


def erase(device: Device, runner: Runner) -> dict:
    """Discard every block of ``device`` (blkdiscard) after checking its identity; returns what was done."""
    check_identity(device)
    runner.run(["blkdiscard", device.path])
    return {"device": device.path, "id": device.id, "method": "discard"}
