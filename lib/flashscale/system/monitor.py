"""What every device and CPU was doing while a run ran: /proc/diskstats and /proc/stat, sampled once a second.

    with Sampler(["loop3", "loop4"], system) as sampler:   # a thread reads the counters every ``interval_s``
        run_the_workload()
    sampler.rows                                          # one dict per interval and device

Per device and interval, as ``iostat -x`` defines them over the interval's elapsed time:

    read_bw_bytes, write_bw_bytes   sectors moved x 512 / s
    read_iops, write_iops           requests completed / s
    avg_request_bytes               bytes moved / requests completed (areq-sz); None when none completed
    queue_depth                     time requests spent in the queue (weighted ms) / elapsed ms (aqu-sz)
    util                            io_ticks / elapsed (%util as a fraction: 1.0 is busy the whole interval)

and the CPUs over the same interval, as fractions of all CPUs' time: ``cpu_user`` (user + nice), ``cpu_system``
(system + irq + softirq), ``cpu_iowait``, ``cpu_idle``, and ``cpu_busiest``: the busiest single CPU's non-idle
fraction (one saturated CPU shows there, not in the average). A run with no block device under it (plain
directories on an overlay) still gets the CPU columns, on rows whose ``device`` is None.

``facts`` records what seeds 000 and 001 set by hand: each device's NUMA node and I/O scheduler, the IRQ affinity of
NVMe queues, the CPU frequency governors and C-states. Reading both files costs well under a millisecond
(``benchmarks/bench_monitor.py`` measures the sampler's share of a core).
"""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Sequence

from .devices import System

SECTOR = 512
# /proc/diskstats fields after the name: reads, sectors read, writes, sectors written, io_ticks, weighted ms
READS, SECTORS_READ, WRITES, SECTORS_WRITTEN, IO_TICKS, WEIGHTED = 0, 2, 4, 6, 9, 10
# /proc/stat: user nice system idle iowait irq softirq steal
USER, NICE, SYSTEM, IDLE, IOWAIT, IRQ, SOFTIRQ, STEAL = range(8)


def device_rates(before: tuple[int, ...], after: tuple[int, ...], elapsed_s: float) -> dict:
    """One device's rates over an interval of ``elapsed_s`` seconds between two readings of its counters."""
    d = [a - b for a, b in zip(after, before)]
    ios = d[READS] + d[WRITES]
    moved = (d[SECTORS_READ] + d[SECTORS_WRITTEN]) * SECTOR
    return {"read_bw_bytes": d[SECTORS_READ] * SECTOR / elapsed_s,
            "write_bw_bytes": d[SECTORS_WRITTEN] * SECTOR / elapsed_s,
            "read_iops": d[READS] / elapsed_s, "write_iops": d[WRITES] / elapsed_s,
            "avg_request_bytes": moved / ios if ios else None,
            "queue_depth": d[WEIGHTED] / (elapsed_s * 1000), "util": d[IO_TICKS] / (elapsed_s * 1000)}


def cpu_shares(before: dict[str, tuple[int, ...]], after: dict[str, tuple[int, ...]]) -> dict:
    """The CPUs' time over an interval, as fractions: user, system, iowait, idle, and the busiest CPU's busy share."""
    d = [a - b for a, b in zip(after["cpu"], before["cpu"])]
    total = sum(d) or 1
    busiest = 0.0
    for name in after:
        if name != "cpu" and name in before:
            one = [a - b for a, b in zip(after[name], before[name])]
            busiest = max(busiest, 1 - (one[IDLE] + one[IOWAIT]) / (sum(one) or 1))
    return {"cpu_user": (d[USER] + d[NICE]) / total, "cpu_system": (d[SYSTEM] + d[IRQ] + d[SOFTIRQ]) / total,
            "cpu_iowait": d[IOWAIT] / total, "cpu_idle": d[IDLE] / total, "cpu_busiest": busiest}


def busy_cores(before: dict[str, tuple[int, ...]], after: dict[str, tuple[int, ...]]) -> float:
    """How many CPUs were busy, on average, between two readings of /proc/stat (``System.cpu_times``): the busy
    share of all CPUs' time (user + nice + system + irq + softirq + steal, over every field's delta) times the CPUs
    counted (the ``cpuN`` lines of both). The whole machine's, kernel threads included: on loop devices the data is
    copied by the kernel's loop workers, which fio's own ``usr_cpu``/``sys_cpu`` never see. NaN without a delta."""
    d = [a - b for a, b in zip(after["cpu"], before["cpu"])]
    cpus = sum(1 for name in after if name != "cpu" and name in before)
    total = sum(d)
    if total <= 0 or cpus == 0:
        return float("nan")
    busy = d[USER] + d[NICE] + d[SYSTEM] + d[IRQ] + d[SOFTIRQ] + (d[STEAL] if len(d) > STEAL else 0)
    return busy / total * cpus


class Sampler:
    """A thread sampling ``devices`` (kernel names) and the CPUs every ``interval_s`` while its block runs; the
    last interval ends when the block does, so a run shorter than one interval still has one row per device."""

    def __init__(self, devices: Sequence[str], system: System | None = None, interval_s: float = 1.0):
        self.devices = list(devices)
        self.system = system or System()
        self.interval_s = interval_s
        self.rows: list[dict] = []
        self.cpu_seconds = 0.0  # the sampling thread's own CPU time: what monitoring costs
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="flashscale-monitor", daemon=True)

    def _read(self) -> tuple[float, dict, dict]:
        return time.monotonic(), self.system.diskstats(), self.system.cpu_times()

    def _sample(self, start: float, before: tuple, after: tuple) -> None:
        elapsed = after[0] - before[0]
        if elapsed <= 0:
            return
        common = {"t_s": round(after[0] - start, 3), "interval_s": elapsed, "at": time.time(),
                  **cpu_shares(before[2], after[2])}
        present = [name for name in self.devices if name in before[1] and name in after[1]]
        for name in present or [None]:
            rates = device_rates(before[1][name], after[1][name], elapsed) if name else {}
            self.rows.append({"device": name, **common, **rates})

    def _loop(self) -> None:
        previous = self._first
        while not self._stop.wait(self.interval_s):
            current = self._read()
            self._sample(self._first[0], previous, current)
            previous = current
        self._sample(self._first[0], previous, self._read())
        self.cpu_seconds = time.thread_time()

    def __enter__(self) -> "Sampler":
        self._first = self._read()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def facts(devices: Sequence[str], system: System | None = None) -> dict:
    """The machine's settings that shape the numbers: each device's NUMA node, scheduler and NVMe IRQ affinity;
    the CPUs' governors and C-states."""
    system = system or System()
    return {"devices": [system.block_facts(name) for name in devices], "cpu": system.cpu_facts()}


def write_series(rows: Sequence[dict], path: Path) -> None:
    """The series as JSON lines, one per sample and device."""
    with open(path, "w") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
