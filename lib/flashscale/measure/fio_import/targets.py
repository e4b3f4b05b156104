"""How many devices a run spread its I/O over, from the targets fio echoes: ``filename`` (else ``directory``), a list
of names fio splits at each ``:`` that no ``\\`` escapes (``get_next_str`` in options.c: ``/dev/nvme2n1:/dev/nvme3n1``
is one job over two devices, ``my\\:file`` one file), empty names skipped as fio skips them.

Pure. Each job entry of a reporting group names its own targets (``job options``, else ``global options``); the
group's are every name of its entries, each once. How sure the count is:

    devices     every name a whole device (``/dev/nvme0n1``, ``/dev/sdb``, ``/dev/disk/by-id/...``), its partitions
                counting once: the file's count is kept over a name's, a map's or ``--devices`` (said where they differ)
    files       plain files or folders standing for devices (a scaling study on files, or several mounts): the
                count is used where nothing else gives one, and a name's, a map's or ``--devices`` is kept over it
    none        an array's device (``/dev/md0``, ``/dev/dm-1``, ``/dev/mapper/...``, an LVM volume): its members are
                not in the file; or fio echoed no target
"""
from __future__ import annotations

import re
from typing import Iterable, Mapping

# One whole device (group ``disk``), with a partition's suffix, if any, left out
_DEVICE = re.compile(r"/dev/(?:(?P<disk>(?:nvme|ng)\d+n\d+|mmcblk\d+|loop\d+|nullb\d+|pmem\d+|nbd\d+|rbd\d+|zd\d+)"
                     r"(?:p\d+)?|(?P<letters>[shvx]d[a-z]+)\d*|disk/by-[a-z-]+/(?P<link>[^/]+?)(?:-part\d+)?)")
_ARRAY = re.compile(r"/dev/(?:md|dm-|mapper/|[^/]+/[^/]+)")  # md, device-mapper, /dev/<vg>/<lv>
_SPLIT = re.compile(r"(?<!\\):")
TARGETS = ("filename", "directory")
MOST_NAMES = 4096  # fio's own limit is memory; a longer list is read no further


def names_in(text: str) -> list[str]:
    """The names of a ``filename`` or ``directory`` list, as fio splits it, each once, in order."""
    parts = _SPLIT.split(text.strip(), maxsplit=MOST_NAMES)[:MOST_NAMES]
    return list(dict.fromkeys(part.strip().replace("\\:", ":") for part in parts if part.strip()))


def _disk(name: str) -> str | None:
    """The whole device ``name`` is or is a partition of; None when it is not one device's name."""
    found = _DEVICE.fullmatch(name)
    return None if found is None else next(v for v in found.groupdict().values() if v)


def devices_of(options: Iterable[Mapping]) -> tuple[int | None, str, bool]:
    """(how many devices the entries' ``options`` name, how that was read, whether it is sure: ``devices`` in the
    module docstring); (None, why, False) where the targets say nothing of a count."""
    names: list[str] = []
    option = ""
    for given in options:
        option = next((t for t in TARGETS if given.get(t)), "")
        names += names_in(str(given[option])) if option else []
    names = list(dict.fromkeys(names))
    if not names:
        return None, "no filename or directory echoed", False
    disks = [_disk(name) for name in names]
    if all(disks):
        count = len(set(disks))
        return count, f"{count} device{'s' if count > 1 else ''} named by {option} (fio's ':' list)", True
    if any(_ARRAY.match(name) for name in names):
        return None, f"{option} names an array's device, not its members", False
    return len(names), (f"{len(names)} {'names' if len(names) > 1 else 'name'} in {option} (fio's ':' list), "
                        "each taken for a device"), False
