"""A user's job file run on a layout's targets: one tidy row per reporting group.

``run`` writes the rewritten file (``jobfile.JobFile.rewrite``) as ``job.fio`` in the run's raw directory, has fio
accept it (``--parse-only``), runs it with JSON output and ``--aux-path`` in that directory (fio's state files stay
there too), and returns one row per group: sections joined by neither ``stonewall`` nor ``new_group`` are one
group, reported as one by fio (the rewrite sets ``group_reporting``) and named after its first section.

A row's ``rw`` (the engine's name for a metadata engine, as ``fio.FioJob`` names it), ``iodepth`` and ``bs`` are those of the group's first section (``bs`` in bytes: the first size of a
``bs`` range or read,write list); ``numjobs`` counts the jobs of all its sections. ``job_file`` and
``job_file_sha256`` say which file, as the user wrote it, was run.
"""
from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Mapping, Sequence

from . import fio
from .jobfile import JobFile
from ..errors import ConfigError, FioError
from ..system.commands import Runner

SIZE = re.compile(r"^\s*(\d+)\s*([kmgtp]?)(i?b)?\s*$", re.IGNORECASE)
POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
DEFAULTS = {"rw": "read", "bs": "4096", "numjobs": "1", "iodepth": "1", "ioengine": "psync"}  # fio's own defaults


def size_bytes(value: str) -> int:
    """A fio size (``4k``, ``1M``, ``64KiB``, ``4096``; the first of ``4k-64k`` or ``4k,8k``) in bytes; fio's default
    ``kb_base=1024`` makes every prefix a power of 1024."""
    first = re.split(r"[-,:]", value.strip(), maxsplit=1)[0]
    match = SIZE.match(first)
    if not match:
        raise ConfigError(f"size {value!r} is not a number with an optional k, m, g, t or p suffix")
    return int(match.group(1)) * 1024 ** POWERS[match.group(2).lower()]


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
            "rw": engine if (engine := value("ioengine")) in fio.METADATA_OPS else value("rw"),
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
        numbers = fio.parse({"jobs": [entries[group["group"]]], "fio version": data.get("fio version", "")})
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
    job, output = outdir / "job.fio", outdir / "fio.json"
    job.write_text(text)
    runner.run(["fio", "--parse-only", str(job)])
    completed = runner.run(["fio", "--output-format=json", f"--output={output}", f"--aux-path={outdir.resolve()}",
                            str(job)], ok_codes=(0, 1), cgroup_procs=cgroup_procs, timeout=timeout_s)
    if completed.stderr:
        (outdir / "fio.stderr").write_text(completed.stderr)
    if not output.exists():
        raise FioError(f"fio wrote no output file {output}: {completed.stderr.strip()}")
    data = fio.load_output(output.read_text(), source=str(output))
    if completed.returncode != 0:
        errors = "; ".join(f"{j.get('jobname')}: error {j.get('error')}" for j in data.get("jobs", []))
        raise FioError(f"fio exited with status {completed.returncode} for {job} ({errors or completed.stderr.strip()})")
    fio.validate(data, source=str(output))
    return rows(jobfile, data, overrides)
