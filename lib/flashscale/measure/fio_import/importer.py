"""The folder ``flashscale import`` writes: a campaign folder every command accepts (``analyze``, ``--predict``,
``plan``, 08_compare, ``flashscale run runners/imported.yaml``), built up by one import after another.

    <DIR>/
        campaign.json             kind "import": what was imported, from what, when; hosts and fio versions
        rows.jsonl                one row per reporting group (and host) of every file imported, reps numbered
        results.parquet           the table, rebuilt from rows.jsonl (``results.rebuild_table``)
        sources.csv               one line per file seen: path, SHA-256, format, fio version, outcome, rows, the
                                  fields read, reason
        notes.json                what a report must say (mixed fio versions, names the files contradicted)
        raw/<sha>/source/<name>   each file imported, as it was (its name in letters, digits, . _ -)
        raw/<sha>/[output<n>/]group<g>[-host<h>|-all]/fio.json   the output its row's numbers came from, in fio
                                  3.33's shape; every part a number the import counts, none a name from the file

DIR is new, or an earlier import's (its campaign.json says kind "import"): nothing else is ever written to, and
the files imported are only read. The folder is built whole beside DIR and exchanged with it at once
(``swap``): an import that fails or is killed leaves DIR as it was. A file already in the folder (the same SHA-256) is not read into it again, so
running the same import twice gives the same table. The repetitions of a point (layout, devices, rw, bs, numjobs,
iodepth, host) are numbered 0, 1, ... over every file in the folder, in a stable order: the ``{rep}`` of their
names, then fio's time, then the path.
"""
from __future__ import annotations

import csv
import io
import json
import os
import shutil
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

import pandas as pd

from .. import campaign_folder, results
from . import finder, swap, reader
from ..campaign_folder import CAMPAIGN_JSON, NOTES_JSON
from .bounds import shown
from .file_names import Naming
from ...errors import ConfigError, RefusedError

KIND = "import"
SOURCES_FILE = "sources.csv"
SAID = 50  # the most sentences of one file sources.csv keeps
SOURCE_COLUMNS = ["path", "sha256", "bytes", "format", "fio_version", "outcome", "rows", "failed_rows", "read_from",
                  "reason", "said"]
POINT = ["layout", "devices", "rw", "bs", "numjobs", "iodepth", "host"]
VERSIONS_DIFFER = ("Latency reported by different fio versions does not compare (fio 2.x timed it in usec, 3.x in "
                   "ns, with other percentile buckets); bandwidth does.")


def check_folder(to: Path) -> dict | None:
    """The campaign.json of the earlier import in ``to``, None when ``to`` is new (or an empty folder).
    RefusedError when it is anything else: an import writes nowhere it did not make."""
    to = Path(to)
    if not to.exists() or (to.is_dir() and not any(to.iterdir())):
        return None
    info = to / CAMPAIGN_JSON
    try:
        stored = json.loads(info.read_text()) if to.is_dir() else None
    except (OSError, ValueError):
        stored = None
    if not isinstance(stored, dict) or stored.get("kind") != KIND:
        raise RefusedError(f"--to {str(to)!r} exists and is not an earlier import's folder (no campaign.json of kind "
                           f"{KIND!r}): flashscale import writes only a new folder or one it made; nothing was written")
    return stored


def renumbered(rows: list[dict]) -> list[dict]:
    """``rows`` with ``rep`` 0, 1, ... within each point, in the order of their names' rep, fio's time, path and
    place in the file."""
    def order(row: dict) -> tuple:
        rep = row.get("name_rep")
        return (rep is None, rep if rep is not None else 0, row.get("fio_time") or "", row["source_file"],
                row.get("source_output") or 0, row.get("source_group") or 0)
    seen: Counter = Counter()
    out = []
    for row in sorted(rows, key=lambda r: (*[str(r.get(k)) for k in POINT], order(r))):
        key = tuple(row.get(k) for k in POINT)
        out.append({**row, "rep": seen[key]})
        seen[key] += 1
    return out


def versions_note(rows: list[dict]) -> str | None:
    """A sentence naming the fio versions of ``rows`` and each one's layouts when there is more than one."""
    by_version: dict[str, set] = {}
    for row in rows:
        by_version.setdefault(row.get("fio_version") or "unknown", set()).add(row["layout"])
    if len(by_version) < 2:
        return None
    named = "; ".join(f"{v} ({', '.join(sorted(layouts))})" for v, layouts in sorted(by_version.items()))
    return f"The rows come from {len(by_version)} fio versions: {named}. {VERSIONS_DIFFER}"


@dataclass
class Summary:
    """What one import did: every file's outcome, the files of folders left aside by their content (and links not
    followed), counted by what they are, the folder."""

    folder: Path
    outcomes: list[reader.FileOutcome] = field(default_factory=list)
    aside: Counter = field(default_factory=Counter)
    already: list[str] = field(default_factory=list)  # files whose SHA-256 the folder holds already

    @property
    def refused(self) -> list[reader.FileOutcome]:
        return [o for o in self.outcomes if o.reason is not None]

    @property
    def added(self) -> list[reader.FileOutcome]:
        return [o for o in self.outcomes if o.reason is None and o.path not in self.already]

    def refusals(self) -> list[tuple[str, list[str]]]:
        """Each reason files were refused for, once, with the paths of the files refused for it, in the order met."""
        found: dict[str, list[str]] = {}
        for outcome in self.refused:
            found.setdefault(str(outcome.reason), []).append(outcome.path)
        return list(found.items())

    def line(self) -> str:
        """``12 files: 10 imported (40 rows), 1 failed job kept as a failed row, 1 refused: b.json: truncated``; a
        reason several files were refused for is said once: ``3 refused: 3 files (a.json, b.json, c.json): ...``."""
        rows = sum(len(o.rows) for o in self.added)
        failed = sum(o.failed_rows for o in self.added)
        parts = [f"{len(self.added)} imported ({rows} rows)"]
        parts += [f"{failed} failed job{'s' if failed != 1 else ''} kept as "
                  f"{'a failed row' if failed == 1 else 'failed rows'}"] if failed else []
        parts += [f"{len(self.already)} already in {self.folder} (the same SHA-256), left as they were"] \
            if self.already else []
        parts += [f"{len(self.refused)} refused: " + "; ".join(
            f"{named(paths, base=True)}: {shown(reason)}" for reason, paths in self.refusals())] if self.refused else []
        return f"{len(self.outcomes)} files: " + ", ".join(parts) + (f" ({self.aside_line()})" if self.aside else "")

    def aside_line(self) -> str:
        """``left aside: 2 fio job files, 1 JSON not fio's (by their content)``, the links apart."""
        kinds = [f"{n} {kind}" for kind, n in sorted(self.aside.items()) if kind != finder.LINKS]
        links = [f"{self.aside[finder.LINKS]} {finder.LINKS}"] if self.aside[finder.LINKS] else []
        return "left aside: " + "; ".join(([", ".join(kinds) + " (by their content)"] if kinds else []) + links)


def named(paths: list[str], base: bool = False, most: int = 3) -> str:
    """One file's path (``base``: its name), or ``4 files (a.json, b.json, c.json and 1 more)``."""
    shown_ = [shown(Path(p).name, 80) if base else shown(p) for p in paths[:most]]
    more = f" and {len(paths) - most} more" if len(paths) > most else ""
    return shown_[0] if len(paths) == 1 else f"{len(paths)} files ({', '.join(shown_)}{more})"


def _sources(folder: Path, summary: Summary) -> str:
    """sources.csv: the earlier lines, each file seen now replacing its own (by path and SHA-256)."""
    path = folder / SOURCES_FILE
    lines = {(r["path"], r["sha256"]): r for r in csv.DictReader(io.StringIO(path.read_text()))} if path.exists() \
        else {}
    for o in summary.outcomes:
        if o.path in summary.already:
            continue
        lines[(o.path, o.sha256)] = {"path": o.path, "sha256": o.sha256, "bytes": o.size, "format": o.format,
                                     "fio_version": o.fio_version,
                                     "outcome": "refused" if o.reason else "imported", "rows": len(o.rows),
                                     "failed_rows": o.failed_rows, "reason": shown(o.reason or ""),
                                     "said": " | ".join(shown(x) for x in o.said[:SAID]),
                                     "read_from": " | ".join(dict.fromkeys(r["read_from"] for r in o.rows))}
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=SOURCE_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(lines[key] for key in sorted(lines))
    return out.getvalue()


def _notes(rows: list[dict], sources: str) -> list[str]:
    lines = list(csv.DictReader(io.StringIO(sources)))
    kept = [line for line in lines if line["outcome"] == "imported"]
    formats = sorted({line["format"] for line in kept})
    hosts = sorted({r["host"] for r in rows if r.get("host") and r["host"] != reader.ALL_HOSTS})
    said = [line for line in kept if line["said"]]
    root = imported_from([line["path"] for line in lines])
    under = f"{Path(root).name}/" if root.rstrip(os.sep) else "several folders"  # never the folders above it
    times = sorted(r["fio_time"] for r in rows if r.get("fio_time"))
    when = (f", written by fio {times[0][:10]}" + (f" to {times[-1][:10]}" if times[-1][:10] != times[0][:10] else "")
            if times else "")
    notes = [f"Imported, not measured by flashscale: {len(rows)} rows from {len(kept)} files of fio's output under "
             f"{under} ({', '.join(formats)}; {', '.join(sorted({r['fio_version'] for r in rows}))}"
             f"{'; hosts ' + ', '.join(hosts) if hosts else ''}{when}); each file's path and SHA-256 are in "
             f"{SOURCES_FILE}."]
    notes += [f"{len(said)} file(s) said otherwise than their names; the files' own values were kept: "
              + "; ".join(f"{Path(line['path']).name}: {relative(line['said'], root)}" for line in said[:5])] \
        if said else []
    refused: dict[str, list[str]] = {}
    for line in (line for line in lines if line["outcome"] == "refused"):
        refused.setdefault(relative(line["reason"], root), []).append(line["path"])
    notes += [f"{sum(map(len, refused.values()))} file(s) refused, not imported: " + "; ".join(
        f"{named(paths, base=True)}: {reason}" for reason, paths in list(refused.items())[:5])] if refused else []
    failed = sum(1 for r in rows if r.get("status") == "failed")
    notes += [f"{failed} row(s) of jobs fio reported failed are kept as failed rows (no rate)."] if failed else []
    return notes + list(filter(None, [versions_note([r for r in rows if r.get("status") == "ok"])]))


def _campaign_json(folder: Path, stored: dict | None, rows: list[dict], summary: Summary, argv: Sequence[str]) -> dict:
    now = datetime.now(timezone.utc)
    stamps = sorted(r["run_id"] for r in rows if r.get("run_id"))
    hosts = sorted({r["host"] for r in rows if r.get("host") and r["host"] != reader.ALL_HOSTS})
    done = {"at": now.isoformat(timespec="seconds"), "argv": list(argv), "summary": summary.line()}
    return {"kind": KIND, "campaign": folder.name, "run_id": stamps[0] if stamps else now.strftime("%Y%m%dT%H%M%SZ"),
            "spec": {"imported": True},
            "environment": {"hostname": ", ".join(hosts), "kernel": "", "backend": reader.BACKEND,
                            "fio": ", ".join(sorted({r.get("fio_version") or "" for r in rows}))},
            "imports": [*(stored or {}).get("imports", []), done]}


REWRITTEN = (campaign_folder.ROWS_FILE, campaign_folder.TABLE_FILE, SOURCES_FILE, NOTES_JSON, CAMPAIGN_JSON)


def run_import(paths: Sequence[str], to: Path, naming: Naming, argv: Sequence[str] = ()) -> Summary:
    """Import ``paths`` (files, folders, globs) into the campaign folder ``to`` (``check_folder``); returns what
    happened to each file. Each file is read on its own (``imported.read_file``: a bad one is refused, the others
    read); the folder is written whole beside ``to`` and put in its place at once (``swap``), so an
    import that fails or is killed leaves ``to`` as it was. ConfigError for a path that is nothing, RefusedError
    for a folder not an import's."""
    to = Path(to).resolve() if Path(to).is_symlink() else Path(to)  # the folder a link names is the one exchanged
    stored = check_folder(to)
    found = finder.find_files(paths, skip=to)
    earlier, _ = campaign_folder.read_rows(to) if stored else ([], None)
    summary, known = Summary(to, aside=found.aside), {r["source_sha256"]: r["source_file"] for r in earlier}
    new_rows = []
    for path in found.files:
        outcome = reader.read_file(path, naming, to.name, by_content=True)
        if outcome.aside is not None:
            summary.aside[outcome.aside] += 1
            continue
        summary.outcomes.append(outcome)
        if outcome.reason is None and outcome.sha256 in known:
            summary.already.append(outcome.path)
            continue
        if outcome.reason is None:
            known[outcome.sha256] = outcome.path
            new_rows += outcome.rows
    if not summary.outcomes:
        raise ConfigError(f"no fio output in {', '.join(shown(str(p)) for p in paths[:3])}"
                          f"{' and more' if len(paths) > 3 else ''}: nothing imported, nothing written"
                          + (f" ({summary.aside_line()})" if summary.aside else " (no file in it)"))
    if not earlier and not new_rows:
        return summary  # nothing to keep: no folder made
    rows = renumbered(earlier + [{k: v for k, v in r.items() if not k.startswith("_")} for r in new_rows])
    mixed = len({r.get("fio_version") for r in rows if r.get("status") == "ok"}) > 1
    rows = [{**r, "fio_versions_mixed": mixed} for r in rows]
    with swap.locked(to):
        if check_folder(to) != stored:
            raise RefusedError(f"{str(to)!r} changed while its files were read (another import?): nothing was written")
        staged = swap.staging(to)
        try:
            if stored:
                swap.linked(to, staged, REWRITTEN)
            _write(staged, stored, rows, summary, argv, to)
            swap.exchange(staged, to)
        finally:
            if staged.exists():
                shutil.rmtree(staged)
    return summary


def _write(staged: Path, stored: dict | None, rows: list[dict], summary: Summary, argv: Sequence[str],
           to: Path) -> None:
    """The new folder's files, in ``staged``: the raw copies of what was added, the table, sources, notes and
    campaign.json."""
    for outcome in summary.added:
        for name, content in reader.raw_files(outcome).items():
            swap.write(staged, name, content)
    campaign_folder.rewrite_rows(staged, rows)
    results.rebuild_table(staged)
    sources = _sources(to, summary)
    campaign_folder.write_atomically(staged / SOURCES_FILE, sources)
    campaign_folder.write_atomically(staged / NOTES_JSON, json.dumps(_notes(rows, sources), indent=1))
    campaign_folder.write_atomically(staged / CAMPAIGN_JSON, json.dumps(_campaign_json(to, stored, rows, summary, argv),
                                                                indent=1, default=str))


def stored(folder: str | Path) -> results.CampaignResult:
    """An import's folder as a campaign's result, for a notebook: its table, folder, backend and notes (the first
    saying it was imported and from what). RefusedError when ``folder`` holds no import."""
    folder = Path(folder)
    if not folder.is_dir() or check_folder(folder) is None:
        raise RefusedError(f"{str(folder)!r} holds no import (a folder written by flashscale import)")
    rows, _ = campaign_folder.read_rows(folder)
    notes = json.loads((folder / NOTES_JSON).read_text())
    return results.CampaignResult(results.to_frame(rows), folder, reader.BACKEND, notes)


def sources(folder: str | Path) -> pd.DataFrame:
    """The sources table of an import's folder (``sources.csv``), as a DataFrame: each file's path as it was read."""
    return pd.read_csv(Path(folder) / SOURCES_FILE, dtype={"said": "string", "reason": "string"})


def imported_from(paths: Sequence[str]) -> str:
    """The folder the files of ``paths`` were imported from: the deepest folder holding them all ("" for none)."""
    folders = [os.path.dirname(str(p)) for p in paths]
    return os.path.commonpath(folders) if folders else ""


def relative(text: str, root: str) -> str:
    """``text`` with every path under ``root`` said from ``root``'s own name on (``/home/x/results/a.json``:
    ``results/a.json``): what a published report shows, never the folders above it of whoever imported."""
    root = root.rstrip(os.sep)
    return str(text).replace(root + os.sep, Path(root).name + os.sep) if root else str(text)


def report_sources(folder: str | Path) -> pd.DataFrame:
    """``sources`` as a published report shows it: every path, reason and sentence said from the folder imported
    on (``relative``), so no report names where on its importer's machine the files were."""
    table = sources(folder)
    root = imported_from(list(table["path"]))
    said = table.assign(**{c: [relative(v, root) if isinstance(v, str) else v for v in table[c]]
                           for c in ("reason", "said")})
    if root.rstrip(os.sep):  # files of folders with nothing in common above them: their names
        return said.assign(path=[relative(p, root) for p in table["path"]])
    return said.assign(path=[Path(p).name for p in table["path"]])
