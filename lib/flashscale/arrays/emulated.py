"""The emulated array: N loop devices on sparse files of our own, each capped at a known bandwidth.

Because every device is capped by the kernel's block throttling, the true answer is known: N devices can deliver
N x the cap and no more. Everything made here is recorded in a ``Teardown`` and removed on exit, on error and on
Ctrl-C; nothing that flashscale did not make is touched (loop devices are found with ``losetup --find`` and
detached one by one, by the path ``losetup`` gave us, never with ``-D``).
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..system.commands import Runner
from ..system.devices import Device, System
from ..errors import ConfigError, UnsupportedError
from ..system.teardown import Built
from ..system.throttle import Throttle

SHM = "shm"  # tmpfs under the machine's /dev: the backing store that is never the bottleneck, when it has room


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


def loop_support_problem(system: System | None = None) -> str | None:
    """Why loop devices cannot be used here, or None when they can (``System.loop_support_problem``)."""
    return (system or System()).loop_support_problem()


def choose_backing_root(spec: ArraySpec, system: System) -> Path:
    """tmpfs when it has room (so the backing store is never the bottleneck), else the system temp dir."""
    if spec.backing_root:
        return Path(spec.backing_root)
    shm = system.dev / SHM
    if (system.free_bytes(shm) or 0) > 2 * spec.devices * spec.device_size:
        return shm
    return Path(tempfile.gettempdir())


class EmulatedArray(Built):
    """Context manager: ``with EmulatedArray(spec, runner, system) as array: array.devices, array.throttle``.

    ``system`` is the machine it reads (loop devices' identities, the cgroup hierarchy); ``manifests`` is where its
    teardown manifest goes (default: ``manifest_dir()``).
    """

    def __init__(self, spec: ArraySpec, runner: Runner | None = None, system: System | None = None,
                 manifests: Path | None = None):
        super().__init__(runner, system, manifests)
        self.spec = spec
        self.devices: list[Device] = []
        self.throttle: Throttle | None = None
        self.workdir: Path | None = None

    def _build(self) -> None:
        problem = self.system.loop_support_problem()
        if problem:
            raise UnsupportedError(f"cannot build the emulated array: {problem}")
        root = choose_backing_root(self.spec, self.system)
        self.workdir = Path(tempfile.mkdtemp(prefix="flashscale-array-", dir=root))
        self.start_teardown(self.workdir.name).record("dir", path=str(self.workdir))
        self.throttle = Throttle.create(self.system, self.teardown)
        for index in range(self.spec.devices):
            backing = self.workdir / f"device{index}.img"
            self.teardown.record("file", path=str(backing))
            with open(backing, "xb") as fh:
                fh.truncate(self.spec.device_size)
            path = self.runner.run(["losetup", "--find", "--show", str(backing)]).stdout.strip()
            self.teardown.record("loop", path=path, backing_file=str(backing))
            device = self.system.identify(path)
            if device.id != f"loop:{backing}":
                raise UnsupportedError(f"{path} reports backing file {device.id!r}, expected {backing}")
            self.throttle.cap(self.system.majmin(path), self.spec.read_bps, self.spec.write_bps)
            self.devices.append(device)

    @property
    def cgroup_procs(self) -> list[Path]:
        return [self.throttle.procs_file] if self.throttle else []
