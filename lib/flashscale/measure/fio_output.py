"""What fio wrote, read: its JSON output checked for the fields flashscale reads and parsed into one tidy row.

Pure functions on the text and the dict fio gave; nothing here runs fio or reads the machine, so the analysis layer
and an import of others' fio output use the same reading as a campaign does (an import first reads every form fio
wrote into the shape of fio 3.33's JSON: ``fio_import.reader.read_outputs``).

    load_output(text, source)   fio's JSON, past any lines fio printed before or after it (``fio_import.documents``)
    groups(data)                the reporting groups of an output: each group's job entries
    validate(data, source)      every job ran without error, moved data, and has the fields ``parse`` reads
    parse(data, source)         one row: bandwidth and IOPS summed over jobs, latency of the main direction
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import FioError
from .fio_import import documents
from .fio_import.bounds import excerpt

RW_MODES = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw")
# The directions each data rw moves: what its read_bw_bytes and write_bw_bytes hold.
DIRECTIONS = {"read": ("read",), "randread": ("read",), "write": ("write",), "randwrite": ("write",),
              "rw": ("read", "write"), "readwrite": ("read", "write"), "randrw": ("read", "write")}

# fio's metadata engines, used as a job's rw, and the direction fio accounts their operations in (its rw).
METADATA_OPS = {"filecreate": "write", "filestat": "read", "filedelete": "write"}

PERCENTILES = ("50.000000", "90.000000", "99.000000", "99.900000", "99.990000")


def load_output(text: str, source: str = "fio output") -> dict:
    """Parse fio's JSON output, past any lines fio printed before it (warnings, notes: ``_preamble``) and after it;
    FioError when the text holds more than one output (``fio_import.reader.read_outputs`` reads each)."""
    found = documents.documents(text, source)
    if len(found) > 1:
        raise FioError(f"{source}: {len(found)} fio outputs in one file, where one was expected")
    return {**found[0].data, "_preamble": found[0].preamble}


def groups(data: dict) -> dict[int, list[dict]]:
    """The job entries of ``data`` (``jobs``) by reporting group (fio's ``groupid``), in the order fio wrote them:
    one entry per group with group_reporting, one per job without."""
    found: dict[int, list[dict]] = {}
    for entry in data.get("jobs") or []:
        group = entry.get("groupid", 0) if isinstance(entry, dict) else 0
        found.setdefault(group if isinstance(group, int) else 0, []).append(entry)
    return found


class _Latency(BaseModel):
    model_config = ConfigDict(strict=True)
    mean: float
    stddev: float = float("nan")
    percentile: dict[str, float] = Field(default_factory=dict)


class _Side(BaseModel):
    model_config = ConfigDict(strict=True)
    io_bytes: int = Field(ge=0)
    bw_bytes: float
    iops: float
    runtime: float = Field(ge=0)
    clat_ns: _Latency
    lat_ns: _Latency


class _Job(BaseModel):
    model_config = ConfigDict(strict=True)
    jobname: str = ""
    error: int = 0
    read: _Side
    write: _Side
    steadystate: dict | None = None


class _Output(BaseModel):
    """The part of fio's JSON flashscale reads: what ``parse`` needs, with its types."""
    model_config = ConfigDict(strict=True, populate_by_name=True)
    jobs: list[_Job] = Field(min_length=1)
    fio_version: str = Field("", alias="fio version")


def check_shape(data: object, source: str = "fio output") -> None:
    """FioError naming ``source``, the field and the value unless ``data`` has the fields ``parse`` reads, typed."""
    if not isinstance(data, dict):
        raise FioError(f"{source}: fio output is a {type(data).__name__}, not a JSON object")
    try:
        _Output.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise FioError(f"{source}: {where}: {first['msg']} (got {excerpt(first.get('input'))}); "
                       f"{exc.error_count()} problem(s) in all") from None


def validate(data: dict, source: str = "fio output") -> None:
    """Raise FioError unless the output has the fields flashscale reads (``check_shape``), every job ran without
    error and moved data."""
    jobs = data.get("jobs") if isinstance(data, dict) else data
    if not isinstance(jobs, list) or not jobs:
        raise FioError(f"{source}: fio reported no jobs (jobs={excerpt(jobs)})")
    for job in data["jobs"]:
        if isinstance(job, dict) and job.get("error", 0) != 0:
            raise FioError(f"{source}: job {excerpt(job.get('jobname'), 40)} failed with error {job['error']}")
    check_shape(data, source)
    for job in data["jobs"]:
        if job.get("error", 0) != 0:
            raise FioError(f"{source}: job {excerpt(job.get('jobname'), 40)} failed with error {job['error']}")
        moved = sum(job.get(d, {}).get("io_bytes", 0) for d in ("read", "write", "trim"))
        if moved <= 0:
            raise FioError(f"{source}: job {excerpt(job.get('jobname'), 40)} moved no data (io_bytes = 0)")


# Completion-latency percentile columns, named after fio's PERCENTILES (the results table keeps all but p90).
CLAT_PERCENTILES = dict(zip(("clat_p50_ns", "clat_p90_ns", "clat_p99_ns", "clat_p999_ns", "clat_p9999_ns"),
                            PERCENTILES))


def percentile(side: dict, key: str) -> float:
    return float(side.get("clat_ns", {}).get("percentile", {}).get(key, float("nan")))


def main_side(data: dict) -> dict:
    """The direction whose latency a result reports: of the first job entry (with group_reporting, the whole
    group), the one that moved more data (the only one for pure read or write)."""
    first = data["jobs"][0]
    return first["read"] if first["read"]["io_bytes"] >= first["write"]["io_bytes"] else first["write"]


def steady_state(data: dict) -> dict:
    """fio's own steady-state verdict: ``ss_attained`` (True when every job entry attained it; None when the job
    did not ask), ``ss`` (the criterion as fio echoes it) and ``ss_criterion`` (its value at the end)."""
    judged = [j["steadystate"] for j in data["jobs"] if "steadystate" in j]
    if not judged:
        return {"ss_attained": None, "ss": None, "ss_criterion": None}
    return {"ss_attained": all(bool(s.get("attained")) for s in judged), "ss": judged[0].get("ss"),
            "ss_criterion": judged[0].get("criterion")}


def cpu_percent(data: dict, runtime_ms: float) -> dict:
    """fio's own CPU time of a run, as percent of one CPU over the run, all its jobs together: ``fio_usr_cpu`` and
    ``fio_sys_cpu``. fio gives each job entry ``usr_cpu``/``sys_cpu`` as percent of one CPU over that entry's
    ``job_runtime``; with group_reporting the entry is the group, its ``job_runtime`` the sum of its jobs' (4 jobs of
    2 s: 8000 ms) and its percent their mean, so each entry counts ``usr_cpu`` x ``job_runtime`` / the run's time.
    NaN where fio gave no such numbers (its client/server output, an older fio without ``job_runtime``)."""
    totals = {}
    for name in ("usr_cpu", "sys_cpu"):
        try:
            total = sum(float(j[name]) * float(j["job_runtime"]) for j in data["jobs"]) / runtime_ms
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            total = float("nan")
        totals[f"fio_{name}"] = total
    return totals


def parse(data: dict, source: str = "fio output") -> dict:
    """Aggregate a fio result into one tidy row of measurements (FioError naming ``source`` when it lacks a field
    or has one of the wrong type: ``check_shape``).

    Bandwidth and IOPS are summed over jobs and directions; latency comes from the direction that moved more
    data (the only one for pure read or write), taken from the first job entry, which with group_reporting
    holds the whole group.
    """
    check_shape(data, source)
    jobs = data["jobs"]
    read_bw = float(sum(j["read"]["bw_bytes"] for j in jobs))
    write_bw = float(sum(j["write"]["bw_bytes"] for j in jobs))
    iops = float(sum(j["read"]["iops"] + j["write"]["iops"] for j in jobs))
    io_bytes = int(sum(j["read"]["io_bytes"] + j["write"]["io_bytes"] for j in jobs))
    side = main_side(data)
    runtime_ms = max(max(j["read"]["runtime"], j["write"]["runtime"]) for j in jobs)
    return {
        "bw_bytes": read_bw + write_bw,
        "iops": iops,
        "runtime_s": runtime_ms / 1000.0,
        "clat_mean_ns": float(side["clat_ns"]["mean"]),
        **{name: percentile(side, key) for name, key in CLAT_PERCENTILES.items() if name != "clat_p90_ns"},
        "clat_stddev_ns": float(side["clat_ns"].get("stddev", float("nan"))),
        "lat_mean_ns": float(side["lat_ns"]["mean"]),
        "read_bw_bytes": read_bw,
        "write_bw_bytes": write_bw,
        "io_bytes": io_bytes,
        "fio_version": data.get("fio version", ""),
        **cpu_percent(data, runtime_ms),
        **steady_state(data),
    }
