"""The one formatter of numbers for people: every number a report, a sentence, a progress line or a command-line
table shows goes through here; the results keep bytes/s, bytes, nanoseconds and fractions (units in the column names).

- bandwidth in MB/s (GB/s from 10 GB/s on), sizes in KiB/MiB/GiB, times in ns/µs/ms/s, fractions in %, counts with
  thousands separators, about three significant digits and never an e-notation;
- a missing number is an em dash, an infinite one ∞.

    number(value)          about three significant digits: "802", "12.3", "0.0451", "1,234"
    rate(bytes_per_s)      "802 MB/s", "12.5 GB/s"
    size(bytes)            "1 MiB", "4 KiB", "1.5 GiB"
    bounds(lo, hi)         an interval's bounds in MB/s with the digits that tell them apart: "798–806", "200.1–200.4"
    interval(lo, hi)       an interval in words: "798–806 MB/s"; "one run: no interval" (``ONE_RUN``) where there
                           is none, never a zero-width "379–379"
    with_interval(v, lo, hi)  a value and its interval: "802 MB/s (798–806 MB/s)", "379 MB/s (one run: no interval)"
    duration(value, unit)  a time given in ns, us, ms or s, in the unit that reads best: "94.1 µs", "2.50 s"
    percent(fraction)      "4.2%"; ``signed=True`` gives "+4.2%" / "-4.2%"
    span(seconds)          a wall-clock span: "2 min 24 s", "1 h 5 min", "12 s"
    cell(value, kind)      one value of a kind (``KINDS``) as a table shows it; ``publish.tables`` formats whole
                           tables with it
    column_scale(values, kind)  the one unit a column of a kind is shown in, scaled for the column: kB/s to TB/s,
                           IOPS to MIOPS, ns to s (``SCALES``); None for a kind without units to scale
    in_scale(value, scale) a number in a column's unit, the unit said once in the column's header: "807", "2.78"
    interval_in(value, lo, hi, scale)  a value and its interval in one unit: "807 (779–836)"; the value alone where
                           it has no interval (the table says why once, under it)

and the one reader of an amount of bytes written as text, the other way (a job file's ``bs=4k``, a size fio printed,
a rate given on the command line):

    read_bytes(text)       "4096", "4k", "64KiB", "71.4MiB", "3390MB", "12.5GB/s", "100Gb/s" -> bytes (or bytes/s);
                           None where the text is not one

and on it the two readers every option and parameter that takes a size or a rate uses, each refusing with one
message that names the value and the forms it takes (``ConfigError``):

    read_size(text, what)  a size, as fio reads one: "4096", "4k", "4K", "4KiB", "4kB", "1M", "1m", "1MiB" -> whole
                           bytes; every prefix a power of 1024 (fio's kb_base=1024: bs=4k is 4096)
    read_rate(text, what)  a rate with its unit: "2.8GB/s", "2800MB/s", "100Gb/s", "3GiB/s" -> bytes/s; prefixes
                           decimal (GB/s is 10^9 bytes/s), bits where the b is lower case (Gb/s is 10^9 / 8 bytes/s),
                           binary only with an i (GiB/s is 2^30 bytes/s)

It lives in ``measure`` (the results' own layer) so that measurement's progress lines, analysis's sentences, the
reports and the command line all use it; it is pure.
"""
from __future__ import annotations

import math
import re
from typing import Iterable

import pandas as pd

from ..errors import ConfigError

KINDS = ("bandwidth", "size", "percent", "ns", "us", "ms", "s", "count", "iops", "rate", "ratio", "number", "text")
DASH = "–"  # an en dash between the bounds of an interval
MISSING = "—"
MB_S = ("MB/s", 1e6)
GB_S = ("GB/s", 1e9)


def missing(value) -> bool:
    """Whether ``value`` is no number at all: None, NaN, pandas' NA or NaT."""
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA or value is pd.NaT


def _decimals(value: float, digits: int = 3) -> int:
    """Decimals that give ``value`` about ``digits`` significant digits (none for 10**digits and more)."""
    if value == 0 or not math.isfinite(value):
        return 0
    return max(0, digits - 1 - math.floor(math.log10(abs(value))))


def _fixed(value: float, decimals: int) -> str:
    text = f"{value:,.{decimals}f}"
    return "0" if text.strip("-0.,") == "" and decimals == 0 else text


def number(value: float, digits: int = 3) -> str:
    """``value`` with about ``digits`` significant digits, thousands separated, never in e-notation."""
    if missing(value):
        return MISSING
    value = float(value)
    if not math.isfinite(value):
        return MISSING if math.isnan(value) else ("∞" if value > 0 else "-∞")
    if value != 0 and abs(value) < 10 ** -(digits + 2):
        return f"<{10 ** -(digits + 2):.{digits + 2}f}" if value > 0 else f">-{10 ** -(digits + 2):.{digits + 2}f}"
    if value == round(value) and abs(value) < 1e15:
        return f"{value:,.0f}"
    return _fixed(value, _decimals(value, digits))


def size(value: float) -> str:
    """A size in bytes, in the largest binary unit it reaches: "1 MiB", "1.5 GiB", "512 B"."""
    if missing(value):
        return MISSING
    value = float(value)
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(value) >= scale:
            exact = value % scale == 0
            return f"{value / scale:,.0f} {unit}" if exact else f"{number(value / scale)} {unit}"
    return f"{number(value)} B"


def duration(value: float, unit: str = "s") -> str:
    """A time given in ``unit`` (ns, us, ms or s), in the unit that reads best: "94.1 µs", "2.50 s"."""
    if missing(value):
        return MISSING
    seconds = float(value) * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]
    if not math.isfinite(seconds):
        return number(seconds)
    for name, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(seconds) >= scale:
            return f"{number(seconds / scale)} {name}"
    return f"{number(seconds / 1e-9)} ns"


def bandwidth_scale(values: Iterable[float]) -> tuple[str, float]:
    """The unit a column of bandwidths is shown in: GB/s when its largest reaches 10 GB/s, else MB/s."""
    finite = [abs(v) for v in values if isinstance(v, (int, float)) and not missing(v) and math.isfinite(v)]
    return GB_S if finite and max(finite) >= 1e10 else MB_S


def rate(value: float, scale: tuple[str, float] | None = None) -> str:
    """A bandwidth in bytes/s: "802 MB/s", "12.5 GB/s" (``scale``: a unit chosen for several, ``bandwidth_scale``)."""
    if missing(value):
        return MISSING
    unit, factor = scale or bandwidth_scale([value])
    return f"{number(float(value) / factor)} {unit}"


def bounds(lo: float, hi: float, scale: tuple[str, float] = MB_S) -> str:
    """An interval's bounds as numbers of ``scale``'s unit, with as many digits as tell them apart (a tight interval
    is never "200–200"): "798–806", "200.1–200.4"; a negative bound reads "-4,074 to 7,106"."""
    if missing(lo) or missing(hi):
        return MISSING
    low, high = float(lo) / scale[1], float(hi) / scale[1]
    digits = 3
    while number(low, digits) == number(high, digits) and low != high and digits < 9:
        digits += 1
    between = DASH if low >= 0 else " to "
    return f"{number(low, digits)}{between}{number(high, digits)}"


def percent(value: float, decimals: int = 1, *, signed: bool = False) -> str:
    """A fraction in % with ``decimals`` decimals: "4.2%", "0.0%"; ``signed``: "+4.2%", "-0.3%"."""
    if missing(value):
        return MISSING
    value = float(value)
    if not math.isfinite(value):
        return number(value)
    return f"{100 * value:+,.{decimals}f}%" if signed else f"{100 * value:,.{decimals}f}%"


def span(seconds: float) -> str:
    """A wall-clock span, whole seconds: "2 min 24 s", "1 h 5 min", "12 s" (an ETA, a campaign's length)."""
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {secs} s" if minutes else f"{secs} s"


def cell(value, kind: str, scale: tuple[str, float] = MB_S) -> str:
    """One value of ``kind`` (``KINDS``) as a table shows it (a bandwidth in ``scale``'s unit)."""
    if missing(value):
        return MISSING
    if isinstance(value, (bool,)) or (kind != "text" and hasattr(value, "dtype") and value.dtype == bool):
        return "yes" if value else "no"
    if kind == "text" or isinstance(value, str) or not isinstance(value, (int, float)) and not hasattr(value, "real"):
        return str(value)
    value = float(value)
    if not math.isfinite(value):
        return number(value)
    if kind == "bandwidth":
        return rate(value, scale)
    if kind == "size":
        return size(value)
    if kind == "percent":
        return "0%" if value == 0 else percent(value)
    if kind in ("ns", "us", "ms", "s"):
        return duration(value, kind)
    if kind in ("count", "iops"):
        return f"{value:,.0f}" if value == round(value) or (kind == "iops" and abs(value) >= 100) else number(value)
    if kind == "rate":
        return f"{number(value)}/s"
    return number(value)


ONE_RUN = "one run: no interval"  # what a number of fewer than two runs shows instead of an interval


def interval(lo: float, hi: float, kind: str = "bandwidth", scale: tuple[str, float] | None = None) -> str:
    """An interval's bounds in words, in the unit of ``kind`` (``cell``'s): "798–806 MB/s", "-1.2% to 3.4%";
    ``ONE_RUN`` where it has no bounds (NaN: fewer than two runs, nothing to make an interval of), and a
    zero-width one as its one value with "no spread" ("200 MB/s, no spread"), never "200–200"."""
    if missing(lo) or missing(hi) or not (math.isfinite(float(lo)) and math.isfinite(float(hi))):
        return ONE_RUN
    if kind == "bandwidth":
        scale = scale or bandwidth_scale([lo, hi])
        if float(lo) == float(hi):
            return f"{rate(lo, scale)}, no spread"
        return f"{bounds(lo, hi, scale)} {scale[0]}"
    if float(lo) == float(hi):
        return f"{cell(lo, kind)}, no spread"
    between = DASH if kind != "percent" and float(lo) >= 0 else " to "
    return f"{cell(lo, kind)}{between}{cell(hi, kind)}"


def with_interval(value: float, lo: float, hi: float, kind: str = "bandwidth",
                  scale: tuple[str, float] | None = None) -> str:
    """A value with its interval for a sentence: "802 MB/s (798–806 MB/s)", "379 MB/s (one run: no interval)"."""
    if missing(value):
        return MISSING
    scale = scale or (bandwidth_scale([value]) if kind == "bandwidth" else MB_S)
    shown = rate(value, scale) if kind == "bandwidth" else cell(value, kind, scale)
    return f"{shown} ({interval(lo, hi, kind, scale)})"


# The units a column of each kind may be shown in, smallest first: (unit, its size in the column's own unit).
SCALES: dict[str, tuple[tuple[str, float], ...]] = {
    "bandwidth": (("kB/s", 1e3), MB_S, GB_S, ("TB/s", 1e12)),
    "iops": (("IOPS", 1.0), ("kIOPS", 1e3), ("MIOPS", 1e6)),
    "ns": (("ns", 1.0), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)),
    "us": (("µs", 1.0), ("ms", 1e3), ("s", 1e6)),
    "percent": (("%", 0.01),),
}


def column_scale(values: Iterable[float], kind: str) -> tuple[str, float] | None:
    """The one unit a column of ``kind`` is shown in: the largest of ``SCALES[kind]`` that its median (of the finite
    values not zero) reaches, so that most of the column reads between 1 and 1,000 ("807" MB/s, "31.6" GB/s,
    "4.11" TB/s, "50.2" kIOPS, "94.1" µs); the smallest where nothing is measured; None for a kind without units to
    scale (a count, a size, a ratio, text)."""
    if kind not in SCALES:
        return None
    finite = sorted(abs(float(v)) for v in values
                    if not missing(v) and isinstance(v, (int, float)) and math.isfinite(v) and v != 0)
    scales = SCALES[kind]
    if not finite:
        return scales[0]
    middle = finite[(len(finite) - 1) // 2]  # the lower median: a column of two reads in the smaller's unit
    return [scale for scale in scales if middle >= scale[1]][-1] if middle >= scales[0][1] else scales[0]


def in_scale(value: float, scale: tuple[str, float], digits: int = 3) -> str:
    """``value`` as a number of ``scale``'s unit, the unit left to the column's header: "807", "2.78", "-0.5"
    (a percentage with one decimal, as ``percent`` gives it)."""
    if missing(value):
        return MISSING
    if scale[0] == "%":
        return percent(value)[:-1] if math.isfinite(float(value)) else number(value)
    return number(float(value) / scale[1], digits)


def interval_in(value: float, lo: float, hi: float, scale: tuple[str, float]) -> str:
    """A value and its interval, both in ``scale``'s unit (the column's, said in its header): "807 (779–836)",
    "-0.5 (-4.2 to 3.0)"; the value alone where it has no interval (fewer than two runs) or an exact one
    (lo = hi = value), the table saying so once under it."""
    if missing(value) or missing(lo) or missing(hi) or not (math.isfinite(float(lo)) and math.isfinite(float(hi))) \
            or float(lo) == float(hi) == float(value):
        return in_scale(value, scale)
    digits = 3  # as many as tell the bounds apart, the value with as many: "200.2 (200.1–200.3)"
    while in_scale(lo, scale, digits) == in_scale(hi, scale, digits) and float(lo) != float(hi) and digits < 9 \
            and scale[0] != "%":
        digits += 1
    between = DASH if float(lo) >= 0 else " to "
    return f"{in_scale(value, scale, digits)} ({in_scale(lo, scale, digits)}{between}{in_scale(hi, scale, digits)})"


AMOUNT = re.compile(r"(?P<number>\d{1,20}(?:\.\d{0,20})?(?:[eE][+-]?\d{1,3})?|\.\d{1,20})\s*(?P<prefix>[kKmMgGtTpPE]?)"
                    r"(?P<iec>i?)(?P<unit>bytes|byte|bits|bit|B|b)?(?P<per>/s|ps)?")
BITS = ("b", "bit", "bits")


def read_bytes(text: str, *, k1024: bool = False, bits: bool = False, per_second: bool = False,
               unit: bool = False, whole: bool = False) -> float | None:
    """An amount of bytes as people and fio write it, in bytes: a prefix is a power of 1000 (``k``, ``M``, ... ``E``) or,
    with an ``i`` (``KiB``) or ``k1024`` (fio's job files and fio 2.x's output, ``kb_base=1024``), of 1024; ``bits``:
    a lower-case ``b`` or ``bit`` counts bits (a network's ``100Gb/s`` is 12.5e9 bytes/s), else every ``b`` is a
    byte, as in a job file's ``4kb``; ``per_second`` lets a rate end in ``/s`` or ``ps``; ``unit``: the unit (bytes
    or bits) must be written; ``whole``: digits only (no fraction, no exponent). None where the text is none of
    these, the number is not finite or it is negative; each caller names the value and the option in its error."""
    match = AMOUNT.fullmatch(str(text).strip())
    if match is None or (match["iec"] and not match["prefix"]) or (match["per"] and not per_second) \
            or (unit and not match["unit"]) or (whole and not match["number"].isdigit()):
        return None
    power = "KMGTPE".find(match["prefix"].upper()) + 1 if match["prefix"] else 0
    value = float(match["number"]) * (1024 if match["iec"] or k1024 else 1000) ** power
    if not math.isfinite(value):
        return None
    return value / 8 if bits and match["unit"] in BITS else value


SIZE_FORMS = ("whole bytes with an optional unit, e.g. 4096, 4k, 4KiB, 1M or 1MiB (k, M, G, T, P are powers of 1024, "
              "as fio's bs=4k is 4096)")
RATE_FORMS = ("a rate with its unit, e.g. 2.8GB/s or 2800MB/s (bytes, powers of 1000), 100Gb/s (bits) or 3GiB/s "
              "(powers of 1024)")
SIZE_MAX = 2**63  # fio counts sizes in 64 bits, signed


def read_size(text: str | int, what: str = "size", least: int = 1) -> int:
    """``text`` (or a whole number of bytes) as a size in bytes (``SIZE_FORMS``): fio's convention, every prefix a
    power of 1024, a ``b`` or ``B`` a byte; at least ``least``. ConfigError naming ``what`` and the value else."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = float(text)
    elif isinstance(text, str) and "/" not in text:
        value = read_bytes(text, k1024=True, whole=True)
    else:
        value = None
    if value is None or not least <= value < SIZE_MAX:
        bound = "" if value is None else f" (at least {least}, less than 2^63)"
        raise ConfigError(f"{what} {text!r} is not a size{bound}: give {SIZE_FORMS}")
    return int(value)


def read_rate(text: str, what: str = "rate") -> float:
    """``text`` as a rate in bytes/s (``RATE_FORMS``): its unit, bytes (B) or bits (b), must be written; above 0.
    ConfigError naming ``what`` and the value else."""
    value = read_bytes(text, bits=True, per_second=True, unit=True) if isinstance(text, str) else None
    if value is None or not value > 0:
        bound = "" if value is None else " (above 0)"
        raise ConfigError(f"{what} {text!r} is not a rate{bound}: give {RATE_FORMS}")
    return value
