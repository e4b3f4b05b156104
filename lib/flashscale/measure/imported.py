"""fio's output from anywhere, read into the rows of the results table: one per reporting group of a file, one per
host and group of a client/server run and one for the cluster; ``import_folder`` keeps them in a campaign folder.

Each file is read only (``read_file``): its bytes hashed (SHA-256), its text read by ``fio_output.read_output``
(fio 2.0.10 to 3.x, json, json+, terse, client/server), what ran taken from the file (``fio_runs``) and from its
name or mapping where the file is silent (``import_names``). A file that is empty, truncated or not fio's is refused
with the reason; a job fio reports failed (``error`` not 0) or that moved no data is a failed row (``status``
failed, ``error`` why, no rate), never dropped. Every row keeps its source file, the file's SHA-256, its format,
fio's version and the fields its numbers were read from (``read_from``).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from glob import glob
from pathlib import Path
from typing import Iterable, Mapping

from . import cluster, fio_documents, fio_output, fio_runs, fio_versions, import_names, results
from .import_names import Naming
from ..errors import ConfigError, FioError
from . import truth

ALL_HOSTS = "all"  # the ``host`` of a cluster's own row, as a cluster campaign writes it (analysis.cluster.ALL)
BACKEND = "imported"
READ_SUFFIXES = (".json", ".txt", ".out", ".log", ".terse", ".minimal")  # what a folder's files are read by
COMPRESSED_SUFFIXES = (".gz", ".xz", ".bz2")  # after one of those: fio_documents.text_of decompresses
# fio's own per-job logs (write_bw_log and the like: <prefix>_bw.<job>.log), which are not its output
FIO_LOG = re.compile(r"_(bw|lat|clat|slat|iops)(\.\d+)*\.log$")
RAW = "raw"


@dataclass
class FileOutcome:
    """What one file gave: its rows, or the reason it was refused; and the sentences its name and content raised."""

    path: str
    sha256: str
    size: int
    format: str = ""
    fio_version: str = ""
    rows: list[dict] = field(default_factory=list)
    reason: str | None = None
    said: list[str] = field(default_factory=list)
    content: bytes = field(default=b"", repr=False)  # the bytes hashed and read: the copy kept is these

    @property
    def failed_rows(self) -> int:
        return sum(1 for row in self.rows if row.get("status") == "failed")


def find_files(paths: Iterable[str], skip: Path | None = None) -> tuple[list[Path], Counter]:
    """The files to read: each file named, each match of a glob, each file under a folder (recursively) whose name
    ends in one of ``READ_SUFFIXES``; sorted, each once, none under ``skip`` (the import's own folder). Also the
    files of folders left aside, counted by suffix. ConfigError naming a path that is none of these."""
    found, aside = [], Counter()
    skip = skip.resolve() if skip is not None else None
    for given in paths:
        path = Path(given)
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            for inside in sorted(p for p in path.rglob("*") if p.is_file()):
                if skip is not None and inside.resolve().is_relative_to(skip):
                    continue
                kind = read_as(inside)
                if kind is None:
                    found.append(inside)
                else:
                    aside[kind] += 1
        elif any(c in str(given) for c in "*?["):
            matched = sorted(Path(p) for p in glob(str(given), recursive=True) if Path(p).is_file())
            if not matched:
                raise ConfigError(f"{given!r} matches no file")
            found.extend(matched)
        else:
            raise ConfigError(f"{given!r} is neither a file, a folder nor a glob that matches one")
    unique = {p.resolve(): p for p in found if skip is None or not p.resolve().is_relative_to(skip)}
    return sorted(unique.values(), key=lambda p: p.as_posix()), aside


def read_as(path: Path) -> str | None:
    """None when a folder's file is read (its suffix is one of ``READ_SUFFIXES``, compressed or not); else what it
    is counted as, left aside: its suffix, or fio's per-job logs."""
    name = path.name.lower()
    for compressed in COMPRESSED_SUFFIXES:
        name = name.removesuffix(compressed)
    if FIO_LOG.search(name):
        return "fio's per-job logs (_bw, _lat, _iops .log)"
    suffix = Path(name).suffix
    return None if suffix in READ_SUFFIXES else (path.suffix.lower() or "(no suffix)")


def sha256_of(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def _error_words(entry: Mapping) -> str:
    error = entry.get("error")
    reason = os.strerror(error) if isinstance(error, int) and 0 < error < 4096 else "unknown"
    return f"fio reported error {error} ({reason}) for job {entry.get('jobname')!r}"


def _numbers(data: Mapping, entry: dict, rw: str) -> tuple[dict, str | None]:
    """The row's numbers from one (merged) entry, or (failed columns, why) when fio reported an error or no data
    moved. A unified_rw_reporting side (``_mixed``) is put on its direction; a mixed rw's halves stay unknown."""
    if entry.get("error"):
        return results.failed(_error_words(entry)), _error_words(entry)
    try:
        numbers = fio_output.parse({"fio version": data.get("fio version", ""), "jobs": [entry]})
    except FioError as exc:
        return results.failed(exc), str(exc)
    if numbers["io_bytes"] <= 0:
        why = f"job {entry.get('jobname')!r} moved no data (io_bytes = 0)"
        return results.failed(why), why
    if entry.get("_mixed"):
        ways = fio_output.DIRECTIONS.get(rw, ("read", "write"))
        numbers["read_bw_bytes"] = numbers["bw_bytes"] if ways == ("read",) else math.nan
        numbers["write_bw_bytes"] = numbers["bw_bytes"] if ways == ("write",) else math.nan
    return numbers, None


def _row(data: Mapping, entries: list[dict], names: Mapping, source: Mapping, where: str) -> tuple[dict, list]:
    """One row of one reporting group's entries (one host's, in a client/server run), and what it raised."""
    entry = entries[0] if len(entries) == 1 else fio_versions.group_entry(entries)
    found, how = fio_runs.run_of(data, entries)
    weak = frozenset({"numjobs"}) if how.get("numjobs") == fio_runs.NUMJOBS_OPTION else frozenset()
    axes, said = import_names.reconcile(found, names, weak)
    lacking = import_names.missing(axes, names)
    if lacking:
        silent = f"; {data.get('fio version') or 'this fio'} echoes no options here" if "rw" in lacking else ""
        raise ConfigError(f"{where}: {', '.join(lacking)} neither in the file nor given (--pattern, --map, "
                          f"--layout, --devices){silent}")
    numbers, failure = _numbers(data, entry, axes["rw"])
    row = {"campaign": source["campaign"], "host": names.get("host") or "", "layout": names["layout"],
           "devices": names["devices"], **axes, "rep": 0, "warmup": False, "phase": "measure",
           "point": f"{axes['rw']}-bs{axes['bs']}-nj{axes['numjobs']}-qd{axes['iodepth']}",
           "backend": BACKEND, "status": "failed" if failure else "ok", **numbers,
           "fio_version": str(data.get("fio version") or ""), "source_file": source["path"],
           "source_sha256": source["sha256"], "source_format": source["format"], "source_job": entry.get("jobname"),
           "source_group": entry.get("groupid", 0), "name_rep": names.get("rep"),
           "read_from": "; ".join([*entry.get("_read_from", []), f"numjobs: {how['numjobs']}"]),
           **{k: found.get(k) for k in ("fio_time", "ioengine", "direct", "target")},
           "size_option": found.get("size"), "runtime_option": found.get("runtime")}
    row["run_id"] = (row["fio_time"] or "").replace("-", "").replace(":", "").replace("+0000", "Z")
    row = {**row, **truth.evidence(row, {}), "_entries": entries}
    return row, [f"{where}: {s}" for s in said]


def _client_rows(data: Mapping, names: Mapping, source: Mapping) -> tuple[list[dict], list[str]]:
    """A client/server run: per reporting group, one row per host (``cluster.by_host`` reads each host's entries)
    and one for the cluster (``cluster.aggregate``, or failed when a host failed)."""
    rows, said = [], []
    entries = [e for e in data.get("client_stats", []) if e.get("jobname") != cluster.ALL_CLIENTS]
    addresses = list(dict.fromkeys((str(e.get("hostname") or "?"), int(e.get("port") or cluster.PORT))
                                   for e in entries))
    plain = len({a for a, _ in addresses}) == len(addresses)
    endpoints = {a: cluster.Endpoint(a[0] if plain else f"{a[0]}:{a[1]}", a[0], a[1]) for a in addresses}
    for group in sorted({e.get("groupid", 0) for e in entries}):
        own = {a: [e for e in entries if e.get("groupid", 0) == group
                   and (str(e.get("hostname") or "?"), int(e.get("port") or cluster.PORT)) == a] for a in addresses}
        merged = [es[0] if len(es) == 1 else fio_versions.group_entry(es) for es in own.values() if es]
        outcome = cluster.by_host({"fio version": data.get("fio version", ""), "client_stats": merged},
                                  list(endpoints.values()))
        hosts = []
        for address, endpoint in endpoints.items():
            if not own[address]:
                continue
            where = f"group {group} host {endpoint.name}"
            row, raised = _row(data, own[address], {**names, "host": endpoint.name}, source, where)
            if names.get("host") not in (None, endpoint.name):
                raised.append(f"{where}: the name says host={names['host']}, the file {endpoint.name}: the file's is "
                              "kept")
            if isinstance(outcome[endpoint.name], str) and row["status"] == "ok":
                row = {**row, **results.failed(outcome[endpoint.name]), "status": "failed"}
            hosts.append({**row, "hosts": len(endpoints), "jobs_per_host": row["numjobs"]})
            said += raised
        rows += hosts + [_cluster_row(hosts)]
    return rows, said


def _cluster_row(hosts: list[dict]) -> dict:
    base = {**hosts[0], "host": ALL_HOSTS, "numjobs": sum(r["numjobs"] for r in hosts),
            "devices": sum(r["devices"] for r in hosts), "source_job": None,
            "_entries": [e for r in hosts for e in r["_entries"]]}
    base["point"] = f"{base['rw']}-bs{base['bs']}-nj{base['numjobs']}-qd{base['iodepth']}"
    failed = [r["host"] for r in hosts if r["status"] != "ok"]
    if failed:
        return {**base, **results.failed(f"{len(failed)} of {len(hosts)} hosts failed: {', '.join(failed)}")}
    row = {**base, **cluster.aggregate(hosts), "status": "ok", "error": None,
           "read_from": f"the hosts' rows summed (measure.cluster.aggregate); {hosts[0]['read_from']}"}
    return {**row, **truth.evidence(row, {})}


def rows_of(data: dict, names: Mapping, source: Mapping) -> tuple[list[dict], list[str]]:
    """Every row of one output (``fio_output.read_outputs``'), with the sentences its names raised; each row's
    ``raw_dir`` where its normalized fio.json goes (``raw/<sha256[:16]>/[output<n>/]group<g>[-<host>]``: the output's
    number when the file holds several)."""
    if "client_stats" in data:
        rows, said = _client_rows(data, names, source)
    else:
        rows, said = [], []
        for group, entries in fio_output.groups(data).items():
            row, raised = _row(data, entries, names, source, f"group {group} ({entries[0].get('jobname')})")
            rows.append(row)
            said += raised
    output = source.get("output")
    for row in rows:
        host = f"-{row['host']}" if "hosts" in row else ""
        within = f"output{output}/" if output is not None else ""
        row["raw_dir"] = f"{RAW}/{source['sha256'][:16]}/{within}group{row['source_group']}{host}".replace(":", "_")
        row["source_output"] = output or 0
    return rows, said


def _around(data: Mapping, where: str) -> list[str]:
    """What an output said besides its numbers: what reading it took or what it cannot say (``_notes``), and fio's
    lines before and after its JSON."""
    said = [f"{where}{note}" for note in data.get("_notes") or []]
    for name, words in (("_preamble", "before"), ("_postamble", "after")):
        lines = [line for line in str(data.get(name) or "").splitlines() if line.strip()]
        if lines:
            said.append(f"{where}{len(lines)} line{'s' if len(lines) > 1 else ''} of text {words} fio's JSON, kept in "
                        f"the copy and not read (the first: {lines[0].strip()[:120]!r})")
    return said


def read_file(path: Path, naming: Naming, campaign: str) -> FileOutcome:
    """One file, read only: its rows, or the reason it is refused. A file holding several outputs (runs appended to
    one file) gives the rows of each run; fio's reports of one run as it ran (``--status-interval``) are one run,
    the last report (``fio_documents.runs``)."""
    content = Path(path).read_bytes()
    outcome = FileOutcome(str(Path(path).resolve()), sha256_of(content), len(content), content=content)
    try:
        text, how = fio_documents.text_of(content, str(path))
        outputs = fio_output.read_outputs(text, str(path))
        names = naming.names_for(Path(path))
        outcome.format = ", ".join(dict.fromkeys(str(d.get("_format", "")) for d in outputs))
        outcome.fio_version = ", ".join(dict.fromkeys(str(d.get("fio version") or "") for d in outputs))
        outcome.said = [f"read as {', '.join(how)}"] if how else []
        kept = fio_documents.runs(outputs)
        several = len(kept) > 1
        if len(outputs) > 1:
            outcome.said.append(f"{len(outputs)} fio outputs in one file: {len(kept)} run{'s' if several else ''}")
        for number, (data, reports) in enumerate(kept):
            where = f"output {number}: " if several else ""
            if reports > 1:
                outcome.said.append(f"{where}the last of {reports} reports fio wrote of one run as it ran "
                                    "(--status-interval), each counted from the run's start: the last, the whole "
                                    "run, is read")
            source = {"campaign": campaign, "path": outcome.path, "sha256": outcome.sha256,
                      "format": data.get("_format", ""), "output": number if several else None}
            rows, said = rows_of(data, names, source)
            outcome.rows += rows
            outcome.said += _around(data, where) + [f"{where}{s}" for s in said]
    except (FioError, ConfigError) as exc:
        outcome.reason = str(exc).removeprefix(f"{path}: ")
        outcome.rows = []
    return outcome


def raw_files(outcome: FileOutcome) -> dict[str, bytes]:
    """The files a campaign folder keeps of one imported file: its copy, byte for byte, and per row the fio.json
    its numbers came from in fio 3.33's shape (``latency.details`` and ``raw.fio_outputs`` read it)."""
    folder = f"{RAW}/{outcome.sha256[:16]}"
    out = {f"{folder}/source/{Path(outcome.path).name}": outcome.content}
    for row in outcome.rows:
        own = [{k: v for k, v in e.items() if k != "_read_from"} for e in row.get("_entries", [])]
        out[f"{row['raw_dir']}/fio.json"] = json.dumps({"fio version": row["fio_version"], "jobs": own}, indent=1,
                                                       default=str).encode()
    return out
