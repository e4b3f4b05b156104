"""bonnie++ on a layout: sequential block write, rewrite and read, seeks, and file create / stat / delete, with the
number of concurrent processes as an axis (seed 002 ran 32 at once).

Each process is one ``bonnie++`` in a scratch directory of its own on the layout (process ``i`` on target
``i mod targets``: jbod spreads them over its file systems), all started together inside the layout's throttled
cgroup. ``-f`` skips the per-character tests. The processes are not synchronised between tests (bonnie++'s
``-p``/``-y`` semaphore is a SysV object flashscale does not make): they run the same tests on the same sizes and
overlap.

What bonnie++ 2.00a times (its source, ``bonnie++.cpp`` and ``bon_io.cpp``, checked with strace):

* every block test ends with ``Close()``, an fsync then close, before its timer stops: a block write counts its
  flush to the devices already, as fio's writes with ``end_fsync`` do;
* ``-D`` (``direct``, the default) opens the file with O_DIRECT only to write it: the block write is capped like
  fio's (buffered writeback escapes a cgroup v1 cap). The rewrite, the block read and the seeks reopen it without
  O_DIRECT: the rewrite reads the file from the devices and writes it through the page cache, so the block read
  after it reads memory wherever the file fits in it (bonnie++'s own rule is a file of twice the RAM): its
  ``+++++`` is that (``CACHED``), not a device too fast to time;
* ``-b`` (``sync``) adds an fsync after each seek's update and, in the file tests, after every file created (the
  file and its directory) and every file deleted (its directory): it does not touch the block tests. With it the
  creates and deletes wait for the devices, as a mail or news spool does; without it (the default) they run in the
  page cache with one ``sync()`` at the end of each, and need tens of thousands of files to outlast bonnie++'s
  500 ms. ``files_k`` = 256 (262,144 files a process) makes each create last 4-5 s and each delete 5-8 s on one
  capped device's xfs (one process); 64 took 0.50-1.04 s on the same machine from one day to the next, and
  printed ``+++++`` for a create once (under 500 ms), 32 took 0.55-0.77 s. ``sync`` stays off: with it btrfs
  deleted 362 files/s, 45 s for 16,384 files. The stat tests read only the inode cache: ``+++++``
  (``STAT_CACHED``) at any number of files worth the time.

The block rates carry their truth on the emulated array (``common.truth``): the write devices x the write cap, the
read devices x the read cap, the rewrite devices x the smaller of the two. A rewrite reads every byte and writes it
back, each direction under its own cap, and its buffered writes go on (part of them by the kernel's writeback,
outside the cap) while it reads: one process rewrote 116-119 MB/s on a device capped at 200 MB/s each way, above
the 100 MB/s of reading then writing each MiB in turn, so the truth is the slower direction, not that. Each rate is
checked over the time of its own test (``combine``'s ``seconds``).

bonnie++ 2.00a prints one CSV line of 50 fields and no header (``parse``, by position: ``FIELDS``). Rates are in
KiB/s (block tests) and per second (seeks, files); ``+++++`` means the test was too fast to measure: the row's
value is NaN with that reason (``TOO_FAST``; ``REASONS`` where the test read memory), never a number. An empty
field is a test that did not run: no row. Across processes a metric's rate is their work over the slowest one's
time and its latency the largest; one process too fast to measure leaves the rate unknown.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ...arrays.layouts import Layout
from ...errors import FlashscaleError
from ...system.devices import System
from ..sweep import positive_ints
from . import common

WORKLOAD = "bonnie++"
CSV_FIELDS = 50
TOO_FAST = "too fast to measure (bonnie++ printed +++++)"
CACHED = ("read from the page cache (bonnie++ printed +++++): bonnie++ reopens its file without O_DIRECT after the "
          "block write, and the rewrite leaves it in memory")
STAT_CACHED = ("too fast to measure (bonnie++ printed +++++): a stat of files just created reads the inode cache, "
               "never the devices")
# the reason of a +++++ where it is not a device too fast to time
REASONS = {"block_read": CACHED, "seq_stat": STAT_CACHED, "random_stat": STAT_CACHED}
KIB = 1024
SEEKS_FIELD = 7  # the number of seeks each process made (bonnie++'s default 8192)
# metric -> (field of its rate, unit of that rate in bonnie++'s CSV, our unit, field of its latency, the directions
# a rate of bytes moves each byte in: its truth)
FIELDS: dict[str, tuple[int, str, str, int, tuple[str, ...]]] = {
    "block_write": (11, "KiB/s", "bytes/s", 39, ("write",)),
    "block_rewrite": (13, "KiB/s", "bytes/s", 40, ("read", "write")),
    "block_read": (17, "KiB/s", "bytes/s", 42, ("read",)),
    "seeks": (19, "/s", "ops/s", 43, ()),
    "seq_create": (26, "/s", "files/s", 44, ()),
    "seq_stat": (28, "/s", "files/s", 45, ()),
    "seq_delete": (30, "/s", "files/s", 46, ()),
    "random_create": (32, "/s", "files/s", 47, ()),
    "random_stat": (34, "/s", "files/s", 48, ()),
    "random_delete": (36, "/s", "files/s", 49, ()),
}
LATENCY_UNITS_NS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def csv_line(output: str) -> list[str]:
    """The CSV line of bonnie++'s output, split into its fields; FlashscaleError if there is none."""
    for line in output.splitlines():
        fields = line.strip().split(",")
        if len(fields) == CSV_FIELDS and fields[0][:1].isdigit():
            return fields
    raise FlashscaleError(f"bonnie++ printed no CSV line of {CSV_FIELDS} fields: {output[-500:]!r}")


def latency_ns(text: str) -> float:
    """``1761us`` (bonnie++'s latency, with its unit) in ns; NaN when absent."""
    unit = text.lstrip("0123456789.")
    return float(text[:len(text) - len(unit)]) * LATENCY_UNITS_NS[unit] if text and unit in LATENCY_UNITS_NS \
        else math.nan


def parse(fields: Sequence[str]) -> dict[str, dict]:
    """Each metric bonnie++ ran: ``{"value": bytes/s or per second, "unit", "latency_ns", "missing_reason"}``."""
    parsed = {}
    for metric, (rate, theirs, ours, latency, _) in FIELDS.items():
        text = fields[rate].strip()
        if not text:
            continue
        too_fast = text.startswith("+")
        value = math.nan if too_fast else float(text) * (KIB if theirs == "KiB/s" else 1)
        reason = REASONS.get(metric, TOO_FAST) if too_fast else None
        parsed[metric] = {"value": value, "unit": ours, "latency_ns": latency_ns(fields[latency].strip()),
                          "missing_reason": reason}
    return parsed


def combine(runs: Sequence[dict[str, dict]], work: dict[str, float]) -> dict[str, dict]:
    """Concurrent processes' metrics as one: the rate of all and ``seconds``, the slowest one's time (its ``work``
    per process, bytes, files or seeks, over its rate); the largest latency; unknown if any was too fast.

    Every process does the same work and they start together, so all of it was done within the slowest one's time:
    the rate of all is count x the smallest rate. Summed, the rates would count a process that finished early as if
    it had kept its pace while the others went on alone."""
    combined = {}
    for metric in runs[0]:
        each = [run[metric] for run in runs if metric in run]
        reason = next((e["missing_reason"] for e in each if e["missing_reason"]), None)
        slowest = math.nan if reason else min(e["value"] for e in each)
        combined[metric] = {"value": len(each) * slowest, "unit": each[0]["unit"],
                            "latency_ns": max(e["latency_ns"] for e in each), "missing_reason": reason,
                            "seconds": work[metric] / slowest if metric in work else math.nan}
    return combined


@dataclass(frozen=True)
class Bonnie:
    """bonnie++ with ``processes`` concurrent processes (an axis), each on a file of ``file_mib`` MiB moved in
    chunks of ``chunk_bytes`` (bonnie++'s own default is 8 KiB: direct I/O that small measures latency, not the
    device) and ``files_k`` x 1024 files for the file tests, ``repetitions`` times on every layout; ``direct`` is
    ``-D`` and ``sync`` ``-b`` (what each changes: the module's docstring). bonnie++ prints ``+++++`` for a test
    shorter than it can time (500 ms): the file must take seconds at the devices' rate."""

    processes: tuple[int, ...] = (1,)
    file_mib: int = 1024
    chunk_bytes: int = 2**20
    files_k: int = 256
    direct: bool = True
    sync: bool = False
    repetitions: int = 1
    timeout_s: float = 3600

    def __post_init__(self) -> None:
        object.__setattr__(self, "processes", positive_ints("processes", self.processes, prefix=f"{WORKLOAD} "))
        for name in ("file_mib", "chunk_bytes", "files_k", "repetitions"):
            positive_ints(name, (getattr(self, name),), prefix=f"{WORKLOAD} ")

    def runs(self) -> int:
        """bonnie++ runs per layout (each of ``processes`` at once counts as one)."""
        return len(self.processes) * self.repetitions

    def argv(self, directory: Path, layout: Layout, root: bool) -> list[str]:
        return ["bonnie++", "-d", str(directory), "-s", f"{self.file_mib}:{self.chunk_bytes}",
                "-r", str(max(1, self.file_mib // 2)), "-n", str(self.files_k), "-m", layout.name, "-q", "-f",
                *(["-D"] if self.direct else []), *(["-b"] if self.sync else []), *(["-u", "0:0"] if root else [])]

    def work(self, seeks: int) -> dict[str, float]:
        """What each process moves in each timed test: the file's bytes, its files, ``seeks`` seeks."""
        files = self.files_k * 1024
        return {"block_write": self.file_mib * 2**20, "block_rewrite": self.file_mib * 2**20,
                "block_read": self.file_mib * 2**20, "seeks": seeks,
                **{f"{order}_{test}": files for order in ("seq", "random") for test in ("create", "stat", "delete")}}

    def __call__(self, recorder, layout: Layout, cgroup_procs: Sequence[Path]) -> None:
        root = System(runner=recorder.runner).euid() == 0
        for count in self.processes:
            for rep in range(self.repetitions):
                self._run(recorder, layout, cgroup_procs, count, rep, root)

    def _run(self, recorder, layout: Layout, cgroup_procs: Sequence[Path], count: int, rep: int,
             root: bool) -> None:
        point, raw, started = f"p{count}", common.raw_dir(layout, "bonnie", f"p{count}", rep), common.now()
        with common.teardown(recorder, f"{layout.name}-bonnie-p{count}-rep{rep}") as down:
            with common.monitored(recorder, layout, raw, WORKLOAD, point, rep) as folder:
                dirs = [common.scratch(Path(layout.targets[i % len(layout.targets)]), "bonnie", down)
                        for i in range(count)]
                outputs, wall_s = common.run_together([self.argv(d, layout, root) for d in dirs], down, folder,
                                                      "bonnie", cgroup_procs=cgroup_procs, timeout_s=self.timeout_s)
        lines = [csv_line(out) for out in outputs]
        common.environment(folder, version=lines[0][1], processes=count, file_mib=self.file_mib,
                           files_k=self.files_k, direct=self.direct, sync=self.sync, wall_s=wall_s)
        for metric, m in combine([parse(line) for line in lines], self.work(int(lines[0][SEEKS_FIELD]))).items():
            how = dict(workload=WORKLOAD, metric=metric, unit=m["unit"], raw=raw, point=point, rep=rep,
                       numjobs=count, bs=self.chunk_bytes, runtime_s=m["seconds"], started=started,
                       file_bytes=self.file_mib * 2**20, files=self.files_k * 1024)
            recorder.keep(layout, common.metric_row(recorder, layout, cgroup_procs, value=m["value"],
                                                    missing_reason=m["missing_reason"], directions=FIELDS[metric][4],
                                                    **how), cgroup_procs)
            if not math.isnan(m["latency_ns"]):
                recorder.keep(layout, common.metric_row(recorder, layout, cgroup_procs, **{
                    **how, "metric": f"{metric}_latency_max", "unit": "ns"}, value=m["latency_ns"]), cgroup_procs)
