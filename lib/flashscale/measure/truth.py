"""A run held to the emulated array's known truth, and whether it lasted long enough to give a rate.

On the emulated array each device is held at a cap by the kernel's block throttle, so the truth of a run is known:
devices x the cap of each direction it moves (``evidence``). The throttle works in slices of 100 ms (throtl_slice)
and lets about one slice's worth through before it holds the cap: cap x 0.1 s on top of cap x runtime, i.e.
0.1 s / runtime of the rate (measured here on one loop device at 200 MB/s: reads of 1 s after a 1 s ramp came out
1.04-1.09 x the cap, of 2 s 1.004 x, of 5 s 0.999 x; an application timed from an idle throttle, the many-files
transfer, wrote 433 MB/s on devices that allow 400, 1.08 x, in about a second).

    tolerance(runtime_s)      how far above its truth a run may be and still agree with it: the slice's share of
                              the run, never less than 2% (``MIN_TOLERANCE``, fio's own accounting of a run's edges)
    tax_band(tax, runtime_s)  the taxes such runs may show where the truth is ``tax``
    judged(ratio, runtime_s)  above_truth and too_short of a run ``ratio`` x its truth; why_too_short says why
    evidence(row, caps)       a fio row's truth, above_truth and too_short

A rate is published only within 2% of what the devices allow. A run above its truth by more than 2% that the
slice's share of its runtime explains is *too short* (``too_short``): it gives no rate, and ``why_too_short`` says
why (``analysis.evidence`` names it); the slice is under 2% of a run of 5 s or more (``SLICE_FREE_S``), which the
defaults run. A run above by more than the slice explains is *above its truth* (``above_truth``): a
measurement error to investigate. Any run under ``MIN_RUNTIME_S`` is too short whatever it measured: fio's clock,
not the storage.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from . import fio_output
from ..errors import HarnessCeilingError
from .units import rate

# A run shorter than this gives no rate worth stating. fio counts a run's time in whole milliseconds, its own
# start and finish included, and a block throttle lets about one 100 ms slice through before it holds the rate;
# under a second these are a tenth of the run or more (64,000 files "created in 100 ms" is fio's clock, not the
# file system's rate).
MIN_RUNTIME_S = 1.0
THROTTLE_SLICE_S = 0.1  # blk-throttle's slice: about this many seconds of the cap pass before it holds
MIN_TOLERANCE = 0.02  # a rate within 2% of its truth agrees with it (a fully read device at 200 MB/s for 3 s: +1.35%)
SLICE_FREE_S = THROTTLE_SLICE_S / MIN_TOLERANCE  # 5 s: from here on the slice is within the 2%


def tolerance(runtime_s: float) -> float:
    """How far (a fraction) a run of ``runtime_s`` seconds may be above its known truth and still be explained by
    the throttle: the slice's share of it, never less than ``MIN_TOLERANCE``."""
    return max(MIN_TOLERANCE, THROTTLE_SLICE_S / runtime_s) if runtime_s > 0 else math.inf


def tax_band(tax: float, runtime_s: float) -> tuple[float, float]:
    """The taxes (1 - a layout's rate / its reference's) that runs of ``runtime_s`` seconds may show where the truth
    is ``tax``: either side's runs may be above their truth by up to ``tolerance``, so the ratio of the two is known
    only to within that factor either way. An interval that meets this band holds the truth as the harness states it."""
    grow = 1 + tolerance(runtime_s)
    return 1 - (1 - tax) * grow, 1 - (1 - tax) / grow


def why_too_short(ratio: float, runtime_s: float, allowed: float | None = None) -> str | None:
    """Why a run of ``runtime_s`` seconds that measured ``ratio`` x its truth (NaN: no truth known) gives no rate, or
    None: under ``MIN_RUNTIME_S``; or above its truth by more than 2% but no more than the throttle's slice explains
    (``allowed``: ``tolerance``'s by default; an application timed from an idle throttle is allowed a slice more).
    A run of no known time (a failed one, an application's missing value) is none of these."""
    allowed = tolerance(runtime_s) if allowed is None else allowed
    if runtime_s < MIN_RUNTIME_S:
        return f"it lasted {runtime_s:.2f} s, under {MIN_RUNTIME_S:g} s: fio's clock, not the storage"
    if isinstance(ratio, (int, float)) and 1 + MIN_TOLERANCE < ratio <= 1 + allowed:
        return (f"it came out {100 * (ratio - 1):.1f}% above the devices' cap, and the throttle's first "
                f"{THROTTLE_SLICE_S:g} s slice is {100 * THROTTLE_SLICE_S / runtime_s:.1f}% of its {runtime_s:.2f} s: "
                f"no rate within {100 * MIN_TOLERANCE:g}% of its truth (runs of {SLICE_FREE_S:g} s or more give one)")
    return None


def judged(ratio: float, runtime_s: float, allowed: float | None = None) -> dict:
    """``above_truth`` (above its truth by more than the throttle explains: an error to investigate) and
    ``too_short`` (``why_too_short`` has a reason) of a run of ``runtime_s`` seconds that measured ``ratio`` x its
    truth (NaN: no truth known)."""
    allowed = tolerance(runtime_s) if allowed is None else allowed
    above = isinstance(ratio, (int, float)) and math.isfinite(ratio) and ratio > 1 + allowed
    return {"above_truth": bool(above), "too_short": why_too_short(ratio, runtime_s, allowed) is not None}


def evidence(row: Mapping, caps: Mapping[str, float], network_bps: float | None = None) -> dict:
    """A row's agreement with the known truth, and whether it lasted long enough to give a rate.

    ``caps`` is the per-device cap of each direction ("read", "write") fio ran under, bytes/s; empty when it ran
    uncapped. The truth is ``devices`` x cap for each direction the rw moves (their sum for a mixed rw), or, when
    the row's data crossed a capped network carrying ``network_bps`` bytes of data per second each way, the smaller
    of the two; the run is held to it by the direction furthest above its own truth (``judged``). Metadata runs
    move no data worth a cap and have no truth."""
    directions = fio_output.DIRECTIONS.get(row["rw"], ())
    truths = {d: min(row["devices"] * caps[d], network_bps or math.inf) for d in directions if caps.get(d, 0) > 0}
    known = bool(directions) and len(truths) == len(directions)
    ratio = max(row[f"{d}_bw_bytes"] / truth for d, truth in truths.items()) if known else math.nan
    return {"truth_bw_bytes": float(sum(truths.values())) if known else float("nan"),
            **judged(ratio, row["runtime_s"])}


# ---- a truth the machine can deliver (measure.harness measures the ceiling; this decides what to hold) ----------
HEADROOM = 0.5  # a truth is held only where the harness carried at least twice it with the caps lifted
MIN_FITTED_BPS = 10_000_000  # below this a device's cap measures the throttle's slices more than the storage


def floor_2_digits(value: float) -> float:
    """``value`` rounded down to two significant digits (178,345,000 -> 170,000,000): a cap a person can read."""
    if not value > 0:
        return 0.0
    unit = 10 ** (math.floor(math.log10(value)) - 1)
    return float(math.floor(value / unit) * unit)


@dataclass(frozen=True)
class Fit:
    """One cap held against what the harness carried: ``asked`` bytes/s for each of ``units`` (devices, or links)
    that share the harness, which carried ``ceiling`` bytes/s for all of them with the caps lifted; ``cap`` is what
    is held (``asked``, or lowered to ``HEADROOM`` of the ceiling)."""

    direction: str
    what: str
    asked: float
    units: int
    ceiling: float
    cap: float

    @property
    def adjusted(self) -> bool:
        return self.cap != self.asked

    def why(self) -> str:
        """The fit in words (units: ``measure.units``)."""
        carried = (f"this machine carried {rate(self.ceiling)} of {self.direction}s with the caps lifted, for "
                   f"{self.units} {self.what}(s) at once")
        if not self.adjusted:
            return (f"{self.direction} cap of {rate(self.asked)} a {self.what} kept: {carried}, at least "
                    f"{1 / HEADROOM:g} x their {rate(self.asked * self.units)}")
        return (f"{self.direction} cap lowered from {rate(self.asked)} to {rate(self.cap)} a {self.what}: {carried}, "
                f"under {1 / HEADROOM:g} x the {rate(self.asked * self.units)} asked, so the truth asked was not one "
                f"this machine could deliver")


def fit(direction: str, asked: float, units: int, ceiling: float, policy: str, what: str = "device") -> Fit:
    """Hold ``asked`` bytes/s on each of ``units`` only where ``units`` x it is at most ``HEADROOM`` of the
    ``ceiling`` the harness carried uncapped; else lower it to that (``floor_2_digits``), or, with ``policy``
    'refuse' or where the lowered cap would be under ``MIN_FITTED_BPS``, raise HarnessCeilingError with both
    numbers. A cap of 0 or NaN (uncapped) is kept as it is."""
    if not asked > 0 or asked * units <= HEADROOM * ceiling:
        return Fit(direction, what, asked, units, ceiling, asked)
    lowered = Fit(direction, what, asked, units, ceiling, floor_2_digits(HEADROOM * ceiling / units))
    if policy == "refuse" or lowered.cap < MIN_FITTED_BPS:
        reason = ("CAP_FIT is 'refuse'" if policy == "refuse" else
                  f"it would be under {rate(MIN_FITTED_BPS)} a {what}, too little to measure")
        raise HarnessCeilingError(f"the {direction} cap of {rate(asked)} a {what} cannot be held as a known truth "
                                  f"here: this machine carried {rate(ceiling)} of {direction}s with the caps lifted, "
                                  f"for {units} {what}(s) at once, under {1 / HEADROOM:g} x the "
                                  f"{rate(asked * units)} asked; {reason}. Give caps of at most "
                                  f"{rate(lowered.cap)} a {what}, or CAP_FIT='lower'")
    return lowered
