"""Block-layer bandwidth caps through cgroups: v1 ``blkio.throttle.*_bps_device`` or v2 ``io.max``.

A ``Throttle`` is one cgroup that flashscale creates (recorded in the teardown, which removes it) and caps per
device. fio joins it through the command runner's ``cgroup_procs`` (the child writes its own pid before exec), so
only fio's I/O is capped. Every write to a cgroup file is read back and checked.
"""
from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from .devices import System
from ..errors import UnsupportedError
from .teardown import Teardown


def detect(system: System | None = None) -> tuple[str, Path]:
    """Which cgroup interface caps block I/O here: ("v1", blkio mount) or ("v2", unified mount with io).

    Read from the mount table: a cgroup v1 mount names its controllers in its super options, a cgroup v2 mount
    lists them in its ``cgroup.controllers``.
    """
    system = system or System()
    mounts = system.mounts()
    for mount in mounts:
        if mount.fstype == "cgroup" and "blkio" in mount.options.split(","):
            return "v1", Path(mount.mountpoint)
    for mount in mounts:
        if mount.fstype == "cgroup2" and "io" in system.cgroup_controllers(mount.mountpoint):
            return "v2", Path(mount.mountpoint)
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
    def create(cls, system: System, teardown: Teardown, prefix: str = "flashscale") -> "Throttle":
        """A new cgroup of ours in the hierarchy that caps block I/O, recorded in ``teardown`` before it is made."""
        kind, root = detect(system)
        if kind == "v2":
            control = root / "cgroup.subtree_control"
            if "io" not in control.read_text().split():
                raise UnsupportedError(f"the io controller is not enabled for child cgroups in {control}; "
                                       f"enable it with: echo +io > {control}")
        path = root / f"{prefix}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        teardown.record("cgroup", path=str(path))
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

    def uncap(self, majmin: str) -> None:
        """Lift one device's caps: v1's rule removed (a rate of 0), v2's limits set to max; read back and checked."""
        if self.kind == "v1":
            for name in ("read", "write"):
                path = self.path / f"blkio.throttle.{name}_bps_device"
                with open(path, "w") as fh:
                    fh.write(f"{majmin} 0")
                if any(line.split()[:1] == [majmin] for line in path.read_text().splitlines()):
                    raise UnsupportedError(f"wrote '{majmin} 0' to {path} but the kernel kept a cap on {majmin}")
        else:
            _write_checked(self.path / "io.max", f"{majmin} rbps=max wbps=max", "")
            held = [line for line in (self.path / "io.max").read_text().splitlines() if line.startswith(majmin + " ")]
            if any("rbps=max" not in line or "wbps=max" not in line for line in held):
                raise UnsupportedError(f"lifted the caps of {majmin} in {self.path / 'io.max'} but it shows {held}")
