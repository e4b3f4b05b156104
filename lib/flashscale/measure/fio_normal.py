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

from ..errors import FioError

# A job's description, printed before it starts: name, group, rw, bs (up to ioengine=), ioengine, iodepth
DESCRIBED = re.compile(r"^(?P<name>\S.*?): \(g=(?P<group>\d+)\): rw=(?P<rw>[^,]+), bs=(?P<bs>.+?), "
                       r"ioengine=(?P<engine>[^,\s]+), iodepth=(?P<depth>\d+)")
HEADER = re.compile(r"^(?P<name>\S.*?): \(groupid=(?P<group>\d+), jobs=(?P<jobs>\d+)\): err=\s*(?P<error>-?\d+)"
                    r"(?: \((?P<why>.*?)\))?: pid=\d+: (?P<date>.+?)\s*$")
SIDE_OLD = re.compile(r"^\s+(?P<side>read|write|trim|mixed)\s*: io=(?P<io>[\d.]+\s*[A-Za-z]*), "
                      r"bw=(?P<bw>[\d.]+\s*[A-Za-z]*)/s, iops=(?P<iops>[\d.]+[A-Za-z]?)\s*, runt=\s*(?P<ms>\d+)msec")
SIDE_NEW = re.compile(r"^\s+(?P<side>read|write|trim|mixed)\s*: IOPS=(?P<iops>[\d.]+[A-Za-z]?), "
                      r"BW=(?P<bw>[\d.]+[A-Za-z]*)/s \([^)]*\)\((?P<io>[\d.]+[A-Za-z]*)/(?P<ms>\d+)msec\)")
LATENCY = re.compile(r"^\s+(?P<kind>slat|clat|lat)\s*\((?P<unit>[num]sec)\): min=\s*(?P<min>[\d.]+[kKMG]?)\s*, "
                     r"max=\s*(?P<max>[\d.]+[kKMG]?)\s*, avg=\s*(?P<avg>[\d.]+)\s*, stdev=\s*(?P<dev>[\d.]+)")
PERCENTILES = re.compile(r"^\s+clat percentiles \((?P<unit>[num]sec)\):")
PERCENTILE = re.compile(r"(?P<p>\d+\.\d+)th=\[\s*(?P<value>\d+)\]")
ISSUED = re.compile(r"^\s+issued[\w ]*:\s*total=(?P<total>\S+)")
HOST_PREFIX = re.compile(r"^<[^>\s]+> ")
ALL_CLIENTS = "All clients"
VERSION = re.compile(r"^fio[- ](?P<version>\d+\.\d+\S*)\s*$")
UNIT_NS = {"nsec": 1, "usec": 1000, "msec": 1_000_000}
SI = {"": 1, "k": 1000, "K": 1000, "M": 1000**2, "G": 1000**3, "T": 1000**4, "P": 1000**5}
SIDES = ("read", "write", "trim")


def is_normal(text: str) -> bool:
    """Whether ``text`` holds fio's normal output: a job block's header."""
    return any(HEADER.match(line) for line in text.splitlines())


def _bytes(text: str, old: bool, where: str) -> float:
    """A size fio printed: ``71.4MiB``, ``3390MB``, ``203360KB`` (fio 2.x: powers of 1024), ``1024.0MB``, ``512B``."""
    match = re.fullmatch(r"([\d.]+)\s*([kKMGTPE]?)(i?)(B|bit)?", text.strip())
    if not match:
        raise FioError(f"{where}: {text!r} is not a size fio prints")
    number, prefix, iec, unit = match.groups()
    power = "KMGTPE".find(prefix.upper()) + 1 if prefix else 0
    base = 1024 if (iec or old) else 1000
    value = float(number) * base ** power
    return value / 8 if unit == "bit" else value


def _count(text: str, where: str) -> float:
    """An I/O rate or latency fio printed with an SI letter: ``18.2k``, ``546k``, ``4040.1k``, ``21153``."""
    match = re.fullmatch(r"([\d.]+)([kKMGTP]?)", text.strip())
    if not match:
        raise FioError(f"{where}: {text!r} is not a number fio prints")
    return float(match.group(1)) * SI[match.group(2)]


def _spans(text: str) -> dict[str, tuple[str, str]]:
    """Each direction's block sizes as a description's ``bs=`` gives them, (low, high): ``(R) 4096B-4096B, (W)
    64.0KiB-64.0KiB, ...`` (fio 2.21 on) or ``4K-4K/64K-64K[/4K-4K]`` (read/write[/trim], before)."""
    labelled = re.findall(r"\(([RWT])\)\s*([^,]+)", text)
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
    values = re.findall(r"(?:[rwdt]=)?(\d+)", text)
    return [int(v) for v in values] if values else None


def _side(match: re.Match, old: bool, issued: int | None, bs: int | None, where: str) -> dict:
    runtime = int(match["ms"])
    printed = _bytes(match["io"], old, where)
    exact = issued is not None and bs is not None and abs(issued * bs - printed) <= 0.01 * printed + 1024
    io_bytes = issued * bs if exact else round(printed)
    return {"io_bytes": int(io_bytes), "bw_bytes": float(1000 * io_bytes // runtime) if runtime else 0.0,
            "iops": _count(match["iops"], where), "runtime": runtime,
            "_bytes_from": "issued x bs" if exact else "io= (rounded by fio)"}


def _entry(header: re.Match, lines: list[str], described: dict, source: str) -> dict:
    name = header["name"]
    where = f"{source}: job {name!r}"
    entry = {"jobname": name, "groupid": int(header["group"]), "error": int(header["error"]),
             "_header_jobs": int(header["jobs"]), "_time": _time(header["date"])}
    if name in described:
        entry["_described"] = described[name]
    bs = _block_sizes(described.get(name, {}).get("bs", ""))
    issued = next((_issued(m["total"]) for line in lines if (m := ISSUED.match(line))), None)
    side, percentile_unit, old = None, None, False
    for line in lines:
        if (match := SIDE_OLD.match(line) or SIDE_NEW.match(line)):
            old = match.re is SIDE_OLD
            side = "read" if match["side"] == "mixed" else match["side"]
            count = issued[SIDES.index(side)] if issued and side in SIDES and len(issued) > SIDES.index(side) \
                else None
            entry[side] = _side(match, old, None if match["side"] == "mixed" else count, bs.get(side), where)
            entry["_mixed"] = entry.get("_mixed") or match["side"] == "mixed"
            percentile_unit = None
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
        entry[direction].setdefault("clat_ns", {"mean": float("nan"), "stddev": float("nan")})
    how = sorted({entry[d].pop("_bytes_from") for d in SIDES if "_bytes_from" in entry[d]})
    units = "KB as 1024 bytes (fio 2.x, kb_base=1024)" if old else "KiB/kB as printed"
    entry["_read_from"] = [f"normal output: bytes from {' and '.join(how) or 'nothing moved'}, over runt (ms); "
                           f"{units}", "clat, lat (unit as printed -> ns)", "clat percentiles (as printed -> ns)"]
    return entry


def _time(text: str) -> str | None:
    """fio's ``Thu Dec  6 09:18:04 2012`` (ctime, the machine's local time, its zone unsaid) as ISO 8601 without a
    zone; None when it is not one."""
    try:
        return datetime.strptime(" ".join(text.split()), "%a %b %d %H:%M:%S %Y").isoformat()
    except ValueError:
        return None


def read_normal(text: str, source: str = "fio output") -> list[dict]:
    """Every run in fio's normal output (runs appended to one file each one), each as fio 3.33's JSON would hold it:
    ``fio version``, ``jobs`` (one entry per job block: per group with group_reporting, per job without),
    ``_format`` ``normal``. FioError naming ``source`` when there is no job block, or a number cannot be read."""
    runs: list[dict] = []
    version, described, blocks = "", {}, []  # this run's
    current: tuple[re.Match, list[str]] | None = None

    def close_run():
        if blocks:
            runs.append({"fio version": version, "jobs": [_entry(h, ls, described, source) for h, ls in blocks],
                         "_format": "normal"})

    hosts = []
    for line in text.splitlines():
        if line.startswith("hostname="):
            hosts.append(line.split(",")[0].removeprefix("hostname="))
            continue
        line = HOST_PREFIX.sub("", line)  # a client's lines of each server: "<host> one: (g=0): ..."
        if line.startswith(f"{ALL_CLIENTS}: (groupid="):
            current = None  # fio's own sum of the clients: the hosts' blocks are summed as the JSON's are
            continue
        if (match := DESCRIBED.match(line)):
            if blocks:  # a new run's descriptions after the last run's results
                close_run()
                version, described, blocks, current = "", {}, [], None
            described[match["name"]] = {"rw": match["rw"].strip(), "bs": match["bs"], "ioengine": match["engine"],
                                        "iodepth": match["depth"]}
        elif (match := VERSION.match(line.strip())) and not blocks:
            version = f"fio-{match['version']}"
        elif (match := HEADER.match(line)):
            current = (match, [])
            blocks.append(current)
        elif line.startswith("Run status group") or line.startswith("Disk stats"):
            current = None
        elif current is not None:
            current[1].append(line)
    close_run()
    if hosts:
        for run in runs:
            run["_notes"] = [f"client/server normal output of {len(hosts)} hosts ({', '.join(hosts)}): its job "
                                "blocks name no host, so each group is one row of all of them, not one a host"]
    if not runs:
        raise FioError(f"{source}: no job block of fio's normal output ('name: (groupid=0, jobs=1): err= 0: ...')")
    return runs
