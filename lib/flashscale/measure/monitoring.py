"""Every run monitored: the devices under its targets and the CPUs, sampled while it runs, kept beside its raw files.

    with monitoring.sampling(campaign_dir, raw_dir, layout.targets, layout=layout.name, point=..., rep=...):
        fio.run(...)

``system.monitor.Sampler`` samples every device under the targets (the members of an array included: the loop
devices under a btrfs) and the CPUs once a second. Afterwards the series is written to ``<raw_dir>/monitor.jsonl``
and the machine's settings to ``<raw_dir>/machine.json`` (``system.monitor.facts``); the series, with what ran
(``raw_dir``, ``layout``, ``point``, ``rep``, ``workload``), is appended to the campaign's ``monitor.jsonl``, from
which ``monitor.parquet`` (one row per sample and device, ``device`` column; ``MONITOR_COLUMNS``) is rebuilt.
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

import pandas as pd

from . import campaign_folder
from ..system import monitor
from ..system.devices import System

SERIES_FILE = campaign_folder.MONITOR_SERIES  # a run's samples beside its raw files, and the campaign's, labelled
FACTS_FILE = "machine.json"
INTERVAL_S = 1.0

MONITOR_COLUMNS: dict[str, str] = {
    "raw_dir": "the run's raw directory, relative to the campaign dir",
    "layout": "the layout under test", "point": "the run's point (fio) or metric group (a workload)",
    "rep": "repetition", "workload": "fio, bonnie++, pgbench or transfer",
    "device": "kernel name of a device under the layout (the members of an array too); None: no block device",
    "t_s": "seconds since the run started, at the end of the interval", "interval_s": "length of the interval, s",
    "at": "UTC time at the end of the interval, seconds since the epoch",
    "read_bw_bytes": "bytes/s read", "write_bw_bytes": "bytes/s written", "read_iops": "reads/s",
    "write_iops": "writes/s", "avg_request_bytes": "bytes per request (iostat areq-sz); NaN when none completed",
    "queue_depth": "average requests in the queue (iostat aqu-sz)",
    "util": "fraction of the interval the device was busy (iostat %util / 100)",
    "cpu_user": "user + nice share of all CPUs", "cpu_system": "system + irq + softirq share of all CPUs",
    "cpu_iowait": "iowait share of all CPUs", "cpu_idle": "idle share of all CPUs",
    "cpu_busiest": "non-idle share of the busiest CPU",
}


def devices_of(targets: Sequence[str], system: System) -> list[str]:
    """Every block device under the targets, members of arrays included."""
    return sorted({name for target in targets for name in system.devices_under(target)})


@contextmanager
def sampling(campaign_dir: Path, raw_dir: Path, targets: Sequence[str], *, system: System | None = None,
             interval_s: float = INTERVAL_S, **what) -> Iterator[monitor.Sampler]:
    """Sample while the block runs; then keep the series (``what``: layout, point, rep, workload) and facts, and
    append them to the campaign's ``monitor.jsonl`` (``rebuild_table`` makes the table once the campaign ends)."""
    system = system or System()
    devices = devices_of(targets, system)
    with monitor.Sampler(devices, system, interval_s) as sampler:
        yield sampler
    folder = Path(campaign_dir) / raw_dir
    folder.mkdir(parents=True, exist_ok=True)
    monitor.write_series(sampler.rows, folder / SERIES_FILE)
    (folder / FACTS_FILE).write_text(json.dumps(monitor.facts(devices, system), indent=1))
    labelled = [{"raw_dir": str(raw_dir), "workload": "fio", **what, **row} for row in sampler.rows]
    campaign_folder.append_monitor(campaign_dir, labelled)


def rebuild_table(campaign_dir: Path) -> pd.DataFrame:
    """``monitor.parquet`` rebuilt from the campaign's ``monitor.jsonl``; the table."""
    rows = campaign_folder.read_monitor(campaign_dir)
    frame = pd.DataFrame(rows, columns=list(MONITOR_COLUMNS) if not rows else None)
    for name in ("layout", "point", "workload", "device", "raw_dir"):
        if name in frame.columns:
            frame[name] = frame[name].astype("string")
    numeric = [c for c in MONITOR_COLUMNS if c in frame.columns and c not in
               ("raw_dir", "layout", "point", "workload", "device", "rep")]
    frame[numeric] = frame[numeric].astype("float64")
    campaign_folder.write_monitor_table(campaign_dir, frame)
    return frame


def load(campaign_dir: Path) -> pd.DataFrame:
    """The campaign's monitoring table (empty, with its columns, when nothing was monitored)."""
    frame = campaign_folder.read_monitor_table(campaign_dir)
    return frame if frame is not None else pd.DataFrame(columns=list(MONITOR_COLUMNS))
