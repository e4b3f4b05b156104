"""What a run was, read from fio's own output: rw, bs, iodepth, numjobs, ioengine, direct, size, runtime, target, time.

fio echoes the options it was given from fio 2.3 on (``global options`` and each entry's ``job options``,
``show_thread_status_json`` and ``__show_run_stats`` in stat.c, 66e19a38); an option it does not echo was left at
its default, which is fio's own (``.def`` in options.c, the same from fio-2.0.10 to fio-3.33: rw=read, bs=4k,
iodepth=1, numjobs=1, direct=0; ioengine ``FIO_PREFERRED_ENGINE`` in os/os.h: sync before fio-2.10, psync from
it, df96a39e). Before fio 2.3, and in terse output, nothing is echoed: what ran is then unknown, not the defaults,
and must come from the file's name or a mapping (``file_names``).

The number of jobs of a reporting group: without group_reporting fio writes one entry per job, and they are
counted. With it, one entry stands for the group, and its ``job options`` are those of the group's last job (a
group of two sections says only the last one's numjobs): for a time-based run the entry's ``job_runtime`` (fio 3.8
on: every job's run time summed, ``total_run_time``) over its runtime counts the jobs; otherwise the echoed
``numjobs`` is taken, and said to be.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Mapping

from . import derived, normal, targets, versions
from .. import fio_output
from ..jobrun import size_bytes
from .bounds import excerpt
from ...errors import ConfigError, FioError

DEFAULTS = {"rw": "read", "bs": "4096", "iodepth": "1", "numjobs": "1", "direct": "0"}
TARGETS = ("filename", "directory", "uri")
LAST_TIME = 7258118400  # 2200-01-01 UTC: a later timestamp is not one fio wrote
OFF = ("0", "false", "off", "no")
# How a group_reporting group's job count was read when nothing better says it: its last job's numjobs option, which
# a group of several job sections runs more than (a name's count is kept over it: ``file_names.reconcile``)
NUMJOBS_OPTION = "numjobs option (group_reporting: the group's last job's)"
# How a device count read from targets that may not each be a device ends (``targets``): a name's count is kept over it
DEVICES_UNSURE = "; a name's, a map's or --devices is kept over it"


def options_of(data: Mapping, entry: Mapping) -> dict | None:
    """The options one job entry ran with: ``global options`` overlaid with its ``job options`` (fio 2.3 on writes
    neither when no option was given: all are fio's defaults); None when the output cannot echo them (fio before
    2.3, terse). A client of several servers writes, from fio 3.39 on (6f771553), ``global options`` as a list, one
    object a server, each with its ``hostname`` and ``port``: the entry's own server's is taken. FioError when
    either is not what fio writes."""
    if "global options" not in data and "job options" not in entry:
        version = versions.version_of(data.get("fio version"))
        terse = str(data.get("_format", "")).startswith("terse")
        return None if terse or version is None or version < (2, 3, 0) else {}
    found = data.get("global options") or {}
    if isinstance(found, list):
        own = [g for g in found if isinstance(g, Mapping) and g.get("hostname") == entry.get("hostname")
               and g.get("port") == entry.get("port")]
        found = {k: v for k, v in own[0].items() if k not in ("hostname", "port")} if own else {}
    job = entry.get("job options") or {}
    for name, given in (("global options", found), ("job options", job)):
        if not isinstance(given, Mapping) or not all(isinstance(v, (str, int, float, type(None))) and
                                                     not isinstance(v, bool) for v in given.values()):
            raise FioError(f"{name}: expected an object of option names and values, got {excerpt(given)}")
    return {str(k): "" if v is None else str(v) for k, v in {**found, **job}.items()}


def is_on(options: Mapping, name: str) -> bool:
    """Whether a boolean option was given and not turned off (``group_reporting`` alone is on)."""
    return name in options and options[name].strip().lower() not in OFF


def default_engine(version: str) -> str:
    """fio's default ioengine at ``version``: sync before fio-2.10, psync from it (os/os.h)."""
    found = versions.version_of(version)
    return "sync" if found is not None and found < (2, 10, 0) else "psync"


def block_size(text: str, rw: str) -> int:
    """The bs of ``rw`` from fio's bs option: ``4k``, or ``read,write[,trim]`` sizes (``4k,64k``: reads of 4 KiB,
    writes of 64 KiB), the first of a range; a write-only rw takes the write size."""
    parts = text.split(",")
    writes = "write" in fio_output.DIRECTIONS.get(rw, ()) and "read" not in fio_output.DIRECTIONS.get(rw, ())
    chosen = parts[1] if writes and len(parts) > 1 and parts[1].strip() else parts[0]
    return size_bytes(chosen)


def _rw(options: Mapping) -> str:
    engine = options.get("ioengine", "")
    if engine in fio_output.METADATA_OPS:
        return engine
    return (options.get("rw") or options.get("readwrite") or DEFAULTS["rw"]).split(":")[0].strip()


def _count(text: str, name: str) -> int:
    try:
        value = size_bytes(text)
    except ConfigError:
        value = 0
    if value <= 0:
        raise FioError(f"{name}={text!r} is not a whole number above 0")
    return value


def job_count(entries: list[dict], options: Mapping | None) -> tuple[int | None, str]:
    """How many jobs a reporting group ran, and how that was read (module docstring)."""
    if options is None:
        return (len(entries), "job entries counted (fio wrote no options)") if len(entries) > 1 else (
            None, "not in the file (fio wrote no options)")
    if len(entries) > 1 or not is_on(options, "group_reporting"):
        return len(entries), "job entries counted (no group_reporting)"
    entry = entries[0]
    runtime = max(float(entry.get(d, {}).get("runtime", 0) or 0) for d in ("read", "write"))
    total = entry.get("job_runtime")
    if is_on(options, "time_based") and isinstance(total, (int, float)) and not isinstance(total, bool) and \
            0 < runtime and 0 < total <= versions.MOST:  # a NaN compares false
        jobs = round(total / runtime)
        if jobs >= 1 and abs(total - jobs * runtime) <= 0.05 * jobs * runtime:
            return jobs, "job_runtime / runtime (group_reporting, time based)"
    return _count(options.get("numjobs") or DEFAULTS["numjobs"], "numjobs"), NUMJOBS_OPTION


def fio_time(data: Mapping) -> str | None:
    """When fio wrote the output (``timestamp``, fio 2.2.5 on), UTC, ISO 8601; None before."""
    stamp = data.get("timestamp")
    if isinstance(stamp, bool) or not isinstance(stamp, (int, float)):
        return None
    if not 0 <= stamp < LAST_TIME:
        raise FioError(f"timestamp {excerpt(stamp)} is not a time fio writes (seconds since 1970, before 2200)")
    return datetime.fromtimestamp(stamp, timezone.utc).isoformat(timespec="seconds")


def described_run(entries: list[dict]) -> tuple[dict, dict]:
    """What one reporting group of fio's normal output ran (``normal``): the jobs its blocks' headers count, and
    rw, bs, iodepth and ioengine from the job's description line; direct, size and runtime are not in it."""
    found = {"fio_time": entries[0].get("_time"), "numjobs": sum(int(e.get("_header_jobs") or 1) for e in entries)}
    how = {"numjobs": "jobs= of the group's job blocks (normal output)"}
    described = [e["_described"] for e in entries if e.get("_described")]
    if not described:  # no description line read (a client's two servers print theirs over each other)
        implied, implied_how = derived.derived_run(entries)
        return {**found, **implied}, {**how, **implied_how}
    rws = list(dict.fromkeys(d["ioengine"] if d["ioengine"] in fio_output.METADATA_OPS else d["rw"].split(":")[0]
                             for d in described))
    bs = normal.block_size(described[0]["bs"], rws[0])
    found.update(rw="+".join(rws), iodepth=_count(described[0]["iodepth"], "iodepth"),
                 ioengine=described[0]["ioengine"], **({"bs": bs} if bs else {}))
    how.update({name: "the job's description line (normal output)" for name in ("rw", "bs", "iodepth")})
    return found, how


def run_of(data: Mapping, entries: list[dict]) -> tuple[dict, dict]:
    """What one reporting group (its job entries, as fio wrote them) ran, from the output alone: (the values the
    file gives, how each was read). Without echoed options only ``fio_time`` and, from its entries, ``numjobs``
    may be known; normal output says what its description lines say (``described_run``). FioError when an echoed
    option cannot be read."""
    if data.get("_format") == "normal":
        return described_run(entries)
    version = str(data.get("fio version") or "")
    found = {"fio_time": fio_time(data)}
    options = options_of(data, entries[0])
    jobs, how_jobs = job_count(entries, options)
    how = {"numjobs": how_jobs}
    if jobs is not None:
        found["numjobs"] = jobs
    if options is None:  # nothing echoed: what the numbers imply, each said derived
        implied, implied_how = derived.derived_run(entries)
        return {**found, **implied}, {**how, **implied_how}
    rws = list(dict.fromkeys(_rw(options_of(data, e) or {}) for e in entries))
    rw = "+".join(rws)
    found.update(rw=rw, bs=block_size(options.get("bs") or options.get("blocksize") or DEFAULTS["bs"], rws[0]),
                 iodepth=_count(options.get("iodepth") or DEFAULTS["iodepth"], "iodepth"),
                 ioengine=options.get("ioengine") or default_engine(version),
                 direct=int(is_on(options, "direct") or is_on(options, "o_direct")),
                 size=options.get("size"), runtime=options.get("runtime"),
                 target=next((options[t] for t in TARGETS if options.get(t)), None))
    how.update({name: "options (fio's default where not echoed)" for name in ("rw", "bs", "iodepth")})
    devices, how["devices"] = _devices(data, entries, options, jobs)
    found.update({"devices": devices} if devices is not None else {})
    return found, how


def _devices(data: Mapping, entries: list[dict], options: Mapping, jobs: int | None) -> tuple[int | None, str]:
    """How many devices a group's targets name (``targets.devices_of``), and how that was read. group_reporting's
    one entry echoes only its last job section's own targets (``job options``): none where its ``jobs`` counted are
    more than that section's numjobs (several sections), else unsure."""
    count, how, sure = targets.devices_of([options_of(data, e) or {} for e in entries])
    own = entries[0].get("job options")
    if len(entries) == 1 and is_on(options, "group_reporting") and isinstance(own, Mapping) and \
            any(t in own for t in targets.TARGETS):
        if jobs is not None and jobs != _count(options.get("numjobs") or DEFAULTS["numjobs"], "numjobs"):
            return None, (f"group_reporting over several job sections ({jobs} jobs, the last section's numjobs "
                          f"{options.get('numjobs') or DEFAULTS['numjobs']}): only the last one's targets are echoed")
        sure, how = False, how + " (group_reporting: the group's last job's)"
    return count, how + ("" if sure or count is None else DEVICES_UNSURE)
