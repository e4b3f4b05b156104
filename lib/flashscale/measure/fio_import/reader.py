"""fio's output from anywhere, read into the rows of the results table: one per reporting group of a file, one per
host and group of a client/server run and one for the cluster; ``importer`` keeps them in a campaign folder.

Each file is read only (``read_file``): its bytes hashed (SHA-256), its text read by ``read_output``
(fio 2.0.10 to 3.x, json, json+, terse, client/server), what ran taken from the file (``what_ran``) and from its
name or mapping where the file is silent (``file_names``). A file that is empty, truncated or not fio's is refused
with the reason; a job fio reports failed (``error`` not 0) or that moved no data is a failed row (``status``
failed, ``error`` why, no rate), never dropped. Every row keeps its source file, the file's SHA-256, its format,
fio's version and the fields its numbers were read from (``read_from``).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from .. import fio_client, fio_output, results, truth
from . import bounds, checks, contents, documents, file_names, normal, terse, versions, what_ran
from .bounds import excerpt
from .file_names import Naming
from ...errors import ConfigError, FioError, FlashscaleError

ALL_HOSTS = "all"  # the ``host`` of a cluster's own row, as a cluster campaign writes it (analysis.cluster_numbers.ALL)
BACKEND = "imported"
RAW = "raw"
UNEXPECTED = "an error flashscale did not expect while reading it"


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
    aside: str | None = None  # a folder's file that is not fio's output: what it is (``contents``), not read

    @property
    def failed_rows(self) -> int:
        return sum(1 for row in self.rows if row.get("status") == "failed")


def read_outputs(text: str, source: str = "fio output") -> list[dict]:
    """Every output fio 2.0.10 to 3.x wrote into ``text`` (several when runs were appended to one file), each in fio
    3.33's JSON shape: JSON or json+ (``versions.normalize``, run and client/server alike), else terse
    (``terse.read_terse``), else normal (``normal.read_normal``); ``_format`` says which (``json``, ``json+``,
    ``client/server json``, ``terse v3``, ``normal``...), ``_preamble`` and ``_postamble`` the text around it,
    ``_notes`` what reading it took (``documents``) or what it cannot say (``normal``). FioError naming ``source``
    when it is empty, truncated, not fio's, or a field cannot be read."""
    if not text.strip():
        raise FioError(f"{source}: empty: no fio output in it")
    if not documents.has_object(text):
        lines = terse.terse_lines(text)
        if normal.is_normal(text):  # it says what ran; terse lines beside it (--append-terse) are the same run's
            outputs = normal.read_normal(text, source)
            if lines:
                outputs[-1].setdefault("_notes", []).append(
                    f"{len(lines)} terse line{'s' if len(lines) > 1 else ''} beside the normal output (fio's "
                    "--append-terse: the same run), not read: the normal output says what ran")
            return outputs
        if lines:
            return [terse.read_terse(text, source)]
        raise FioError(f"{source}: not fio's output: no JSON object and no terse line (it begins {excerpt(text)})")
    outputs, others = [], []
    for document in documents.documents(text, source):
        data = document.data
        if "fio version" not in data:  # a wrapper's own JSON beside fio's: said, not read
            others.append(f"a JSON object that is not fio's output, not read (no 'fio version'; its keys: "
                          f"{', '.join(excerpt(k, 30) for k in sorted(data)[:6])})")
            continue
        if not {"jobs", "client_stats"} & set(data):
            raise FioError(f"{source}: fio's JSON with no 'jobs' or 'client_stats' (its keys: "
                           f"{', '.join(excerpt(k, 30) for k in sorted(data)[:6])})")
        form = "json+" if versions.is_json_plus(data) else "json"
        outputs.append({**versions.normalize(data, source),
                        "_format": f"client/server {form}" if "client_stats" in data else form,
                        "_preamble": document.preamble, "_postamble": document.postamble,
                        "_notes": list(document.repaired)})
    if not outputs:
        raise FioError(f"{source}: not fio's output: {others[0]}")
    outputs[0]["_notes"] += others[:3] + ([f"and {len(others) - 3} more such objects"] if len(others) > 3 else [])
    return outputs


def read_output(text: str, source: str = "fio output") -> dict:
    """The one output in ``text``, as ``read_outputs`` reads it; FioError when it holds more than one."""
    outputs = read_outputs(text, source)
    if len(outputs) > 1:
        raise FioError(f"{source}: {len(outputs)} fio outputs in one file, where one was expected")
    return outputs[0]


def sha256_of(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def _error_words(entry: Mapping) -> str:
    error = entry.get("error")
    reason = os.strerror(error) if isinstance(error, int) and 0 < error < 4096 else "unknown"
    return f"fio reported error {error} ({reason}) for job {excerpt(entry.get('jobname'), 40)}"


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
        why = f"job {excerpt(entry.get('jobname'), 40)} moved no data (io_bytes = 0)"
        return results.failed(why), why
    if entry.get("_mixed"):
        ways = fio_output.DIRECTIONS.get(rw, ("read", "write"))
        numbers["read_bw_bytes"] = numbers["bw_bytes"] if ways == ("read",) else math.nan
        numbers["write_bw_bytes"] = numbers["bw_bytes"] if ways == ("write",) else math.nan
    return numbers, None


def _row(data: Mapping, entries: list[dict], names: Mapping, source: Mapping, where: str) -> tuple[dict, list]:
    """One row of one reporting group's entries (one host's, in a client/server run), and what it raised."""
    entry = entries[0] if len(entries) == 1 else versions.group_entry(entries)
    found, how = what_ran.run_of(data, entries)
    weak = frozenset(name for name in ("bs", "iodepth") if str(how.get(name, "")).startswith("derived")) | \
        (frozenset({"numjobs"}) if how.get("numjobs") == what_ran.NUMJOBS_OPTION else frozenset()) | \
        (frozenset({"devices"}) if str(how.get("devices", "")).endswith(what_ran.DEVICES_UNSURE) else frozenset())
    axes, said = file_names.reconcile(found, names, weak)
    lacking = file_names.missing(axes, names)
    if lacking:
        raise ConfigError(f"{where}: {', '.join(lacking)} neither in the file nor given (--pattern, --map, --layout, "
                          f"--devices){_silent(data, found, lacking, how)}")
    numbers, failure = _numbers(data, entry, axes["rw"])
    derived = [f"{name}: {how[name]}" for name in ("rw", "bs", "iodepth") if str(how.get(name, "")).startswith(
        "derived") and (name != "rw" or "direction" in found)]
    row = {"campaign": source["campaign"], "host": names.get("host") or "", "layout": names["layout"], **axes,
           "rep": 0, "warmup": False, "phase": "measure",
           "point": f"{axes['rw']}-bs{axes['bs']}-nj{axes['numjobs']}-qd{axes['iodepth']}",
           "backend": BACKEND, "status": "failed" if failure else "ok", **numbers,
           "fio_version": str(data.get("fio version") or "")[:80], "source_file": source["path"],
           "source_sha256": source["sha256"], "source_format": source["format"], "source_job": entry.get("jobname"),
           "source_group": entry.get("groupid", 0), "name_rep": names.get("rep"),
           "read_from": "; ".join([*entry.get("_read_from", []), *derived, f"numjobs: {how['numjobs']}",
                                   *([f"devices: {how['devices']}"] if found.get("devices") == axes["devices"]
                                     else [])]),
           **{k: found.get(k) for k in ("fio_time", "ioengine", "direct", "target")},
           "size_option": found.get("size"), "runtime_option": found.get("runtime")}
    row["run_id"] = (row["fio_time"] or "").replace("-", "").replace(":", "").replace("+0000", "Z")
    row = {**checks.checked(row), "_entries": entries}
    return {**row, **truth.evidence(row, {})}, [f"{where}: {s}" for s in said]


def _silent(data: Mapping, found: Mapping, lacking: list[str], how: Mapping) -> str:
    """Why the file does not say what is lacking: no options echoed, and what its numbers gave instead."""
    if "rw" in lacking and found.get("direction"):
        return (f"; {excerpt(data.get('fio version') or 'this fio', 20)} echoes no options: its numbers say which "
                f"way it moved data ({found['direction']}), not whether at random or in sequence (give rw: random "
                "or sequential, or a whole rw)")
    if "rw" in lacking or "numjobs" in lacking:
        return f"; {excerpt(data.get('fio version') or 'this fio', 20)} echoes no options here" + (
            " (one job entry: one job, or a group_reporting group of several)" if "numjobs" in lacking else "")
    known = [f"{name}: {how[name]}" for name in lacking if name in how]
    return "; " + "; ".join(known) if known else ""


def _jobs(entries: list[dict]) -> list[str]:
    return [str(entry.get("jobname") or "") for entry in entries]


def _hosts(entries: list[dict]) -> list[tuple[str, int]]:
    """The servers of a client's entries, in order: (hostname, port)."""
    return list(dict.fromkeys((str(e.get("hostname") or "?"), int(e.get("port") or fio_client.PORT)) for e in entries))


def _client_rows(data: Mapping, naming: Naming, source: Mapping) -> tuple[list[dict], list[str]]:
    """A client/server run: per reporting group, one row per host (``fio_client.by_host`` reads each host's entries)
    and one for the cluster (``fio_client.aggregate``, or failed when a host failed)."""
    rows, said = [], []
    entries = [e for e in data.get("client_stats", []) if e.get("jobname") != fio_client.ALL_CLIENTS]
    addresses = _hosts(entries)
    plain = len({a for a, _ in addresses}) == len(addresses)
    endpoints = {a: fio_client.Endpoint(a[0] if plain else f"{a[0]}:{a[1]}", a[0], a[1]) for a in addresses}
    for group in sorted({e.get("groupid", 0) for e in entries}):
        own = {a: [e for e in entries if e.get("groupid", 0) == group
                   and (str(e.get("hostname") or "?"), int(e.get("port") or fio_client.PORT)) == a] for a in addresses}
        merged = [es[0] if len(es) == 1 else versions.group_entry(es) for es in own.values() if es]
        outcome = fio_client.by_host({"fio version": data.get("fio version", ""), "client_stats": merged},
                                  list(endpoints.values()))
        hosts = []
        for number, (address, endpoint) in enumerate(endpoints.items()):
            if not own[address]:
                continue
            where = f"group {group} host {excerpt(endpoint.name, 40)}"
            names = naming.names_for(Path(source["path"]), source["output"], _jobs(own[address]))
            row, raised = _row(data, own[address], {**names, "host": endpoint.name}, source, where)
            if names.get("host") not in (None, endpoint.name):
                raised.append(f"{where}: the name says host={names['host']}, the file {excerpt(endpoint.name, 40)}: "
                              "the file's is kept")
            if isinstance(outcome[endpoint.name], str) and row["status"] == "ok":
                row = {**row, **results.failed(outcome[endpoint.name]), "status": "failed"}
            hosts.append({**row, "hosts": len(endpoints), "jobs_per_host": row["numjobs"],
                          "raw_dir": f"group{group}-host{number}"})
            said += raised
        rows += hosts + [{**_cluster_row(hosts), "raw_dir": f"group{group}-all"}]
    return rows, said


def _cluster_row(hosts: list[dict]) -> dict:
    base = {**hosts[0], "host": ALL_HOSTS, "numjobs": sum(r["numjobs"] for r in hosts),
            "devices": sum(r["devices"] for r in hosts), "source_job": None,
            "_entries": [e for r in hosts for e in r["_entries"]]}
    base["point"] = f"{base['rw']}-bs{base['bs']}-nj{base['numjobs']}-qd{base['iodepth']}"
    failed = [r["host"] for r in hosts if r["status"] != "ok"]
    if failed:
        return {**base, **results.failed(f"{len(failed)} of {len(hosts)} hosts failed: "
                                         f"{', '.join(excerpt(h, 40) for h in failed[:4])}")}
    row = {**base, **fio_client.aggregate(hosts), "status": "ok", "error": None,
           "read_from": f"the hosts' rows summed (measure.fio_client.aggregate); {hosts[0]['read_from']}"}
    row = checks.checked(row)
    return {**row, **truth.evidence(row, {})}


def rows_of(data: dict, naming: Naming, source: Mapping) -> tuple[list[dict], list[str]]:
    """Every row of one output (``read_outputs``'), with the sentences its names raised; each row's
    ``raw_dir`` where its normalized fio.json goes: ``raw/<sha256[:16]>/[output<n>/]group<g>[-host<h>|-all]``,
    every part of it a number the import counts (the output's in its file, fio's group, the host's in the file),
    none a name the file gives."""
    if "client_stats" in data:
        rows, said = _client_rows(data, naming, source)
    else:
        rows, said = [], []
        for group, entries in fio_output.groups(data).items():
            names = naming.names_for(Path(source["path"]), source["output"], _jobs(entries))
            row, raised = _row(data, entries, names, source, f"group {group} ({excerpt(entries[0].get('jobname'), 40)})")
            rows.append({**row, "raw_dir": f"group{group}"})
            said += raised
    within = f"output{source['output']}/" if source["several"] else ""
    for row in rows:
        row["raw_dir"] = f"{RAW}/{source['sha256'][:16]}/{within}{row['raw_dir']}"
        row["source_output"] = source["output"]
    return rows, said


def _around(data: Mapping, where: str) -> list[str]:
    """What an output said besides its numbers: what reading it took or what it cannot say (``_notes``), and fio's
    lines before and after its JSON."""
    said = [f"{where}{note}" for note in data.get("_notes") or []]
    for name, words in (("_preamble", "before"), ("_postamble", "after")):
        lines = [line for line in str(data.get(name) or "").splitlines() if line.strip()]
        if lines:
            said.append(f"{where}{len(lines)} line{'s' if len(lines) > 1 else ''} of text {words} fio's JSON, kept in "
                        f"the copy and not read (the first: {excerpt(lines[0].strip())})")
    return said


def read_file(path: Path, naming: Naming, campaign: str, by_content: bool = False) -> FileOutcome:
    """One file, read only: its rows, or the reason it is refused; no error escapes (one flashscale did not expect
    is the reason, named so). A file holding several outputs (runs appended to one file) gives the rows of each run;
    fio's reports of one run as it ran (``--status-interval``) are one run, the last report (``documents.runs``).
    At most ``bounds.MAX_BYTES`` is read of it, or expanded of it when it is compressed. ``by_content`` (an import's
    files): one that is not fio's output is left aside (``aside`` says what it is), not refused."""
    outcome = FileOutcome(str(Path(path).resolve()), "", 0)
    try:
        outcome.aside = contents.by_head(bounds.head(path, contents.HEAD)) if by_content else None
        if outcome.aside is not None:
            return outcome
        content = bounds.read_bounded(path)
        outcome.sha256, outcome.size, outcome.content = sha256_of(content), len(content), content
        _read(outcome, Path(path), naming, campaign, by_content)
        checks.tabulates(outcome.rows)
    except (FlashscaleError, OSError) as exc:
        outcome.reason, outcome.rows = str(exc).removeprefix(f"{path}: "), []
    except Exception as exc:  # noqa: BLE001 - one file's surprise must not cost the others: said, not raised
        outcome.reason, outcome.rows = f"{UNEXPECTED} ({type(exc).__name__}: {excerpt(str(exc))})", []
    if outcome.reason is not None:
        outcome.content = b""  # nothing of a refused file is kept
    return outcome


def _read(outcome: FileOutcome, path: Path, naming: Naming, campaign: str, by_content: bool) -> None:
    text, how = documents.text_of(outcome.content, str(path))
    outcome.aside = contents.not_fio(text) if by_content else None
    if outcome.aside is not None:
        outcome.content = b""
        return
    outputs = read_outputs(text, str(path))
    outcome.format = ", ".join(dict.fromkeys(str(d.get("_format", "")) for d in outputs))
    outcome.fio_version = excerpt(", ".join(dict.fromkeys(str(d.get("fio version") or "") for d in outputs)), 80)[1:-1]
    outcome.said = [f"read as {', '.join(how)}"] if how else []
    kept = documents.runs(outputs)
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
                  "format": data.get("_format", ""), "output": number, "several": several}
        rows, said = rows_of(data, naming, source)
        outcome.rows += rows
        outcome.said += _around(data, where) + [f"{where}{s}" for s in said]


def raw_files(outcome: FileOutcome) -> dict[str, bytes]:
    """The files a campaign folder keeps of one imported file: its copy, byte for byte, under a name the import
    makes of its own (``source/`` and the file's name in letters, digits, ``.``, ``_`` and ``-``), and per row the
    fio.json its numbers came from in fio 3.33's shape (``latency.details`` and ``raw.fio_outputs`` read it)."""
    folder = f"{RAW}/{outcome.sha256[:16]}"
    out = {f"{folder}/source/{safe_name(Path(outcome.path).name)}": outcome.content}
    for row in outcome.rows:
        own = [{k: v for k, v in e.items() if k != "_read_from"} for e in row.get("_entries", [])]
        out[f"{row['raw_dir']}/fio.json"] = json.dumps({"fio version": row["fio_version"], "jobs": own}, indent=1,
                                                       default=str).encode()
    return out


def safe_name(name: str) -> str:
    """A file's name as a plain name of a file in a folder: letters, digits, ``.``, ``_``, ``-`` (others ``_``), not
    beginning with ``.``, at most 100 characters."""
    plain = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in name)[:100].lstrip(".")
    return plain or "file"
