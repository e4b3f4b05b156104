"""The emulated array: N loop devices on sparse files of our own, each capped at a known bandwidth.

Because every device is capped by the kernel's block throttling, the true answer is known: N devices can deliver
N x the cap and no more. Everything made here is recorded in a ``Teardown`` and removed on exit, on error and on
Ctrl-C; nothing that flashscale did not make is touched (loop devices are found with ``losetup --find`` and
detached one by one, by the path ``losetup`` gave us, never with ``-D``).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..system.commands import Runner
from ..system.devices import Device, identify, loop_backing_file, majmin
from ..errors import ConfigError, UnsupportedError
from ..system.teardown import Teardown, manifest_dir
from ..system.throttle import Throttle

DEFAULT_BACKING_ROOT = Path("/dev/shm")


@dataclass(frozen=True)
class ArraySpec:
    """N devices of ``device_size`` bytes, capped at ``read_bps`` / ``write_bps`` bytes/s each."""

    devices: int = 4
    device_size: int = 2 * 2**30
    read_bps: int = 200_000_000
    write_bps: int = 200_000_000
    backing_root: str | None = None

    def __post_init__(self) -> None:
        for attr in ("devices", "device_size", "read_bps", "write_bps"):
            value = getattr(self, attr)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigError(f"{attr}={value!r} must be a positive whole number")
        if self.device_size < 512 * 2**20:
            raise ConfigError(f"device_size={self.device_size} is below 512 MiB, too small for xfs and btrfs")


def loop_support_problem() -> str | None:
    """Why loop devices cannot be used here, or None when they can."""
    if os.geteuid() != 0:
        return "flashscale is not running as root"
    if shutil.which("losetup") is None:
        return "losetup is not installed"
    if not Path("/dev/loop-control").exists():
        return "the kernel offers no /dev/loop-control"
    return None


def choose_backing_root(spec: ArraySpec) -> Path:
    """tmpfs when it has room (so the backing store is never the bottleneck), else the system temp dir."""
    if spec.backing_root:
        return Path(spec.backing_root)
    need = spec.devices * spec.device_size
    if DEFAULT_BACKING_ROOT.is_dir() and shutil.disk_usage(DEFAULT_BACKING_ROOT).free > 2 * need:
        return DEFAULT_BACKING_ROOT
    return Path(tempfile.gettempdir())


class EmulatedArray:
    """Context manager: ``with EmulatedArray(spec, runner) as array: array.devices, array.throttle``."""

    def __init__(self, spec: ArraySpec, runner: Runner | None = None):
        self.spec = spec
        self.runner = runner or Runner()
        self.devices: list[Device] = []
        self.throttle: Throttle | None = None
        self.workdir: Path | None = None
        self.teardown: Teardown | None = None

    def __enter__(self) -> "EmulatedArray":
        problem = loop_support_problem()
        if problem:
            raise UnsupportedError(f"cannot build the emulated array: {problem}")
        self.workdir = Path(tempfile.mkdtemp(prefix="flashscale-array-", dir=choose_backing_root(self.spec)))
        self.teardown = Teardown(manifest_dir() / f"{self.workdir.name}.json")
        self.teardown.record("dir", lambda: self.workdir.rmdir(), path=str(self.workdir))
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def _build(self) -> None:
        self.throttle = Throttle.create()
        self.teardown.record("cgroup", self.throttle.remove, path=str(self.throttle.path))
        for index in range(self.spec.devices):
            backing = self.workdir / f"device{index}.img"
            with open(backing, "xb") as fh:
                fh.truncate(self.spec.device_size)
            self.teardown.record("file", backing.unlink, path=str(backing))
            path = self.runner.run(["losetup", "--find", "--show", str(backing)]).stdout.strip()
            self.teardown.record("loop", lambda p=path, b=backing: self._detach(p, b), path=path,
                                 backing_file=str(backing))
            device = identify(path)
            if device.id != f"loop:{backing}":
                raise UnsupportedError(f"{path} reports backing file {device.id!r}, expected {backing}")
            self.throttle.cap(majmin(path), self.spec.read_bps, self.spec.write_bps)
            self.devices.append(device)

    def _detach(self, path: str, backing: Path) -> None:
        if loop_backing_file(path) != str(backing):
            return  # already gone, or no longer ours: never detach what we did not attach
        self.runner.run(["losetup", "--detach", path])
        if loop_backing_file(path) == str(backing):
            raise UnsupportedError(f"{path} is still attached to {backing} after losetup --detach")

    @property
    def cgroup_procs(self) -> list[Path]:
        return [self.throttle.procs_file] if self.throttle else []

    def close(self) -> None:
        if self.teardown is not None:
            self.teardown.close()
            self.teardown = None

    def __exit__(self, *exc) -> None:
        self.close()
