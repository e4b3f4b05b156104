"""Block-layer bandwidth caps through cgroups: v1 ``blkio.throttle.*_bps_device`` or v2 ``io.max``.

A ``Throttle`` is one cgroup that flashscale creates, caps per device, and removes. fio joins it through the
command runner's ``cgroup_procs`` (the child writes its own pid before exec), so only fio's I/O is capped. Every
write to a cgroup file is read back and checked.
"""
from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from ..errors import UnsupportedError

CGROUP_ROOT = Path("/sys/fs/cgroup")


def _mounts(proc_mounts: Path) -> list[tuple[str, str, str]]:
    rows = []
    for line in proc_mounts.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 4:
            rows.append((parts[2], parts[1], parts[3]))  # fstype, mountpoint, options
    return rows


def detect(proc_mounts: Path = Path("/proc/mounts")) -> tuple[str, Path]:
    """Which cgroup interface caps block I/O here: ("v1", blkio mount) or ("v2", unified mount with io)."""
    mounts = _mounts(proc_mounts)
    for fstype, mountpoint, options in mounts:
        if fstype == "cgroup" and "blkio" in options.split(","):
            return "v1", Path(mountpoint)
    for fstype, mountpoint, _ in mounts:
        controllers = Path(mountpoint) / "cgroup.controllers"
        if fstype == "cgroup2" and controllers.exists() and "io" in controllers.read_text().split():
            return "v2", Path(mountpoint)
    raise UnsupportedError("no cgroup v1 blkio hierarchy and no cgroup v2 with the io controller: "
                           "block bandwidth caps are not possible on this machine")


def _write_checked(path: Path, text: str, expect: str) -> None:
    with open(path, "w") as fh:
        fh.write(text)
    if expect not in path.read_text():
        raise UnsupportedError(f"wrote {text!r} to {path} but the kernel did not keep it")


@dataclass
class Throttle:
    kind: str
    path: Path

    @classmethod
    def create(cls, prefix: str = "flashscale", proc_mounts: Path = Path("/proc/mounts")) -> "Throttle":
        kind, root = detect(proc_mounts)
        if kind == "v2":
            control = root / "cgroup.subtree_control"
            if "io" not in control.read_text().split():
                raise UnsupportedError(f"the io controller is not enabled for child cgroups in {control}; "
                                       f"enable it with: echo +io > {control}")
        path = root / f"{prefix}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        path.mkdir()
        return cls(kind, path)

    @property
    def procs_file(self) -> Path:
        return self.path / "cgroup.procs"

    def cap(self, majmin: str, read_bps: int | None, write_bps: int | None) -> None:
        """Cap one device (``MAJ:MIN``) in bytes/s; None leaves that direction uncapped."""
        if self.kind == "v1":
            for name, bps in (("read", read_bps), ("write", write_bps)):
                if bps:
                    _write_checked(self.path / f"blkio.throttle.{name}_bps_device", f"{majmin} {int(bps)}",
                                   f"{majmin} {int(bps)}")
        else:
            settings = " ".join(f"{k}={int(v)}" for k, v in (("rbps", read_bps), ("wbps", write_bps)) if v)
            if settings:
                _write_checked(self.path / "io.max", f"{majmin} {settings}", f"{majmin} {settings}")

    def remove(self) -> None:
        """Remove the cgroup (it must be empty: fio has exited); verify it is gone."""
        if not self.path.exists():
            return
        leftover = self.procs_file.read_text().split() if self.procs_file.exists() else []
        if leftover:
            raise UnsupportedError(f"cgroup {self.path} still holds processes {leftover}; not removing it")
        self.path.rmdir()
        if self.path.exists():
            raise UnsupportedError(f"cgroup {self.path} still exists after rmdir")
