"""null_blk devices of a known latency, queue depth and bandwidth: the SSD you can reason about.

    with NullBlk(NullBlkSpec(devices=2, latency_ns=10_000_000, queue_depth=8)) as made:
        made.devices    # [Device("/dev/fs1a2b3c4d0", "nullb:fs1a2b3c4d0"), ...]: what fio and the guard are given

Each device is made through configfs (``<configfs>/nullb/<name>``): memory-backed, with timer completions
(``irqmode=2``: every request completes ``completion_nsec`` after the driver took it), one submission queue of
``hw_queue_depth`` tags, ``mbps`` as its cap, then powered on. Its name is flashscale's own, ``fs<token><i>``
(``undo.NULLB_NAME``), recorded in the teardown before its directory exists; every attribute written is read back.
On Linux 6.1 (the VM lab's kernel) the disk takes the configfs name (``/dev/fs<token><i>``); older kernels named it
``nullb<index>``. Either way the disk taken is the one whose identity (``System.identity_of``: ``nullb:<name>``)
points back at the directory, and its /dev node, size and block size are checked.

null_blk is a module of Debian's kernel: it is loaded with ``nr_devices=0`` (no devices of its own) where it is not
loaded yet, and stays loaded; configfs is mounted where it is not (recorded, so the teardown unmounts it).

The curve these devices give, known before anything runs (pure functions, no I/O): a device made here (timer
completions, ``irqmode=2``) completes every request ``latency_ns`` after the driver took it, holds at most
``queue_depth`` requests at a time (the tags of its one submission queue), and with ``mbps`` moves at most that
much a second. No hidden device lies behind it, so fio's
throughput follows Little's law, capped:

    jobs_d         numjobs spread over the devices as fio spreads jobs over targets (the first take the remainder)
    outstanding_d  min(jobs_d x iodepth, queue_depth)            requests in flight on device d
    bw_d           min(cap, outstanding_d x bs / latency)        bytes/s; no cap without mbps
    bw             the sum of bw_d over the devices

Against iodepth (or numjobs) the curve rises in proportion, then is flat from the knee on (``knee_iodepth``: the
smallest iodepth at which every device with jobs is at its ceiling, its queue full or its cap reached).

The cap is null_blk's budget, not mbps x 10**6: 50 times a second (``TICKS_PER_S``) the device's budget is set to
(2**20 // 50) x mbps bytes (``tick_bytes``, the kernel's ``mb_per_tick``), and a request that would overdraw it waits
for the next tick. Requests of ``bs`` bytes therefore pass floor(tick_bytes / bs) at a tick:

    cap = TICKS_PER_S x floor(tick_bytes / bs) x bs      mbps=2, bs=4096: 50 x 10 x 4096 = 2_048_000 bytes/s

A request larger than a whole tick's budget would wait for ever (the budget is reset, never accumulated), so the
curve refuses such a bs, and ``NullBlkSpec`` caps a capped device's requests (``max_sectors``) below it.

What a real machine adds to every request (submitting, completing and reaping it) only lengthens the latency, so a
measurement lies at or below this curve; how far below under the VM lab's TCG is in the README ("The SSD you can
reason about"). Sizes in bytes, times in nanoseconds, bandwidth in bytes/s.
"""
from __future__ import annotations

import math
import secrets
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from . import undo
from .commands import Runner
from .devices import Device, System
from .machine import read
from .teardown import Built, Teardown
from ..errors import CommandError, ConfigError, RefusedError, UnsupportedError

MODULE = "null_blk"
MiB = 2**20
BLOCKSIZES = (512, 1024, 2048, 4096)  # the logical block sizes null_blk accepts
MAX_QUEUE_DEPTH = 10240  # BLK_MQ_MAX_DEPTH: the most tags a blk-mq queue can have
TICKS_PER_S = 50  # null_blk resets a capped device's budget 50 times a second
NS_PER_S = 10**9
MAX_SECTORS = 2560  # a capped device's largest request, in sectors, where its budget allows more (1.25 MiB)
APPEAR_S = 10.0  # how long a powered-on device may take to show its /dev node
POLL_S = 0.1


@dataclass(frozen=True)
class NullBlkSpec:
    """``devices`` null_blk devices alike, each of ``size_bytes`` (whole MiB: configfs takes the size in MB, which
    null_blk counts in MiB), completing every request ``latency_ns`` after the driver took it, at most
    ``queue_depth`` requests at a time, moving at most ``mbps`` (null_blk's MB/s: ``cap_bytes``; None:
    no cap), with ``blocksize``-byte logical blocks.

    A capped device lets through only requests that fit one tick's budget ((2**20 // 50) x mbps bytes, reset 50
    times a second, never accumulated): a larger one would wait for ever (a 128 KiB read-ahead on mbps=2 hung
    ``blkid`` in the VM lab). So a capped device's requests are bounded below it (``max_sectors``), and the block
    layer splits anything larger."""

    devices: int = 1
    size_bytes: int = 64 * MiB
    latency_ns: int = 10_000_000
    queue_depth: int = 8
    mbps: int | None = None
    blocksize: int = 4096

    def __post_init__(self) -> None:
        for attr in ("devices", "size_bytes", "latency_ns", "queue_depth", "mbps"):
            value = getattr(self, attr)
            if attr == "mbps" and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigError(f"null_blk {attr}={value!r} must be a positive whole number")
        if self.size_bytes % MiB:
            raise ConfigError(f"null_blk size_bytes={self.size_bytes} is not a whole number of MiB (2**20 bytes): "
                              "configfs takes the size in MB")
        if self.queue_depth > MAX_QUEUE_DEPTH:
            raise ConfigError(f"null_blk queue_depth={self.queue_depth} is above blk-mq's {MAX_QUEUE_DEPTH} tags")
        if self.blocksize not in BLOCKSIZES:
            raise ConfigError(f"null_blk blocksize={self.blocksize!r} is not one of {BLOCKSIZES}")

    @property
    def max_sectors(self) -> int:
        """The largest request a device takes, in 512-byte sectors: whole blocks within one tick's budget when it is
        capped (at most ``MAX_SECTORS``), 0 (the kernel's default) when it is not."""
        if self.mbps is None:
            return 0
        return min(tick_bytes(self.mbps) // self.blocksize * self.blocksize // 512, MAX_SECTORS)

    def attributes(self) -> tuple[tuple[str, str], ...]:
        """What is written into a device's configfs directory before it is powered on, in this order."""
        return (("memory_backed", "1"), ("irqmode", "2"), ("completion_nsec", str(self.latency_ns)),
                ("submit_queues", "1"), ("hw_queue_depth", str(self.queue_depth)), ("mbps", str(self.mbps or 0)),
                ("max_sectors", str(self.max_sectors)), ("size", str(self.size_bytes // MiB)),
                ("blocksize", str(self.blocksize)))


def configfs(system: System) -> Path:
    """Where configfs is mounted: ``kernel/config`` under the machine's sysfs."""
    return system.sys / "kernel" / "config"


def load(runner: Runner, system: System, teardown: Teardown) -> list[str]:
    """null_blk loaded (``nr_devices=0``) and configfs mounted, each only where it is not yet (the mount recorded in
    ``teardown`` before it is made). What was done, for the notes; UnsupportedError when this kernel has no null_blk
    or its configfs folder."""
    done = []
    if not (system.sys / "module" / MODULE).is_dir():
        try:
            runner.run(["modprobe", MODULE, "nr_devices=0"])
        except CommandError as exc:
            raise UnsupportedError(f"this kernel has no null_blk: {exc} (the VM lab's kernel has it)") from None
        done.append(f"loaded {MODULE} with nr_devices=0")
    config = configfs(system)
    if system.mounted(str(config)) is None:
        teardown.record("mount", path=str(config), source="configfs")
        runner.run(["mount", "-t", "configfs", "configfs", str(config)])
        done.append(f"mounted configfs at {config}")
    if not (config / undo.NULLB_FOLDER).is_dir():
        raise UnsupportedError(f"{MODULE} is loaded but {config / undo.NULLB_FOLDER} is missing: its devices cannot "
                               "be made through configfs")
    return done


def _node(path: str, system: System, ident: str) -> Device:
    """The device at ``path`` once its node is there (devtmpfs, or udev, may take a moment), with its identity."""
    deadline = time.monotonic() + APPEAR_S
    while True:
        try:
            return system.identify(path)
        except RefusedError as exc:
            if time.monotonic() > deadline:
                raise UnsupportedError(f"{path} ({ident}) did not appear within {APPEAR_S:.0f} s: {exc}") from None
            time.sleep(POLL_S)


def appeared(folder: Path, spec: NullBlkSpec, system: System) -> Device:
    """The disk a powered-on configfs directory made, checked against it: the disk whose identity names the
    directory (``<name>`` or ``nullb<index>``), its /dev node that disk (the same MAJ:MIN), its size and logical
    block size the spec's. UnsupportedError naming what differs."""
    ident, index = f"nullb:{folder.name}", read(folder / "index")
    disks = [n for n in (folder.name, f"nullb{index}") if system.node(n).exists() and system.identity_of(n) == ident]
    if not disks:
        raise UnsupportedError(f"{folder} is powered on (index {index}) but no disk {folder.name} or nullb{index} "
                               f"carries identity {ident!r}")
    node = system.node(disks[0])
    device = _node(str(system.dev / disks[0]), system, ident)
    found = {"identity": device.id, "MAJ:MIN": system.majmin(device.path),
             "size_bytes": int(read(node / "size") or 0) * 512,
             "logical_block_size": int(read(node / "queue" / "logical_block_size") or 0)}
    wanted = {"identity": ident, "MAJ:MIN": read(node / "dev"), "size_bytes": spec.size_bytes,
              "logical_block_size": spec.blocksize}
    wrong = [f"{key} {found[key]!r}, not {wanted[key]!r}" for key in wanted if found[key] != wanted[key]]
    if wrong:
        raise UnsupportedError(f"{device.path}, made from {folder}, has " + "; ".join(wrong))
    return device


class NullBlk(Built):
    """Context manager: ``with NullBlk(spec, runner, system) as made: made.devices``. Its own teardown (manifest in
    ``manifests``, default ``manifest_dir()``) powers every device off and removes it on exit, on error and on
    Ctrl-C; a run that dies leaves the manifest to ``flashscale reap``."""

    def __init__(self, spec: NullBlkSpec, runner: Runner | None = None, system: System | None = None,
                 manifests: Path | None = None):
        super().__init__(runner, system, manifests)
        self.spec = spec
        self.token = secrets.token_hex(4)
        self.devices: list[Device] = []
        self.notes: list[str] = []

    @property
    def names(self) -> list[str]:
        """The devices' names, in configfs and (on Linux 6.1) in /dev: ``fs<token><i>``."""
        return [f"fs{self.token}{i}" for i in range(self.spec.devices)]

    @property
    def folders(self) -> list[Path]:
        return [configfs(self.system) / undo.NULLB_FOLDER / name for name in self.names]

    def _build(self) -> None:
        if self.system.euid() != 0:
            raise UnsupportedError("null_blk devices are made through configfs, which needs root")
        self.notes += load(self.runner, self.system, self.start_teardown(f"flashscale-nullb-{self.token}"))
        for folder in self.folders:
            self.devices.append(self._make(folder))
        # udev probes every new disk (blkid reads it): on a capped device those reads spend the cap's budget, so
        # a run started before they end measures less than the device gives (a clean VM run read 0.58 of the curve)
        undo.settle(self.runner)

    def _make(self, folder: Path) -> Device:
        """One device: recorded, its directory made, every attribute written and read back, powered on, checked. A
        directory already there is not ours (the token is new): refused before it is recorded, so never undone."""
        if folder.exists():
            raise UnsupportedError(f"{folder} exists already: it is not flashscale's, not touching it")
        self.teardown.record("nullb", path=str(folder), name=folder.name)
        try:
            folder.mkdir()
        except OSError as exc:
            raise UnsupportedError(f"null_blk refused a device named {folder.name} in {folder.parent}: "
                                   f"{exc.strerror or exc}") from None
        for attr, value in self.spec.attributes():
            undo.write_attribute(folder / attr, value)
        undo.write_attribute(folder / "power", "1")
        return appeared(folder, self.spec, self.system)

    def facts(self) -> list[dict]:
        """Each device as configfs shows it now: name, path, identity, index and every attribute of the spec."""
        return [{"name": folder.name, "path": device.path, "id": device.id, "index": read(folder / "index"),
                 **{attr: read(folder / attr) for attr, _ in self.spec.attributes()}}
                for folder, device in zip(self.folders, self.devices)]


def _whole(name: str, value: object) -> int:
    """``value`` if it is a positive whole number, else ConfigError naming it."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{name}={value!r} must be a positive whole number")
    return value


def tick_bytes(mbps: int) -> int:
    """The budget a device capped at ``mbps`` gets at every tick: (2**20 // TICKS_PER_S) x mbps bytes."""
    return 2**20 // TICKS_PER_S * _whole("mbps", mbps)


def cap_bytes(mbps: int | None, bs: int) -> float:
    """The most bytes/s a device capped at ``mbps`` moves in requests of ``bs`` bytes: TICKS_PER_S x the requests a
    tick's budget holds x bs; infinite without ``mbps`` (None). ConfigError when one request overdraws a whole tick."""
    bs = _whole("bs", bs)
    if mbps is None:
        return math.inf
    if bs > tick_bytes(mbps):
        raise ConfigError(f"bs={bs} is more than the {tick_bytes(mbps)} bytes a tick of mbps={mbps} allows: such a "
                          "request never completes on null_blk")
    return float(TICKS_PER_S * (tick_bytes(mbps) // bs) * bs)


def jobs_per_device(numjobs: int, devices: int) -> list[int]:
    """fio's jobs over the devices, one target each: evenly, the first devices taking the remainder."""
    numjobs, devices = _whole("numjobs", numjobs), _whole("devices", devices)
    return [numjobs // devices + (1 if d < numjobs % devices else 0) for d in range(devices)]


def expected_bw(bs: int, numjobs: int, iodepth: int, latency_ns: int, queue_depth: int, mbps: int | None = None,
                devices: int = 1) -> float:
    """The bytes/s fio moves on ``devices`` null_blk devices alike: per device,
    min(cap, min(jobs on it x iodepth, queue_depth) x bs / latency), summed (``cap_bytes``; the module's docstring)."""
    bs, iodepth = _whole("bs", bs), _whole("iodepth", iodepth)
    latency_ns, queue_depth = _whole("latency_ns", latency_ns), _whole("queue_depth", queue_depth)
    cap = cap_bytes(mbps, bs)
    total = 0.0
    for jobs in jobs_per_device(numjobs, devices):
        outstanding = min(jobs * iodepth, queue_depth)
        total += min(cap, outstanding * bs * NS_PER_S / latency_ns)
    return total


def knee_iodepth(bs: int, numjobs: int, latency_ns: int, queue_depth: int, mbps: int | None = None,
                 devices: int = 1) -> int:
    """The smallest iodepth from which ``expected_bw`` no longer grows: every device with jobs has either its queue
    full or its cap reached. A device with j jobs needs j x iodepth >= min(queue_depth, cap x latency / bs)."""
    bs, latency_ns, queue_depth = _whole("bs", bs), _whole("latency_ns", latency_ns), _whole("queue_depth", queue_depth)
    needed = Fraction(queue_depth)
    if mbps is not None:  # requests in flight at which the cap binds: exact, so a knee on the boundary is not missed
        cap_bytes(mbps, bs)  # refuses a bs the cap never lets through
        per_second = TICKS_PER_S * (tick_bytes(mbps) // bs)
        needed = min(needed, Fraction(per_second * latency_ns, NS_PER_S))
    return max([math.ceil(needed / jobs) for jobs in jobs_per_device(numjobs, devices) if jobs] + [1])
