"""fio's JSON as each version wrote it, read into the shape fio 3.33 writes (``normalize``), so one parser reads all.

Pure: nothing here runs fio or reads the machine. Which fields a version wrote, and in which unit, was read in fio's
own source at each version's tag (github.com/axboe/fio): ``add_ddir_status_json`` and ``show_thread_status_json``
in stat.c, ``json_print_value`` in json.c, ``plat_idx_to_val`` and ``calc_clat_percentiles`` in stat.c, the JSON
of client/server runs in client.c. The fields decide, not the version string (a build from git says
``fio-3.1-46-gabcdef``): each field's unit is fixed by its name and by the fields beside it.

=====================  ======================================================================================
fio (first tag)        what changed in the JSON, by fio's own source
=====================  ======================================================================================
2.0.10                 JSON output born (cc372b17): ``io_bytes`` in **KiB** (``io_bytes >> 10``), ``bw`` KiB/s
                       ``((1000 * io_bytes) / runt) / 1024``, ``iops`` an integer, ``runtime`` ms;
                       ``slat``/``clat``/``lat`` in **usec**; percentile keys ``"%2.2f"`` (``"99.90"``), padded
                       with ``"0.00": 0``; floats printed ``"%.2f"`` (json.c)
2.0.14                 percentile keys ``"%f"`` (``"99.900000"``) (435d195a); ``mixed`` under
                       unified_rw_reporting
2.1.4                  client/server JSON: ``client_stats`` with ``hostname`` and ``port`` (952b05e0, client.c)
2.2.5                  ``timestamp``, ``time`` (91e53870)
2.2.6                  ``iops`` a float (9f68fe3a)
2.2.12                 json+: ``clat.bins`` keyed by bucket **index**, with ``FIO_IO_U_PLAT_BITS``, ``_VAL``, ``_NR``
                       (513e37ee)
2.3                    ``global options`` and ``job options`` (66e19a38): absent before, so older files do not
                       say what ran
2.13                   floats printed ``"%f"`` (817720e1)
2.20                   json+ bins keyed by the bucket's **value** (``plat_idx_to_val``), non-zero only (129e4193)
2.21                   ``io_bytes`` in **bytes**, ``io_kbytes`` beside it (c12d597a)
2.99 (3.0)             ``slat_ns``/``clat_ns``/``lat_ns`` in **ns**, bins in ns (d6bb626e)
3.2                    ``bw_bytes`` = ``(1000 * io_bytes) / runt`` (aedd021d)
3.8                    ``job_runtime``: the group's jobs' run times summed, ms (bcbb4c6c)
3.18                   ``N`` (samples) in each latency object (56440e63)
=====================  ======================================================================================

Bandwidth, in order: ``bw_bytes``; else ``io_bytes`` x 1000 / ``runtime`` (bytes, when ``io_kbytes`` is beside it:
fio 2.21-3.1; the very formula of fio 3.2's ``bw_bytes``); else ``io_bytes`` x 1024 x 1000 / ``runtime`` (KiB:
fio 2.0.10-2.20). Each is held to the ``bw`` (KiB/s) fio wrote beside it: a unit misread is refused, not imported.
"""
from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Iterable, Mapping

from .bounds import excerpt
from ...errors import FioError

VERSION = re.compile(r"fio-(\d+)\.(\d+)(?:\.(\d+))?")
# The percentiles a row keeps (fio_output.PERCENTILES), as numbers.
WANTED = (50.0, 90.0, 99.0, 99.9, 99.99)
PLAT_BITS = 6  # FIO_IO_U_PLAT_BITS in every version with json+ (stat.h)
LATENCIES = ("slat", "clat", "lat")
MOST = 2**63 - 1  # the most a count fio keeps (64 bits) can be: bytes, I/Os, milliseconds

BW_BYTES = "bw_bytes"
FROM_BYTES = "io_bytes (bytes) x 1000 / runtime (ms)"
FROM_KIB = "io_bytes (KiB) x 1024 x 1000 / runtime (ms)"
NS = "clat_ns, lat_ns (ns)"
USEC = "clat, lat (usec x 1000)"


def version_of(text: object) -> tuple[int, int, int] | None:
    """``fio-3.33`` -> (3, 33, 0), ``fio-2.0.10`` -> (2, 0, 10), ``fio-3.1-46-gabc`` -> (3, 1, 0); None if no
    version can be read."""
    found = VERSION.search(str(text or ""))
    return None if found is None else (int(found[1]), int(found[2]), int(found[3] or 0))


def plat_idx_to_val(index: int, bits: int = PLAT_BITS) -> int:
    """The latency a json+ bucket stands for, from its index: fio's ``plat_idx_to_val`` (stat.c, the same from
    fio-2.0.10 to fio-3.33): the first 2 x 2^bits buckets are exact; then group g's buckets are 2^(g-1) wide and
    each stands for the middle of its range."""
    if index < (2 << bits):
        return index
    error_bits = (index >> bits) - 1
    base = 1 << (error_bits + bits)
    k = index % (1 << bits)
    return int(base + (k + 0.5) * (1 << error_bits))


def percentiles_from_bins(bins: Mapping[int, int], wanted: Iterable[float] = WANTED,
                          samples: int | None = None) -> dict[float, int]:
    """Each percentile of ``wanted`` from json+ buckets (value -> count), as fio's ``calc_clat_percentiles``
    (stat.c) finds it: walking the buckets upward, the first whose running count reaches p/100 x the samples
    (fio's ``N``, else the buckets' total). Empty when there are no samples."""
    ordered = sorted((int(value), int(count)) for value, count in bins.items())
    total = int(samples) if samples else sum(count for _, count in ordered)
    found: dict[float, int] = {}
    if total <= 0:
        return found
    pending = sorted(float(p) for p in wanted)
    running = 0
    for value, count in ordered:
        running += count
        while pending and running >= Fraction(pending[0]) / 100 * total:
            found[pending.pop(0)] = value
        if not pending:
            break
    return found


def _number(obj: Mapping, key: str, where: str) -> float:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            (abs(value) > 2**64 if isinstance(value, int) else not math.isfinite(value)):
        raise FioError(f"{where}.{key}: expected a number, got {excerpt(value)}")
    return value


def _bins(latency: Mapping, where: str) -> dict[int, int]:
    """A json+ latency object's buckets, value -> count, in the latency's own unit: keyed by index with the
    FIO_IO_U_PLAT_* constants beside them (fio 2.2.12-2.19), else keyed by value (fio 2.20 on)."""
    bins = latency.get("bins")
    if not isinstance(bins, Mapping):
        return {}
    try:
        if "FIO_IO_U_PLAT_BITS" in bins:
            bits = _whole(bins["FIO_IO_U_PLAT_BITS"], 16)
            return {plat_idx_to_val(_whole(k, 2**16), bits): _whole(n, MOST) for k, n in bins.items()
                    if k.isdigit() and _whole(n, MOST)}
        return {_whole(k, MOST): _whole(n, MOST) for k, n in bins.items() if _whole(n, MOST)}
    except (TypeError, ValueError, OverflowError):
        raise FioError(f"{where}.bins: buckets must be whole numbers keyed by whole numbers (0 to 2^63)") from None


def _whole(value: object, most: int) -> int:
    """``value`` (a number or its digits) as a whole number from 0 to ``most``; ValueError otherwise."""
    if isinstance(value, bool) or (isinstance(value, str) and not (value.isdigit() and len(value) <= 20)):
        raise ValueError(value)
    number = int(value)
    if number != value and not isinstance(value, str) or not 0 <= number <= most:
        raise ValueError(value)
    return number


def _latency(side: Mapping, kind: str, where: str) -> tuple[dict, str | None]:
    """``{kind}_ns`` of a side in ns: as written (fio 2.99 on), or ``{kind}`` in usec x 1000 (up to 2.21). The
    percentiles keyed as fio 3.33 keys them (``"99.900000"``); those ``wanted`` that fio did not list are found
    in the json+ buckets when there are some. Returns the object and how its percentiles were read."""
    if f"{kind}_ns" in side:
        name, scale = f"{kind}_ns", 1
    elif kind in side:
        name, scale = kind, 1000
    else:
        return {}, None
    given, at = side[name], f"{where}.{name}"
    if not isinstance(given, Mapping):
        raise FioError(f"{at}: expected an object, got {excerpt(given)}")
    out = {k: _number(given, k, at) * scale for k in ("min", "max", "mean", "stddev") if k in given}
    samples = given.get("N") if isinstance(given.get("N"), int) and not isinstance(given.get("N"), bool) and \
        0 <= given["N"] <= MOST else None
    if samples is not None:
        out["N"] = samples
    listed = given.get("percentile") if isinstance(given.get("percentile"), Mapping) else {}
    found = {}
    for key, value in listed.items():
        try:
            p = float(key)
        except ValueError:
            raise FioError(f"{at}.percentile: {excerpt(key)} is not a percentile") from None
        if p > 0:  # fio 2.0.10-2.21 pad the list with "0.00": 0
            found[p] = _number(listed, key, f"{at}.percentile") * scale
    how = f"{name}.percentile{' (usec x 1000)' if scale > 1 else ''}" if found else None
    missing = [p for p in WANTED if p not in found]
    bins = _bins(given, at) if missing else {}
    if bins:
        found.update({p: v * scale for p, v in percentiles_from_bins(bins, missing, samples).items()})
        how = f"{(how + ' and ') if how else ''}{name}.bins (json+, fio's calc_clat_percentiles)"
    if found:
        out["percentile"] = {f"{p:f}": v for p, v in sorted(found.items())}
    if bins or (kind == "clat" and _bins(given, at)):  # kept, in ns, for a group fio reported job by job
        out["_bins"] = {str(v * scale): n for v, n in sorted((bins or _bins(given, at)).items())}
    return out, how


def _moved(side: Mapping, where: str) -> tuple[int, float, str]:
    """Bytes moved and bytes/s of one side, and the field read (module docstring: bandwidth, in order)."""
    runtime = _number(side, "runtime", where)
    io = _number(side, "io_bytes", where)
    for name, value in (("runtime", runtime), ("io_bytes", io)):
        if not 0 <= value <= MOST:
            raise FioError(f"{where}.{name}: {value!r} is not a count fio keeps (0 to 2^63)")
    if "bw_bytes" in side:
        return int(io), float(_number(side, "bw_bytes", where)), BW_BYTES
    if "io_kbytes" in side:
        return int(io), float((1000 * int(io)) // runtime) if runtime else 0.0, FROM_BYTES
    moved = int(io) * 1024
    return moved, float((1000 * moved) // runtime) if runtime else 0.0, FROM_KIB


def _check_bw(side: Mapping, bw_bytes: float, how: str, where: str) -> None:
    """The bandwidth read must agree with the ``bw`` (KiB/s) fio wrote beside it: exactly where fio computed both
    from the same bytes (``bw = bw_bytes / 1024``), within 1 KiB/s plus a KiB over the run where ``io_bytes`` was
    written in whole KiB (fio 2.0.10-2.20)."""
    if "bw" not in side or how == BW_BYTES:
        return
    kib_s = _number(side, "bw", where)
    runtime = _number(side, "runtime", where)
    slack = 1024 * (1 + (1000 / runtime if runtime else 0)) if how == FROM_KIB else 1024
    if abs(kib_s * 1024 - bw_bytes) > slack:
        raise FioError(f"{where}: bw {kib_s:g} KiB/s disagrees with {how} = {bw_bytes:.0f} bytes/s: io_bytes is not "
                       "in the unit this fio wrote")


# What a job entry's fields that name it must be, as fio writes them: (type, the least, the most)
NAMING = {"jobname": (str, None, None), "hostname": (str, None, None), "groupid": (int, 0, 2**31 - 1),
          "error": (int, -2**31, 2**31 - 1), "port": (int, 0, 65535)}


def typed(entry: Mapping, where: str) -> None:
    """FioError unless the fields that name a job entry are of the type fio writes them (``NAMING``): a job name
    is text, a group a whole number, and so on."""
    for key, (kind, least, most) in NAMING.items():
        if key not in entry:
            continue
        value = entry[key]
        if isinstance(value, bool) or not isinstance(value, kind) or (kind is int and not least <= value <= most):
            words = "text" if kind is str else f"a whole number from {least} to {most}"
            raise FioError(f"{where}.{key}: expected {words}, got {excerpt(value)}")


def normalize_side(side: object, where: str) -> tuple[dict, tuple[str, ...]]:
    """One direction (read, write, trim, mixed) of a job entry in fio 3.33's shape: ``io_bytes`` (bytes),
    ``bw_bytes``, ``iops``, ``runtime`` (ms), ``slat_ns``/``clat_ns``/``lat_ns`` (ns); and the fields it was
    read from. FioError naming ``where`` and the field when one is missing or not a number."""
    if not isinstance(side, Mapping):
        raise FioError(f"{where}: expected an object, got {excerpt(side)}")
    io_bytes, bw_bytes, how = _moved(side, where)
    _check_bw(side, bw_bytes, how, where)
    out = {"io_bytes": io_bytes, "bw_bytes": bw_bytes, "iops": float(_number(side, "iops", where)),
           "runtime": _number(side, "runtime", where)}
    counted = side.get("total_ios")  # fio 2.1.14 on: the I/Os it counted
    if isinstance(counted, int) and not isinstance(counted, bool) and 0 <= counted <= MOST:
        out["total_ios"] = counted
    read_from = [how]
    for kind in LATENCIES:
        latency, percentiles = _latency(side, kind, where)
        if latency:
            out[f"{kind}_ns"] = latency
        if kind == "clat" and percentiles:
            read_from.append(percentiles)
    units = NS if "clat_ns" in side else USEC if "clat" in side else None
    return out, tuple(filter(None, [read_from[0], units, *read_from[1:]]))


def normalize_entry(entry: object, where: str) -> dict:
    """A job entry (``jobs``, or ``client_stats`` of a client/server run) with each direction normalized
    (``normalize_side``), and ``_read_from``: the fields read of the directions that moved data (else of read).
    With unified_rw_reporting fio writes one ``mixed`` side: it stands as ``read``, ``write`` empty, ``_mixed``
    true (the caller says which direction it was)."""
    if not isinstance(entry, Mapping):
        raise FioError(f"{where}: expected a job object, got {excerpt(entry)}")
    typed(entry, where)
    out = dict(entry)
    name = f"{where} ({excerpt(entry.get('jobname'), 40)})"
    sides = {d: entry[d] for d in ("read", "write", "trim") if d in entry}
    if "mixed" in entry and not sides:
        sides = {"read": entry["mixed"]}
        out["_mixed"] = True
    how: dict[str, tuple[str, ...]] = {}
    for direction, side in sides.items():
        out[direction], how[direction] = normalize_side(side, f"{name}.{direction}")
    if out.get("_mixed"):
        out["write"] = {**{k: 0 for k in ("io_bytes", "bw_bytes", "iops", "runtime")},
                        "clat_ns": {"mean": 0.0, "stddev": 0.0}, "lat_ns": {"mean": 0.0, "stddev": 0.0}}
    moving = [d for d in ("read", "write") if d in how and out[d]["io_bytes"] > 0] or [d for d in how][:1]
    out["_read_from"] = list(dict.fromkeys(field for d in moving for field in how[d]))
    return out


def _samples(side: Mapping, latency: Mapping) -> float:
    """How many I/Os a latency object stands for: its ``N`` (fio 3.18 on), else the side's ``total_ios`` (2.1.14
    on), else IOPS x runtime."""
    for value in (latency.get("N"), side.get("total_ios")):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= MOST:
            return float(value)
    return side["iops"] * side["runtime"] / 1000


def _merged_latency(parts: list[tuple[Mapping, Mapping]], kind: str) -> dict:
    """One latency object from several jobs' (side, ``{kind}_ns``), as fio's ``__sum_stat`` (stat.c) merges them
    under group_reporting: the mean weighted by samples, the squared deviations pooled (Chan's parallel algorithm);
    the percentiles from the merged json+ buckets, or none (they cannot be merged without them)."""
    count, mean, squares = 0.0, 0.0, 0.0
    for side, latency in parts:
        n = _samples(side, latency)
        if n <= 0 or "mean" not in latency:
            continue
        deviation = latency.get("stddev", 0.0)
        m, s = latency["mean"], deviation * deviation * max(n - 1, 0)  # float * float gives inf, never raises
        if count:
            squares += s + (m - mean) * (m - mean) * count * n / (count + n)
            mean = (mean * count + m * n) / (count + n)
        else:
            mean, squares = m, s
        count += n
    out = {"mean": mean, "stddev": math.sqrt(squares / (count - 1)) if count > 1 else 0.0, "N": int(count)}
    buckets: dict[int, int] = {}
    for _, latency in parts:
        for value, n in (latency.get("_bins") or {}).items():
            buckets[int(value)] = buckets.get(int(value), 0) + int(n)
    if kind == "clat" and buckets and all(latency.get("_bins") for _, latency in parts if latency.get("mean")):
        out["percentile"] = {f"{p:f}": v for p, v in percentiles_from_bins(buckets, WANTED, sum(buckets.values()))
                             .items()}
    elif kind == "clat":
        out.update(_worst_percentiles([latency for side, latency in parts if _samples(side, latency) > 0]))
    return out


def _worst_percentiles(latencies: list[Mapping]) -> dict:
    """Without json+ buckets to merge: each percentile every job listed, the largest of the jobs' (``_worst``
    true). A bound, not an estimate: the pooled I/Os' p-quantile is never above the jobs' largest (at that value
    every job has at least p of its I/Os done, so the pool has too) nor below their smallest."""
    listed = [latency.get("percentile") for latency in latencies]
    if not listed or not all(isinstance(p, Mapping) and p for p in listed):
        return {}
    keys = [key for key in listed[0] if all(key in p for p in listed)]
    return {"percentile": {key: max(float(p[key]) for p in listed) for key in keys}, "_worst": True} if keys else {}


def _merged_side(sides: list[Mapping]) -> dict:
    """One direction of several jobs as fio's ``sum_thread_stats`` (stat.c) sums them: bytes summed, the longest
    runtime, and ``add_ddir_status_json``'s bw_bytes = 1000 x bytes / runtime and IOPS = 1000 x I/Os / runtime."""
    io_bytes = sum(side["io_bytes"] for side in sides)
    runtime = max(side["runtime"] for side in sides)
    ios = sum(_samples(side, {}) for side in sides)
    out = {"io_bytes": io_bytes, "runtime": runtime,
           "bw_bytes": float((1000 * io_bytes) // runtime) if runtime else 0.0,
           "iops": 1000 * ios / runtime if runtime else 0.0}
    if all("total_ios" in side for side in sides):
        out["total_ios"] = sum(side["total_ios"] for side in sides)
    for kind in LATENCIES:
        parts = [(side, side[f"{kind}_ns"]) for side in sides if f"{kind}_ns" in side]
        if parts:
            out[f"{kind}_ns"] = _merged_latency(parts, kind)
    return out


def group_entry(entries: list[dict]) -> dict:
    """One entry for a reporting group whose jobs fio reported one by one (no group_reporting), as group_reporting
    would have reported them (``_merged_side``): normalized entries in, one out, ``_jobs`` saying how many it
    stands for. Its CPU percent is weighted by each job's ``job_runtime`` so that ``fio_output.cpu_percent`` reads
    the same total; percentiles only where every job had json+ buckets."""
    first = entries[0]
    out = {**first, "_jobs": len(entries), "error": next((e.get("error") for e in entries if e.get("error")), 0)}
    for direction in ("read", "write", "trim"):
        if all(direction in e for e in entries):
            out[direction] = _merged_side([e[direction] for e in entries])
    runtimes = [e.get("job_runtime") for e in entries]
    if all(isinstance(r, (int, float)) and r > 0 for r in runtimes):
        out["job_runtime"] = sum(runtimes)
        for name in ("usr_cpu", "sys_cpu"):
            shares = [e.get(name) for e in entries]
            known = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in shares)
            out[name] = sum(v * r for v, r in zip(shares, runtimes)) / out["job_runtime"] if known else math.nan
    latency = [out[d]["clat_ns"] for d in ("read", "write") if "clat_ns" in out.get(d, {})
               and "percentile" in out[d]["clat_ns"]]
    percentiles = ("no clat percentiles" if not latency else
                   "clat percentiles: the worst job's, each (no json+ buckets to merge: a bound, never below the "
                   "group's)" if any(lat.get("_worst") for lat in latency) else
                   "clat percentiles of the merged json+ bins (fio's own, as group_reporting gives them)")
    read_from = [f for e in entries for f in e.get("_read_from", []) if "percentile" not in f and "bins" not in f]
    out["_read_from"] = list(dict.fromkeys([*read_from, f"{len(entries)} job entries summed as group_reporting "
                                            "does (sum_thread_stats: I/Os and bytes over the longest job's runtime)",
                                            *_runtimes_apart(entries, out), percentiles]))
    return out


def _runtimes_apart(entries: list[dict], merged: Mapping) -> list[str]:
    """Where the jobs' runtimes differ: how far their own IOPS summed lie from the group's (its I/Os over the
    longest runtime, as fio's group_reporting and flashscale's own campaigns count them)."""
    said = []
    for direction in ("read", "write"):
        sides = [e[direction] for e in entries if e.get(direction, {}).get("io_bytes", 0) > 0]
        group = merged.get(direction, {}).get("iops", 0.0)
        own = sum(side["iops"] for side in sides)
        if not sides or group <= 0 or abs(own / group - 1) < 0.001:
            continue
        times = [side["runtime"] for side in sides]
        said.append(f"{direction}: the jobs ran {min(times):g} to {max(times):g} ms, their own IOPS sum to "
                    f"{own:.6g}, {100 * (own / group - 1):+.1f}% from the group's {group:.6g}")
    return said


def normalize(data: Mapping, source: str = "fio output") -> dict:
    """fio's JSON output of any version from 2.0.10 in fio 3.33's shape, every entry of ``jobs`` and
    ``client_stats`` normalized (``normalize_entry``); other keys as they were. FioError naming ``source`` and
    the field when one cannot be read."""
    out = dict(data)
    for key in ("jobs", "client_stats"):
        entries = data.get(key)
        if key in data and not isinstance(entries, list):
            raise FioError(f"{source}: {key}: expected a list, got {excerpt(entries)}")
        if key in data:
            out[key] = [normalize_entry(e, f"{source}: {key}[{i}]") for i, e in enumerate(entries)]
    return out


def is_json_plus(data: Mapping) -> bool:
    """Whether fio wrote json+: latency buckets (``bins``) beside the percentiles of some direction."""
    listed = [data.get(k) for k in ("jobs", "client_stats")]
    for entry in [e for entries in listed if isinstance(entries, list) for e in entries]:
        for side in (entry.get(d) for d in ("read", "write", "trim", "mixed") if isinstance(entry, Mapping)):
            if isinstance(side, Mapping) and any(isinstance(side.get(k), Mapping) and "bins" in side[k]
                                                 for k in ("clat", "clat_ns", "lat_ns")):
                return True
    return False
