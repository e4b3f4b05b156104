"""A team's campaigns in one file: ``flashscale archive add|list|merge`` and ``compare archive:FILE?...``.

The archive is one SQLite file (Python's own sqlite3: one file to copy or mail, no server, no new dependency, and
a query by host, model, layout and date without reading every campaign's rows). Each campaign is one row of
``campaigns``: the facts a listing filters on (its host, kernel, backend, device models, layouts, when it ran),
its campaign.json (``record``) and its results table (``rows``: JSON, one object per run).

    add(archive, folder, keep_serials=False)   every campaign (results table) under ``folder``: (entry, added?)
    listed(archive, Filters(...))              the entries that match, oldest first
    merge(archive, other)                      another archive's campaigns added: (added, already there)
    rows_of(archive, entries)                  their rows (a ``source`` column names each) and records
    checked_path(ARCHIVE)                      a campaign's ARCHIVE parameter checked before anything runs
    at_end(ARCHIVE, result)                    a finished campaign added, said in its notes

A campaign is known by the SHA-256 of its content (``content_id``: its record with the device identities hashed,
and its rows), not by where it was found or when it was added: the same campaign added on two machines has one id,
so two archives merge without losing or doubling a campaign. A campaign resumed and added again after more runs is
new content: both are kept, and the listing shows them with one run id.

Device identities (a serial, an NGUID, a WWN, in campaign.json's environment and spec: ``SERIAL_KEYS``) are stored
hashed (``sha256-`` and 16 hex digits of the value; a ``serial:MODEL:SERIAL`` identity keeps its model) unless
``keep_serials``: a hash lets two campaigns on one device be matched, and confirms a guess of a serial, but does not
show it.

The archive file is someone else's input once it is mailed: it is opened read-only except by ``add`` and ``merge``
(into the user's own), its schema must be exactly ours (``SCHEMA``; no views or triggers: ``trusted_schema`` off),
a value is at most ``MOST_BYTES``, each stored campaign's content is hashed again when read and refused where it
is not its id, and nothing read becomes a path or an option.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from . import campaign_folder, results
from ..errors import AnalysisError, ConfigError, FlashscaleError

FORMAT = "flashscale-archive-1"
SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT",
    "CREATE TABLE campaigns (id TEXT PRIMARY KEY, name TEXT NOT NULL, run_id TEXT NOT NULL, hostname TEXT NOT "
    "NULL, kernel TEXT NOT NULL, backend TEXT NOT NULL, models TEXT NOT NULL, layouts TEXT NOT NULL, runs INTEGER "
    "NOT NULL, added_at TEXT NOT NULL, record TEXT NOT NULL, rows TEXT NOT NULL) STRICT",
)
MOST_BYTES = 256 * 2**20  # the largest value read from an archive (a campaign's rows as JSON)
SERIAL_KEYS = {"serial", "serials", "id", "ids", "identity", "identities", "wwn", "wwid", "nguid", "eui",
               "confirm", "devices", "use_devices"}
IDENTITY = re.compile(r"^(?P<kind>wwn|wwid|nguid|eui|serial):(?P<rest>.+)$")
HASHED = re.compile(r"sha256-[0-9a-f]{16}")
ENTRY = ("id", "name", "run_id", "hostname", "kernel", "backend", "models", "layouts", "runs", "added_at")


@dataclass(frozen=True)
class Entry:
    """One archived campaign as a listing shows it (``ENTRY``; ``models`` and ``layouts`` sorted)."""

    id: str
    name: str
    run_id: str
    hostname: str
    kernel: str
    backend: str
    models: tuple[str, ...]
    layouts: tuple[str, ...]
    runs: int
    added_at: str


def _hash(text: str) -> str:
    return "sha256-" + hashlib.sha256(f"flashscale-serial\0{text}".encode()).hexdigest()[:16]


def hashed_identity(value: str) -> str:
    """One device identity with its serial part hashed (module doc); already hashed parts are left as they are."""
    match = IDENTITY.match(value)
    if match is None:
        return value if HASHED.fullmatch(value) else _hash(value)
    kind, rest = match["kind"], match["rest"]
    if kind == "serial":  # serial:MODEL:SERIAL[:nsN]
        parts = rest.split(":")
        if len(parts) >= 2:
            parts[1] = parts[1] if HASHED.fullmatch(parts[1]) else _hash(parts[1])
            return "serial:" + ":".join(parts)
    return f"{kind}:{rest if HASHED.fullmatch(rest) else _hash(rest)}"


def hash_serials(value, key: str = ""):
    """``value`` (a campaign.json) with every string under a ``SERIAL_KEYS`` key hashed (``hashed_identity``)."""
    if isinstance(value, dict):
        return {k: hash_serials(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [hash_serials(v, key) for v in value]
    if isinstance(value, str) and key.lower() in SERIAL_KEYS:
        return hashed_identity(value)
    return value


def _plain(value):
    """A cell as JSON holds it: missing as null, numpy's numbers as Python's, anything else as text."""
    if value is None or (not isinstance(value, (str, bytes, list, dict)) and pd.isna(value)):
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value if isinstance(value, (bool, int, float, str)) else str(value)


def rows_text(frame: pd.DataFrame) -> str:
    """A results table as the archive keeps it: a JSON list of rows, keys sorted, one line."""
    records = [{str(k): _plain(v) for k, v in row.items()} for row in frame.to_dict("records")]
    return json.dumps(records, sort_keys=True, separators=(",", ":"), allow_nan=False)


def record_text(record: dict) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), default=str)


def content_id(record: dict, rows: str) -> str:
    """A campaign's id (module doc): the SHA-256 of its record, device identities hashed, and its rows."""
    text = f"{FORMAT}\n{record_text(hash_serials(record))}\n{rows}"
    return hashlib.sha256(text.encode()).hexdigest()


def _models(record: dict) -> list[str]:
    """The device models a record names: ``model`` values anywhere, and the model of each ``serial:MODEL:...``
    identity; "emulated" for an emulated array or directories (backend loop or directory)."""
    found: set[str] = set()

    def walk(value, key=""):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, str(k))
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str):
            if key.lower() in ("model", "models"):
                found.add(value.strip())
            elif key.lower() in SERIAL_KEYS and value.startswith("serial:") and len(value.split(":")) > 2:
                found.add(value.split(":")[1])

    walk(record)
    if (record.get("environment") or {}).get("backend") in ("loop", "directory"):
        found.add("emulated")
    return sorted(m for m in found if m)


def _text(value) -> str:
    return value if isinstance(value, str) else ""


def entry_of(record: dict, frame: pd.DataFrame, name: str, rows: str, added_at: str) -> Entry:
    """The entry of a campaign about to be added: its facts from ``record`` (campaign.json) and ``frame``."""
    env = record.get("environment") if isinstance(record.get("environment"), dict) else {}
    layouts = sorted({str(v) for v in frame["layout"].dropna()}) if "layout" in frame else []
    run_id = _text(record.get("run_id")) or (str(frame["run_id"].dropna().min()) if "run_id" in frame and
                                             frame["run_id"].notna().any() else "")
    return Entry(content_id(record, rows), name, run_id, _text(env.get("hostname")), _text(env.get("kernel")),
                 _text(env.get("backend")), tuple(_models(record)), tuple(layouts), len(frame), added_at)


def _connect(path: Path, write: bool) -> sqlite3.Connection:
    """The archive at ``path``, hardened (module doc): read-only unless ``write``; a new file gets ``SCHEMA``."""
    if not write and not path.is_file():
        raise ConfigError(f"archive {str(path)!r} does not exist (flashscale archive add FOLDER --archive FILE "
                          "makes one)")
    fresh = write and not path.exists()
    try:
        db = sqlite3.connect(path if write else f"{path.resolve().as_uri()}?mode=ro", uri=not write,
                             isolation_level=None)
        db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MOST_BYTES)
        db.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, 100_000)
        for pragma in ("trusted_schema = OFF", "cell_size_check = ON", "mmap_size = 0"):
            db.execute(f"PRAGMA {pragma}")
        if fresh:
            with db:
                db.execute("BEGIN")
                for statement in SCHEMA:
                    db.execute(statement)
                db.execute("INSERT INTO meta VALUES ('format', ?)", (FORMAT,))
        _check_schema(db, path)
    except sqlite3.Error as exc:
        raise ConfigError(f"archive {str(path)!r} cannot be opened as a flashscale archive: {exc}") from None
    return db


def _check_schema(db: sqlite3.Connection, path: Path) -> None:
    """Refuse a file whose schema is not exactly ``SCHEMA`` (another database, or one with triggers or views)."""
    found = sorted(sql for (sql,) in db.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL"))
    if found != sorted(SCHEMA):
        raise ConfigError(f"archive {str(path)!r} is not a flashscale archive: its tables are not {FORMAT}'s")
    format_ = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
    if format_ != (FORMAT,):
        raise ConfigError(f"archive {str(path)!r} is of format {format_!r:.60}, not {FORMAT!r}")
    if db.execute("PRAGMA quick_check").fetchone() != ("ok",):
        raise ConfigError(f"archive {str(path)!r} is damaged (SQLite's quick_check fails)")


def _insert(db: sqlite3.Connection, entry: Entry, record: str, rows: str) -> bool:
    """Add one campaign; False where its id is there already."""
    values = [getattr(entry, f) for f in ENTRY]
    values[ENTRY.index("models")], values[ENTRY.index("layouts")] = json.dumps(entry.models), json.dumps(entry.layouts)
    cursor = db.execute(f"INSERT OR IGNORE INTO campaigns ({', '.join(ENTRY)}, record, rows) VALUES "
                        f"({', '.join('?' * (len(ENTRY) + 2))})", (*values, record, rows))
    return cursor.rowcount == 1


def add(archive: str | Path, folder: str | Path, keep_serials: bool = False) -> list[tuple[Entry, bool]]:
    """Every campaign under ``folder`` (each results table, with the campaign.json beside it) added to ``archive``
    (made if absent): each entry and whether it was new; AnalysisError where ``folder`` holds no table."""
    tables = campaign_folder.tables_under(Path(folder)) if Path(folder).exists() else []
    if not tables:
        raise AnalysisError(f"{str(folder)!r} holds no results table (results.parquet) to archive")
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    db, out = _connect(Path(archive), write=True), []
    try:
        with db:
            db.execute("BEGIN IMMEDIATE")
            for table in tables:
                record = campaign_folder.read_campaign(table.parent)
                record = record if isinstance(record, dict) else {}
                frame = results.load(table)
                rows = rows_text(frame)
                entry = entry_of(record, frame, table.parent.name, rows, now)
                stored = record if keep_serials else hash_serials(record)
                out.append((entry, _insert(db, entry, record_text(stored), rows)))
    finally:
        db.close()
    return out


@dataclass(frozen=True)
class Filters:
    """What ``listed`` keeps: a campaign on ``host``, with a device of ``model``, that measured ``layout``, run on
    or after ``since`` (a date, YYYY-MM-DD, UTC), whose id starts with ``id``; then the ``last`` of those (by when
    each ran). None: any."""

    host: str | None = None
    model: str | None = None
    layout: str | None = None
    since: str | None = None
    id: str | None = None
    last: int | None = None


def _entry(row: tuple, path: Path) -> Entry:
    """An entry as stored, each field checked (the file is someone else's input)."""
    values = dict(zip(ENTRY, row))
    try:
        models, layouts = json.loads(values["models"]), json.loads(values["layouts"])
        if not (isinstance(models, list) and isinstance(layouts, list)):
            raise ValueError("not lists")
        values.update(models=tuple(map(str, models)), layouts=tuple(map(str, layouts)))
    except ValueError as exc:
        raise ConfigError(f"archive {str(path)!r}: campaign {str(values['id'])[:16]!r} lists models or layouts "
                          f"that are not JSON lists ({exc})") from None
    if not (isinstance(values["id"], str) and re.fullmatch(r"[0-9a-f]{64}", values["id"])):
        raise ConfigError(f"archive {str(path)!r}: a campaign's id {values['id']!r:.80} is not a SHA-256")
    return Entry(**values)


def _ran_at(entry: Entry) -> str:
    """When a campaign ran, as its run id says (20261126T192706Z), else when it was added: sortable text."""
    stamp = re.fullmatch(r"(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z?.*", entry.run_id)
    return "{}-{}-{}T{}:{}:{}".format(*stamp.groups()) if stamp else entry.added_at


def _kept(entry: Entry, filters: Filters) -> bool:
    return ((filters.host is None or entry.hostname == filters.host)
            and (filters.model is None or filters.model in entry.models)
            and (filters.layout is None or filters.layout in entry.layouts)
            and (filters.since is None or _ran_at(entry) >= filters.since)
            and (filters.id is None or entry.id.startswith(filters.id)))


def listed(archive: str | Path, filters: Filters = Filters()) -> list[Entry]:
    """The archive's campaigns that ``filters`` keep, by when each ran (oldest first)."""
    path = Path(archive)
    db = _connect(path, write=False)
    try:
        entries = [_entry(row, path) for row in db.execute(f"SELECT {', '.join(ENTRY)} FROM campaigns")]
    finally:
        db.close()
    kept = sorted((e for e in entries if _kept(e, filters)), key=lambda e: (_ran_at(e), e.id))
    return kept[-filters.last:] if filters.last else kept


def _stored(db: sqlite3.Connection, path: Path, ids: list[str]) -> list[tuple[Entry, str, str]]:
    """The entries, records and rows of ``ids``, each content hashed again and refused where it is not its id."""
    out = []
    for campaign_id in ids:
        row = db.execute(f"SELECT {', '.join(ENTRY)}, record, rows FROM campaigns WHERE id = ?",
                         (campaign_id,)).fetchone()
        entry, record, rows = _entry(row[:len(ENTRY)], path), row[-2], row[-1]
        try:
            parsed = json.loads(record)
            same = isinstance(parsed, dict) and isinstance(rows, str) and content_id(parsed, rows) == entry.id
        except (ValueError, TypeError, RecursionError):  # not JSON, or nested deeper than any campaign.json
            same = False
        if not same:
            raise ConfigError(f"archive {str(path)!r}: campaign {entry.id[:16]} ({entry.name!r:.60}) does not "
                              "hash to its id: changed since it was archived; not read")
        out.append((entry, record, rows))
    return out


def merge(archive: str | Path, other: str | Path) -> tuple[int, int]:
    """``other``'s campaigns added to ``archive`` (made if absent), each checked against its id: (added, there
    already). Nothing is added when one of them is refused."""
    source = Path(other)
    if Path(archive).resolve() == source.resolve():
        raise ConfigError(f"archive {str(other)!r} cannot be merged into itself")
    theirs = _connect(source, write=False)
    try:
        found = _stored(theirs, source, [e.id for e in listed(source)])
    finally:
        theirs.close()
    db, added = _connect(Path(archive), write=True), 0
    try:
        with db:
            db.execute("BEGIN IMMEDIATE")
            added = sum(_insert(db, entry, record, rows) for entry, record, rows in found)
    finally:
        db.close()
    return added, len(found) - added


def rows_of(archive: str | Path, entries: list[Entry]) -> tuple[pd.DataFrame, list[dict]]:
    """The rows of ``entries`` as one results table (``results.with_numbers`` and ``with_defaults``, as a CSV is
    read), a ``source`` column naming each campaign (its name and the id's first 12 digits), and their records."""
    path = Path(archive)
    db = _connect(path, write=False)
    try:
        found = _stored(db, path, [e.id for e in entries])
    finally:
        db.close()
    frames, records = [], []
    for entry, record, rows in found:
        try:
            parsed = json.loads(rows)
        except (ValueError, RecursionError):
            parsed = None
        if not isinstance(parsed, list) or not all(isinstance(r, dict) for r in parsed):
            raise ConfigError(f"archive {str(path)!r}: campaign {entry.id[:16]}'s rows are not a list of rows")
        frame = results.with_defaults(results.with_numbers(pd.DataFrame.from_records(parsed), str(path)))
        frames.append(frame.assign(source=f"{entry.name} {entry.id[:12]}"))
        records.append(json.loads(record))
    if not frames:
        return pd.DataFrame(), records
    return pd.concat(frames, ignore_index=True), records


MOST_PATH = 4096  # characters of an ARCHIVE path (Linux's PATH_MAX)


def checked_path(value) -> Path | None:
    """A campaign's ``ARCHIVE`` (module doc) as the file it names: relative to the checkout as ``DATA_DIR`` is; None
    for None or "". ConfigError naming the value, before anything runs, where it is not a path of printable text,
    its folder does not exist or cannot be written, or the file there is not a flashscale archive this user can
    write (a folder, a device, another database: each refused, never made into one)."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > MOST_PATH or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ConfigError(f"{value!r:.120} is not the path of an archive file: expected at most {MOST_PATH} "
                          "printable characters, e.g. data/archive.sqlite")
    path = campaign_folder.data_root(value)
    try:
        folder_ok = path.parent.is_dir() and os.access(path.parent, os.W_OK | os.X_OK)
        there = folder_ok and (path.exists() or path.is_symlink())
        usable = there and path.is_file() and os.access(path, os.R_OK | os.W_OK)
    except OSError as exc:  # a name longer than the file system allows, a loop of links
        raise ConfigError(f"archive file {value!r:.120} cannot be looked at: {exc.strerror}") from None
    if not folder_ok:
        raise ConfigError(f"archive file {value!r:.120}: its folder {str(path.parent)!r:.120} does not exist or "
                          "cannot be written (a path is relative to the checkout)")
    if there and not usable:
        raise ConfigError(f"archive file {value!r:.120}: {str(path)!r:.120} is not a file this user can read and "
                          "write")
    if there:
        _connect(path, write=False).close()  # refused, naming why, where it is not a flashscale archive
    return path


def at_end(value, result: results.CampaignResult, write: bool = True) -> results.CampaignResult:
    """``result`` (a finished campaign) added to the archive ``ARCHIVE`` names (``checked_path``), a sentence in its
    notes saying where and as which campaign, or why not (the campaign is complete either way: a later
    ``flashscale archive add`` adds it); ``write``: the campaign's notes.json too (not by a reanalysis, which
    changes nothing of the campaign's). Unchanged without an ARCHIVE or a table."""
    if not value or result.table is None:
        return result
    try:
        path = checked_path(value)
        added = add(path, result.directory)
        said = [f"{'Archived' if new else 'Already archived'} in {path} as campaign {entry.id[:12]} (ARCHIVE): "
                f"flashscale compare 'archive:{path}?id={entry.id[:12]}' reads it." for entry, new in added]
    except (FlashscaleError, OSError, sqlite3.Error) as exc:
        said = [f"Not archived (ARCHIVE={value!r:.120}): {exc}. The campaign is complete: flashscale archive add "
                f"{result.directory} --archive FILE adds it."]
    notes = [*result.notes, *said]
    if write:
        campaign_folder.write_notes(result.directory, notes)
    return dataclasses.replace(result, notes=notes)
