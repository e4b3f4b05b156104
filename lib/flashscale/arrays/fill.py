"""The workload-independent precondition of SNIA PTS: after the erase, every byte of each device written in full,
sequentially, ``passes`` times, before the layout is built on it (a fresh drive's first writes are faster than a
used one's; written over, it behaves as it will under the measurements).

A fill is a ``plan.Step`` like the layout's own, so the guard re-checks each device right before fio writes it, and
the dry run prints it. fio writes 128 KiB blocks, direct, 32 deep, ``--size=100%`` of the device and
``--loops=passes`` times over it; the file system made afterwards keeps the data (mkfs with ``-K``: no discard).
"""
from __future__ import annotations

from typing import Sequence

from ..errors import ConfigError
from ..system.devices import Device
from .build_steps import Step

BS = 128 * 2**10
IODEPTH = 32


def check_passes(passes: object) -> int:
    """``passes`` when it is a whole number >= 0, else ConfigError naming it."""
    if isinstance(passes, bool) or not isinstance(passes, int) or passes < 0:
        raise ConfigError(f"PRECONDITION_PASSES={passes!r} must be a whole number >= 0 (0: no fill)")
    return passes


def steps(devices: Sequence[Device], passes: int) -> list[Step]:
    """One fio run per device writing all of it ``passes`` times; none when ``passes`` is 0."""
    if check_passes(passes) == 0:
        return []
    return [Step(("fio", f"--name=flashscale-fill-{index}", f"--filename={device.path}", "--rw=write",
                  f"--bs={BS}", "--direct=1", "--ioengine=libaio", f"--iodepth={IODEPTH}", "--size=100%",
                  f"--loops={passes}", "--end_fsync=1", "--output-format=json"), writes=(device.path,))
            for index, device in enumerate(devices)]
