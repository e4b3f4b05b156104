"""fio's terse output (``--minimal``, ``--output-format=terse``), read into the shape fio 3.33's JSON has.

Pure. One line per job entry (per group with group_reporting), fields separated by ``;``, as fio 3.33 writes them
(``show_thread_status_terse_all`` and ``show_ddir_status_terse`` in stat.c; HOWTO.rst, "Terse output"):

    header     v2: 2;jobname;groupid;error        v3, v4, v5: version;fio version;jobname;groupid;error
    per side   total IO (KiB); bw (KiB/s); IOPS (an integer); runtime (ms);
               slat min;max;mean;stdev; clat min;max;mean;stdev (usec); 20 clat percentiles "p%=usec";
               lat min;max;mean;stdev (usec); bw min;max;agg%;mean;stdev; v5 also bw samples and IOPS
               min;max;mean;stdev;samples
    sides      read, write; trim too in v2, v4 and v5; only one (mixed) with unified_rw_reporting
    then       usr%;sys%;ctx;majf;minf; I/O depths (7); latency buckets (10 usec, 12 msec); disks; errors; description

fio 3.x divides its nanoseconds by 1000 for terse (``min/1000``, ``mean/1000``, ``ovals[i]/1000``): means keep
their fraction, minima, maxima and percentiles are whole usec, cut down. fio 2.x (usec natively) wrote the same
fields (v4 from fio-2.0.10, v5 from fio-2.99). Terse says nothing of the options a job ran with (no rw, bs,
iodepth): a terse row's run comes from its name or mapping.
"""
from __future__ import annotations

import math
import re

from .bounds import excerpt
from ...errors import FioError
from .versions import FROM_KIB, MOST, typed

LINE = re.compile(r"^([2-5]);")
SIDE_FIELDS = {2: 41, 3: 41, 4: 41, 5: 47}
SIDES = {2: ("read", "write", "trim"), 3: ("read", "write"), 4: ("read", "write", "trim"),
         5: ("read", "write", "trim")}
DEPTHS = ("1", "2", "4", "8", "16", "32", ">=64")  # the buckets of fio's IO depths (iodepth_level)
READ_FROM = [FROM_KIB.replace("io_bytes", "total IO"), "clat, lat (usec x 1000)",
             "clat percentiles (whole usec x 1000)"]


def terse_lines(text: str) -> list[str]:
    """The lines of ``text`` that begin as a terse line does (``2;`` to ``5;``)."""
    return [line for line in text.splitlines() if LINE.match(line)]


def _float(text: str, where: str) -> float:
    try:
        value = float(text.rstrip("%")) if len(text) <= 40 else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or abs(value) > MOST:
        raise FioError(f"{where}: {excerpt(text)} is not a number fio writes")
    return value


def _latency(fields: list[str], where: str) -> dict:
    """min;max;mean;stdev in usec -> ns."""
    values = [_float(f, where) * 1000 for f in fields]
    return dict(zip(("min", "max", "mean", "stddev"), values))


def _percentiles(fields: list[str], where: str) -> dict:
    found = {}
    for field in fields:
        p, sep, value = field.partition("%=")
        if not sep:
            raise FioError(f"{where}: {excerpt(field)} is not a percentile (p%=usec)")
        if _float(p, where) > 0:  # fio pads the 20 fields with 0%=0
            found[f"{_float(p, where):f}"] = _float(value, where) * 1000
    return found


def _side(fields: list[str], where: str) -> dict:
    """One direction's fields as fio 3.33's JSON side: bytes, bytes/s held to fio's bw (KiB/s), ns."""
    kib, kib_s, iops, runtime = (_float(f, where) for f in fields[:4])
    io_bytes = int(kib) * 1024
    bw_bytes = float((1000 * io_bytes) // runtime) if runtime else 0.0
    if abs(kib_s * 1024 - bw_bytes) > 1024 * (1 + (1000 / runtime if runtime else 0)):
        raise FioError(f"{where}: bandwidth {kib_s:g} KiB/s disagrees with {kib:g} KiB over {runtime:g} ms")
    return {"io_bytes": io_bytes, "bw_bytes": bw_bytes, "iops": iops, "runtime": runtime,
            "slat_ns": _latency(fields[4:8], where),
            "clat_ns": {**_latency(fields[8:12], where), "percentile": _percentiles(fields[12:32], where)},
            "lat_ns": _latency(fields[32:36], where)}


def _layout_fits(fields: list[str], start: int, sides: int, width: int) -> bool:
    """Whether ``sides`` sides of ``width`` fields from ``start`` end where the CPU fields (``usr%;sys%``) begin,
    each side's bandwidth share (agg%) where it should be."""
    cpu = start + sides * width
    shares = [start + s * width + 38 for s in range(sides)]
    return len(fields) >= cpu + 2 and all(fields[i].endswith("%") for i in [*shares, cpu, cpu + 1])


def parse_line(line: str, where: str) -> dict:
    """One terse line as a job entry of fio 3.33's JSON (``jobname``, ``groupid``, ``error``, ``read``, ``write``,
    ``usr_cpu``, ``sys_cpu``, ``_read_from``); its ``fio version`` as ``_fio_version`` (v3 on)."""
    fields = line.rstrip("\n").split(";")
    version = int(fields[0])
    start = 4 if version == 2 else 5
    width = SIDE_FIELDS[version]
    names = SIDES[version]
    if not _layout_fits(fields, start, len(names), width):
        if not _layout_fits(fields, start, 1, width):
            raise FioError(f"{where}: not a terse v{version} line of fio's ({len(fields)} fields)")
        names = ("mixed",)
    entry = {"jobname": fields[start - 3], "_fio_version": "" if version == 2 else fields[1],
             "_terse_version": version}
    group, error = fields[start - 2], fields[start - 1]
    try:
        if max(len(group), len(error)) > 12:
            raise ValueError(group)
        entry["groupid"], entry["error"] = int(group), int(error)
        typed(entry, where)
    except (ValueError, FioError):
        raise FioError(f"{where}: groupid {excerpt(group)} and error {excerpt(error)} must be whole numbers fio "
                       "writes") from None
    for index, name in enumerate(names):
        begin = start + index * width
        entry[name] = _side(fields[begin:begin + width], f"{where} {name}")
    cpu = start + len(names) * width
    entry["usr_cpu"], entry["sys_cpu"] = _float(fields[cpu], where), _float(fields[cpu + 1], where)
    depths = fields[cpu + 5:cpu + 12]  # after usr, sys, ctx, majf, minf: the share of I/Os at each depth
    if len(depths) == len(DEPTHS) and all(d.endswith("%") for d in depths):
        entry["iodepth_level"] = {name: _float(d, where) for name, d in zip(DEPTHS, depths)}
    if names == ("mixed",):
        entry["read"], entry["_mixed"] = entry.pop("mixed"), True
        entry["write"] = {**{k: 0 for k in ("io_bytes", "bw_bytes", "iops", "runtime")},
                          "clat_ns": {"mean": 0.0, "stddev": 0.0}, "lat_ns": {"mean": 0.0, "stddev": 0.0}}
    entry["_read_from"] = list(READ_FROM)
    return entry


def read_terse(text: str, source: str = "fio output") -> dict:
    """fio's terse output as fio 3.33's JSON would hold it: ``fio version`` (of the first line), ``jobs`` (one
    entry per line) and ``_format`` (``terse v3``). FioError naming ``source`` and the line when one cannot be
    read, or when there is no terse line at all."""
    lines = terse_lines(text)
    if not lines:
        raise FioError(f"{source}: no line of fio's terse output (version;fio version;jobname;...)")
    jobs = [parse_line(line, f"{source}: terse line {n}") for n, line in enumerate(lines, start=1)]
    versions = sorted({j["_terse_version"] for j in jobs})
    return {"fio version": jobs[0]["_fio_version"], "jobs": jobs,
            "_format": "terse v" + "/".join(map(str, versions))}
