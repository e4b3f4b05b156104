"""Volumes over several devices: md arrays (native and IMSM metadata) and LVM, as exact plans, each of the level
or type its layout's descriptor gives (``flashscale.layouts``: ``Descriptor.profile``).

    md_array          mdadm --create, metadata 1.2, the level, with the chunk size
    md_imsm_array     an IMSM container over the devices, then a volume of the level inside it
    lvm_striped       pvcreate, vgcreate, and one logical volume striped over every device

Each plan records what it makes (the array, the volume group...) before making it, with the member devices and
their identities, so teardown and ``flashscale reap`` can stop and clear exactly those. The kernel must offer md
(``/proc/mdstat``) or device-mapper (``/dev/mapper/control``: ``layouts.FEATURES``); ``missing`` says what is
absent before anything is touched.

Every plan is named by a random token: ``flashscale-<token>`` (an md array, a volume group), but ``fs<token>`` for an
IMSM volume and ``fs<token>-imsm`` for its container, since mdadm keeps an IMSM volume's name in 16 characters. A
name mdadm would refuse as too long is refused here, before any command runs.
"""
from __future__ import annotations

from typing import Sequence

from ..errors import ConfigError
from ..layouts import FEATURES
from ..system.commands import Runner
from ..system.devices import Device, System
from .build_steps import Step

MD_NAME_MAX = 32  # mdadm --create refuses a longer name under /dev/md ("Name ... is too long", mdadm.c)
IMSM_NAME_MAX = 16  # and a longer IMSM volume name ("imsm volume name must be 16 characters or less")

def missing(need: str, system: System, runner: Runner) -> str | None:
    """What this machine lacks for ``need`` ("md" or "dm": ``layouts.FEATURES``), or None when it has everything."""
    feature = FEATURES[need]
    root, *below = feature.marker
    marker = getattr(system, root).joinpath(*below)
    if not marker.exists():
        return f"{feature.what} cannot run here: " + feature.absent.format(path=marker)
    if runner.which(feature.program) is None:
        return f"{feature.what} cannot run here: {feature.program} is not installed (apt-get install {feature.package})"
    return None


def _members(devices: Sequence[Device]) -> list[dict]:
    return [{"path": d.path, "id": d.id} for d in devices]


def _md_path(name: str, limit: int, what: str) -> str:
    """``/dev/md/<name>``; ConfigError naming ``name`` when it is longer than mdadm takes for a ``what`` (``limit``)."""
    if len(name) > limit:
        raise ConfigError(f"{what} name {name!r} is {len(name)} characters; mdadm takes at most {limit}")
    return f"/dev/md/{name}"


def md_array(devices: Sequence[Device], token: str, chunk_bytes: int, level: str) -> tuple[list[Step], str]:
    """A native-metadata md array ``flashscale-<token>`` of ``level``: the steps, and the array's path."""
    paths = tuple(d.path for d in devices)
    array = _md_path(f"flashscale-{token}", MD_NAME_MAX, "md array")
    create = Step(("mdadm", "--create", array, "--run", "--metadata=1.2", f"--level={level}",
                   f"--chunk={chunk_bytes // 1024}K", f"--raid-devices={len(paths)}", *paths),
                  writes=paths, creates="md", details={"path": array, "members": _members(devices)})
    return [create], array


def md_imsm_array(devices: Sequence[Device], token: str, chunk_bytes: int, level: str) -> tuple[list[Step], str]:
    """An IMSM (Intel RSTe) container ``fs<token>-imsm`` over the devices, then a volume ``fs<token>`` of ``level``
    in it: the steps and the volume's path.

    Each is recorded before it is made, the container first: a volume that fails to be made leaves the container
    recorded, and teardown (last first) stops the volume, then the container, then clears the members.
    """
    paths = tuple(d.path for d in devices)
    container = _md_path(f"fs{token}-imsm", MD_NAME_MAX, "IMSM container")
    volume = _md_path(f"fs{token}", IMSM_NAME_MAX, "IMSM volume")
    steps = [
        Step(("mdadm", "--create", container, "--run", "--metadata=imsm", f"--raid-devices={len(paths)}", *paths),
             writes=paths, creates="md", details={"path": container, "members": _members(devices)}),
        Step(("mdadm", "--create", volume, "--run", f"--level={level}", f"--chunk={chunk_bytes // 1024}K",
              f"--raid-devices={len(paths)}", container),
             writes=(container,), creates="md", details={"path": volume, "members": []}),
    ]
    return steps, volume


def lvm_striped(devices: Sequence[Device], token: str, chunk_bytes: int, kind: str) -> tuple[list[Step], str]:
    """One logical volume ``data`` of ``kind`` ("striped") over every device (stripe size = chunk) in the volume
    group ``flashscale-<token>``: the steps and the volume's path."""
    paths = tuple(d.path for d in devices)
    vg, lv = f"flashscale-{token}", "data"
    steps = [
        Step(("pvcreate", *paths), writes=paths, creates="lvm-pv", details={"members": _members(devices)}),
        Step(("vgcreate", vg, *paths), writes=paths, creates="lvm-vg", details={"vg": vg}),
        Step(("lvcreate", "--yes", "--type", kind, f"--stripes={len(paths)}",
              f"--stripesize={chunk_bytes // 1024}k", "--extents=100%FREE", f"--name={lv}", vg),
             writes=paths, creates="lvm-lv", details={"path": f"/dev/{vg}/{lv}", "vg": vg, "lv": lv}),
    ]
    return steps, f"/dev/{vg}/{lv}"
