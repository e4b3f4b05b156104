"""What a campaign left on disk beside its table, read back: the one reader of a run's raw files (the folder
around them, campaign.json and the rest, is ``measure.campaign_folder``'s).

    <campaign directory>/
        results.parquet                     the tidy table (``gather`` reads those of many campaigns)
        raw/<layout>/<point>/rep<k>/        one folder per run, named by its row's ``raw_dir``:
            fio.json                        fio's own output (``fio_outputs``)
            env.json                        the machine, targets and cgroup of the run (``run_environments``)
            bw_bw.<job>.log                 bandwidth logs, when the sweep asked for them (``bw_logs``)

Each reader takes the rows to read (a results table, usually its measured rows) and yields each row with what
its run left, so the analysis that follows is a pure function of what these return. ``within`` names a column
whose value is a sub-folder of ``directory`` per row (``studies.run_variants`` keeps each variant in its own).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, Sequence

import pandas as pd

from . import campaign_folder, fio_output, results
from .campaign_folder import RUN_ENV_JSON
from ..errors import AnalysisError

FIO_JSON = "fio.json"
LOG_PREFIX = "bw"  # fio's write_bw_log prefix: its logs are <prefix>_bw.<job>.log


def run_folder(directory: str | Path, row: Any, within: str | None = None) -> Path:
    """The folder of one run: ``directory[/<row.within>]/<row.raw_dir>``; AnalysisError when it resolves outside
    ``directory`` (a table is input too: none of its values names a path outside its campaign)."""
    if within and not hasattr(row, within):
        raise AnalysisError(f"the rows have no {within} column naming each run's sub-folder of {str(directory)!r}")
    base = Path(directory) / str(getattr(row, within)) if within else Path(directory)
    folder = base / str(row.raw_dir)
    if not folder.resolve().is_relative_to(Path(directory).resolve()):
        raise AnalysisError(f"a row's raw_dir {str(row.raw_dir)!r:.80} lies outside {str(directory)!r}: not read")
    return folder


def fio_outputs(directory: str | Path, rows: pd.DataFrame, within: str | None = None) -> Iterator[tuple[Any, dict]]:
    """Per row (``itertuples``): the row and its run's fio.json, parsed by ``fio_output.load_output``."""
    for row in rows.itertuples():
        path = run_folder(directory, row, within) / FIO_JSON
        yield row, fio_output.load_output(path.read_text(), source=str(path))


def run_environments(directory: str | Path, rows: pd.DataFrame,
                     within: str | None = None) -> Iterator[tuple[Any, dict]]:
    """Per row: the row and its run's env.json (environment, ``targets``, layout, cgroup and the row itself)."""
    for row in rows.itertuples():
        yield row, json.loads((run_folder(directory, row, within) / RUN_ENV_JSON).read_text())


def read_bw_log(path: Path) -> pd.DataFrame:
    """One fio bandwidth log: ``time_ms`` and ``bw_bytes`` (fio logs KiB/s)."""
    frame = pd.read_csv(path, header=None, usecols=[0, 1], names=["time_ms", "kib_s"], skipinitialspace=True)
    return pd.DataFrame({"time_ms": frame["time_ms"].astype("int64"), "bw_bytes": frame["kib_s"] * 1024.0})


def bw_logs(directory: str | Path, rows: pd.DataFrame) -> Iterator[tuple[Any, pd.DataFrame]]:
    """Per row and per bandwidth log its run left (one per fio job): the row and ``read_bw_log`` of that log."""
    for row in rows.itertuples():
        for path in sorted(run_folder(directory, row).glob(f"{LOG_PREFIX}_bw.*.log")):
            yield row, read_bw_log(path)


def _label(source: Path, table: Path) -> str:
    """How a table found under ``source`` is named: the source's name, then its folder below the source."""
    if table.parent == source or source.is_file():
        return source.name
    return f"{source.name}/{table.parent.relative_to(source)}"


def gather(sources: Sequence[str | Path], skip_missing: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every results table under ``sources`` (tables, campaign or study directories; earlier dated runs only when
    named themselves): (their rows with a ``source`` column, one row per table with where it came from, its host,
    kernel and fio version). A source that does not exist is an error unless ``skip_missing``."""
    frames, where = [], []
    for source in map(Path, sources):
        if not source.exists() and skip_missing:
            continue
        if not source.exists():
            raise AnalysisError(f"campaign source {str(source)!r} does not exist")
        for table in campaign_folder.tables_under(source):
            label, frame = _label(source, table), results.load(table)
            frames.append(frame.assign(source=label))
            where.append({"source": label, "rows": len(frame), "path": str(table),
                          **campaign_folder.campaign_environment(table.parent)})
    if not frames:
        return pd.DataFrame(), pd.DataFrame(columns=["source", "rows", "path", "hostname", "kernel", "fio"])
    return pd.concat(frames, ignore_index=True), pd.DataFrame(where)
