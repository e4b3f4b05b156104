"""File system metadata rates, mdtest-style: files created, statted and removed per second against the number of
files (seed 004, Figures 9-11), measured with fio's metadata engines.

    sweep_fields(ops, nrfiles)   the Sweep fields of such a stage (for ``studies.run_stage(..., sweep=...)``)
    from_fio(data)               the operation count, rate and latency of one run, from its fio.json
    details(outputs)             one row per measured run, from ``raw.fio_outputs`` of the measured rows
    by_files(rows)               the mean over repetitions, one row per (layout, op, numjobs, nrfiles)
    rate_table(points)           files per second, one column per op

Their findings in words are ``findings.metadata_sentences``; the numbers 05_metadata records,
``records.metadata``.

What fio 3.33's filecreate, filestat and filedelete engines report (checked by hand, then by the tests with real
fio on plain directories and on the emulated array):

* The engine does its operation when fio *opens* a file: ``open(O_CREAT|O_RDWR)``, ``stat()`` (``stat_type``
  chooses stat, lstat or statx) or ``unlink()``; the "I/O" that follows is fake (nothing is read or written).
  filestat and filedelete need their files to exist: fio lays them out (``filesize`` bytes each) during setup,
  which is not timed. filecreate's files stay empty.
* The operations are accounted in the direction of ``rw``: read by default (fio's default rw), write with
  ``rw=write``; the other direction stays 0. flashscale uses write for create and remove, read for stat
  (``fio_output.METADATA_OPS``), and ``fio_output.parse`` adds both directions anyway.
* In that direction ``total_ios`` is the number of files operated on (one fake I/O of ``filesize`` per file),
  ``clat_ns`` holds one sample per operation (its N equals ``total_ios``; mean and percentiles are the latency of
  the create, stat or unlink alone), ``lat_ns`` and ``slat_ns`` are empty (N = 0), ``io_bytes`` is files x
  ``filesize`` (accounted, not moved), ``runtime`` is the wall time of the loop in whole milliseconds (the
  longest job's with group_reporting), and ``iops`` = ``total_ios`` / ``runtime``: files per second over all
  jobs, mdtest's rate. ``bw_bytes`` is ``iops`` x ``filesize`` and means nothing here.
* Each job operates on ``nrfiles`` files (``jobname.jobnum.filenum`` in its directory), as long as ``size`` is
  at least ``nrfiles`` x ``filesize``: with a smaller ``size`` fio stops after ``size / filesize`` files.
* ``time_based`` must stay off: a time-based filecreate goes round its files again and counts opening an
  existing file as a create (14,794 "creates" of 2,000 files in 1 s); a time-based filedelete would fail.
* ``openfiles`` and ``file_service_type`` decide fio's own overhead. With ``openfiles=1`` and the default
  round-robin service fio searches its file list for the next file, so the time per file grows with ``nrfiles``
  (5,000 files in 0.8 s, 20,000 in 14.6 s, on tmpfs): a fall of the rate with the number of files that is fio's,
  not the file system's. With ``openfiles`` = ``nrfiles`` (fio's default) filecreate keeps every file open and
  stops at the open-file limit. ``openfiles=1`` with ``file_service_type=sequential`` costs the same per file at
  any count (about 80,000-120,000 creates/s on tmpfs from 5,000 to 100,000 files): flashscale uses that.
* ``unlink=1`` removes a filecreate or filestat job's files after the run, outside the measured time, so every
  run starts from an empty directory and repetitions and warm-ups measure creates, not opens.
* ``runtime`` has a resolution of 1 ms: a run shorter than about 100 ms has a coarse rate (stats are the
  fastest, so they need the most files); ``resolution`` says how coarse.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from ..measure import fio_output
from ..errors import AnalysisError, ConfigError
from .stats import intervals_by

# mdtest's words for the phases -> fio's engines, in mdtest's order.
ENGINES = {"create": "filecreate", "stat": "filestat", "remove": "filedelete"}
OPS = {engine: op for op, engine in ENGINES.items()}
KEYS = ["layout", "devices", "op", "numjobs", "nrfiles"]


def sweep_fields(ops: Sequence[str], nrfiles: Sequence[int]) -> dict:
    """The ``Sweep`` fields of a metadata stage: fio's engines for ``ops`` (create, stat, remove) as its rw and
    ``nrfiles`` (files per job) as its fifth axis."""
    if isinstance(ops, str) or not ops:
        raise ConfigError(f"ops={ops!r} must list some of {', '.join(ENGINES)}")
    unknown = [op for op in ops if op not in ENGINES]
    if unknown:
        raise ConfigError(f"ops {unknown!r}: choose from {', '.join(ENGINES)}")
    return {"rw": tuple(ENGINES[op] for op in ops), "nrfiles": tuple(nrfiles)}


def from_fio(data: dict) -> dict:
    """One metadata run's numbers, all fio's own: ``ops`` (total_ios), ``latency_samples`` (clat N),
    ``runtime_ms``, ``rate`` (fio's iops: ops per second of wall time over all jobs), ``clat_mean_ns`` and
    ``clat_p99_ns`` (the operation alone) and ``resolution`` (1 ms / runtime: how coarse the rate is)."""
    jobs = data.get("jobs") or []
    if len(jobs) != 1:
        raise AnalysisError(f"expected one group-reported job entry, found {len(jobs)}")
    job = jobs[0]
    side = job["read"] if job["read"]["total_ios"] >= job["write"]["total_ios"] else job["write"]
    runtime_ms = int(side["runtime"])
    clat = side.get("clat_ns", {})
    engine = {**data.get("global options", {}), **job.get("job options", {})}.get("ioengine", "")
    return {"engine": engine, "ops": int(side["total_ios"]),
            "latency_samples": int(clat.get("N", 0)), "runtime_ms": runtime_ms, "rate": float(side["iops"]),
            "clat_mean_ns": float(clat.get("mean", math.nan)),
            "clat_p99_ns": float(clat.get("percentile", {}).get(fio_output.PERCENTILES[2], math.nan)),
            "resolution": 1.0 / runtime_ms if runtime_ms > 0 else math.inf}


def _flagged(value) -> bool:
    """A row's bool flag as a results table holds it: True (or numpy's); blank, NaN or absent: False."""
    return isinstance(value, (bool, np.bool_)) and bool(value)


def details(outputs: Iterable[tuple[Any, dict]]) -> pd.DataFrame:
    """One row per measured run of a metadata stage, from ``raw.fio_outputs`` of its measured rows: layout,
    devices, ``op`` (create, stat, remove), numjobs, nrfiles, rep, ``files`` (nrfiles x numjobs, what the run
    should have touched), ``from_fio`` of its fio.json, ``complete`` (fio counted exactly ``files`` operations and
    as many latency samples), ``too_short`` (the results table's flag: it ran under ``truth.MIN_RUNTIME_S``,
    fio's clock, no rate) and
    ``latency_rate`` (numjobs / mean latency: the rate if fio's own time per file
    were nil)."""
    rows = []
    for run, data in outputs:
        if run.rw not in OPS:
            raise AnalysisError(f"rw={run.rw!r} at {run.raw_dir} is not a metadata engine ({', '.join(OPS)})")
        numbers = from_fio(data)
        if numbers["engine"] != run.rw:
            raise AnalysisError(f"{run.raw_dir}/fio.json was run by ioengine {numbers['engine']!r}, not {run.rw!r}")
        files = int(run.nrfiles) * int(run.numjobs)
        rows.append({"layout": run.layout, "devices": int(run.devices), "op": OPS[run.rw],
                     "numjobs": int(run.numjobs), "nrfiles": int(run.nrfiles), "rep": int(run.rep), "files": files,
                     **numbers, "complete": numbers["ops"] == files == numbers["latency_samples"],
                     "too_short": _flagged(getattr(run, "too_short", False)),
                     "latency_rate": int(run.numjobs) * 1e9 / numbers["clat_mean_ns"]})
    return pd.DataFrame(rows)


def by_files(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (layout, devices, op, numjobs, nrfiles), in mdtest's op order: the mean rate (``rate_lo``, ``rate_hi``:
    the 95% interval of its mean, ``stats.intervals_by``; NaN where every repetition was ``too_short``: too fast to
    measure at this size), latency and runtime over repetitions, ``reps``, ``too_short`` and ``complete`` (every
    repetition counted exactly its files)."""
    if rows.empty:
        raise AnalysisError("no metadata runs to summarize")
    timed = rows.assign(rate=rows["rate"].where(~rows["too_short"].astype(bool)))  # a run too short is no rate
    grouped = timed.groupby(KEYS, sort=True, observed=True)
    out = grouped.agg(files=("files", "first"), too_short=("too_short", "all"), rate=("rate", "mean"),
                      rate_std=("rate", "std"),
                      reps=("rate", "size"), latency_rate=("latency_rate", "mean"),
                      clat_mean_ns=("clat_mean_ns", "mean"), clat_p99_ns=("clat_p99_ns", "mean"),
                      runtime_ms=("runtime_ms", "mean"), resolution=("resolution", "max"),
                      complete=("complete", "all")).reset_index()
    out = out.merge(intervals_by(timed, KEYS, ["rate"]), on=KEYS, how="left", validate="one_to_one")
    order = out["op"].map({op: i for i, op in enumerate(ENGINES)})
    return out.assign(_order=order).sort_values(["_order", *KEYS], kind="mergesort").drop(columns="_order") \
        .reset_index(drop=True)


def rate_table(points: pd.DataFrame) -> pd.DataFrame:
    """Files per second, one row per (layout, devices, numjobs, files) and one column per op (seed 004's three
    figures in one table)."""
    wide = points.pivot_table(index=["layout", "devices", "numjobs", "files"], columns="op", values="rate",
                              dropna=False)  # an op too fast to time at every size: its column, NaN
    return wide[[op for op in ENGINES if op in wide.columns]]
