"""One file shared by every job against a file per job: IOR's N-to-1 against N-to-N (seed 003), with fio.

    variants(modes)                  the stage's variants for ``studies.run_variants`` (one campaign per mode)
    details(outputs, environments)   one row per measured run: bytes moved against expected, the devices its
                                     files can reach and their cap (fio.json's size, env.json's targets, as
                                     ``raw.fio_outputs`` and ``raw.run_environments`` read them)
    summary(rows)                    the mean over repetitions per (mode, layout, devices, rw, bs, numjobs)
    versus(points)                   N-to-1 against N-to-N at the same point: ratio and cost of sharing

Their findings in words are ``findings.shared_file_sentences``; the numbers 06_shared_file records,
``records.shared_file``.

How the two modes are run (``fio.FioJob``), checked by hand and by the tests with real fio:

* Both move a fixed amount, as IOR does (``time_based=0``, no ramp): each job reads or writes its ``size``
  bytes (``FILE_SIZE``, IOR's block size) once in ``bs`` transfers, and fio runs until every job has. fio's
  ``io_bytes`` is then exactly numjobs x size and its bandwidth is io_bytes / the longest job's run time.
* N-to-N: each job its own file (``jobname.jobnum.0``), jobs spread evenly over the layout's targets (on jbod,
  over its file systems).
* N-to-1: every job in one file, ``flashscale-shared``, on the first target, with ``offset_increment`` = size:
  job k works in bytes [k x size, (k + 1) x size), IOR's segmented layout. fio lays the file out to numjobs x
  size before a read. On a layout with one file system per device (jbod) the shared file lives on one device:
  that is what N-to-1 means there, and the other devices stay idle.
* Writes end with ``end_fsync=1`` (counted in the run time, as IOR with -e), so no dirty data of a write run is
  left for the read run that follows; with direct I/O it costs nothing.
* The emulated caps hold over a run, except that the kernel's throttle lets up to one slice (100 ms at the cap)
  through at its start without delay: a fixed-size run finishes 50-70 ms sooner than its bytes / the cap sum
  (measured with 32 to 256 MiB per job), so a run of a fraction of a second comes out up to 10% above the cap
  sum. ``within_caps`` allows for that and no more: a run is within its caps when it took at least
  bytes / cap sum - ``THROTTLE_SLICE_S``.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

import pandas as pd

from .baseline_and_tax import POINT
from ..errors import AnalysisError, ConfigError
from .stats import intervals_by
from ..measure.truth import THROTTLE_SLICE_S  # blk-throttle's slice: what it may let through up front

MODES = {"n-to-n": {"shared_file": False, "time_based": False},
         "n-to-1": {"shared_file": True, "time_based": False}}
LABEL = {"n-to-n": "N-to-N", "n-to-1": "N-to-1"}
JOB_OPTIONS = (("end_fsync", "1"),)
KEYS = ["variant", *POINT]


def variants(modes: Sequence[str]) -> dict:
    """The Sweep fields of each mode asked for (n-to-n, n-to-1), in the order given."""
    if isinstance(modes, str) or not modes:
        raise ConfigError(f"modes={modes!r} must list some of {', '.join(MODES)}")
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise ConfigError(f"modes {unknown!r}: choose from {', '.join(MODES)}")
    return {mode: MODES[mode] for mode in modes}


def _reach(run, targets: int) -> tuple[int, float]:
    """Targets the run's files are on, and the devices behind them."""
    used = 1 if run.variant == "n-to-1" else min(int(run.numjobs), targets)
    return used, int(run.devices) * used / targets


def details(outputs: Iterable[tuple[Any, dict]], environments: Iterable[tuple[Any, dict]]) -> pd.DataFrame:
    """One row per measured run of ``run_variants`` (its ``variant`` column says the mode), from
    ``raw.fio_outputs`` and ``raw.run_environments`` of its measured rows (``within="variant"``): the point,
    ``size`` (bytes per job, from fio's own record), ``expected_bytes`` = numjobs x size, ``io_bytes``,
    ``bytes_ok``, ``targets``, ``targets_used``, ``reach_devices``, ``ceiling_bytes`` (their cap sum; NaN for a
    run held to no cap: ``cap_bps`` is set where fio ran in the place's throttled cgroup), ``fraction`` =
    bandwidth / ceiling, ``min_runtime_s`` = expected_bytes / ceiling - one
    throttle slice and ``within_caps`` = runtime_s >= min_runtime_s (True when uncapped)."""
    rows = []
    for (run, data), (same, env) in zip(outputs, environments, strict=True):
        if "variant" not in run._fields:
            raise AnalysisError("the table has no variant column: pass the table studies.run_variants returned")
        if same.raw_dir != run.raw_dir or same.variant != run.variant:
            raise AnalysisError(f"fio output of {run.raw_dir} paired with the environment of {same.raw_dir}")
        size = int(data["global options"]["size"])
        targets = len(env["targets"])
        used, reach = _reach(run, targets)
        ceiling = float(run.cap_bps) * reach  # NaN where the run was held to no cap
        rows.append({**{k: getattr(run, k) for k in KEYS}, "rep": run.rep, "bw_bytes": run.bw_bytes,
                     "runtime_s": run.runtime_s, "size": size, "expected_bytes": int(run.numjobs) * size,
                     "io_bytes": int(run.io_bytes), "targets": targets, "targets_used": used,
                     "reach_devices": reach, "ceiling_bytes": ceiling, "fraction": run.bw_bytes / ceiling})
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out["bytes_ok"] = out["io_bytes"] == out["expected_bytes"]
    out["min_runtime_s"] = out["expected_bytes"] / out["ceiling_bytes"] - THROTTLE_SLICE_S
    out["within_caps"] = out["min_runtime_s"].isna() | (out["runtime_s"] >= out["min_runtime_s"])
    return out


def summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (variant, layout, devices, rw, bs, numjobs, iodepth): mean bandwidth (``bw_lo``, ``bw_hi``: the 95%
    interval of its mean, ``stats.intervals_by``) and run time over repetitions, ``reps``, ``bytes_ok`` (every
    repetition moved exactly its bytes), reach, ceiling and ``fraction``."""
    if rows.empty:
        raise AnalysisError("no shared-file runs to summarize")
    grouped = rows.groupby(KEYS, sort=True, observed=True)
    out = grouped.agg(bw_bytes=("bw_bytes", "mean"), bw_std=("bw_bytes", "std"), reps=("bw_bytes", "size"),
                      runtime_s=("runtime_s", "mean"), expected_bytes=("expected_bytes", "first"),
                      bytes_ok=("bytes_ok", "all"), targets=("targets", "first"),
                      targets_used=("targets_used", "first"), reach_devices=("reach_devices", "first"),
                      ceiling_bytes=("ceiling_bytes", "first"), fraction=("fraction", "max"),
                      within_caps=("within_caps", "all")).reset_index()
    bounds = intervals_by(rows, KEYS, ["bw_bytes"]).rename(columns={"bw_bytes_lo": "bw_lo", "bw_bytes_hi": "bw_hi"})
    return out.merge(bounds, on=KEYS, how="left", validate="one_to_one")


def versus(points: pd.DataFrame) -> pd.DataFrame:
    """Per point measured both ways: ``n_to_n_bw_bytes``, ``n_to_1_bw_bytes``, ``ratio`` = N-to-1 / N-to-N and
    ``cost`` = 1 - ratio (what sharing one file costs; negative when it is faster)."""
    columns = [*POINT, "n_to_n_bw_bytes", "n_to_1_bw_bytes", "ratio", "cost"]
    wide = points.pivot_table(index=POINT, columns="variant", values="bw_bytes", observed=True)
    if not {"n-to-n", "n-to-1"} <= set(wide.columns):
        return pd.DataFrame(columns=columns)
    wide = wide.dropna(subset=["n-to-n", "n-to-1"]).reset_index()
    wide = wide.rename(columns={"n-to-n": "n_to_n_bw_bytes", "n-to-1": "n_to_1_bw_bytes"})
    wide["ratio"] = wide["n_to_1_bw_bytes"] / wide["n_to_n_bw_bytes"]
    wide["cost"] = 1.0 - wide["ratio"]
    wide.columns.name = None
    return wide[columns]
