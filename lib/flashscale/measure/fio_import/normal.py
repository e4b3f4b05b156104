"""fio's normal (human) output, the one fio prints unless told otherwise, read into the shape fio 3.33's JSON has.

Pure. What most people kept of a run by hand: a terminal's text, a log. Two layouts, checked against stat.c at
each tag (``show_ddir_status``, ``show_thread_status_normal``, ``show_run_stats``):

    fio 2.0 to 2.20   ``  read : io=203360KB, bw=10577KB/s, iops=21153 , runt= 19227msec``
    fio 2.21 on       ``  read: IOPS=18.2k, BW=71.3MiB/s (74.7MB/s)(71.4MiB/1001msec)``

Each job block begins ``name: (groupid=G, jobs=N): err= E: pid=P: <date>``; a client of fio servers (``--client``)
prints every server's blocks alike, with no host's name on them, and fio's own sum of them (``All clients``, not
read): its groups are read as one of all the hosts, and that is said; what a job ran is in the lines fio prints
before it starts, ``name: (g=G): rw=randread, bs=(R) 4096B-4096B, ..., ioengine=psync, iodepth=1`` (fio 2.0:
``bs=4K-4K/4K-4K``). Nothing says ``direct``, ``size`` or ``runtime``: they are unknown, not fio's defaults.

Numbers: fio 2.x's ``KB`` is 1024 bytes (``kb_base=1024``, fio's default; a run with ``kb_base=1000`` says the same
letters, and cannot be told apart); fio 2.21 on says KiB or kB. The bytes moved are taken, where fio printed it,
from ``issued``'s count of I/Os times the block size (exact for a fixed block size), else from the side's ``io=``
(fio rounds it to 4 to 6 significant figures). Bandwidth is bytes x 1000 / runtime (ms), as fio computes it.
Latencies (``clat``, ``lat``, ``slat``: nsec, usec or msec as the line says) and clat percentiles are in ns.
"""
from __future__ import annotations

import re
from datetime import datetime

from ...errors import FioError
from .bounds import excerpt
from ..units import read_bytes

# Every pattern reads one line, in time linear in its length: no two repeated parts of a pattern can take the same
# characters, numbers have bounded digits, and a name ends where fio's fixed words begin (``_named``).
# A job's description, printed before it starts: ``name: (g=0): rw=..., bs=..., ioengine=..., iodepth=N``
DESCRIBED = re.compile(r"(?P<group>\d{1,9})\): rw=(?P<rw>[^,]*), bs=(?P<bs>[^=]*), "
                       r"ioengine=(?P<engine>[^,\s]+), iodepth=(?P<depth>\d{1,9})")
# A job block's header: ``name: (groupid=0, jobs=1): err= 0: pid=7: <date>``, after its name
HEADER = re.compile(r"(?P<group>\d{1,9}), jobs=(?P<jobs>\d{1,9})\): err=\s*(?P<error>-?\d{1,9})"
                    r"(?: \((?P<why>[^)]*)\))?: pid=(?P<pid>\d{1,12}): (?P<date>.*)")
NUMBER = r"\d{1,20}(?:\.\d{1,20})?"
SIDE_OLD = re.compile(rf"\s+(?P<side>read|write|trim|mixed)\s*: io=(?P<io>{NUMBER}\s*[A-Za-z]{{0,4}}), "
                      rf"bw=(?P<bw>{NUMBER}\s*[A-Za-z]{{0,4}})/s, iops=(?P<iops>{NUMBER}[A-Za-z]?)\s*, "
                      r"runt=\s*(?P<ms>\d{1,15})msec")
SIDE_NEW = re.compile(rf"\s+(?P<side>read|write|trim|mixed)\s*: IOPS=(?P<iops>{NUMBER}[A-Za-z]?), "
                      rf"BW=(?P<bw>{NUMBER}[A-Za-z]{{0,4}})/s \([^)]*\)\((?P<io>{NUMBER}[A-Za-z]{{0,4}})/"
                      r"(?P<ms>\d{1,15})msec\)")
LATENCY = re.compile(rf"\s+(?P<kind>slat|clat|lat)\s*\((?P<unit>[num]sec)\): min=\s*(?P<min>{NUMBER}[kKMG]?)\s*, "
                     rf"max=\s*(?P<max>{NUMBER}[kKMG]?)\s*, avg=\s*(?P<avg>{NUMBER})\s*, stdev=\s*(?P<dev>{NUMBER})")
PERCENTILES = re.compile(r"\s+clat percentiles \((?P<unit>[num]sec)\):")
# one percentile: it begins where a number begins (never inside a run of digits), so finditer stays linear
PERCENTILE = re.compile(r"(?<![\d.])(?P<p>\d{1,3}\.\d{1,6})th=\[\s*(?P<value>\d{1,20})\]")
ISSUED = re.compile(r"\s+issued[a-z ]{0,8}:\s*total=(?P<total>\S+)")
DEPTHS = re.compile(r"\s+IO depths\s*: (?P<levels>.*)")  # 1=100.0%, 2=0.0%, 4=0.0%, ..., >=64=0.0%
DEPTH = re.compile(r"(?<![\d>=])(>=\d{1,4}|\d{1,4})=(\d{1,3}(?:\.\d{1,4})?)%")
HOST_PREFIX = re.compile(r"^<[^>\s]+> ")
ALL_CLIENTS = "All clients"
VERSION = re.compile(r"fio[- ](?P<version>\d{1,4}\.\d{1,4}\S{0,40})")
UNIT_NS = {"nsec": 1, "usec": 1000, "msec": 1_000_000}
SI = {"": 1, "k": 1000, "K": 1000, "M": 1000**2, "G": 1000**3, "T": 1000**4, "P": 1000**5}
SIDES = ("read", "write", "trim")


def _named(line: str, pattern: re.Pattern, marker: str) -> tuple[str, re.Match] | None:
    """A line that begins with a job's name, then ``marker`` (``: (groupid=``), then what ``pattern`` reads: the
    name and the match; None for any other line. The name ends at the first ``marker``, found without a pattern."""
    name, found, rest = line.partition(marker)
    if not found or not name or name[0].isspace():
        return None
    match = pattern.match(rest)
    return None if match is None else (name, match)


def header(line: str) -> tuple[str, re.Match] | None:
    """A job block's header line: the job's name and the rest, read (``HEADER``); None for another line."""
    return _named(line, HEADER, ": (groupid=")


def description(line: str) -> tuple[str, re.Match] | None:
    """A job's description line: its name and the rest, read (``DESCRIBED``); None for another line."""
    return _named(line, DESCRIBED, ": (g=")


def is_normal(text: str) -> bool:
    """Whether ``text`` holds fio's normal output: a job block's header."""
    return any(header(line) for line in text.splitlines())


def _bytes(text: str, old: bool, where: str) -> float:
    """A size fio printed: ``71.4MiB``, ``3390MB``, ``203360KB`` (fio 2.x: powers of 1024), ``1024.0MB``, ``512B``."""
    value = read_bytes(text, k1024=old, bits=True)
    if value is None:
        raise FioError(f"{where}: {excerpt(text)} is not a size fio prints")
    return value


def _count(text: str, where: str) -> float:
    """An I/O rate or latency fio printed with an SI letter: ``18.2k``, ``546k``, ``4040.1k``, ``21153``."""
    match = re.fullmatch(r"(\d{1,20}(?:\.\d{1,20})?)([kKMGTP]?)", text.strip())
    if not match:
        raise FioError(f"{where}: {excerpt(text)} is not a number fio prints")
    return float(match.group(1)) * SI[match.group(2)]


def _spans(text: str) -> dict[str, tuple[str, str]]:
    """Each direction's block sizes as a description's ``bs=`` gives them, (low, high): ``(R) 4096B-4096B, (W)
    64.0KiB-64.0KiB, ...`` (fio 2.21 on) or ``4K-4K/64K-64K[/4K-4K]`` (read/write[/trim], before)."""
    labelled = re.findall(r"\(([RWT])\)\s*([^,]{1,40})", text)
    parts = [(dict(R="read", W="write", T="trim")[k], v) for k, v in labelled] if labelled else \
        list(zip(SIDES, text.split("/")))
    spans = {}
    for side, span in parts:
        low, _, high = (part.strip() for part in span.strip().partition("-"))
        spans[side] = (low, high or low)
    return spans


def _size(text: str) -> int | None:
    """One block size as a description prints it (``4096B``, ``64.0KiB``, fio 2.x's ``4K``, ``512``); None when it
    is none."""
    try:
        return int(_bytes(text if text[-1:] in "Bt" else text + "B", True, "bs"))
    except FioError:
        return None


def _block_sizes(text: str) -> dict[str, int]:
    """The block size of each direction that has one size (a range's bytes come from io=, not from a count of
    I/Os)."""
    return {side: size for side, (low, high) in _spans(text).items() if low == high and (size := _size(low))}


def block_size(text: str, rw: str) -> int | None:
    """The block size a description's ``bs=`` gives ``rw``: the write side's for a write-only rw, else the read
    side's; a range's low end; None when it cannot be read."""
    spans = _spans(text)
    side = "write" if rw in ("write", "randwrite", "trimwrite") and "write" in spans else "read"
    return _size(spans[side][0]) if side in spans and spans[side][0] else None


def _issued(text: str) -> list[int] | None:
    """``total=18267,0,0,0`` (fio 2.21 on) or ``total=r=406720/w=0/d=0`` (before): the I/Os of each direction."""
    values = re.findall(r"(?:[rwdt]=)?(\d{1,19})", text)
    return [int(v) for v in values] if values else None


def _side(match: re.Match, old: bool, issued: int | None, bs: int | None, where: str) -> dict:
    runtime = int(match["ms"])
    printed = _bytes(match["io"], old, where)
    exact = issued is not None and bs is not None and abs(issued * bs - printed) <= 0.01 * printed + 1024
    io_bytes = issued * bs if exact else round(printed)
    # IOPS as fio computes it (1000 x I/Os / runtime) where it counted them: what it printed is 3 or 4 figures,
    # and some versions print the decimals wrong (fio 3.8: 40960 as 40.0k)
    iops = 1000 * issued / runtime if exact and runtime else _count(match["iops"], where)
    return {"io_bytes": int(io_bytes), "bw_bytes": float(1000 * io_bytes // runtime) if runtime else 0.0,
            "iops": float(iops), "runtime": runtime, "_bytes_from": "issued x bs" if exact else "io= (rounded by fio)"}


def _entry(name: str, head: re.Match, lines: list[str], described: dict, source: str) -> dict:
    where = f"{source}: job {excerpt(name)}"
    entry = {"jobname": name, "groupid": int(head["group"]), "error": int(head["error"]),
             "_header_jobs": int(head["jobs"]), "_time": _time(head["date"]), "_pid": int(head["pid"])}
    if name in described:
        entry["_described"] = described[name]
    bs = _block_sizes(described.get(name, {}).get("bs", ""))
    issued = next((_issued(m["total"]) for line in lines if (m := ISSUED.match(line))), None)
    side, percentile_unit, old = None, None, False
    for line in lines:
        if (match := SIDE_OLD.match(line) or SIDE_NEW.match(line)):
            old = match.re is SIDE_OLD
            side = "read" if match["side"] == "mixed" else match["side"]
            counted = _count_of(issued, match["side"])
            entry[side] = _side(match, old, counted, _bs_of(bs, match["side"]), where)
            if counted is not None:
                entry[side]["total_ios"] = counted
            entry["_mixed"] = entry.get("_mixed") or match["side"] == "mixed"
            percentile_unit = None
        elif (match := DEPTHS.match(line)):
            entry["iodepth_level"] = {k: float(v) for k, v in DEPTH.findall(match["levels"])}
        elif side and (match := LATENCY.match(line)):
            scale = UNIT_NS[match["unit"]]
            entry[side][f"{match['kind']}_ns"] = {
                "min": _count(match["min"], where) * scale, "max": _count(match["max"], where) * scale,
                "mean": float(match["avg"]) * scale, "stddev": float(match["dev"]) * scale}
        elif side and (match := PERCENTILES.match(line)):
            percentile_unit = UNIT_NS[match["unit"]]
            entry[side].setdefault("clat_ns", {"mean": float("nan")})["percentile"] = {}
        elif side and percentile_unit and line.lstrip().startswith("|"):
            for found in PERCENTILE.finditer(line):
                entry[side]["clat_ns"]["percentile"][f"{float(found['p']):f}"] = int(found["value"]) * percentile_unit
        else:
            percentile_unit = None
    for direction in SIDES:
        entry.setdefault(direction, {"io_bytes": 0, "bw_bytes": 0.0, "iops": 0.0, "runtime": 0,
                                     "clat_ns": {"mean": 0.0, "stddev": 0.0}, "lat_ns": {"mean": 0.0, "stddev": 0.0}})
        for kind in ("clat_ns", "lat_ns"):  # fio prints a latency only where it timed some (not with gtod_reduce)
            entry[direction].setdefault(kind, {"mean": float("nan"), "stddev": float("nan")})
    how = sorted({entry[d].pop("_bytes_from") for d in SIDES if "_bytes_from" in entry[d]})
    units = "KB as 1024 bytes (fio 2.x, kb_base=1024)" if old else "KiB/kB as printed"
    entry["_read_from"] = [f"normal output: bytes from {' and '.join(how) or 'nothing moved'}, over runt (ms); "
                           f"{units}", "clat, lat (unit as printed -> ns)", "clat percentiles (as printed -> ns)"]
    return entry


def _count_of(issued: list[int] | None, side: str) -> int | None:
    """The I/Os fio issued on ``side`` (``issued``: read, write, trim), or of reads and writes for ``mixed`` (each
    version counts a unified side's I/Os on its own or on read's)."""
    if not issued:
        return None
    if side == "mixed":
        return sum(issued[:2])
    index = SIDES.index(side)
    return issued[index] if len(issued) > index else None


def _bs_of(bs: dict[str, int], side: str) -> int | None:
    """The one block size of ``side``; of ``mixed``, the one all directions share."""
    if side == "mixed":
        return next(iter(bs.values())) if len(set(bs.values())) == 1 else None
    return bs.get(side)


def _time(text: str) -> str | None:
    """fio's ``Thu Dec  6 09:18:04 2012`` (ctime, the machine's local time, its zone unsaid) as ISO 8601 without a
    zone; None when it is not one."""
    try:
        return datetime.strptime(" ".join(text.split()), "%a %b %d %H:%M:%S %Y").isoformat()
    except ValueError:
        return None


def read_normal(text: str, source: str = "fio output") -> list[dict]:
    """Every output in fio's normal text, each as fio 3.33's JSON would hold it: ``fio version``, ``jobs`` (one entry
    per job block: per group with group_reporting, per job without), ``_format`` ``normal``, ``_pids`` (the
    processes its blocks name). Runs appended to one file are each an output; so is each of fio's reports of one run
    as it runs (``--status-interval``: the same jobs' blocks again, their pids the same), which
    ``documents.runs`` then takes as one run. FioError naming ``source`` when there is no job block, or a number
    cannot be read."""
    outputs: list[dict] = []
    version, described, blocks, seen, again = "", {}, [], set(), False  # this output's (again: a later report)
    current: list[str] | None = None
    hosts = []
    for line in text.splitlines():
        if line.startswith("hostname="):
            hosts.append(line.split(",")[0].removeprefix("hostname="))
            continue
        served = HOST_PREFIX.match(line) is not None
        line = HOST_PREFIX.sub("", line)  # a client's lines of each server: "<host> one: (g=0): ..."
        if line.startswith(f"{ALL_CLIENTS}: (groupid="):
            current = None  # fio's own sum of the clients: the hosts' blocks are summed as the JSON's are
            continue
        if (named := description(line)):
            if blocks and not served:  # a new run's descriptions after the last run's results (a client's next
                # server describes its jobs after the first server's results: the same run)
                outputs.append(_output(version, described, blocks, source, again))
                version, described, blocks, seen, current, again = "", {}, [], set(), None, False
            name, match = named
            described[name] = {"rw": match["rw"].strip(), "bs": match["bs"], "ioengine": match["engine"],
                               "iodepth": match["depth"]}
        elif (match := VERSION.fullmatch(line.strip())) and not blocks:
            version = f"fio-{match['version']}"
        elif (named := header(line)):
            key = (named[0], named[1]["group"], named[1]["pid"])
            if key in seen:  # the same job's block again: the next report of the same run (--status-interval)
                outputs.append(_output(version, described, blocks, source, again))
                blocks, seen, again = [], set(), True
            seen.add(key)
            current = []
            blocks.append((*named, current))
        elif line.startswith("Run status group") or line.startswith("Disk stats"):
            current = None
        elif current is not None:
            current.append(line)
    if blocks:
        outputs.append(_output(version, described, blocks, source, again))
    for output in outputs if hosts else []:
        output["_notes"] = [_client_note(hosts)]
    if not outputs:
        raise FioError(f"{source}: no job block of fio's normal output ('name: (groupid=0, jobs=1): err= 0: ...')")
    return outputs


def _client_note(hosts: list[str]) -> str:
    return (f"client/server normal output of {len(hosts)} hosts ({', '.join(excerpt(h, 40) for h in hosts[:4])}): "
            "its job blocks name no host, so each group is one row of all of them, not one a host")


def _output(version: str, described: dict, blocks: list, source: str, again: bool) -> dict:
    """One output's entries; ``_pids`` its jobs' processes, ``_again`` whether it is a later report of the run
    before it (the same jobs' blocks again, with no description lines of a new run between)."""
    jobs = [_entry(name, head, lines, described, source) for name, head, lines in blocks]
    return {"fio version": version, "jobs": jobs, "_format": "normal", "_pids": [job.pop("_pid") for job in jobs],
            "_again": again}
