"""What an imported row's numbers cannot be, checked before the row is kept; and that a file's rows make a table.

A row whose numbers cannot be true is kept as a failed row (``status`` failed, ``error`` saying which number and
why, every rate NaN), never silently: fio computes each of them from the bytes and I/Os it counted over the time it
ran, so a file that says otherwise was damaged or made by hand.

    a rate that is negative, infinite or not a number          bw_bytes, iops, read_bw_bytes, write_bw_bytes
    a bandwidth above its bytes over its runtime               bw_bytes x runtime > io_bytes (+1 byte a second)
    I/Os above what its bytes allow                            iops x runtime x the least an I/O moves >
                                                               io_bytes: a sector (512 bytes), or the job's own bs
                                                               where it is smaller (a 128-byte read of a network
                                                               file system is real)
    data moved in no time                                      io_bytes > 0 with runtime 0: no rate
"""
from __future__ import annotations

import io
import math
from typing import Mapping

from .. import results
from ...errors import FioError

RATES = ("bw_bytes", "iops", "read_bw_bytes", "write_bw_bytes")
SECTOR = 512
SLACK = 1e-6  # fio's own rounding of a rate it computed from whole bytes and milliseconds


def impossible(row: Mapping) -> str | None:
    """Why ``row``'s numbers cannot be (module docstring), or None."""
    for name in RATES:
        value = row.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and \
                not (math.isnan(value) and name in ("read_bw_bytes", "write_bw_bytes")) and \
                not (math.isfinite(value) and value >= 0):
            return f"{name} {value!r} cannot be a rate (negative or not a finite number)"
    moved, seconds, bw = row.get("io_bytes"), row.get("runtime_s"), row.get("bw_bytes")
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in (moved, seconds, bw)):
        return None
    if moved > 0 and seconds <= 0:
        return f"{moved:.0f} bytes moved in a runtime of {seconds!r} s: no rate"
    if seconds > 0 and bw * seconds > moved * (1 + SLACK) + seconds:
        return (f"bandwidth {bw:.0f} bytes/s is more than its {moved:.0f} bytes over its {seconds:g} s allow "
                f"({moved / seconds:.0f} bytes/s)")
    iops, least = row.get("iops"), least_io(row)
    if seconds > 0 and isinstance(iops, (int, float)) and iops * seconds * least > moved * (1 + SLACK) + least:
        return (f"{iops:g} IOPS over {seconds:g} s is more I/Os than its {moved:.0f} bytes allow at {least} "
                f"byte{'s' if least > 1 else ''} an I/O")
    return None


def least_io(row: Mapping) -> int:
    """The fewest bytes one I/O of ``row`` moves: a sector, or its bs where that is smaller (module docstring)."""
    bs = row.get("bs")
    known = isinstance(bs, int) and not isinstance(bs, bool) and bs > 0
    return min(SECTOR, bs) if known else SECTOR


def checked(row: dict) -> dict:
    """``row``, or, when its numbers cannot be (``impossible``), it as a failed row saying why."""
    if row.get("status") != "ok":
        return row
    why = impossible(row)
    return row if why is None else {**row, **results.failed(f"numbers that cannot be: {why}")}


def tabulates(rows: list[dict]) -> None:
    """FioError unless ``rows`` make the results table (``results.to_frame``, then the types parquet keeps): a
    file's rows are tried on their own, so one that cannot be kept is refused before the folder is touched."""
    if not rows:
        return
    try:
        frame = results.to_frame([{k: v for k, v in row.items() if not k.startswith("_")} for row in rows])
        frame.to_parquet(io.BytesIO(), index=False)
    except (ValueError, TypeError, OverflowError, ArithmeticError, NotImplementedError) as exc:
        raise FioError(f"its rows do not make a results table: {type(exc).__name__}: {str(exc)[:200]}") from None
