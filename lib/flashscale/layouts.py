"""Array layouts: what the fio jobs run on. Each builds from erased devices and records its own teardown.

    single       one device, its own xfs: the baseline
    jbod         one xfs per device; fio jobs spread evenly over the mount points (seed 000, Test 2)
    btrfs-raid0  one btrfs striped (data and metadata raid0) over all devices: an array without md
    directory    no devices: plain directories on the local disk (the fallback without root or loop devices)
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from .commands import Runner
from .devices import Device, erase
from .errors import ConfigError, UnsupportedError
from .teardown import Teardown

MOUNT_OPTIONS = "noatime,nodiratime"


@dataclass(frozen=True)
class Layout:
    name: str
    devices: int
    targets: tuple[str, ...]
    backend: str  # loop | device | directory
    description: str


def _mounted(target: Path) -> bool:
    return any(line.split()[1] == str(target) for line in Path("/proc/mounts").read_text().splitlines())


def _mount(runner: Runner, teardown: Teardown, source: str, target: Path, fstype: str) -> None:
    target.mkdir()
    teardown.record("mountpoint", target.rmdir, path=str(target))
    runner.run(["mount", "-t", fstype, "-o", MOUNT_OPTIONS, source, str(target)])
    if not _mounted(target):
        raise UnsupportedError(f"mount of {source} on {target} reported success but {target} is not mounted")
    teardown.record("mount", lambda: _umount(runner, target), path=str(target), source=source)


def _umount(runner: Runner, target: Path) -> None:
    if not _mounted(target):
        return
    runner.run(["umount", str(target)])
    if _mounted(target):
        raise UnsupportedError(f"{target} is still mounted after umount")


def _xfs_each(name: str, devices: Sequence[Device], root: Path, runner: Runner, teardown: Teardown) -> tuple[str, ...]:
    targets = []
    for index, device in enumerate(devices):
        erase(device, runner)
        runner.run(["mkfs.xfs", "-q", device.path])
        target = root / f"{name}{index}"
        _mount(runner, teardown, device.path, target, "xfs")
        targets.append(str(target))
    return tuple(targets)


def _btrfs_raid0(devices: Sequence[Device], root: Path, runner: Runner, teardown: Teardown) -> tuple[str, ...]:
    for device in devices:
        erase(device, runner)
    paths = [d.path for d in devices]
    runner.run(["mkfs.btrfs", "-q", "-d", "raid0", "-m", "raid0", *paths])
    teardown.record("btrfs-devices", lambda: runner.run(["btrfs", "device", "scan", "--forget", *paths]),
                    devices=paths)
    target = root / "btrfs-raid0"
    _mount(runner, teardown, paths[0], target, "btrfs")
    return (str(target),)


def build(name: str, devices: Sequence[Device], runner: Runner, teardown: Teardown) -> Layout:
    """Erase ``devices`` and build layout ``name`` on them; mount points live in a fresh directory of ours."""
    if name not in DEVICE_LAYOUTS:
        raise ConfigError(f"layout={name!r} is not one of {', '.join(DEVICE_LAYOUTS)}")
    if not devices:
        raise ConfigError(f"layout {name!r} needs at least one device")
    chosen = list(devices[:1]) if name == "single" else list(devices)
    root = Path(tempfile.mkdtemp(prefix=f"flashscale-{name}-"))
    teardown.record("dir", root.rmdir, path=str(root))
    builder, description = DEVICE_LAYOUTS[name]
    targets = builder(name, chosen, root, runner, teardown)
    backend = "loop" if all(d.id.startswith("loop:") for d in chosen) else "device"
    return Layout(name, len(chosen), targets, backend, description)


def build_directories(name: str, count: int, parent: Path, teardown: Teardown) -> Layout:
    """The fallback: ``count`` fresh directories under ``parent``, all on whatever disk holds it."""
    if name not in ("single", "jbod"):
        raise UnsupportedError(f"layout {name!r} needs block devices; plain directories offer only single and jbod")
    chosen = 1 if name == "single" else count
    root = Path(tempfile.mkdtemp(prefix=f"flashscale-{name}-", dir=parent))
    teardown.record("dir", root.rmdir, path=str(root))
    targets = []
    for index in range(chosen):
        target = root / f"dir{index}"
        target.mkdir()
        teardown.record("dir", lambda t=target: _remove_fio_files(t), path=str(target))
        targets.append(str(target))
    return Layout(name, chosen, tuple(targets), "directory",
                  f"{chosen} plain director{'y' if chosen == 1 else 'ies'} on the local disk, no caps")


def _remove_fio_files(target: Path, prefix: str = "flashscale-") -> None:
    """Remove the files fio made (named after our job sections) and then the directory itself."""
    for child in target.iterdir():
        if child.is_file() and child.name.startswith(prefix):
            child.unlink()
    target.rmdir()


DEVICE_LAYOUTS: dict[str, tuple[Callable, str]] = {
    "single": (_xfs_each, "one device with its own xfs (the baseline)"),
    "jbod": (_xfs_each, "one xfs per device, jobs spread evenly over the mount points"),
    "btrfs-raid0": (lambda name, devs, root, runner, td: _btrfs_raid0(devs, root, runner, td),
                    "one btrfs with data and metadata striped (raid0) over all devices"),
}
