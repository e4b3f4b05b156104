"""Array layouts built: what the fio jobs run on. Each erases its devices, builds, and records its own teardown.

What each layout is (its devices, stripe unit, needs of the kernel, build plan) is its descriptor's
(``flashscale.layouts``); here each kind of build has its plan (``PLANS``), run for every descriptor that names it:

    each      one file system per device it uses (single: the first; jbod: all), mounted one by one
    btrfs     one btrfs of the descriptor's profile over all devices, mounted with every member named
              (``device=``), so no ``btrfs device scan`` (udev's) is needed
    md        an md array of the descriptor's level (``volumes.md_array``), then one file system with su/sw from
              the chunk
    md-imsm   the same inside an IMSM container (``volumes.md_imsm_array``)
    lvm       one LVM logical volume striped over all devices (``volumes.lvm_striped``), then one file system

Without devices: ``build_directories`` (plain directories, the fallback without root or loop devices, for the
layouts plain directories can stand in for) and ``use_directory`` (an existing mount point: only its own directory
and files inside the directory the user names are made and removed).

Every destructive step goes through ``arrays.guard``; ``plan`` returns the exact commands ``build`` runs, so a
notebook can print them (a dry run) before anything is touched.
"""
from __future__ import annotations

import os
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from . import erase, fill, volumes
from ..layouts import BUILT, DESCRIPTORS, Descriptor, describe
from ..system.commands import Runner
from ..system.devices import Device, System
from ..errors import ConfigError, RefusedError, UnsupportedError
from .guard import Guard
from .build_steps import Step, execute, render
from ..system.teardown import Teardown

MOUNT_OPTIONS = "noatime,nodiratime"
FILE_SYSTEMS = ("xfs", "ext4", "btrfs")


@dataclass(frozen=True)
class Layout:
    name: str
    devices: int
    targets: tuple[str, ...]
    backend: str  # loop | device | directory | mounted
    description: str
    commands: tuple[str, ...] = ()  # what was run to build it, erase included


@dataclass(frozen=True)
class Options:
    """How a layout is built. ``chunk_bytes`` is the stripe unit: md chunk, LVM stripe size, xfs su, ext4 stride."""

    fs: str = "xfs"
    chunk_bytes: int = 128 * 2**10
    mount_options: str = MOUNT_OPTIONS
    erase: str = "discard"
    erase_fallback: str | None = None
    stripe_single: bool = False  # also give single / jbod file systems su=chunk, sw=1 (seed 000, Test 1)

    def __post_init__(self) -> None:
        if self.fs not in FILE_SYSTEMS:
            raise ConfigError(f"fs={self.fs!r} is not one of {', '.join(FILE_SYSTEMS)}")
        c = self.chunk_bytes
        if isinstance(c, bool) or not isinstance(c, int) or c < 4096 or c & (c - 1):
            raise ConfigError(f"chunk_bytes={c!r} must be a power of two of at least 4096")
        for name in (self.erase, self.erase_fallback):
            if name is not None and name not in erase.METHODS:
                raise ConfigError(f"erase method {name!r} is not one of {', '.join(erase.METHODS)}")
        if not isinstance(self.mount_options, str) or not self.mount_options or " " in self.mount_options:
            raise ConfigError(f"mount_options={self.mount_options!r} must be one comma-separated string")


def mkfs(fs: str, path: str, chunk_bytes: int, stripes: int | None) -> Step:
    """``mkfs`` with the stripe geometry of the layout: xfs su/sw, ext4 stride/stripe_width (4 KiB blocks); btrfs
    (one device's or one volume's: its own striping is the btrfs-raid layouts') has no geometry to give."""
    if fs == "btrfs":
        return Step(("mkfs.btrfs", "-q", "-K", path), writes=(path,))
    if fs == "xfs":
        geometry = ("-d", f"su={chunk_bytes // 1024}k,sw={stripes}") if stripes else ()
        return Step(("mkfs.xfs", "-q", "-K", *geometry, path), writes=(path,))
    extended = "nodiscard,lazy_itable_init=0,lazy_journal_init=0"
    if stripes:
        stride = chunk_bytes // 4096
        extended += f",stride={stride},stripe_width={stride * stripes}"
    return Step(("mkfs.ext4", "-q", "-b", "4096", "-E", extended, path), writes=(path,))


def mount(source: str, target: Path, fstype: str, options: str) -> list[Step]:
    return [Step(("mkdir", str(target)), creates="mountpoint", details={"path": str(target)}),
            Step(("mount", "-t", fstype, "-o", options, source, str(target)), creates="mount",
                 details={"path": str(target), "source": source})]


def _each(name, devices, root, options, token, profile: str) -> list[Step]:
    stripes = 1 if options.stripe_single else None
    steps = []
    for index, device in enumerate(devices):
        steps += [mkfs(options.fs, device.path, options.chunk_bytes, stripes),
                  *mount(device.path, root / f"{name}{index}", options.fs, options.mount_options)]
    return steps


def _btrfs_device_options(paths: Sequence[str]) -> str:
    """``device=<path>`` for every member, comma-separated: the mount finds them all without a ``btrfs device scan``
    (which only udev would have run)."""
    for path in paths:
        if "," in path:
            raise ConfigError(f"btrfs member {path!r} has a comma: it cannot be named in the mount option device=")
    return ",".join(f"device={path}" for path in paths)


def _btrfs(name, devices, root, options, token, profile: str) -> list[Step]:
    paths = tuple(d.path for d in devices)
    return [Step(("mkfs.btrfs", "-q", "-K", "-d", profile, "-m", profile, *paths), writes=paths,
                 creates="btrfs-devices", details={"members": [{"path": d.path, "id": d.id} for d in devices]}),
            *mount(paths[0], root / name, "btrfs", f"{options.mount_options},{_btrfs_device_options(paths)}")]


def _volume(make: Callable) -> Callable:
    def plan(name, devices, root, options, token, profile: str) -> list[Step]:
        steps, volume = make(devices, token, options.chunk_bytes, profile)
        return [*steps, mkfs(options.fs, volume, options.chunk_bytes, len(devices)),
                *mount(volume, root / name, options.fs, options.mount_options)]
    return plan


# Each kind of build (``Descriptor.build``): plan(name, devices, root, options, token, profile) -> its steps.
PLANS: dict[str, Callable] = {
    "each": _each,
    "btrfs": _btrfs,
    "md": _volume(volumes.md_array),
    "md-imsm": _volume(volumes.md_imsm_array),
    "lvm": _volume(volumes.lvm_striped),
}
# The layouts built on devices, by name: their descriptors (``flashscale.layouts.BUILT``).
DEVICE_LAYOUTS: dict[str, Descriptor] = {name: DESCRIPTORS[name] for name in BUILT}


def _kind(name: str) -> Descriptor:
    if name not in DEVICE_LAYOUTS:
        raise ConfigError(f"layout={name!r} is not one of {', '.join(DEVICE_LAYOUTS)}")
    return DEVICE_LAYOUTS[name]


def missing(name: str, system: System, runner: Runner) -> str | None:
    """What this machine lacks to build layout ``name`` (md, device-mapper, their tools), or None."""
    need = _kind(name).needs
    return volumes.missing(need, system, runner) if need else None


def chosen(name: str, devices: Sequence[Device]) -> list[Device]:
    """The devices a layout uses (``Descriptor.devices_used``): the first for ``single``, all of them otherwise."""
    if not devices:
        raise ConfigError(f"layout {name!r} needs at least one device")
    return list(devices[:describe(name).devices_used(len(devices))])


def plan(name: str, devices: Sequence[Device], *, root: Path | None = None, options: Options = Options(),
         token: str = "XXXXXXXX") -> list[Step]:
    """The exact steps ``build`` runs after the erase (mount points under ``root``; arrays named by ``token``).

    ConfigError when ``token`` would give an array a name mdadm refuses (``volumes``): nothing has run yet.
    """
    root = Path(root) if root is not None else Path(tempfile.gettempdir()) / f"flashscale-{name}-XXXXXXXX"
    kind = _kind(name)
    return PLANS[kind.build](name, chosen(name, devices), root, options, token, kind.profile)


def dry_run(name: str, devices: Sequence[Device], options: Options = Options(), *, confirm: object = None,
            wipe: bool | Sequence[str] = False, system: System | None = None, runner: Runner | None = None,
            fill_passes: int = 0) -> str:
    """What ``build`` would run, erase included, as shell lines; nothing is touched.

    With ``confirm`` the guard also checks the devices now, reading only, and refuses as ``build`` would; what the
    kernel lacks for the layout is said in a comment line.
    """
    lines = []
    if confirm is not None:
        runner = runner or Runner()
        system = system or System(runner=runner)
        Guard(devices, confirm, wipe, system).check(chosen(name, devices))
        problem = missing(name, system, runner)
        lines += [f"# build would stop here: {problem}"] if problem else []
    for device in chosen(name, devices):
        if options.erase.startswith("nvme"):  # the controller and namespace id are only read at run time
            lines.append(f"# {options.erase} of {device.path} through nvme-cli")
        else:
            lines += [" ".join(argv) for argv in erase.commands(device, options.erase)]
    lines += [str(step) for step in fill.steps(chosen(name, devices), fill_passes)]
    return "\n".join([*lines, render(plan(name, devices, options=options))])


def build(name: str, devices: Sequence[Device], runner: Runner, teardown: Teardown, *, confirm: object = None,
          wipe: bool | Sequence[str] = False, options: Options = Options(), system: System | None = None,
          claimed: Sequence[str] = (), fill_passes: int = 0) -> Layout:
    """Erase the devices ``name`` uses and build it on them, every step through the guard.

    ``devices`` is the campaign's list and ``confirm`` the identities the user confirmed (strings); ``wipe`` says
    which signatures the plan may erase (True: any); ``claimed`` are paths of campaign devices flashscale made
    or an earlier layout of the same campaign already erased, on which its own signatures (``OWN_SIGNATURES``)
    are expected. ``fill_passes``: after the erase, each device written in full that many times (``fill``). Nothing
    is touched unless every device passes the guard and the kernel offers what the layout needs.
    """
    kind = _kind(name)
    targets = chosen(name, devices)
    if confirm is None:
        raise RefusedError(f"layout {name!r} on {', '.join(d.path for d in targets)}: no confirmation given; "
                           "pass confirm= the devices' identities (strings)")
    system = system or System(runner=runner)
    problem = missing(name, system, runner)
    if problem:
        raise UnsupportedError(f"layout {name!r}: {problem}; nothing was touched")
    guard = Guard(devices, confirm, wipe, system)
    guard.claimed.update(os.path.realpath(path) for path in claimed)
    guard.check(targets)
    root = Path(tempfile.mkdtemp(prefix=f"flashscale-{name}-"))
    teardown.record("dir", path=str(root))
    steps = plan(name, targets, root=root, options=options, token=secrets.token_hex(4))
    erased = erase.erase(targets, guard, runner, method=options.erase, fallback=options.erase_fallback)
    steps = [*fill.steps(targets, fill_passes), *steps]
    done = execute(steps, guard=guard, runner=runner, teardown=teardown, system=system)
    mounts = tuple(s.details["path"] for s in steps if s.creates == "mount")
    backend = "loop" if all(d.id.startswith("loop:") for d in targets) else "device"
    return Layout(name, len(targets), mounts, backend, kind.description,
                  tuple(c for e in erased for c in e["commands"]) + tuple(done))


def _subdirectories(root: Path, count: int, teardown: Teardown) -> tuple[str, ...]:
    """``dir0`` .. ``dir<count-1>`` made in ``root``, each removed at teardown with the fio files in it."""
    targets = []
    for index in range(count):
        target = root / f"dir{index}"
        teardown.record("dir", path=str(target))
        target.mkdir()
        targets.append(str(target))
    return tuple(targets)


def use_directory(directory: str | Path, teardown: Teardown, count: int = 1, devices: int | None = None) -> Layout:
    """An existing mount point: ``count`` fresh directories of ours inside ``directory``, removed at teardown;
    ``devices``: how many devices sit under it (the user says; efficiency is against that many x baseline).

    Only what flashscale makes is ever removed: its own directories, and the files fio names after our jobs.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise ConfigError(f"mount point {directory} is not an existing directory")
    own = Path(tempfile.mkdtemp(prefix="flashscale-", dir=directory))
    teardown.record("dir", path=str(own))
    targets = _subdirectories(own, count, teardown)
    return Layout("mounted", devices or count, targets, "mounted", f"{count} director{'y' if count == 1 else 'ies'} "
                  f"of ours inside the existing mount point {directory}")


def build_directories(name: str, count: int, parent: Path, teardown: Teardown) -> Layout:
    """The fallback: ``count`` fresh directories under ``parent``, all on whatever disk holds it."""
    offered = [n for n, d in DEVICE_LAYOUTS.items() if d.on_directories]
    if name not in offered:
        raise UnsupportedError(f"layout {name!r} needs block devices; plain directories offer only "
                               f"{' and '.join(offered)}")
    chosen_count = describe(name).devices_used(count)
    root = Path(tempfile.mkdtemp(prefix=f"flashscale-{name}-", dir=parent))
    teardown.record("dir", path=str(root))
    targets = _subdirectories(root, chosen_count, teardown)
    return Layout(name, chosen_count, targets, "directory",
                  f"{chosen_count} plain director{'y' if chosen_count == 1 else 'ies'} on the local disk, no caps")
