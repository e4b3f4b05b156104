"""fio jobs as typed values: rendered to a job file, run with JSON output, validated, parsed into tidy rows.

This module knows nothing of arrays or devices: a job has targets (directories on file systems, block device
paths, or ``nbd://address:port/`` URIs of devices an NBD server exports, which fio's nbd engine reads and writes over
the network) and ``numjobs`` counts the jobs over all of them, spread evenly as IOR's ``-N`` spreads tasks over ``-o``
directories in the seed studies.

Two further kinds of job (``analysis.metadata`` and ``analysis.shared_file`` say what fio reports for them):

- a metadata job: ``rw`` names one of fio's metadata engines (``METADATA_OPS``: filecreate, filestat,
  filedelete) and each job creates, stats or removes ``nrfiles`` files of ``bs`` bytes once, mdtest's phases;
- ``shared_file``: every job works in one file on the first target, job k in its own region of ``size`` bytes
  (IOR's N-to-1); by default each job has its own file (N-to-N). With ``time_based=False`` each job moves its
  ``size`` bytes once and fio runs until it has (IOR's fixed amount); runtime and ramp are then not used.

fio's own steady state (``ss``): a job with ``ss`` (``SS_CRITERIA``, e.g. ``iops_slope:0.3%`` or ``bw:10%``)
stops as soon as the criterion holds over its last ``ss_dur_s`` seconds (judged after ``ss_ramp_s``), or runs to
its runtime; ``steady_state`` reads whether it did from the job's ``steadystate`` object.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .. import faults
from ..system.commands import Runner
from ..errors import ConfigError, FioError
from .fio_output import DIRECTIONS, METADATA_OPS, PERCENTILES, RW_MODES, load_output, validate

# One file open at a time, taken in order: fio then costs the same per file at any nrfiles. With roundrobin (the
# default) and fewer open files than files, fio's search for the next file grows with nrfiles (quadratic time).
METADATA_OPTIONS = (("openfiles", "1"), ("file_service_type", "sequential"))
# filecreate: create in the measured loop; filecreate and filestat: remove the files after the run (not timed),
# so every run starts from an empty directory. filedelete removes them itself.
METADATA_ENGINE_OPTIONS = {"filecreate": (("create_on_open", "1"), ("unlink", "1")),
                           "filestat": (("unlink", "1"),), "filedelete": (("unlink", "0"),)}
SHARED_FILE_NAME = "flashscale-shared"  # named like our job sections, so a directory's teardown removes it

# Our names -> fio's option names: the one table between the two vocabularies.
FIO_OPTION = {
    "rw": "rw",
    "bs": "bs",
    "iodepth": "iodepth",
    "runtime_s": "runtime",
    "ramp_s": "ramp_time",
    "direct": "direct",
    "ioengine": "ioengine",
    "size": "size",
}

# Options naming a log file prefix: a relative prefix is put in the run's own directory (``run``), never the cwd.
LOG_OPTIONS = ("write_bw_log", "write_iops_log", "write_lat_log")
LOG_SETTINGS = ("log_avg_msec",)  # how often they log: a number, no path

# fio's steady-state criteria: all values within the limit of the mean (iops, bw), or the least-squares slope
# under it (iops_slope, bw_slope); the limit absolute, or a percentage of the mean.
SS_CRITERIA = ("iops", "iops_slope", "bw", "bw_slope")
SS_PATTERN = re.compile(rf"({'|'.join(SS_CRITERIA)}):[0-9]+(\.[0-9]+)?%?")

# fio's clock: the kernel's monotonic clock, named, which is fio's own choice on Linux unless a test at every start
# finds the CPUs' TSCs in step. That test (a second calibration, a thread per CPU) took 0.11 s of each fio start
# here (``fio --parse-only``: 0.23 s, 0.12 s with the clock named), and its verdict on this machine's VM changes
# from run to run (fio --cpuclock-test: 4 passes, 2 failures in 6): named, every run times itself with one clock.
CLOCK_SOURCE = "clock_gettime"


@dataclass(frozen=True)
class FioJob:
    """One fio measurement point. Sizes in bytes, times in seconds."""

    rw: str
    bs: int
    targets: tuple[str, ...]
    numjobs: int = 1
    iodepth: int = 1
    runtime_s: int = 10
    ramp_s: int = 0
    direct: bool = True
    ioengine: str = "libaio"
    size: int = 256 * 2**20
    name: str = "flashscale"
    extra: tuple[tuple[str, str], ...] = field(default=())
    nrfiles: int = 0  # files per job of a metadata job (rw in METADATA_OPS); 0 for a data job
    time_based: bool = True  # False: each job moves its size once, fio runs until done (no runtime, no ramp)
    shared_file: bool = False  # True: one file shared by every job, each its own region (N-to-1)
    ss: str | None = None  # fio's steady-state criterion (SS_CRITERIA), e.g. "iops_slope:0.3%"; None: off
    ss_dur_s: int | None = None  # its rolling window, seconds (needed with ss)
    ss_ramp_s: int = 0  # seconds before fio starts judging it

    def __post_init__(self) -> None:
        if self.rw not in RW_MODES and self.rw not in METADATA_OPS:
            raise ConfigError(f"rw={self.rw!r} is not one of {', '.join((*RW_MODES, *METADATA_OPS))}")
        if isinstance(self.nrfiles, bool) or not isinstance(self.nrfiles, int) or self.nrfiles < 0:
            raise ConfigError(f"nrfiles={self.nrfiles!r} must be a whole number >= 0")
        if (self.rw in METADATA_OPS) != (self.nrfiles > 0):
            raise ConfigError(f"rw={self.rw!r} with nrfiles={self.nrfiles}: a metadata engine "
                              f"({', '.join(METADATA_OPS)}) needs nrfiles >= 1, and only it takes nrfiles")
        for flag in ("time_based", "shared_file"):
            if not isinstance(getattr(self, flag), bool):
                raise ConfigError(f"{flag}={getattr(self, flag)!r} must be True or False")
        if self.shared_file and self.is_metadata:
            raise ConfigError(f"rw={self.rw!r}: a metadata job cannot share one file")
        for attr in ("bs", "numjobs", "iodepth", "runtime_s", "size"):
            value = getattr(self, attr)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigError(f"{attr}={value!r} must be a positive whole number")
        if isinstance(self.ramp_s, bool) or not isinstance(self.ramp_s, int) or self.ramp_s < 0:
            raise ConfigError(f"ramp_s={self.ramp_s!r} must be a whole number of seconds >= 0")
        check_steady_state(self.ss, self.ss_dur_s, self.ss_ramp_s)
        if not self.targets:
            raise ConfigError("a fio job needs at least one target (directory or block device)")
        if isinstance(self.targets, str):
            raise ConfigError(f"targets={self.targets!r} must be a sequence of paths, not one string")
        devices = [t for t in self.targets if is_device(t)]
        if self.is_metadata and devices:
            raise ConfigError(f"rw={self.rw!r} makes files in a file system: {devices[0]!r} is a whole device")

    @property
    def is_metadata(self) -> bool:
        return self.rw in METADATA_OPS

    @property
    def point(self) -> str:
        files = f"-files{self.nrfiles}" if self.nrfiles else ""
        return f"{self.rw}-bs{self.bs}-nj{self.numjobs}-qd{self.iodepth}{files}{'-shared' if self.shared_file else ''}"

    def jobs_per_target(self) -> list[int]:
        """Jobs spread evenly over targets; earlier targets take the remainder. A shared file puts every job on
        the first target, where the file is."""
        n = len(self.targets)
        if self.shared_file:
            return [self.numjobs] + [0] * (n - 1)
        return [self.numjobs // n + (1 if i < self.numjobs % n else 0) for i in range(n)]


def check_steady_state(ss: str | None, dur_s: int | None, ramp_s: int) -> None:
    """ConfigError, naming the value, unless ``ss`` is None or one of fio's criteria with a window of seconds."""
    for name, value, least in (("ss_dur_s", dur_s, 1), ("ss_ramp_s", ramp_s, 0)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < least):
            raise ConfigError(f"{name}={value!r} must be a whole number of seconds >= {least}")
    if ss is None:
        return
    if not isinstance(ss, str) or not SS_PATTERN.fullmatch(ss):
        raise ConfigError(f"ss={ss!r} must be a criterion and a limit, e.g. 'iops_slope:0.3%' or 'bw:10%'; "
                          f"criteria: {', '.join(SS_CRITERIA)}")
    if dur_s is None:
        raise ConfigError(f"ss={ss!r} needs ss_dur_s, the seconds over which fio judges it")


NBD = "nbd://"  # a target served over the network by an NBD server: fio's nbd engine reads and writes it


def is_device(target: str) -> bool:
    """A whole device, local (``/dev/...``) or served over the network (``nbd://address:port/``), not a directory.

    The one test in ``measure`` of what a target string names (``jobfile`` and ``precondition`` use it too): it
    classifies the text a job is written with, on any machine, and looks at nothing. ``system.devices`` asks the
    machine instead (``os.stat``, ``S_ISBLK``) before it touches a device: that one is a safety check of a real
    path, this one decides how a job file names its target (``filename=``, ``uri=``, or ``directory=``)."""
    return target.startswith(("/dev/", NBD))


def _in_log_dir(option: str, value: str, log_dir: Path | None) -> str:
    if log_dir is None or option not in LOG_OPTIONS or Path(value).is_absolute():
        return value
    return str(Path(log_dir) / value)


@dataclass(frozen=True)
class JobFile:
    """A job file as data: its [global] ``options`` (``name=value`` lines, in order) and its job ``sections`` (each its
    name and its lines). ``text`` is the file fio reads; ``measure.batch`` composes several from the data."""

    options: tuple[str, ...]
    sections: tuple[tuple[str, tuple[str, ...]], ...]

    def text(self) -> str:
        lines = ["[global]", *self.options]
        for name, body in self.sections:
            lines += ["", f"[{name}]", *body]
        return "\n".join(lines) + "\n"


def render(job: FioJob, log_dir: Path | None = None) -> str:
    """The fio job file for ``job`` (``job_file``'s text)."""
    return job_file(job, log_dir).text()


def job_file(job: FioJob, log_dir: Path | None = None) -> JobFile:
    """The fio job file for ``job``, as data: a [global] section and one section per target that gets jobs.

    With ``log_dir``, a relative prefix of a log option (``LOG_OPTIONS``) in ``job.extra`` is put inside it."""
    timed = job.time_based and not job.is_metadata
    values = {
        "rw": METADATA_OPS.get(job.rw, job.rw),
        "bs": str(job.bs),
        "iodepth": str(job.iodepth),
        "runtime_s": str(job.runtime_s) if timed else None,
        "ramp_s": str(job.ramp_s) if timed else None,
        "direct": "1" if job.direct else "0",
        "ioengine": job.rw if job.is_metadata else job.ioengine,
        "size": str(job.nrfiles * job.bs if job.is_metadata else job.size),
    }
    lines = [f"{FIO_OPTION[k]}={v}" for k, v in values.items() if v is not None]
    lines += [f"time_based={int(timed)}", "group_reporting=1", "thread=0", "invalidate=1",
              f"clocksource={CLOCK_SOURCE}",
              "percentile_list=" + ":".join(p.rstrip("0").rstrip(".") for p in PERCENTILES)]
    if job.is_metadata:
        options = (("nrfiles", str(job.nrfiles)), ("filesize", str(job.bs)), *METADATA_OPTIONS,
                   *METADATA_ENGINE_OPTIONS[job.rw])
        lines += [f"{k}={v}" for k, v in options]
    if job.ss is not None:
        lines += [f"steadystate={job.ss}", f"ss_dur={job.ss_dur_s}", f"ss_ramp={job.ss_ramp_s}"]
    # A time-based write ends with an fsync that fio counts in its run time, so its rate is the rate at which data
    # reached the devices. Where O_DIRECT is honoured (xfs, ext4, raw devices) nothing is left to flush; where a
    # file system buffers direct writes (btrfs: its data checksums need stable pages) the page cache would absorb
    # part of a run: the truth check caught a btrfs-raid0 write at 830 MB/s on devices capped at 800 MB/s in all.
    if timed and "write" in DIRECTIONS.get(job.rw, ()) and "end_fsync" not in dict(job.extra):
        lines.append("end_fsync=1")
    lines += [f"{k}={_in_log_dir(k, v, log_dir)}" for k, v in job.extra]
    return JobFile(tuple(lines), tuple(_section(job, index, target, jobs) for index, (target, jobs)
                                       in enumerate(zip(job.targets, job.jobs_per_target())) if jobs))


def _section(job: FioJob, index: int, target: str, jobs: int) -> tuple[str, tuple[str, ...]]:
    """The job section of ``job``'s ``index``-th target, which gets ``jobs`` jobs: its name and lines."""
    lines = [f"numjobs={jobs}"]
    if target.startswith(NBD):  # the data crosses the network to the server's device
        lines += ["ioengine=nbd", f"uri={target}"]
    elif is_device(target):
        lines.append(f"filename={target}")
    else:
        lines.append(f"directory={target}")
        lines += [f"filename={SHARED_FILE_NAME}"] if job.shared_file else []
    lines += [f"offset_increment={job.size}"] if job.shared_file else []
    return section_name(job, index), tuple(lines)


def section_name(job: FioJob, index: int) -> str:
    """The name of ``job``'s section for its ``index``-th target: fio names its jobs, and their files, after it."""
    return f"{job.name}-t{index}"


def files(job: FioJob) -> dict[Path, int]:
    """The files ``job`` reads or writes in its directory targets, each with the size it needs: fio's default
    ``$jobname.$jobnum.$filenum`` (one file a job: a data job's ``nrfiles`` is 1), or the one shared file that
    every job of a target has its own region of. Device and network targets hold none."""
    found = {}
    for index, (target, jobs) in enumerate(zip(job.targets, job.jobs_per_target())):
        if not jobs or is_device(target) or target.startswith(NBD):
            continue
        if job.shared_file:
            found[Path(target) / SHARED_FILE_NAME] = job.size * jobs
        else:
            found.update({Path(target) / f"{section_name(job, index)}.{n}.0": job.size for n in range(jobs)})
    return found


def run(job: FioJob, outdir: Path, runner: Runner, *, cgroup_procs: Sequence[Path] = ()) -> dict:
    """Run ``job`` once; keep ``job.fio`` and ``fio.json`` in ``outdir`` (which must not exist yet)."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=False)
    faults.reached("run-folder-made")
    jobfile = outdir / "job.fio"
    jobfile.write_text(render(job, log_dir=outdir.resolve()))
    return run_file(jobfile, runner, cgroup_procs=cgroup_procs, timeout=job.runtime_s + job.ramp_s + 600)


def run_file(jobfile: Path, runner: Runner, *, options: Sequence[str] = (), cgroup_procs: Sequence[Path] = (),
             timeout: float) -> dict:
    """Run fio on the job file at ``jobfile`` (our own, rendered by ``run``, or a user's, by ``jobrun.run``): JSON
    output to ``fio.json`` beside it, fio's stderr to ``fio.stderr`` when it said anything; ``options`` go before
    the job file. Returns the output, validated (``outcome``)."""
    completed = runner.run(command(jobfile, options), ok_codes=(0, 1), cgroup_procs=cgroup_procs, timeout=timeout)
    if completed.stderr:
        (Path(jobfile).parent / "fio.stderr").write_text(completed.stderr)
    return outcome(jobfile, completed.returncode, completed.stderr)


def command(jobfile: Path, options: Sequence[str] = ()) -> list[str]:
    """fio's command line for the job file at ``jobfile``: JSON output to ``fio.json`` beside it."""
    return ["fio", "--output-format=json", f"--output={Path(jobfile).parent / 'fio.json'}", *options, str(jobfile)]


def outcome(jobfile: Path, returncode: int, stderr: str) -> dict:
    """What fio's run of ``jobfile`` (``command``) gave, having exited with ``returncode`` and said ``stderr``: its
    output, validated (``validate``); FioError, ending with fio's last words on stderr, when fio wrote no output,
    exited non-zero, or a job failed or moved no data."""
    output = Path(jobfile).parent / "fio.json"
    said = " ".join(stderr.strip().splitlines()[-3:])  # fio's own message, when it gave one
    if not output.exists() or not output.stat().st_size:
        raise FioError(f"fio wrote no output file {output}: {said or 'nothing on stderr'}")
    data = load_output(output.read_bytes().decode(errors="replace"), source=str(output))
    if returncode != 0:
        errors = "; ".join(f"{j.get('jobname')}: error {j.get('error')}" for j in data.get("jobs", [])
                           if isinstance(j, dict))
        raise FioError(f"fio exited with status {returncode} for {jobfile} ({errors}): {said}")
    try:
        validate(data, source=str(output))
    except FioError as exc:
        raise FioError(f"{exc}{': ' + said if said else ''}") from None
    return data
