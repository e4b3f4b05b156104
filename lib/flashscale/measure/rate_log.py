"""What fio logged of a run's rate as it ran, and the stalls in it. Every timed run a campaign measures on its own
machine logs its bandwidth once a second (``logged``: fio's ``write_bw_log`` and ``log_avg_msec``, one log a job,
in the run's folder), and its row carries what the logs show (``evidence``), its jobs summed second by second:

    rate_seconds     the run's full seconds in the logs (the last, which may be partial, left out; fio logs from
                     the end of the ramp, a run started ahead from its gate)
    stall_s          how many of them fell under ``STALL`` (half) of the run's median second: a stall
    rate_low         the slowest full second against that median (0.4: 40% of it)
    rate_low_at_s    when it came, in seconds from the run's start

A stall is flagged, never dropped: the run keeps its row and its rate, and the report names it with this evidence
(``analysis.evidence.stall_sentences``). Half the median, because a run's seconds at a steady rate move by a few per
cent (0.1-0.5% on the capped emulated array; under 10% on the devices of the studies we read), so a second under
half of it is a pause, not noise, and the median, because a stall shorter than half the run leaves it where the
device ran. A run slower all through is no stall here: ``analysis.outliers`` holds each run to the others of its
point. The runs of a batch (one fio process, stonewalled) log each into its own folder, from its own start
(measured: the second run's log began at 1,000 ms). The evidence is NaN where no log was kept: a metadata workload,
a run imported from elsewhere; ``stall_s`` is NaN too for a run shorter than ``LEAST_SECONDS`` full seconds.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from . import raw
from .fio import FioJob

INTERVAL_MS = 1000
STALL = 0.5
LEAST_SECONDS = 3  # full seconds a run needs for its median to say where it ran
LOG_FILES = 4096  # at most this many logs are read from one run's folder (one a job)
LOG_BYTES = 64 * 2**20  # and at most this many bytes of each: a day's log of one job is under 2 MB
COLUMNS = ("rate_seconds", "stall_s", "rate_low", "rate_low_at_s")
NONE = dict.fromkeys(COLUMNS, float("nan"))


def logged(job: FioJob) -> FioJob:
    """``job`` with its bandwidth logged every ``INTERVAL_MS`` into its run's folder; as it is where it logs
    already (a sweep's own ``write_bw_log``), where it is not timed (a precondition) or is a metadata workload."""
    if job.is_metadata or not job.time_based or "write_bw_log" in dict(job.extra):
        return job
    return replace(job, extra=(*job.extra, ("write_bw_log", raw.LOG_PREFIX), ("log_avg_msec", str(INTERVAL_MS))))


def interval_ms(job: FioJob) -> int | None:
    """How often ``job`` logs its bandwidth, ms; None where it does not (or at a ``log_avg_msec`` that is no whole
    positive number: a sweep's own option, not ours to read)."""
    options = dict(job.extra)
    if "write_bw_log" not in options:
        return None
    value = options.get("log_avg_msec", "500")  # fio's default
    return int(value) if value.isdigit() and int(value) > 0 else None


def seconds(folder: Path, every_ms: int) -> pd.Series:
    """The run's rate per interval of ``every_ms``, its jobs' logs in ``folder`` summed (bytes/s), indexed by the
    interval's end in seconds; empty where none was left. A log that is no fio bandwidth log is read as none."""
    parts = []
    for path in sorted(Path(folder).glob(f"{raw.LOG_PREFIX}_bw.*.log"))[:LOG_FILES]:
        if not path.is_file() or path.is_symlink() or path.stat().st_size > LOG_BYTES:
            continue
        try:
            log = raw.read_bw_log(path)
        except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError):
            continue
        parts.append(log.assign(slot=(log["time_ms"] / every_ms).round().astype("int64")))
    if not parts:
        return pd.Series(dtype="float64")
    summed = pd.concat(parts).groupby("slot", sort=True)["bw_bytes"].sum()
    return pd.Series(summed.to_numpy(dtype="float64"), index=summed.index.to_numpy() * every_ms / 1000.0)


def evidence(folder: Path, every_ms: int | None) -> dict[str, float]:
    """The row's columns (``COLUMNS``) from the logs the run left in ``folder``, logged every ``every_ms``."""
    if every_ms is None:
        return dict(NONE)
    rate = seconds(folder, every_ms)
    if rate.empty:
        return dict(NONE)
    full = rate.iloc[:-1]
    out = {**NONE, "rate_seconds": float(full.size * every_ms / 1000.0)}
    median = float(full.median())
    if full.size < LEAST_SECONDS or not median > 0:
        return out
    low = int(np.argmin(full.to_numpy()))
    return {**out, "stall_s": float((full < STALL * median).sum() * every_ms / 1000.0),
            "rate_low": float(full.iloc[low] / median), "rate_low_at_s": float(full.index[low])}
