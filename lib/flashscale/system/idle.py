"""The CPUs kept out of deep idle while a run measures: the kernel's PM QoS for CPU latency.

    with idle.held(0) as latency_us:      # every CPU held to idle states it leaves within 0 µs (it polls)
        fio.run(...)                      # latency_us: 0, or None where it could not be held (and why: ``why_not``)

A process that writes a latency (a native 32-bit integer, microseconds) to ``/dev/cpu_dma_latency`` and keeps the
file open holds every CPU to the idle states that wake within it: the request lasts while the file is open and goes
when it closes, or when the process ends, kill -9 included, so nothing is left to undo (the way tuned's
latency-performance profile and SPDK's perf guide keep a machine out of deep C-states while they measure). Reading
the file gives the latency the kernel enforces now: the smallest request held, 2,000,000,000 when none is.

Why a benchmark holds it: a run of one job at queue depth 1 waits on a wake-up at every I/O, and a CPU asleep in a
deep state, or a virtual CPU the hypervisor parked on ``halt``, wakes late. On this project's 2-CPU VM an uncapped
loop device read 2.1-3.5 GB/s with one job, and 4.5-5.7 GB/s with the CPUs held (or with a busy loop beside it); two
devices, a job each, read 4.7-4.9 GB/s a device where one alone read 2.1-3.5: the idle states, not the devices, made
that curve. A capped or real device is measured the same way, so that the single device and the layout meet the same
machine.
"""
from __future__ import annotations

import contextlib
import os
import struct
from pathlib import Path
from typing import Iterator

from ..errors import ConfigError

FILE = "cpu_dma_latency"
NO_REQUEST_US = 2_000_000_000  # what the file reads while nobody holds a latency
MAX_US = 2**31 - 1


def check_latency(latency_us: object) -> int | None:
    """``latency_us`` as the sweep takes it: None (leave the CPUs as the machine has them) or whole microseconds."""
    if latency_us is None:
        return None
    if isinstance(latency_us, bool) or not isinstance(latency_us, int) or not 0 <= latency_us <= MAX_US:
        raise ConfigError(f"cpu_latency_us={latency_us!r} must be None (the machine's own idle states) or whole "
                          f"microseconds from 0 (the CPUs poll, never sleep) to {MAX_US}")
    return latency_us


def enforced(dev: Path = Path("/dev")) -> int | None:
    """The CPU latency the kernel enforces now, µs (``NO_REQUEST_US`` when nobody holds one); None where the
    machine has no such file or this process may not read it."""
    try:
        with open(dev / FILE, "rb") as fh:
            data = fh.read(4)
    except OSError:
        return None
    return struct.unpack("i", data)[0] if len(data) == 4 else None


def why_not(dev: Path = Path("/dev")) -> str | None:
    """Why the latency cannot be held here (no file, not permitted), or None when it can."""
    path = dev / FILE
    if not path.exists():
        return f"{path} does not exist (no PM QoS for CPU latency in this kernel or container)"
    if not os.access(path, os.W_OK):
        return f"{path} is not writable by this process (not root)"
    return None


@contextlib.contextmanager
def held(latency_us: int | None, dev: Path = Path("/dev")) -> Iterator[int | None]:
    """Hold every CPU to ``latency_us`` while the block runs; yields the latency held, or None when none was asked
    (``latency_us`` None) or it cannot be held here (``why_not``): the run goes on, its row saying it was not held."""
    latency_us = check_latency(latency_us)
    if latency_us is None:
        yield None
        return
    try:  # no such file, or not permitted (why_not says which): not held
        fd = os.open(dev / FILE, os.O_WRONLY)
    except OSError:
        yield None
        return
    try:
        written = os.write(fd, struct.pack("i", latency_us))
        yield latency_us if written == 4 else None
    finally:
        os.close(fd)
