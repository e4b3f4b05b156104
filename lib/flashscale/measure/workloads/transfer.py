"""A many-files transfer (seed 001's application test, scaled down by parameters): ``files`` files of
``file_mib`` MiB written, then copied by ``streams`` parallel streams, in files/s and bytes/s.

The files are spread over the layout's targets (file ``i`` on target ``i mod targets``); each is copied to the next
target (``(i + 1) mod targets``: jbod copies from one file system to another) or, with one target, to another
directory of the same file system. Both phases are ``dd`` with O_DIRECT (``direct``, the default: buffered
writeback escapes a cgroup v1 cap and a copy of files just written would read the page cache), run by
``xargs -P streams`` inside the layout's throttled cgroup. Each ``dd`` ends with an fsync of the file it wrote
(``conv=fsync``), inside the phase's time, as fio's writes end with ``end_fsync``: a phase is timed until its data
is on the devices, not in the page cache (btrfs takes O_DIRECT writes through its page cache; the write phase
came out at 433 MB/s on a btrfs-raid0 of two devices capped at 200 MB/s each without it).

On the emulated array the truth is known (``common.truth``): the write phase cannot exceed devices x the write cap;
the copy reads and writes every byte, so it cannot exceed devices x the smaller of the read and write caps. Both
rates carry it (``truth_bw_bytes``) and fio's check (``above_truth``, ``too_short``): a phase of about a second wrote
433 MB/s on two devices capped at 200 MB/s, the throttle's first slice, so a phase more than 2% above its truth that
the slice explains gives no rate, and the default moves 2 GiB (5 s or more at 400 MB/s). The application's tax is
its copy rate against fio's on the same devices (``analysis.applications``).

Metrics: ``write_bw`` (bytes/s), ``write_files`` (files/s), ``copy_bw`` (bytes/s), ``copy_files`` (files/s).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ...arrays.layouts import Layout
from ..sweep import positive_ints
from . import common

WORKLOAD = "transfer"
MIB = 2**20


@dataclass(frozen=True)
class Transfer:
    files: int = 64
    file_mib: int = 32  # 2 GiB: 5 s or more at 400 MB/s, so the throttle's first slice is under 2% (measure.truth)
    streams: tuple[int, ...] = (1, 4)
    direct: bool = True
    repetitions: int = 1
    timeout_s: float = 3600

    def __post_init__(self) -> None:
        object.__setattr__(self, "streams", positive_ints("streams", self.streams, prefix=f"{WORKLOAD} "))
        for name in ("files", "file_mib", "repetitions"):
            positive_ints(name, (getattr(self, name),), prefix=f"{WORKLOAD} ")

    def _xargs(self, streams: int, listing: Path, per_file: int, *dd: str) -> list[str]:
        """``xargs`` running one ``dd`` per file (``per_file`` lines of ``listing`` each), ``streams`` at once; each
        fsyncs its file before it exits."""
        return ["xargs", "-P", str(streams), "-d", "\\n", "-n", str(per_file), "-a", str(listing), "dd", f"bs={MIB}",
                "status=none", "conv=fsync", *dd]

    def runs(self) -> int:
        """Transfers per layout."""
        return len(self.streams) * self.repetitions

    def __call__(self, recorder, layout: Layout, cgroup_procs: Sequence[Path]) -> None:
        for streams in self.streams:
            for rep in range(self.repetitions):
                self._run(recorder, layout, cgroup_procs, streams, rep)

    def _run(self, recorder, layout: Layout, cgroup_procs: Sequence[Path], streams: int, rep: int) -> None:
        point, started = f"s{streams}", common.now()
        raw = common.raw_dir(layout, WORKLOAD, point, rep)
        targets = [Path(t) for t in layout.targets]
        flags = ("iflag=direct", "oflag=direct") if self.direct else ()
        with common.teardown(recorder, f"{layout.name}-transfer-{point}-rep{rep}") as down:
            with common.monitored(recorder, layout, raw, WORKLOAD, point, rep) as folder:
                sources = [common.scratch(t, "transfer-src", down) for t in targets]
                copies = [common.scratch(targets[(i + 1) % len(targets)], "transfer-dst", down)
                          for i in range(len(targets))]
                names = [(sources[i % len(targets)] / f"file{i}", copies[i % len(targets)] / f"file{i}")
                         for i in range(self.files)]
                (folder / "write.list").write_text("".join(f"of={src}\n" for src, _ in names))
                (folder / "copy.list").write_text("".join(f"if={src}\nof={dst}\n" for src, dst in names))
                write = self._xargs(streams, folder / "write.list", 1, "if=/dev/zero", f"count={self.file_mib}",
                                    *flags[1:])
                copy = self._xargs(streams, folder / "copy.list", 2, *flags)
                _, write_s = common.run_together([write], down, folder, "write", cgroup_procs=cgroup_procs,
                                                 timeout_s=self.timeout_s)
                _, copy_s = common.run_together([copy], down, folder, "copy", cgroup_procs=cgroup_procs,
                                                timeout_s=self.timeout_s)
        common.environment(folder, files=self.files, file_mib=self.file_mib, streams=streams, direct=self.direct)
        moved = self.files * self.file_mib * MIB
        for metric, value, unit, seconds, directions in (
                ("write_bw", moved / write_s, "bytes/s", write_s, ("write",)),
                ("write_files", self.files / write_s, "files/s", write_s, ()),
                ("copy_bw", moved / copy_s, "bytes/s", copy_s, ("read", "write")),
                ("copy_files", self.files / copy_s, "files/s", copy_s, ())):
            row = common.metric_row(recorder, layout, cgroup_procs, workload=WORKLOAD, metric=metric, value=value,
                                    unit=unit, raw=raw, point=point, rep=rep, numjobs=streams, bs=MIB,
                                    runtime_s=seconds, started=started, directions=directions, files=self.files,
                                    file_bytes=self.file_mib * MIB, io_bytes=moved)
            recorder.keep(layout, row, cgroup_procs)
