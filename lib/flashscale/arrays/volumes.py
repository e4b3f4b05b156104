"""Striped volumes over several devices: md RAID-0 (native and IMSM metadata) and LVM, as exact plans.

    md-raid0        mdadm --create, metadata 1.2, RAID-0 with the chunk size            (seed 000, Test 5a)
    md-imsm-raid0   an IMSM container over the devices, then a RAID-0 volume inside it  (seed 000, Test 5b)
    lvm-striped     pvcreate, vgcreate, and one logical volume striped over every device

Each plan records what it makes (the array, the volume group...) before making it, with the member devices and
their identities, so teardown and ``flashscale reap`` can stop and clear exactly those. The kernel must offer md
(``/proc/mdstat``) or device-mapper (``/dev/mapper/control``); ``missing`` says what is absent before anything is
touched.

Every plan is named by a random token: ``flashscale-<token>`` (an md array, a volume group), but ``fs<token>`` for an
IMSM volume and ``fs<token>-imsm`` for its container, since mdadm keeps an IMSM volume's name in 16 characters. A
name mdadm would refuse as too long is refused here, before any command runs.
"""
from __future__ import annotations

from typing import Sequence

from ..errors import ConfigError
from ..system.commands import Runner
from ..system.devices import Device, System
from .plan import Step

MD_NAME_MAX = 32  # mdadm --create refuses a longer name under /dev/md ("Name ... is too long", mdadm.c)
IMSM_NAME_MAX = 16  # and a longer IMSM volume name ("imsm volume name must be 16 characters or less")

# what it is, the program it needs and its Debian package, the kernel's marker, what its absence means
NEEDS = {
    "md": ("md RAID", "mdadm", "mdadm", lambda s: s.proc / "mdstat",
           "the kernel has no md driver: {path} is missing (md_mod not loaded, or built without CONFIG_MD)"),
    "dm": ("LVM", "lvm", "lvm2", lambda s: s.dev / "mapper" / "control",
           "the kernel has no device-mapper: {path} is missing (dm_mod not loaded, or no CONFIG_BLK_DEV_DM)"),
}


def missing(need: str, system: System, runner: Runner) -> str | None:
    """What this machine lacks for ``need`` ("md" or "dm"), or None when it has everything."""
    what, program, package, marker, message = NEEDS[need]
    if not marker(system).exists():
        return f"{what} cannot run here: " + message.format(path=marker(system))
    if runner.which(program) is None:
        return f"{what} cannot run here: {program} is not installed (apt-get install {package})"
    return None


def _members(devices: Sequence[Device]) -> list[dict]:
    return [{"path": d.path, "id": d.id} for d in devices]


def _md_path(name: str, limit: int, what: str) -> str:
    """``/dev/md/<name>``; ConfigError naming ``name`` when it is longer than mdadm takes for a ``what`` (``limit``)."""
    if len(name) > limit:
        raise ConfigError(f"{what} name {name!r} is {len(name)} characters; mdadm takes at most {limit}")
    return f"/dev/md/{name}"


def md_raid0(devices: Sequence[Device], token: str, chunk_bytes: int) -> tuple[list[Step], str]:
    """Native-metadata RAID-0 ``flashscale-<token>``: the steps, and the array's path."""
    paths = tuple(d.path for d in devices)
    array = _md_path(f"flashscale-{token}", MD_NAME_MAX, "md array")
    create = Step(("mdadm", "--create", array, "--run", "--metadata=1.2", "--level=0",
                   f"--chunk={chunk_bytes // 1024}K", f"--raid-devices={len(paths)}", *paths),
                  writes=paths, creates="md", details={"path": array, "members": _members(devices)})
    return [create], array


def md_imsm_raid0(devices: Sequence[Device], token: str, chunk_bytes: int) -> tuple[list[Step], str]:
    """An IMSM (Intel RSTe) container ``fs<token>-imsm`` over the devices, then a RAID-0 volume ``fs<token>`` in it:
    the steps and the volume's path.

    Each is recorded before it is made, the container first: a volume that fails to be made leaves the container
    recorded, and teardown (last first) stops the volume, then the container, then clears the members.
    """
    paths = tuple(d.path for d in devices)
    container = _md_path(f"fs{token}-imsm", MD_NAME_MAX, "IMSM container")
    volume = _md_path(f"fs{token}", IMSM_NAME_MAX, "IMSM volume")
    steps = [
        Step(("mdadm", "--create", container, "--run", "--metadata=imsm", f"--raid-devices={len(paths)}", *paths),
             writes=paths, creates="md", details={"path": container, "members": _members(devices)}),
        Step(("mdadm", "--create", volume, "--run", "--level=0", f"--chunk={chunk_bytes // 1024}K",
              f"--raid-devices={len(paths)}", container),
             writes=(container,), creates="md", details={"path": volume, "members": []}),
    ]
    return steps, volume


def lvm_striped(devices: Sequence[Device], token: str, chunk_bytes: int) -> tuple[list[Step], str]:
    """One logical volume ``data`` striped over every device (stripe size = chunk) in the volume group
    ``flashscale-<token>``: the steps and the volume's path."""
    paths = tuple(d.path for d in devices)
    vg, lv = f"flashscale-{token}", "data"
    steps = [
        Step(("pvcreate", *paths), writes=paths, creates="lvm-pv", details={"members": _members(devices)}),
        Step(("vgcreate", vg, *paths), writes=paths, creates="lvm-vg", details={"vg": vg}),
        Step(("lvcreate", "--yes", "--type", "striped", f"--stripes={len(paths)}",
              f"--stripesize={chunk_bytes // 1024}k", "--extents=100%FREE", f"--name={lv}", vg),
             writes=paths, creates="lvm-lv", details={"path": f"/dev/{vg}/{lv}", "vg": vg, "lv": lv}),
    ]
    return steps, f"/dev/{vg}/{lv}"
