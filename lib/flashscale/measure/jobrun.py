"""A user's job file run on a layout's targets: one tidy row per reporting group.

``run`` writes the rewritten file (``jobfile.JobFile.rewrite``) as ``job.fio`` in the run's raw directory, has fio
accept it (``--parse-only``), runs it with JSON output and ``--aux-path`` in that directory (fio's state files stay
there too), and returns one row per group: sections joined by neither ``stonewall`` nor ``new_group`` are one
group, reported as one by fio (the rewrite sets ``group_reporting``) and named after its first section.

A row's ``rw`` (the engine's name for a metadata engine, as ``fio.FioJob`` names it), ``iodepth`` and ``bs`` are those of the group's first section (``bs`` in bytes: the first size of a
``bs`` range or read,write list); ``numjobs`` counts the jobs of all its sections. ``job_file`` and
``job_file_sha256`` say which file, as the user wrote it, was run.

In a campaign, ``workload(path, axes, repetitions)`` is the job file as one of the recorder's workloads
(``measure.recorder``): on each layout, after the sweep's points, it checks the file against the layout's targets,
then runs it once per combination of the swept ``axes`` (``AXES``: the file's own values overridden) and
repetition, raw files in ``raw/<layout>/jobfile-<point>/rep<k>/``, and keeps one row per group with the layout's
columns and the known truth. Its rows are ``phase`` "workload", ``workload`` "jobfile": the sweep's own analysis
never reads them; ``analysis.jobfile`` does.
"""
from __future__ import annotations

import itertools
import re
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping, Sequence

from . import campaign_folder, fio, fio_output, precondition, results
from .jobfile import JobFile
from .sweep import positive_ints
from ..arrays.layouts import Layout
from ..errors import ConfigError, FioError
from ..system.commands import Runner
from .units import rate, read_size
from . import truth

DEFAULTS = {"rw": "read", "bs": "4096", "numjobs": "1", "iodepth": "1", "ioengine": "psync"}  # fio's own defaults


def size_bytes(value: str) -> int:
    """A fio size (``4k``, ``1M``, ``64KiB``, ``4096``; the first of ``4k-64k`` or ``4k,8k``) in bytes: the one
    reader of sizes (``units.read_size``), fio's default ``kb_base=1024`` making every prefix a power of 1024."""
    first = re.split(r"[-,:]", value.strip(), maxsplit=1)[0]
    return read_size(first, "size" if first == value.strip() else f"size {value!r}: its first part", least=0)


def _value(jobfile: JobFile, section: str, key: str) -> str:
    line = jobfile.options(section).get(key)
    return line.value if line is not None and line.value else DEFAULTS[key]


def describe_groups(jobfile: JobFile, overrides: Mapping[str, object] | None = None) -> list[dict]:
    """What each group runs, from the file (and the swept ``overrides``): its name and the row's axes."""
    overrides = {k: str(v) for k, v in (overrides or {}).items()}
    described = []
    for sections in jobfile.groups():
        first = sections[0]
        value = lambda key, section=first: overrides.get(key) or _value(jobfile, section, key)  # noqa: E731
        described.append({
            "group": first,
            "rw": engine if (engine := value("ioengine")) in fio_output.METADATA_OPS else value("rw"),
            "bs": size_bytes(value("bs")),
            "numjobs": sum(int(value("numjobs", s)) for s in sections),
            "iodepth": int(value("iodepth")),
        })
    return described


def rows(jobfile: JobFile, data: dict, overrides: Mapping[str, object] | None = None) -> list[dict]:
    """One row per group of ``jobfile``, its numbers from fio's (validated) JSON ``data``."""
    entries = {entry["jobname"]: entry for entry in data["jobs"]}
    made = []
    for group in describe_groups(jobfile, overrides):
        if group["group"] not in entries:
            raise FioError(f"fio reported no group named {group['group']!r} (it reported {sorted(entries)})")
        numbers = fio_output.parse({"jobs": [entries[group["group"]]], "fio version": data.get("fio version", "")})
        made.append({**group, "point": group["group"], **numbers, "job_file": str(jobfile.path),
                     "job_file_sha256": jobfile.sha256})
    return made


def accepted_by_fio(text: str, runner: Runner) -> None:
    """Have fio read ``text`` as a job file (``--parse-only``: nothing runs); CommandError with fio's reason if not.
    The text is written to a temporary folder that is removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="flashscale-jobfile-") as folder:
        job = Path(folder) / "job.fio"
        job.write_text(text)
        runner.run(["fio", "--parse-only", str(job)])


def run(jobfile: JobFile, targets: Sequence[str], outdir: Path, runner: Runner, *,
        overrides: Mapping[str, object] | None = None, cgroup_procs: Sequence[Path] = (),
        timeout_s: float = 3600) -> list[dict]:
    """Run ``jobfile`` on ``targets``; keep ``job.fio`` and ``fio.json`` in ``outdir`` (which must not exist yet)."""
    outdir = Path(outdir)
    text = jobfile.rewrite(targets, outdir.resolve(), overrides)  # refused files raise before anything is made
    outdir.mkdir(parents=True, exist_ok=False)
    job = outdir / "job.fio"
    job.write_text(text)
    runner.run(["fio", "--parse-only", str(job)])
    data = fio.run_file(job, runner, options=(f"--aux-path={outdir.resolve()}",), cgroup_procs=cgroup_procs,
                        timeout=timeout_s)
    return rows(jobfile, data, overrides)


AXES = {"bs": "bs", "numjobs": "nj", "iodepth": "qd"}  # what a campaign may sweep over a job file: name in a point
PHASE = "workload"  # the rows' phase: not a point of the sweep (``analysis.baseline_and_tax`` never reads them)
WORKLOAD = results.JOBFILE_WORKLOAD
AS_WRITTEN = "as-written"  # the point of a file run with no swept axes
# Refusals that do not depend on where the layout is (every layout's targets are directories): checked against
# this stand-in when the workload is made, so a refused file stops the campaign before it builds anything.
ANY_LAYOUT = ("/flashscale-layout/0",)


def checked_axes(axes: Mapping[str, Sequence[int]] | None) -> dict[str, tuple[int, ...]]:
    """``axes`` as name -> values, in ``AXES`` order; an unknown axis or a value not a positive whole number
    is refused (a ConfigError naming it: ``sweep.positive_ints``)."""
    axes = dict(axes or {})
    unknown = [name for name in axes if name not in AXES]
    if unknown:
        raise ConfigError(f"job file axes {unknown}: a campaign sweeps only {', '.join(AXES)} over a job file")
    checked = {}
    for name in AXES:
        values = axes.get(name)
        if values is None:
            continue
        checked[name] = positive_ints(name, values, prefix="job file axis ")
    return checked


def combinations(axes: Mapping[str, Sequence[int]]) -> list[dict[str, int]]:
    """Every combination of the swept axes (the first axis outermost); one empty combination when none is swept."""
    return [dict(zip(axes, combo)) for combo in itertools.product(*axes.values())]


def point_name(overrides: Mapping[str, int]) -> str:
    """The run's name on a layout: ``jobfile-nj4-qd8`` (``jobfile-as-written`` with no swept axis)."""
    return "jobfile-" + ("-".join(f"{AXES[k]}{v}" for k, v in overrides.items()) or AS_WRITTEN)


@dataclass(frozen=True)
class Workload:
    """A user's job file as a campaign workload: ``workload(recorder, layout, cgroup_procs)`` (``workload``)."""

    jobfile: JobFile
    axes: dict[str, tuple[int, ...]]
    repetitions: int
    timeout_s: float = 3600

    def runs(self) -> int:
        """fio runs per layout."""
        return len(combinations(self.axes)) * self.repetitions

    def __call__(self, recorder, layout: Layout, cgroup_procs: Sequence[Path]) -> None:
        self.jobfile.check(layout.targets)  # every refusal, with its line, before the first run on this layout
        for overrides in combinations(self.axes):
            for rep in range(self.repetitions):
                raw_dir = campaign_folder.raw_dir(layout.name, point_name(overrides), f"rep{rep}")
                recorder.progress.started(layout.name, point_name(overrides), f"rep{rep}")
                started = datetime.now(timezone.utc).isoformat(timespec="seconds")
                rows = run(self.jobfile, layout.targets, recorder.directory / raw_dir, recorder.runner,
                           overrides=overrides, cgroup_procs=cgroup_procs, timeout_s=self.timeout_s)
                for row in rows:
                    how = {"point": f"{point_name(overrides)}-{row['group']}", "rep": rep, "raw_dir": str(raw_dir),
                           "started_at": started}
                    recorder.keep(layout, layout_row(recorder, layout, {**row, **how}, cgroup_procs), cgroup_procs)
                recorder.progress.ended(PHASE, ", ".join(f"{r['group']} {rate(r['bw_bytes'])}"
                                                          for r in rows))


def layout_row(recorder, layout: Layout, row: Mapping, cgroup_procs: Sequence[Path]) -> dict:
    """A group's row (its own columns: ``rows`` and where it ran) with the columns of every row on the layout
    (``recorder.header``: cap only when fio ran in the throttled cgroup), the layout's steady-state verdict and
    the known truth."""
    full = {**recorder.header(layout, rw=row["rw"], cgroup_procs=cgroup_procs, phase=PHASE, workload=WORKLOAD),
            **row, **precondition.verdict_columns(recorder.verdict)}
    return {**full, **truth.evidence(full, recorder.truth_caps(cgroup_procs))}


def workload(jobfile_path: str | Path, axes: Mapping[str, Sequence[int]] | None = None, repetitions: int = 1,
             env: Mapping[str, str] | None = None, timeout_s: float = 3600) -> Workload:
    """The job file at ``jobfile_path`` as a campaign workload, swept over ``axes`` (``{"numjobs": [1, 4]}``:
    ``AXES`` only), each combination run ``repetitions`` times on every layout. The file is read (``${VAR}`` from
    ``env``) and checked now: a file refused on any layout raises ``JobFileError`` before the campaign starts."""
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions < 1:
        raise ConfigError(f"job file repetitions={repetitions!r} must be a whole number >= 1")
    jobfile = JobFile.read(jobfile_path, env)
    jobfile.check(ANY_LAYOUT)
    return Workload(jobfile, checked_axes(axes), repetitions, timeout_s)
