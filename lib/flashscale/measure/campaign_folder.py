"""The campaign folder: the one module that reads and writes its files, for every place a campaign runs (the
emulated array, directories, a test bed, the VM lab, a cluster); ``flashscale import``'s folder
(``measure.fio_import.importer``) names its own campaign.json and notes.json and writes them through ``write_atomically``.

    <DATA_DIR>/<campaign>/
        campaign.json          the run's id, its spec, the machine's environment (with what its place said it
                               measured on), the notes at its start, each resume (``write_campaign``,
                               ``read_campaign``, ``add_resumed``, ``campaign_facts``, ``campaign_environment``)
        rows.jsonl             one line per run, appended as each finishes (``append_rows``, ``read_rows``,
                               ``rewrite_rows``, ``drop_torn_line``)
        rows.set-aside.jsonl   rows of runs measured again on resume (``set_aside``)
        results.parquet        the table, rebuilt from rows.jsonl (``write_table``; ``results.rebuild_table``)
        predictions.csv        what each layout should deliver, stated before it was built (``append_predictions``)
        notes.json             what the report must say, written when the campaign finishes (``write_notes``)
        harness.json           what the harness measured uncapped and the caps it held (``write_harness``)
        progress.json          the layouts whose sweep ran to the end (``layouts_done``, ``mark_layout_done``)
        progress.log           each run's start and end (``progress_log``: ``measure.progress`` writes the lines)
        monitor.jsonl          every run's device and CPU samples (``append_monitor``), monitor.parquet their table
        raw/<layout>/<point>/rep<k>/   one folder per run (``raw_dir``): fio's own files (``job.fio``,
                               ``fio.json``: ``measure.fio`` has fio write them, ``measure.raw`` reads them back)
                               and the row with its environment (``env.json``: ``write_run_environment``)

Nothing here knows what a row means (``measure.results`` holds the table's columns) nor where a campaign ran.
"""
from __future__ import annotations

import errno
import json
import logging
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Mapping

import pandas as pd

from ..errors import AnalysisError, FlashscaleError
from ..paths import project_root
from .. import faults

log = logging.getLogger("flashscale.results")

CAMPAIGN_JSON = "campaign.json"
ROWS_FILE = "rows.jsonl"
SET_ASIDE_FILE = "rows.set-aside.jsonl"
TABLE_FILE = "results.parquet"
PREDICTIONS_FILE = "predictions.csv"
NOTES_JSON = "notes.json"
HARNESS_JSON = "harness.json"
PROGRESS_JSON = "progress.json"
PROGRESS_LOG = "progress.log"
MONITOR_SERIES = "monitor.jsonl"
MONITOR_TABLE = "monitor.parquet"
RAW = "raw"
JOB_FILE = "job.fio"
RUN_ENV_JSON = "env.json"
PREDICTION_TEXT = ("layout", "rw", "predicted_limit", "predicted_close", "predicted_note", "predicted_at",
                   "predicted_unknown")


def data_root(data_dir: str | Path) -> Path:
    """Where campaigns' folders go: ``data_dir`` as given when absolute, else inside the checkout."""
    base = Path(data_dir)
    return base if base.is_absolute() else project_root() / base


def fresh_directory(folder: Path) -> Path:
    """``folder``, made empty: an earlier one of the same name is kept, renamed with its date."""
    if folder.exists():
        stamp = datetime.fromtimestamp(folder.stat().st_mtime, timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        folder.rename(folder.with_name(f"{folder.name}.{stamp}"))
    folder.mkdir(parents=True)
    return folder


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` at once: written beside it as ``.<name>.tmp``, then renamed over it, so a
    reader (or a run killed meanwhile) sees the old file or the new one, never half of either."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    tmp.replace(path)


def _json(value) -> str:
    return json.dumps(value, indent=1, default=str)


# campaign.json
def write_campaign(directory: Path, run_id: str, spec: dict, environment: dict, notes: list[str] | None = None,
                   **more) -> None:
    """``campaign.json``: the run's id, its ``spec`` (as ``asdict`` gives it), the ``environment`` it ran in, the
    ``notes`` at its start and whatever ``more`` a campaign keeps there."""
    record = {"run_id": run_id, "spec": spec, "environment": environment,
              **({"notes": notes} if notes is not None else {}), **more}
    write_atomically(Path(directory) / CAMPAIGN_JSON, _json(record))


def read_campaign(folder: Path) -> dict | None:
    """A campaign folder's ``campaign.json``; None when there is none (or it cannot be read)."""
    try:
        return json.loads((Path(folder) / CAMPAIGN_JSON).read_text())
    except (OSError, ValueError):
        return None


def add_resumed(folder: Path, before: dict, entry: dict) -> None:
    """``campaign.json`` as it was (``before``), with ``entry`` (when, the environment, what changed) added to the
    runs that resumed it."""
    write_atomically(Path(folder) / CAMPAIGN_JSON, _json({**before, "resumed": [*before.get("resumed", []), entry]}))


def campaign_environment(campaign_dir: str | Path) -> dict:
    """The host, kernel and fio version a campaign recorded in its campaign.json (blank when it has none)."""
    env = (read_campaign(campaign_dir) or {}).get("environment", {})
    return {"hostname": env.get("hostname", ""), "kernel": env.get("kernel", ""), "fio": env.get("fio", "")}


def campaign_facts(campaign_json: str | Path) -> dict:
    """When, where and on what a campaign ran, from its campaign.json: ``run_id`` (UTC), host, kernel, fio,
    backend (loop, directory, testbed, vm) and what its place said it measured on (``place``: blank for a campaign
    recorded before places said so), devices, the caps in bytes/s (0: none) and each device's factor of them
    (``cap_scale``, empty: every device at the cap), the test bed file, QEMU's version where a VM ran (else None),
    the ``software`` that measured (``system.provenance.software``; empty for a campaign recorded before it was
    kept) and, for a folder ``flashscale import`` made (backend ``imported``), how many imports went into it."""
    info = json.loads(Path(campaign_json).read_text())
    env, spec = info.get("environment", {}), info.get("spec", {})
    array = spec.get("array", {})
    return {"run_id": info.get("run_id", ""), "hostname": env.get("hostname", ""), "kernel": env.get("kernel", ""),
            "fio": env.get("fio", ""), "backend": env.get("backend", ""), "place": env.get("place", ""),
            "testbed": spec.get("testbed"), "devices": spec.get("use_devices") or array.get("devices"),
            "read_bps": array.get("read_bps", 0), "write_bps": array.get("write_bps", 0),
            "cap_scale": list(array.get("cap_scale") or []),
            "qemu": env.get("qemu"), "software": env.get("software") or {},
            "imports": len(info.get("imports") or [])}


def _undated(found: list[Path], path: Path) -> list[Path]:
    """``found`` under ``path`` but not in a dated earlier run (a folder renamed ``<name>.<date>``)."""
    return [p for p in found if all("." not in part for part in p.relative_to(path).parts[:-1])]


def campaign_jsons(path: str | Path) -> list[Path]:
    """The campaign.json of every campaign in ``path`` (a campaign, a stage of several, a study; a results table's
    own), at any depth, but not in a dated earlier run; none when it is absent."""
    path = Path(path)
    if path.is_file():
        path = path.parent
    return _undated(sorted(path.glob(f"**/{CAMPAIGN_JSON}")), path) if path.is_dir() else []


# rows.jsonl
def _lines(rows: Iterable[Mapping]) -> str:
    return "".join(json.dumps(dict(row), default=str) + "\n" for row in rows)


def append_rows(campaign_dir: Path, rows: Iterable[Mapping]) -> None:
    """Append rows to the campaign's line log; each line is flushed before the next point starts. A write the disk
    refuses (full, quota) leaves the file as it was, every earlier row intact, and raises FlashscaleError naming the
    directory and its free space."""
    path = Path(campaign_dir) / ROWS_FILE
    data = _lines(rows).encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    before = os.fstat(fd).st_size
    try:
        if faults.armed_at("row-half-written"):  # a test's kill -9 half-way through the line
            data = data[os.write(fd, data[:len(data) // 2]):]
            faults.reached("row-half-written")
        while data:  # unbuffered: each write reaches the file or fails here, never later at close
            data = data[os.write(fd, data):]
    except OSError as exc:
        os.ftruncate(fd, before)  # no torn line: the file ends with the last whole row
        raise _disk_error(Path(campaign_dir), exc) from None
    finally:
        os.close(fd)


def _disk_error(folder: Path, exc: OSError) -> FlashscaleError:
    free = shutil.disk_usage(folder).free if folder.is_dir() else 0
    why = "the disk is full" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else exc.strerror
    return FlashscaleError(f"cannot write results in {folder}: {why} ({free:,} bytes free); every row written "
                           f"before is kept in {folder / ROWS_FILE}")


def has_rows(campaign_dir: Path) -> bool:
    """Whether the campaign wrote any row yet."""
    return (Path(campaign_dir) / ROWS_FILE).exists()


def read_rows(campaign_dir: Path) -> tuple[list[dict], str | None]:
    """The rows of ``rows.jsonl`` and, when its last line was torn (the run was killed while writing it), a sentence
    saying it was dropped. A line that cannot be read anywhere else is an error naming it."""
    path = Path(campaign_dir) / ROWS_FILE
    lines = path.read_text().splitlines() if path.exists() else []
    rows, torn = [], None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if number != len(lines):
                raise AnalysisError(f"{path} line {number} is not a row ({exc}): {line[:80]!r}") from None
            torn = f"The last line of {path} was torn (the run stopped while writing it) and was dropped: {line[:80]!r}"
            log.warning(torn)
    return rows, torn


def rewrite_rows(campaign_dir: Path, rows: Iterable[Mapping]) -> None:
    """Replace the campaign's ``rows.jsonl`` with ``rows``, one line each, atomically (``write_atomically``): the
    one way the line log is rewritten rather than appended to (a torn line dropped, rows set aside on resume)."""
    write_atomically(Path(campaign_dir) / ROWS_FILE, _lines(rows))


def drop_torn_line(campaign_dir: Path) -> str | None:
    """Rewrite ``rows.jsonl`` without a torn last line (before appending to it again); the sentence, or None."""
    rows, torn = read_rows(campaign_dir)
    if torn is not None:
        rewrite_rows(campaign_dir, rows)
    return torn


def set_aside(folder: Path, kept: list[dict], aside: list[dict]) -> None:
    """``aside`` appended to ``rows.set-aside.jsonl`` and ``rows.jsonl`` left with ``kept``; each set-aside row's
    raw folder renamed ``<name>.set-aside`` (the first such name free), so nothing measured is lost."""
    with open(Path(folder) / SET_ASIDE_FILE, "a") as out:
        out.write(_lines(aside))
    rewrite_rows(folder, kept)
    for raw in sorted({r["raw_dir"] for r in aside if r.get("raw_dir")}):
        run = Path(folder) / raw
        if run.is_dir():
            run.rename(run.with_name(fresh_name(run.parent, f"{run.name}.set-aside")))


def fresh_name(folder: Path, name: str) -> str:
    """``name``, or ``name-2``, ``name-3``... : the first not yet used under ``folder`` (a resumed layout's new
    precondition beside the one of the interrupted run)."""
    candidates = [name] + [f"{name}-{n}" for n in range(2, 1000)]
    return next(c for c in candidates if not (Path(folder) / c).exists())


# results.parquet
def write_table(campaign_dir: Path, frame: pd.DataFrame) -> None:
    """``results.parquet``: the table made from the rows (``results.rebuild_table``)."""
    frame.to_parquet(Path(campaign_dir) / TABLE_FILE, index=False)


def read_table_file(path: Path | str) -> tuple[pd.DataFrame, Path]:
    """A results table as stored, Parquet or CSV, or a campaign folder's ``results.parquet``: the frame and the file
    it came from (``results.load`` gives it the table's types)."""
    path = Path(path)
    if path.is_dir():
        path = path / TABLE_FILE
    if not path.exists():
        raise AnalysisError(f"results file {str(path)!r} does not exist")
    if path.suffix == ".parquet":
        return pd.read_parquet(path), path
    if path.suffix in {".csv", ".txt"}:
        return pd.read_csv(path), path
    raise AnalysisError(f"results file {str(path)!r}: expected a .parquet or .csv file")


def tables_under(path: Path) -> list[Path]:
    """The results tables in ``path`` (itself, if it is one), at any depth, but not in a dated earlier run
    (a folder renamed ``<name>.<date>`` when a campaign was run again)."""
    path = Path(path)
    return [path] if path.is_file() else _undated(sorted(path.glob(f"**/{TABLE_FILE}")), path)


# predictions.csv
def append_predictions(campaign_dir: Path, prediction: pd.DataFrame) -> None:
    """Append a layout's prediction (``analysis.prediction.predict.predict``'s frame with its ``predicted_at``) to the
    campaign's ``predictions.csv``, stated before the layout is built; earlier layouts' lines are never rewritten."""
    path = Path(campaign_dir) / PREDICTIONS_FILE
    earlier = read_predictions(campaign_dir)
    if not earlier.empty and list(earlier.columns) != list(prediction.columns):
        raise FlashscaleError(f"{path} has the columns {list(earlier.columns)}; a prediction with "
                              f"{list(prediction.columns)} cannot be appended to it")
    prediction.to_csv(path, mode="a", header=earlier.empty, index=False)


def read_predictions(campaign_dir: Path) -> pd.DataFrame:
    """The predictions a campaign stated before building each layout (``predictions.csv``); empty when it stated
    none (no single-device baseline measured first, or a campaign from before they were stated)."""
    path = Path(campaign_dir) / PREDICTIONS_FILE
    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame()
    frame = pd.read_csv(path)
    text = [c for c in PREDICTION_TEXT if c in frame.columns]
    frame = frame.astype({c: "string" for c in text})
    return frame.assign(predicted_close=frame["predicted_close"].fillna("")) if "predicted_close" in text else frame


# notes.json, harness.json, progress.json, progress.log, monitor.jsonl
def write_notes(directory: Path, notes: list[str]) -> None:
    """``notes.json``: what the report must say; written when the campaign finishes (so it marks a finished one)."""
    (Path(directory) / NOTES_JSON).write_text(json.dumps(notes, indent=1))


def read_notes(folder: Path) -> list[str] | None:
    """A finished campaign's notes; None when it did not finish (no ``notes.json``)."""
    path = Path(folder) / NOTES_JSON
    return list(json.loads(path.read_text())) if path.exists() else None


def forget_notes(folder: Path) -> None:
    """A resumed campaign is unfinished again until it writes its notes."""
    (Path(folder) / NOTES_JSON).unlink(missing_ok=True)


def write_harness(folder: Path, data: dict, name: str = HARNESS_JSON) -> None:
    """``harness.json`` (or ``name``): what ``measure.harness`` measured and held."""
    (Path(folder) / name).write_text(json.dumps(data, indent=1))


def read_harness(folder: Path) -> dict | None:
    """What a campaign's harness.json holds; None when it has none (uncapped, or measured before it existed)."""
    path = Path(folder) / HARNESS_JSON
    return json.loads(path.read_text()) if path.is_file() else None


def layouts_done(folder: Path) -> list[str]:
    """The layouts whose sweep (its points and workloads) ran to the end (``progress.json``)."""
    try:
        return list(json.loads((Path(folder) / PROGRESS_JSON).read_text()).get("layouts_done", []))
    except (OSError, ValueError, AttributeError):
        return []


def mark_layout_done(folder: Path, layout: str, done: bool = True) -> None:
    """Record that ``layout``'s sweep ran to the end (``done``), or that it must run again (not ``done``)."""
    known = set(layouts_done(folder))
    known = known | {layout} if done else known - {layout}
    write_atomically(Path(folder) / PROGRESS_JSON, json.dumps({"layouts_done": sorted(known)}, indent=1))


def progress_log(directory: Path) -> Path:
    """``progress.log``, the live log of the campaign's runs (``measure.progress`` appends its lines)."""
    return Path(directory) / PROGRESS_LOG


def append_monitor(campaign_dir: Path, rows: Iterable[Mapping]) -> None:
    """Append monitoring samples, each labelled with its run, to the campaign's ``monitor.jsonl``."""
    with open(Path(campaign_dir) / MONITOR_SERIES, "a") as fh:
        fh.write(_lines(rows))


def read_monitor(campaign_dir: Path) -> list[dict]:
    """The campaign's monitoring samples (``monitor.jsonl``); none when it has none."""
    path = Path(campaign_dir) / MONITOR_SERIES
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def write_monitor_table(campaign_dir: Path, frame: pd.DataFrame) -> None:
    """``monitor.parquet``: the samples' table (``measure.monitoring.rebuild_table``)."""
    frame.to_parquet(Path(campaign_dir) / MONITOR_TABLE, index=False)


def read_monitor_table(campaign_dir: Path) -> pd.DataFrame | None:
    """The campaign's ``monitor.parquet``; None when it has none."""
    path = Path(campaign_dir) / MONITOR_TABLE
    return pd.read_parquet(path) if path.exists() else None


# raw/
def raw_dir(layout: str, *parts: str) -> Path:
    """A run's folder relative to the campaign's: ``raw/<layout>/<parts...>`` (a point and its ``rep<k>``, the
    precondition, a workload's run)."""
    return Path(RAW, layout, *parts)


def write_run_environment(campaign_dir: Path, run: Path, environment: dict) -> None:
    """A run's ``env.json`` (the machine, its targets, layout and cgroup, and its row), beside its fio files; it is
    written with the row, so a run folder without one was cut short."""
    folder = Path(campaign_dir) / run
    folder.mkdir(parents=True, exist_ok=True)  # a run that failed may not have made it
    write_atomically(folder / RUN_ENV_JSON, _json(environment))


def _run_folders(folder: Path) -> list[Path]:
    """Every folder under ``raw/`` but those set aside (``set_aside``: kept as they were), deepest first."""
    raw = Path(folder) / RAW
    found = [p for p in raw.rglob("*") if p.is_dir() and not p.is_symlink()] if raw.is_dir() else []
    found = [p for p in found if not any(part.endswith(".set-aside") for part in p.relative_to(raw).parts)]
    return sorted(found, key=lambda p: (-len(p.parts), str(p)))


def _kept_rows(run: Path, folder: Path) -> list[dict]:
    """The rows a run's ``env.json`` holds (``row``; a cluster's run ``rows``), when they name this run's folder."""
    try:
        kept = json.loads((run / RUN_ENV_JSON).read_text())
        rows = kept.get("rows") or [kept.get("row")]
    except (OSError, ValueError, AttributeError):
        return []
    relative = str(run.relative_to(folder))
    ours = isinstance(rows, list) and all(isinstance(r, dict) and r.get("raw_dir") == relative for r in rows)
    return rows if ours else []


def _rows_raw_dirs(folder: Path) -> set[str]:
    """The raw folders that rows name, in ``rows.jsonl`` and ``rows.set-aside.jsonl``."""
    rows, _ = read_rows(folder)
    aside = Path(folder) / SET_ASIDE_FILE
    lines = aside.read_text(errors="replace").splitlines() if aside.exists() else []
    for line in lines:
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue
    return {str(r.get("raw_dir")) for r in rows if isinstance(r, dict) and r.get("raw_dir")}


def recover_rows(folder: Path) -> str | None:
    """Append the rows of runs that finished but were killed before their row reached ``rows.jsonl`` (or while it
    was written: a torn line, dropped first): each is in its run's ``env.json``, written just before. Returns what
    it said, or None. Nothing measured is run again."""
    known = _rows_raw_dirs(folder)
    found = [row for run in reversed(_run_folders(folder)) if str(run.relative_to(folder)) not in known
             for row in (_kept_rows(run, folder) if (run / RUN_ENV_JSON).exists() else [])]
    if not found:
        return None
    append_rows(folder, found)
    runs = list(dict.fromkeys(r["raw_dir"] for r in found))
    return (f"{len(runs)} run(s) had finished but their row was not written when the run stopped; each was taken "
            f"from its env.json: {', '.join(runs)}")


def clear_cut_short(folder: Path) -> list[str]:
    """Remove the raw folders of runs cut short, so they run again, and return them relative to the campaign
    folder: a folder with a ``job.fio`` and no ``env.json`` (fio started, or was about to), or a folder left empty
    (made for a run, by ``measure.fio`` or ``measure.ahead``, killed before its job file was written; a cluster's
    run has a ``job-<host>.fio`` a host); an
    ``env.json`` that cannot be read as its run's row is a run cut short too. No folder a row names is touched.
    Call ``recover_rows`` first."""
    cut, known, folders = [], _rows_raw_dirs(folder), _run_folders(folder)
    parents = {run.parent for run in folders}
    for run in folders:  # deepest first: a point's folder after its runs'
        if str(run.relative_to(folder)) in known or (run / RUN_ENV_JSON).exists() and _kept_rows(run, folder):
            continue
        if run not in parents and (any(run.glob("job*.fio")) or (run / RUN_ENV_JSON).exists()):
            shutil.rmtree(run)
            cut.append(run)
        elif not any(run.iterdir()):
            run.rmdir()
            cut += [] if run in parents else [run]
    return sorted(str(run.relative_to(folder)) for run in cut)
