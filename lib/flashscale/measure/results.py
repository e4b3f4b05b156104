"""The tidy results table: one row per fio point and repetition.

The columns in ``COLUMNS`` are a contract: later versions add columns, never rename these. Units are in the names
(``_bytes`` per second for bandwidth, ``_ns`` for latency, ``_s`` for seconds); ``bs`` is in bytes.

Rows are appended to ``rows.jsonl`` in the campaign directory as each point finishes, so nothing already measured is
lost if a run stops; ``results.parquet`` is rebuilt from those lines and can always be rebuilt again.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Mapping

import pandas as pd

from ..errors import AnalysisError
from ..paths import project_root

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
    "cap_bps": ("float64", "per-device bandwidth cap of the emulated array, bytes/s; NaN when uncapped"),
    "read_bw_bytes": ("float64", "read bandwidth, bytes/s"),
    "write_bw_bytes": ("float64", "write bandwidth, bytes/s"),
    "io_bytes": ("int64", "bytes moved during the measured run"),
    "lat_mean_ns": ("float64", "total latency mean, ns"),
    "clat_stddev_ns": ("float64", "completion latency standard deviation, ns"),
    "clat_p9999_ns": ("float64", "completion latency 99.99th percentile, ns"),
    "raw_dir": ("string", "directory holding job.fio, fio.json and env.json, relative to the campaign dir"),
    "fio_version": ("string", "fio version that measured the point"),
    "nrfiles": ("int64", "files per job of a metadata run (05_metadata); absent from data sweeps"),
    "started_at": ("string", "UTC time the run started, ISO 8601"),
}

ALL_COLUMNS = {**COLUMNS, **EXTRA_COLUMNS}

ROWS_FILE = "rows.jsonl"
TABLE_FILE = "results.parquet"


def append_rows(campaign_dir: Path, rows: Iterable[Mapping]) -> None:
    """Append rows to the campaign's line log; each line is flushed before the next point starts."""
    with open(Path(campaign_dir) / ROWS_FILE, "a") as fh:
        for row in rows:
            fh.write(json.dumps(dict(row), default=str) + "\n")
        fh.flush()


def to_frame(rows: Iterable[Mapping]) -> pd.DataFrame:
    """Rows to a DataFrame with the documented dtypes; unknown columns are kept as they come."""
    frame = pd.DataFrame(list(rows))
    for name, (dtype, _) in ALL_COLUMNS.items():
        if name in frame.columns:
            frame[name] = frame[name].astype(dtype)
    ordered = [c for c in ALL_COLUMNS if c in frame.columns]
    return frame[ordered + [c for c in frame.columns if c not in ALL_COLUMNS]]


def rebuild_table(campaign_dir: Path) -> pd.DataFrame:
    """Rebuild ``results.parquet`` from ``rows.jsonl`` and return the table."""
    campaign_dir = Path(campaign_dir)
    lines = (campaign_dir / ROWS_FILE).read_text().splitlines()
    frame = to_frame(json.loads(line) for line in lines if line.strip())
    frame.to_parquet(campaign_dir / TABLE_FILE, index=False)
    return frame


def tables_under(path: Path) -> list[Path]:
    """The results tables in ``path`` (itself, if it is one), at any depth, but not in a dated earlier run
    (a folder renamed ``<name>.<date>`` when a campaign was run again)."""
    path = Path(path)
    if path.is_file():
        return [path]
    found = sorted(path.glob(f"**/{TABLE_FILE}"))
    return [p for p in found if all("." not in part for part in p.relative_to(path).parts[:-1])]


def load(path: Path | str) -> pd.DataFrame:
    """Read a results table from Parquet or CSV (or a campaign directory)."""
    path = Path(path)
    if path.is_dir():
        path = path / TABLE_FILE
    if not path.exists():
        raise AnalysisError(f"results file {str(path)!r} does not exist")
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    if path.suffix in {".csv", ".txt"}:
        return pd.read_csv(path)
    raise AnalysisError(f"results file {str(path)!r}: expected a .parquet or .csv file")


def schema_markdown() -> str:
    """The schema as a Markdown table, for the docs."""
    lines = ["| column | type | meaning |", "| --- | --- | --- |"]
    lines += [f"| `{n}` | {t} | {m} |" for n, (t, m) in ALL_COLUMNS.items()]
    return "\n".join(lines)


def fresh_directory(folder: Path) -> Path:
    """``folder``, made empty: an earlier one of the same name is kept, renamed with its date."""
    if folder.exists():
        stamp = datetime.fromtimestamp(folder.stat().st_mtime, timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        folder.rename(folder.with_name(f"{folder.name}.{stamp}"))
    folder.mkdir(parents=True)
    return folder


def data_root(data_dir: str | Path) -> Path:
    """Where campaigns' results go: ``data_dir`` as given when absolute, else inside the checkout."""
    base = Path(data_dir)
    return base if base.is_absolute() else project_root() / base
