"""The emulated array: N loop devices on sparse files of our own, each capped at a known bandwidth.

Because every device is capped by the kernel's block throttling, the true answer is known: N devices can deliver
N x the cap and no more. ``cap_scale`` (``CAP_SCALE``) caps device i at its own fraction of the cap instead (a slow
device among fast ones); the truth of a layout then comes from the devices it uses, each at its own cap
(``ArraySpec.layout_caps``). Everything made here is recorded in a ``Teardown`` and removed on exit, on error and on
Ctrl-C; nothing that flashscale did not make is touched (loop devices are found with ``losetup --find`` and
detached one by one, by the path ``losetup`` gave us, never with ``-D``).
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import layouts
from ..layouts import describe
from ..system.commands import Runner
from ..system.devices import Device, System
from ..errors import ConfigError, UnsupportedError
from ..system.teardown import Built
from ..system.throttle import Throttle

SHM = "shm"  # tmpfs under the machine's /dev: the backing store that is never the bottleneck, when it has room


CAP_FIT = ("lower", "refuse")  # CAP_FIT: caps this machine cannot carry are lowered to fit, or the campaign refused
CAP_FIT_ENV = "FLASHSCALE_CAP_FIT"  # its default where CAP_FIT is not given (the test suite sets 'refuse')


def check_cap_fit(value: object) -> str:
    """``value`` as CAP_FIT (one of ``CAP_FIT``), or a ConfigError naming it."""
    if value not in CAP_FIT:
        raise ConfigError(f"CAP_FIT={value!r} must be one of {', '.join(CAP_FIT)}: lower the caps to what this "
                          "machine carries, or refuse the campaign")
    return value


def cap_fit_policy(given: str | None) -> str:
    """The CAP_FIT in force: the one given, else ``$FLASHSCALE_CAP_FIT``, else 'lower'."""
    return check_cap_fit(given if given else os.environ.get(CAP_FIT_ENV) or "lower")


def cap_scale_problem(value: object, devices: int | None = None) -> str | None:
    """What is wrong with ``value`` as ``CAP_SCALE`` (a list or tuple, empty or, with ``devices``, one factor per
    device, each a number in (0, 1]), or None."""
    if not isinstance(value, (list, tuple)):
        return "must be a list of per-device factors in (0, 1], or empty"
    bad = [f for f in value if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0 < f <= 1]
    if bad:
        return (f"{', '.join(map(repr, bad))} is not a number in (0, 1]: each device's cap is a fraction of "
                "CAP_READ_BPS and CAP_WRITE_BPS, more than 0 and at most 1")
    if value and devices is not None and len(value) != devices:
        return (f"{len(value)} factor(s) for DEVICES={devices!r}: give one per device, or none (every device at the "
                "full cap)")
    return None


def cap_scale_factors(value: object, devices: int | None = None) -> tuple[float, ...]:
    """``value`` (``CAP_SCALE``) as the factors ``ArraySpec.cap_scale`` holds, or a ConfigError naming CAP_SCALE and
    its value (``cap_scale_problem``)."""
    problem = cap_scale_problem(value, devices)
    if problem:
        raise ConfigError(f"CAP_SCALE={list(value) if isinstance(value, tuple) else value!r}: {problem}")
    return tuple(float(f) for f in value)


@dataclass(frozen=True)
class ArraySpec:
    """N devices of ``device_size`` bytes, capped at ``read_bps`` / ``write_bps`` bytes/s each (0: that direction
    uncapped), or device i at ``cap_scale[i]`` x those (``CAP_SCALE``; empty: every device at the full cap)."""

    devices: int = 4
    device_size: int = 2 * 2**30
    read_bps: int = 200_000_000
    write_bps: int = 200_000_000
    backing_root: str | None = None
    cap_scale: tuple[float, ...] = ()
    cap_fit: str | None = None  # CAP_FIT: caps above what this machine carries lowered or refused (measure.truth)

    def __post_init__(self) -> None:
        for attr in ("devices", "device_size", "read_bps", "write_bps"):
            value = getattr(self, attr)
            uncapped = attr.endswith("_bps") and value == 0  # a cap of 0: that direction uncapped
            if isinstance(value, bool) or not isinstance(value, int) or (value <= 0 and not uncapped):
                raise ConfigError(f"{attr}={value!r} must be a positive whole number"
                                  + (" (or 0: uncapped)" if attr.endswith("_bps") else ""))
        if self.device_size < 512 * 2**20:
            raise ConfigError(f"device_size={self.device_size} is below 512 MiB, too small for xfs and btrfs")
        object.__setattr__(self, "cap_scale", cap_scale_factors(self.cap_scale, self.devices))
        if self.cap_fit is not None:
            check_cap_fit(self.cap_fit)

    def device_caps(self, index: int) -> tuple[int, int]:
        """Device ``index``'s read and write caps, bytes/s: the array's, times its ``cap_scale`` factor."""
        factor = self.cap_scale[index] if self.cap_scale else 1.0
        return round(self.read_bps * factor), round(self.write_bps * factor)

    def layout_caps(self, layout: str) -> tuple[float, float]:
        """The read and write cap per device of which ``layout``'s known truth is its devices x: from the devices it
        uses (``layouts.chosen``), each at its own cap (``device_caps``): their slowest where the layout puts an
        equal share of every byte on each member (``Descriptor.even_share``: as fast as its slowest member x members,
        no faster), their mean elsewhere (devices x the mean is the sum of their caps: the bound no layout of them
        passes, a mirror whose reads pick one copy included). Every device at the cap: the cap."""
        used = [self.device_caps(i) for i in layouts.chosen(layout, range(self.devices))]
        pick = min if describe(layout).even_share else (lambda caps: sum(caps) / len(caps))
        return tuple(float(pick([caps[d] for caps in used])) for d in (0, 1))

    def rw_caps(self, layout: str | None = None) -> dict:
        """The cap per rw a row's truth check holds it to (its "read" and "write" are also the caps of a mixed rw's):
        the array's, or with ``layout`` the cap per device of which that layout's truth is its devices x, from the
        devices it uses at their own caps (``layout_caps``). A cap of 0 is none: NaN, no truth."""
        read, write = self.layout_caps(layout) if layout else (self.read_bps, self.write_bps)
        read, write = (cap or float("nan") for cap in (read, write))
        return {"read": read, "randread": read, "write": write, "randwrite": write}

    def refuse_cap_scale(self, place: str) -> None:
        """A ConfigError when ``cap_scale`` is given to ``place``, whose devices are capped alike or not at all
        (only the emulated array's loop devices are capped one by one: ``campaigns.place.Place.caps_each_device``)."""
        if self.cap_scale:
            raise ConfigError(f"CAP_SCALE={list(self.cap_scale)!r} cannot apply to the {place} backend: only the "
                              "emulated array's loop devices are capped one by one; leave CAP_SCALE empty there")


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


MEMORY_FS = frozenset({"tmpfs", "ramfs"})


def backing_store_sentence(folder: Path, system: System) -> str | None:
    """A sentence for the notes when the backing files in ``folder`` are on a file system other than memory, or
    None: there a write's end_fsync flushes the backing files' dirty pages to that file system's disk within the
    run's time, so writes measure below their cap (one device capped at 100 MB/s wrote 92.3 MB/s backed on this
    project's test machine's disk, 101.1 without end_fsync)."""
    mount = system.mount_of(folder)
    if mount is None or mount.fstype in MEMORY_FS:
        return None
    return (f"The emulated devices' backing files are in {folder}, on {mount.fstype} at {mount.mountpoint}, not in "
            "memory: a write's closing flush (end_fsync) writes them to that disk within the run's time, so writes "
            "can measure below their cap; give BACKING_DIR on tmpfs (the default, /dev/shm, when it has room) for a "
            "write truth that holds.")


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
            self.throttle.cap(self.system.majmin(path), *self.spec.device_caps(index))
            self.devices.append(device)

    def recap(self, spec: ArraySpec) -> None:
        """Hold every device at ``spec``'s caps from now on (caps lowered to what the machine carries)."""
        for index, device in enumerate(self.devices):
            self.throttle.cap(self.system.majmin(device.path), *spec.device_caps(index))
        self.spec = spec

    def lift(self) -> None:
        """Lift every device's caps (to measure what the harness carries uncapped); ``recap`` holds them again."""
        for device in self.devices:
            self.throttle.uncap(self.system.majmin(device.path))

    @property
    def cgroup_procs(self) -> list[Path]:
        return [self.throttle.procs_file] if self.throttle else []
