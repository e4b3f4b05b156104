"""What fio's numbers imply of a run where fio echoes no options (its JSON before fio 2.3, terse output of any
version): each value derived, and said to be.

Pure. From one reporting group's job entries (normalized by ``versions``, ``terse``):

    direction   the sides that moved data: only reads (read), only writes (write), both (readwrite), trims
                (trim); a unified side (``mixed``) says no direction
    bs          the main direction's bytes over its I/Os: the I/Os fio counted (``total_ios``, fio 2.1.14 on:
                exact) or else its IOPS x runtime (IOPS whole before fio 2.2.6 and in terse: fio's rounding);
                taken when within 1% of a whole number of 512-byte sectors, or, under a sector, of a whole
                number of bytes fio counted (a network file system's 128-byte reads), else not derived (a bs
                range or bssplit has no one size)
    iodepth     fio's ``iodepth_level`` (the share of I/Os submitted at each depth in flight, in buckets 1, 2,
                4, ... 32, >=64): the lower bound of the bucket that holds the most
    numjobs     the job entries of the group (``what_ran.job_count``)

Random or sequential is never derived: fio's numbers do not say it. It comes from the user (``rw: random``, or a
whole rw) or from fio's own words (normal output's description lines, echoed options).
"""
from __future__ import annotations

import math
from typing import Mapping

SECTOR = 512
WITHIN = 0.01
DIRECTION_OF = {"read": "read", "randread": "read", "write": "write", "randwrite": "write", "rw": "readwrite",
                "readwrite": "readwrite", "randrw": "readwrite", "trim": "trim", "randtrim": "trim"}
RW_OF = {("random", "read"): "randread", ("sequential", "read"): "read", ("random", "write"): "randwrite",
         ("sequential", "write"): "write", ("random", "readwrite"): "randrw", ("sequential", "readwrite"): "rw",
         ("random", "trim"): "randtrim", ("sequential", "trim"): "trim"}
ORDERS = ("random", "sequential")


def direction(entries: list[Mapping]) -> str | None:
    """Which way a group moved data, from the sides whose bytes are above 0; None when it moved none, or only
    under unified_rw_reporting (one ``mixed`` side for all)."""
    if any(entry.get("_mixed") for entry in entries):
        return None
    moved = {side for entry in entries for side in ("read", "write", "trim")
             if isinstance(entry.get(side), Mapping) and entry[side].get("io_bytes", 0) > 0}
    if moved == {"trim"}:
        return "trim"
    ways = moved - {"trim"}
    return {frozenset({"read"}): "read", frozenset({"write"}): "write",
            frozenset({"read", "write"}): "readwrite"}.get(frozenset(ways))


def ios(side: Mapping) -> tuple[float, bool]:
    """A side's I/Os and whether fio counted them (``total_ios``) rather than its IOPS x runtime giving them."""
    counted = side.get("total_ios")
    if isinstance(counted, int) and not isinstance(counted, bool) and counted > 0:
        return float(counted), True
    return float(side.get("iops", 0)) * float(side.get("runtime", 0)) / 1000, False


def block_size(entries: list[Mapping], way: str) -> tuple[int | None, str]:
    """The block size bytes over I/Os give the main side of ``way`` (the read side of readwrite), and how; None
    (and why) when they give no whole number of sectors."""
    side_name = "write" if way == "write" else "trim" if way == "trim" else "read"
    sides = [entry[side_name] for entry in entries if isinstance(entry.get(side_name), Mapping)]
    counts = [(side.get("io_bytes", 0), *ios(side)) for side in sides if side.get("io_bytes", 0) > 0]
    counts = [(moved, count, counted) for moved, count, counted in counts if count > 0]  # a job timed in no ms: none
    moved = sum(bytes_ for bytes_, _, _ in counts)
    total = sum(count for _, count, _ in counts)
    exact = all(counted for _, _, counted in counts)
    how = "total_ios, counted by fio" if exact else "IOPS x runtime, as fio rounded them"
    if total <= 0 or not math.isfinite(total) or moved <= 0:
        timed = any(side.get("io_bytes", 0) > 0 for side in sides)
        return None, ("fio counted its bytes in a runtime of 0 ms (it timed none of it): no I/Os to divide them by"
                      if timed else "no I/Os to divide by")
    size = moved / total
    if exact and size < SECTOR and round(size) >= 1 and abs(size - round(size)) <= WITHIN * size:
        return round(size), f"derived: {side_name} bytes over I/Os ({how}) = {size:.1f}"  # NFS's 128-byte reads
    sectors = round(size / SECTOR)
    if sectors >= 1 and abs(size - sectors * SECTOR) <= WITHIN * sectors * SECTOR:
        return sectors * SECTOR, f"derived: {side_name} bytes over I/Os ({how}) = {size:.1f}"
    return None, f"{side_name} bytes over I/Os give {size:.1f}, not one block size"


def iodepth(entries: list[Mapping]) -> tuple[int | None, str]:
    """The depth bucket (its lower bound) that holds the most of a group's I/Os, by fio's ``iodepth_level``."""
    shares: dict[int, float] = {}
    for entry in entries:
        levels = entry.get("iodepth_level")
        if not isinstance(levels, Mapping):
            return None, "no iodepth_level"
        for key, value in levels.items():
            digits = str(key).lstrip(">=")
            if digits.isdigit() and len(digits) <= 4 and isinstance(value, (int, float)) and not isinstance(value, bool) \
                    and math.isfinite(value):
                shares[int(digits)] = shares.get(int(digits), 0.0) + float(value)
    if not shares or max(shares.values()) <= 0:
        return None, "no iodepth_level"
    depth = max(sorted(shares), key=lambda d: shares[d])
    return depth, (f"derived: iodepth_level's bucket {depth} holds the most I/Os ({depth} to {2 * depth - 1} in "
                   "flight)" if depth < 64 else "derived: iodepth_level's bucket >=64 holds the most I/Os")


def derived_run(entries: list[Mapping]) -> tuple[dict, dict]:
    """(what a group's numbers imply, how each was derived): ``direction``, ``bs`` and ``iodepth`` where they
    can be had (module docstring)."""
    found, how = {}, {}
    way = direction(entries)
    if way is None:
        how["rw"] = "no direction: it moved no data, or under unified_rw_reporting (one side for all)"
    else:
        found["direction"], how["rw"] = way, f"derived: the direction from the sides that moved data ({way})"
    size, how["bs"] = block_size(entries, way or "read")  # a unified side stands as read
    depth, how["iodepth"] = iodepth(entries)
    found.update({name: value for name, value in (("bs", size), ("iodepth", depth)) if value is not None})
    return found, how


def rw_of(order: str, way: str) -> str:
    """fio's rw for ``order`` (random, sequential) in direction ``way``: randread, rw, ..."""
    return RW_OF[(order, way)]


def order_of(rw: str) -> str | None:
    """random or sequential, as ``rw`` (a fio rw, or the words themselves) says; None for another."""
    if rw in ORDERS:
        return rw
    if rw in DIRECTION_OF:
        return "random" if rw.startswith("rand") else "sequential"
    return None
