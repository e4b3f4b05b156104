"""What a layout's build needs of the kernel and its tools: md and device-mapper, each with the program that drives
it, the Debian package that brings the program, the kernel's marker that it is there, and its modules.

    FEATURES["md"]    md RAID: mdadm, /proc/mdstat, md_mod
    FEATURES["dm"]    device-mapper (LVM): lvm, /dev/mapper/control, dm_mod

``arrays.volumes.missing`` reads the marker and looks for the program on this machine; the VM lab loads the modules
and needs the programs (``system.vmlab.vm``).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Feature:
    """``what`` in words; ``program`` and its Debian ``package``; ``marker``: where the kernel shows it is there, as
    the ``System`` root it lies under ("proc", "dev") and the path below; ``absent``: what its absence means
    (``{path}``: the marker); ``modules``: the kernel modules that offer it (Debian's kernel)."""

    what: str
    program: str
    package: str
    marker: tuple[str, ...]
    absent: str
    modules: tuple[str, ...]


FEATURES: dict[str, Feature] = {
    "md": Feature("md RAID", "mdadm", "mdadm", ("proc", "mdstat"),
                  "the kernel has no md driver: {path} is missing (md_mod not loaded, or built without CONFIG_MD)",
                  ("md_mod",)),
    "dm": Feature("LVM", "lvm", "lvm2", ("dev", "mapper", "control"),
                  "the kernel has no device-mapper: {path} is missing (dm_mod not loaded, or no CONFIG_BLK_DEV_DM)",
                  ("dm_mod",)),
}
