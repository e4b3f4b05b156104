"""The tidy results table: one row per fio point and repetition.

The columns in ``COLUMNS`` are a contract: later versions add columns, never rename these. Units are in the names
(``_bytes`` per second for bandwidth, ``_ns`` for latency, ``_s`` for seconds); ``bs`` is in bytes.

Rows are appended to ``rows.jsonl`` in the campaign directory as each point finishes, so nothing already measured is
lost if a run stops; ``results.parquet`` is rebuilt from those lines (``rebuild_table``) and can always be rebuilt
again. The folder's files are read and written by ``measure.campaign_folder``; here the rows become the table.
"""
from __future__ import annotations

import math
from datetime import datetime, timezone
from pathlib import Path
from dataclasses import dataclass
from typing import Iterable, Mapping

import pandas as pd

from . import campaign_folder, truth
from ..errors import AnalysisError


# name -> (dtype, meaning). The first block is the contract of the walking skeleton.
COLUMNS: dict[str, tuple[str, str]] = {
    "campaign": ("string", "campaign name"),
    "host": ("string", "host that ran fio (default localhost)"),
    "layout": ("string", "single, jbod, btrfs-raid0, ... (the array layout under test)"),
    "devices": ("int64", "number of devices in the layout"),
    "rw": ("string", "fio rw: read, write, randread, randwrite, ...; filecreate, filestat, filedelete for "
                     "metadata runs"),
    "bs": ("int64", "block size in bytes"),
    "numjobs": ("int64", "total fio jobs (threads) over all targets"),
    "iodepth": ("int64", "fio iodepth per job"),
    "rep": ("int64", "repetition index; 0 is the warm-up when warmup is true"),
    "reps_reason": ("string", "why the point's runs stopped, or went on, after this run: fixed (REPETITIONS runs), "
                              "more (PRECISION not reached: it ran again), precise (its 95% interval within "
                              "PRECISION), max (MAX_REPETITIONS ran first), decided (a sequential tax test's verdict), "
                              "reference (the tax reference, run to MAX_REPETITIONS for every layout's test); "
                              "the point's last row says why it stopped. NA on rows of no sweep point"),
    "build": ("Int64", "which build of the layout the run was on (BUILDS: a new mkfs, a new array each), from 0; "
                       "0 when each layout is built once; NA on rows made before the column (read as 0)"),
    "reps_most": ("Int64", "the most measured runs the point could take (MAX_REPETITIONS with PRECISION, else "
                           "REPETITIONS): the looks a sequential tax test spread its alpha over; NA on older rows"),
    "warmup": ("bool", "true for the warm-up run, kept but excluded from analysis"),
    "bw_bytes": ("float64", "aggregate bandwidth, bytes/s (read + write)"),
    "iops": ("float64", "aggregate I/O operations per second (read + write)"),
    "runtime_s": ("float64", "measured run time, seconds"),
    "clat_mean_ns": ("float64", "completion latency mean, ns"),
    "clat_p50_ns": ("float64", "completion latency median, ns"),
    "clat_p99_ns": ("float64", "completion latency 99th percentile, ns"),
    "clat_p999_ns": ("float64", "completion latency 99.9th percentile, ns"),
}

# Added by the runner; may grow.
EXTRA_COLUMNS: dict[str, tuple[str, str]] = {
    "run_id": ("string", "identifier of the campaign run (UTC timestamp)"),
    "point": ("string", "point identifier within the layout, e.g. read-bs1048576-nj4-qd1"),
    "backend": ("string", "loop (loop devices: the emulated array, or a test bed of loop devices), directory "
                          "(plain directories), device (real devices of a test bed), mounted (inside an existing "
                          "mount point)"),
    "cap_bps": ("float64", "per-device bandwidth cap of the layout's devices, bytes/s (devices x cap_bps is its truth; with CAP_SCALE the mean of jbod's, a stripe's slowest); NaN when uncapped"),
    "cap_asked_bps": ("float64", "the per-device cap the campaign asked for, bytes/s; where it differs from cap_bps the "
                                 "truth was lowered to what this machine carried (measure.harness, harness.json); "
                                 "NaN when uncapped"),
    "harness_bw_bytes": ("float64", "what the test bed carried in the row's direction with its caps lifted, all its "
                                    "devices at once, bytes/s (measure.harness): the truth is held to at most half "
                                    "of it; NaN when not measured"),
    "read_bw_bytes": ("float64", "read bandwidth, bytes/s"),
    "write_bw_bytes": ("float64", "write bandwidth, bytes/s"),
    "io_bytes": ("Int64", "bytes moved during the measured run; NA on a failed row"),
    "lat_mean_ns": ("float64", "total latency mean, ns"),
    "clat_stddev_ns": ("float64", "completion latency standard deviation, ns"),
    "clat_p9999_ns": ("float64", "completion latency 99.99th percentile, ns"),
    "raw_dir": ("string", "directory holding job.fio, fio.json and env.json, relative to the campaign dir"),
    "fio_version": ("string", "fio version that measured the point"),
    "nrfiles": ("int64", "files per job of a metadata run (05_metadata); absent from data sweeps"),
    "started_at": ("string", "UTC time the run started, ISO 8601 to the microsecond (results.now)"),
    "phase": ("string", "measure (a point of the sweep), or precondition (the files the read points open, written "
                        "in full before a layout's first point; raw files under raw/<layout>/precondition/; kept, "
                        "never analysed), or workload (a run after the sweep's points: ``workload`` says which; the "
                        "sweep's analysis never reads it), or bracket (BRACKET: the tax reference swept once more "
                        "after the layouts, its rep indexes after every build's; analysis.drift reads its change, the "
                        "sweep's analysis never reads its runs)"),
    "truth_bw_bytes": ("float64", "the known truth on the emulated array: devices x cap of each direction the rw "
                                  "moves, bytes/s; NaN when fio ran uncapped (off the emulated array)"),
    "above_truth": ("bool", "true when read_bw_bytes or write_bw_bytes is above its direction's devices x cap by "
                            "more than the throttle's first slice explains (measure.truth.tolerance): the run "
                            "measured something other than the devices"),
    "too_short": ("bool", f"true when the run gives no rate (measure.truth.why_too_short): it lasted under "
                          f"{truth.MIN_RUNTIME_S:g} s (fio's clock rather than the storage), or came out more than "
                          "2% above its truth where the throttle's first slice explains it (a capped run under 5 s)"),
    "ss": ("string", "fio's steady-state criterion the run was given (SS: e.g. iops_slope:0.300000%, as fio echoes "
                     "it); NA when not asked"),
    "ss_attained": ("boolean", "true when fio's own steady state (SS over SS_DUR_S seconds) was attained and the run "
                               "stopped there, false when it ran to its runtime without; NA when not asked"),
    "ss_criterion": ("string", "the value of fio's criterion at the end of the run (e.g. 38.9%), as fio reports it"),
    "round": ("Int64", "the round of a precondition in rounds (STEADY_ROUNDS), from 1; NA on every other row"),
    "steady": ("boolean", "SNIA PTS steady state of the layout's precondition rounds (measure.steady: range of the "
                          "last five rounds within 20% of their mean, their fitted line's excursion within 10%): on a "
                          "round's row, whether the rounds up to it were steady; on a point's row, the layout's "
                          "verdict (false: the maximum, PRECONDITION_ROUNDS_MAX, was reached first); NA when no "
                          "rounds were asked"),
    "steady_round": ("Int64", "the round at which the layout's precondition became steady; NA when not steady"),
    "job_file": ("string", "the user's own fio job file the row ran (measure.jobrun); absent for flashscale's jobs"),
    "job_file_sha256": ("string", "SHA-256 of that job file as written, included files in place"),
    "group": ("string", "the job file's reporting group (stonewall / new_group), named by its first section"),
    "workload": ("string", "what measured the row: fio (the sweep's own points; the default of rows without it), "
                           "jobfile (a user's own job file, measure.jobrun.workload), or an application "
                           "(measure.workloads, phase workload): bonnie++, pgbench, transfer"),
    "metric": ("string", "an application's metric (README, Application workloads): block_write, tps, copy_bw, ...; "
                         "NA on fio rows"),
    "value": ("float64", "the metric's value in unit; NaN when the application could not measure it (missing_reason)"),
    "unit": ("string", "unit of value: bytes/s, ops/s, files/s, tps, ns"),
    "missing_reason": ("string", "why value is missing, e.g. bonnie++'s +++++: too fast to measure"),
    "scale": ("Int64", "pgbench scale factor (100,000 accounts each)"),
    "files": ("Int64", "files of the many-files transfer"),
    "file_bytes": ("Int64", "size of each file of the transfer, or of bonnie++'s file per process, bytes"),
    "status": ("string", "ok (fio measured the point), or failed (fio reported an error, exited non-zero or left no "
                         "usable output: its numbers are NaN, never analysed; ON_FAILURE says whether the sweep went on)"),
    "error": ("string", "on a failed row, fio's own message (or flashscale's, naming the file); NA on an ok row"),
    "adaptive": ("string", "on a row of an adaptive sweep, the explored axis and its value (numjobs=4); NA in a full "
                           "grid. What the sweep chose and skipped, and why: raw/<layout>/adaptive.json"),
    "cpu_busy_cores": ("float64", "CPUs of the whole machine busy during the run, on average: /proc/stat read just "
                                  "before and after it (user + nice + system + irq + softirq + steal over all time, "
                                  "x the CPUs); kernel threads included (the loop workers that copy an emulated "
                                  "device's data), so it is what predict's cpu term reads first"),
    "fio_usr_cpu": ("float64", "fio's user CPU time over the run, percent of one CPU, all its jobs together (fio's "
                               "usr_cpu x job_runtime / run time, summed over job entries)"),
    "fio_sys_cpu": ("float64", "fio's system CPU time over the run, percent of one CPU, all its jobs together"),
    "rate_seconds": ("float64", "the run's full seconds in fio's bandwidth logs, its jobs summed second by second "
                                "(measure.rate_log); NaN where no log was kept (a metadata workload, a run "
                                "imported)"),
    "stall_s": ("float64", "seconds of the run under half its median second in those logs: a stall, flagged and "
                           "kept (the report names it); NaN under 3 full seconds or without a log"),
    "rate_low": ("float64", "the run's slowest full second against its median second (0.4: 40% of it)"),
    "rate_low_at_s": ("float64", "when that second ended, seconds from the start of the run's logs"),
    "cpu_latency_us": ("Int64", "the idle latency every CPU was held to during the run, µs (system.idle: 0, they "
                                "polled); NA when none was held (CPU_LATENCY_US None, or not possible here)"),
}

ALL_COLUMNS = {**COLUMNS, **EXTRA_COLUMNS}

BRACKET_PHASE = "bracket"  # the tax reference's sweep once more after the layouts (Sweep.bracket, analysis.drift)
PHASES = ("precondition", "measure", "workload", BRACKET_PHASE)
SWEPT = ("measure", BRACKET_PHASE)  # the phases of a sweep's own runs, each (layout, point, rep) once


def bracket_name(layout: str) -> str:
    """What a campaign's progress (``layouts_done``) calls layout ``layout``'s bracket once it ran to the end."""
    return f"{layout} {BRACKET_PHASE}"


JOBFILE_WORKLOAD = "jobfile"  # the ``workload`` of a user's job file's rows (``jobrun``), read by ``analysis.jobfile``
# What a row written before these columns existed reads as: a measured point, no known truth, not flagged.
# (``too_short`` is derived from ``runtime_s`` when a row has it: the rule does not depend on when it was written.)
DEFAULTS = {"status": "ok", "workload": "fio", "phase": "measure", "truth_bw_bytes": float("nan"), "above_truth": False,
            "too_short": False}

# The dtypes of ``ALL_COLUMNS`` that hold numbers (``with_numbers`` reads them from text).
NUMBER_DTYPES = ("float64", "int64", "Int64")


def now() -> str:
    """The UTC time now, ISO 8601 to the microsecond with its zone ("2026-11-26T19:43:42.123456+00:00"): every
    row's ``started_at`` and every prediction's ``predicted_at``, fine enough to tell which came first when both
    fall in one second (``analysis.prediction.scoring.against`` refuses a prediction stated after its layout's first run)."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


# The numbers of a run (``fio_output.parse``'s): NaN on a failed row, whatever failed (a run, a host, a cluster's point).
NUMBERS = ("bw_bytes", "iops", "runtime_s", "clat_mean_ns", "clat_p50_ns", "clat_p99_ns", "clat_p999_ns",
           "clat_p9999_ns", "clat_stddev_ns", "lat_mean_ns", "read_bw_bytes", "write_bw_bytes", "io_bytes")


def failed(error: object) -> dict:
    """The columns of a run that failed: ``status`` failed, ``error`` why, and every number NaN, never 0 and never
    another run's: nothing was measured."""
    return {"status": "failed", "error": str(error), **{name: math.nan for name in NUMBERS}}


def with_defaults(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the columns of ``DEFAULTS`` present and filled where a row lacks them (older rows)."""
    frame = frame.copy()
    for name, default in DEFAULTS.items():
        if name == "too_short" and "runtime_s" in frame.columns:
            default = frame["runtime_s"].astype("float64") < truth.MIN_RUNTIME_S
        if name not in frame.columns:
            frame[name] = default
            continue
        fill = default if isinstance(default, pd.Series) else pd.Series(default, index=frame.index)
        frame[name] = [f if pd.isna(v) else v for v, f in zip(frame[name], fill)]
    return frame


def to_frame(rows: Iterable[Mapping]) -> pd.DataFrame:
    """Rows to a DataFrame with the documented dtypes; unknown columns are kept as they come, and the columns
    older rows lack are filled with their defaults (``DEFAULTS``)."""
    frame = with_defaults(pd.DataFrame(list(rows)))
    for name, (dtype, _) in ALL_COLUMNS.items():
        if name in frame.columns:
            frame[name] = frame[name].astype(dtype)
    ordered = [c for c in ALL_COLUMNS if c in frame.columns]
    return frame[ordered + [c for c in frame.columns if c not in ALL_COLUMNS]]


def rebuild_table(campaign_dir: Path) -> pd.DataFrame:
    """Rebuild ``results.parquet`` from ``rows.jsonl`` and return the table."""
    rows, _ = campaign_folder.read_rows(campaign_dir)
    frame = to_frame(rows)
    campaign_folder.write_table(campaign_dir, frame)
    return frame


def load(path: Path | str) -> pd.DataFrame:
    """Read a results table from Parquet or CSV (or a campaign directory); columns an older table lacks are
    filled with their defaults (``DEFAULTS``)."""
    frame, path = campaign_folder.read_table_file(path)
    return with_defaults(with_numbers(frame, str(path)))


def with_numbers(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """``frame`` with every documented number column (float64, int64 or Int64 in ``ALL_COLUMNS``) that was read as
    text (object, or pandas 3's str) turned into numbers: 1e9 written as "1e9" is still 1e9. A cell holding text
    that is not a number ("1.2GB") is refused, naming ``source``, the column, the value and its row: it would
    otherwise fail deep inside the analysis, or be read as missing. Blank cells and "nan" stay missing."""
    out = frame
    for name, (dtype, _) in ALL_COLUMNS.items():
        if dtype not in NUMBER_DTYPES or name not in frame.columns or pd.api.types.is_numeric_dtype(frame[name]):
            continue
        text = frame[name].astype("string").str.strip()
        numbers = pd.to_numeric(frame[name].astype(object), errors="coerce")
        bad = (numbers.isna() & ~text.fillna("").str.lower().isin(["", "nan"])).astype(bool)
        if bad.any():
            label = bad[bad].index[0]
            raise AnalysisError(f"results file {source!r}: column {name} holds {int(bad.sum())} value(s) that are "
                                f"not numbers ({text[label]!r} at row {label}); {name} is {dtype}: write a plain "
                                f"number such as 1200000000, not a unit")
        out = out.assign(**{name: numbers.astype("float64") if dtype == "float64" else numbers})
    return out


@dataclass
class CampaignResult:
    """What a campaign (on devices, directories, a VM or a cluster) returns: its table, its folder, where it ran
    (``backend``) and what its report must say (``notes``)."""

    table: pd.DataFrame | None
    directory: Path
    backend: str
    notes: list[str]

    @property
    def predictions(self) -> pd.DataFrame:
        """What each layout (a cluster: each host count) was predicted to deliver before it was built."""
        return campaign_folder.read_predictions(self.directory)


def schema_markdown() -> str:
    """The schema as a Markdown table, for the docs."""
    lines = ["| column | type | meaning |", "| --- | --- | --- |"]
    lines += [f"| `{n}` | {t} | {m} |" for n, (t, m) in ALL_COLUMNS.items()]
    return "\n".join(lines)
