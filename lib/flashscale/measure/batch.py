"""Consecutive runs in one fio process: fio's exec paid once, each run still its own row and raw files.

fio spends about 0.3 s a process outside its run time (its clock's calibration, the wait for its jobs to start,
their reaping: ``benchmarks/bench_harness.py``). Runs that need nothing from flashscale between them (the
repetitions of one point, when no precision decides after each; consecutive points on the same targets with no
precondition or build between them) go into one job file, each run's sections after the
first separated by ``stonewall`` (fio's HOWTO: wait for the preceding jobs in the job file to exit before starting
this one) and ``new_group`` (a new reporting group), so that with ``group_reporting`` fio reports each run as its own
group (``groupid`` k for the k-th run), in order. ``split`` gives each run the document a run of its own would have
given (its group's entry; the run's options; ``disk_util`` is the whole batch's), written to its own folder as
``fio.json`` beside its own ``job.fio``, so every reader of a run's raw files reads a batched run as any other;
the batch's file and fio's whole output stay in the point's folder (``batch.fio``, ``batch.json``).

What it saves, measured (``make bench``, 2026-11-27, side by side, load average 4 to 13): little. Each stonewalled
group pays fio's start again, as fio runs it: it forks the group's jobs and polls every 100 ms until each is set up,
then reaps them at 10 ms polls; only the exec and the clock's calibration are paid once. Six reads of 1 s on one
capped device, fio wall over run time: 1.325 as six processes, 1.313 in twos, 1.305 all in one (medians of 3); a
small campaign 1.215 a process a run, 1.195 batched. So ``batch_reps`` (BATCH_REPS) stays off by default: it
saves about 2% of a campaign's wall and samples the devices over the whole batch instead of each run. What
does take fio's start out of the time between runs is starting each run's fio ahead (``measure.ahead``, START_AHEAD).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from ..errors import FioError
from ..system.commands import Runner
from .fio import FioJob, JobFile, job_file, render, run_file
from .fio_output import validate

BATCH_FILE, BATCH_OUTPUT = "batch.fio", "batch.json"


def render_batch(jobs: Sequence[FioJob], log_dirs: Sequence[Path]) -> str:
    """One job file running ``jobs`` one after another, composed from each job's file as data (``fio.job_file``, no
    text parsed back): the options every job's [global] shares stay global, the rest go into each of its sections;
    each job's first section after the first job's waits for those before it (``stonewall``) and starts a new
    reporting group. Section names get the run's index (``r0-``, ``r1-``...). The jobs may be one point's
    repetitions or consecutive points (another rw, block size, job count) on the same targets."""
    files = [job_file(job, log_dir=Path(d).resolve()) for job, d in zip(jobs, log_dirs)]
    common = tuple(line for line in files[0].options if all(line in f.options for f in files))
    sections = []
    for k, made in enumerate(files):
        own = tuple(line for line in made.options if line not in common)
        for s, (name, body) in enumerate(made.sections):
            wall = ("stonewall", "new_group") if k and not s else ()
            sections.append((f"r{k}-{name}", (*wall, *own, *body)))
    return JobFile(common, tuple(sections)).text()


def split(data: dict, runs: int, source: str) -> list[dict]:
    """fio's output of a batch of ``runs`` as one document a run: its reporting group's entries."""
    found = []
    for k in range(runs):
        jobs = [j for j in data.get("jobs", []) if isinstance(j, dict) and j.get("groupid") == k]
        if not jobs:
            raise FioError(f"{source}: fio reported no group {k} of the batch's {runs} runs")
        found.append({**data, "jobs": jobs})
    return found


def run(jobs: Sequence[FioJob], outdirs: Sequence[Path], batch_dir: Path, runner: Runner, *,
        cgroup_procs: Sequence[Path] = ()) -> list[dict]:
    """Run ``jobs`` in one fio process; each run's ``job.fio`` and ``fio.json`` in its ``outdirs`` (which must not
    exist yet), the batch's ``batch.fio`` and ``batch.json`` in ``batch_dir``. Each run's output, validated;
    FioError (every run of the batch failed with it) when fio failed or a group is missing."""
    outdirs = [Path(d) for d in outdirs]
    for job, outdir in zip(jobs, outdirs):
        outdir.mkdir(parents=True, exist_ok=False)
        (outdir / "job.fio").write_text(render(job, log_dir=outdir.resolve()))
    batch_dir.mkdir(parents=True, exist_ok=True)
    jobfile = batch_dir / BATCH_FILE
    jobfile.write_text(render_batch(jobs, outdirs))
    timeout = sum(job.runtime_s + job.ramp_s for job in jobs) + 600
    data = run_file(jobfile, runner, cgroup_procs=cgroup_procs, timeout=timeout)
    (batch_dir / "fio.json").rename(batch_dir / BATCH_OUTPUT)
    documents = split(data, len(jobs), str(batch_dir / BATCH_OUTPUT))
    for document, outdir in zip(documents, outdirs):
        validate(document, source=str(outdir / "fio.json"))
        (outdir / "fio.json").write_text(json.dumps(document, indent=1))
    return documents
