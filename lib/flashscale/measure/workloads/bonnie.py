"""bonnie++ on a layout: sequential block write, rewrite and read, seeks, and file create / stat / delete, with the
number of concurrent processes as an axis (seed 002 ran 32 at once).

Each process is one ``bonnie++`` in a scratch directory of its own on the layout (process ``i`` on target
``i mod targets``: jbod spreads them over its file systems), all started together inside the layout's throttled
cgroup; with ``direct`` (the default) its block tests use O_DIRECT (``-D``), so on the emulated array they are
capped like fio's (buffered writeback escapes a cgroup v1 cap). ``-f`` skips the per-character tests. The
processes are not synchronised between phases (bonnie++'s ``-p``/``-y`` semaphore is a SysV object flashscale does
not make): they run the same phases on the same sizes and overlap.

bonnie++ 2.00a prints one CSV line of 50 fields and no header (``parse``, by position: ``FIELDS``). Rates are in
KiB/s (block tests) and per second (seeks, files); ``+++++`` means the test was too fast to measure: the row's
value is NaN with that reason (``TOO_FAST``), never a number. An empty field is a test that did not run: no row.
Across processes a metric's rates add up and its latency is the largest; one process too fast to measure leaves
the sum unknown.
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
KIB = 1024
# metric -> (field of its rate, unit of that rate in bonnie++'s CSV, our unit, field of its latency)
FIELDS: dict[str, tuple[int, str, str, int]] = {
    "block_write": (11, "KiB/s", "bytes/s", 39),
    "block_rewrite": (13, "KiB/s", "bytes/s", 40),
    "block_read": (17, "KiB/s", "bytes/s", 42),
    "seeks": (19, "/s", "ops/s", 43),
    "seq_create": (26, "/s", "files/s", 44),
    "seq_stat": (28, "/s", "files/s", 45),
    "seq_delete": (30, "/s", "files/s", 46),
    "random_create": (32, "/s", "files/s", 47),
    "random_stat": (34, "/s", "files/s", 48),
    "random_delete": (36, "/s", "files/s", 49),
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
    for metric, (rate, theirs, ours, latency) in FIELDS.items():
        text = fields[rate].strip()
        if not text:
            continue
        too_fast = text.startswith("+")
        value = math.nan if too_fast else float(text) * (KIB if theirs == "KiB/s" else 1)
        parsed[metric] = {"value": value, "unit": ours, "latency_ns": latency_ns(fields[latency].strip()),
                          "missing_reason": TOO_FAST if too_fast else None}
    return parsed


def combine(runs: Sequence[dict[str, dict]]) -> dict[str, dict]:
    """Concurrent processes' metrics as one: rates summed, the largest latency; unknown if any was too fast."""
    combined = {}
    for metric in runs[0]:
        each = [run[metric] for run in runs if metric in run]
        reason = next((e["missing_reason"] for e in each if e["missing_reason"]), None)
        combined[metric] = {"value": math.nan if reason else sum(e["value"] for e in each), "unit": each[0]["unit"],
                            "latency_ns": max(e["latency_ns"] for e in each), "missing_reason": reason}
    return combined


@dataclass(frozen=True)
class Bonnie:
    """bonnie++ with ``processes`` concurrent processes (an axis), each on a file of ``file_mib`` MiB moved in
    chunks of ``chunk_bytes`` (bonnie++'s own default is 8 KiB: direct I/O that small measures latency, not the
    device) and ``files_k`` x 1024 files for the file tests, ``repetitions`` times on every layout. bonnie++ prints
    ``+++++`` for a test shorter than it can time: the file must take seconds at the devices' rate."""

    processes: tuple[int, ...] = (1,)
    file_mib: int = 1024
    chunk_bytes: int = 2**20
    files_k: int = 1
    direct: bool = True
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
        return ["bonnie++", "-d", str(directory), "-s", f"{self.file_mib}:{self.chunk_bytes}", "-r", str(max(1, self.file_mib // 2)),
                "-n", str(self.files_k), "-m", layout.name, "-q", "-f", *(["-D"] if self.direct else []),
                *(["-u", "0:0"] if root else [])]

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
        common.environment(folder, version=csv_line(outputs[0])[1], processes=count, file_mib=self.file_mib,
                           files_k=self.files_k, direct=self.direct)
        for metric, m in combine([parse(csv_line(out)) for out in outputs]).items():
            how = dict(workload=WORKLOAD, metric=metric, unit=m["unit"], raw=raw, point=point, rep=rep,
                       numjobs=count, bs=self.chunk_bytes, runtime_s=wall_s, started=started,
                       file_bytes=self.file_mib * 2**20, files=self.files_k * 1024)
            recorder.keep(layout, common.metric_row(recorder, layout, cgroup_procs, value=m["value"],
                                                    missing_reason=m["missing_reason"], **how), cgroup_procs)
            if not math.isnan(m["latency_ns"]):
                recorder.keep(layout, common.metric_row(recorder, layout, cgroup_procs, **{
                    **how, "metric": f"{metric}_latency_max", "unit": "ns"}, value=m["latency_ns"]), cgroup_procs)
