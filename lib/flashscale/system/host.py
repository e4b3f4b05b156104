"""The host's own ceilings, measured: what the machine says of itself before a campaign predicts its layouts.

    cores()                     the CPUs this process may run on (its affinity), else the machine's count
    memory_bw_bytes()           a short probe of the memory's bandwidth: the rate of a timed copy, bytes/s
    queue_depth(paths, system)  the fewest requests any of the devices takes at once (sysfs's nr_requests)
    ceilings(paths, system)     all of them, with each device's PCIe link as sysfs names it (``HostCeilings``)

The memory probe copies ``MEMORY_PROBE_BYTES`` (64 MiB) from one buffer to another, split over one thread per CPU
(numpy's copy releases the GIL), ``MEMORY_PROBE_ROUNDS`` times after one untimed round that faults the pages in,
and keeps the fastest round: the most the memory carried, not what else the machine was doing in the slower ones.
The rate counts the bytes copied (each read once and written once), as a loop device's worker copies each byte of
a request once between the page cache and fio's buffer: it is the data rate a copy allows, and a device that
writes into memory by DMA moves each byte once, so it is a ceiling, not a prediction, for those. On this 2-core
machine it read 10-13 GB/s on one thread and 16-22 GB/s on two. 64 MiB, not 128: measured here side by side in
fresh processes, 64 MiB read 21.7 GB/s in 0.03 s and 128 MiB 22.1 GB/s in 0.20 s (its buffers' first faults), which
every campaign paid; 32 MiB read 16.3 GB/s, too little to time. A cache larger than the buffers would read high: a
ceiling too high binds later, it is never exceeded.
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from .devices import System
from .machine import read

MEMORY_PROBE_BYTES = 64 * 2**20
MEMORY_PROBE_ROUNDS = 3


def cores() -> int:
    """The CPUs this process may run on (its affinity), else the machine's count."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def memory_bw_bytes(size: int = MEMORY_PROBE_BYTES, threads: int | None = None,
                    rounds: int = MEMORY_PROBE_ROUNDS) -> float:
    """The fastest of ``rounds`` timed copies of ``size`` bytes split over ``threads`` threads (default one per
    CPU), bytes copied per second."""
    threads = threads or cores()
    part = max(1, size // threads)
    sources = [np.ones(part, np.uint8) for _ in range(threads)]
    targets = [np.empty(part, np.uint8) for _ in range(threads)]
    best = 0.0
    for round_ in range(rounds + 1):
        workers = [threading.Thread(target=np.copyto, args=(t, s)) for s, t in zip(sources, targets)]
        start = time.perf_counter()
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        seconds = time.perf_counter() - start
        if round_ and seconds > 0:  # the first round faults the pages in
            best = max(best, part * threads / seconds)
    return best


def queue_depth(paths: Sequence[str], system: System | None = None) -> int | None:
    """The fewest requests any device at ``paths`` holds at once (its block queue's ``nr_requests``: the tags a
    request waits for before it reaches the device); None where sysfs names none for one of them."""
    system = system or System()
    found = []
    for path in paths:
        text = read(system.sys / "block" / system.name_of(path) / "queue" / "nr_requests")
        if text is None or not text.isdigit() or int(text) < 1:
            return None
        found.append(int(text))
    return min(found) if found else None


@dataclass(frozen=True)
class HostCeilings:
    """What the host measured of itself: its CPUs, its memory's copy rate (bytes/s), each device's PCIe link as
    (GT/s per lane, lanes), None for a device sysfs names none for (a loop device, a null_blk device), and the
    devices' ``queue_depth``."""

    cores: int
    memory_bw_bytes: float
    pcie_links: dict[str, tuple[float, int] | None] = field(default_factory=dict)
    queue_depth: int | None = None


def ceilings(paths: Sequence[str] = (), system: System | None = None, probe: bool = True) -> HostCeilings:
    """The host's ceilings, measured once (``probe``: the memory probe runs; without it the memory is NaN)."""
    system = system or System()
    links = {path: system.pcie_link(system.name_of(path)) for path in paths}
    return HostCeilings(cores(), memory_bw_bytes() if probe else float("nan"), links, queue_depth(paths, system))
