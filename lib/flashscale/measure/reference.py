"""What a layout's tax is measured against: the one rule, for the sweep as its points run and for the analysis.

The tax is defined against N x the single-device baseline. jbod (each device its own file system, side by side,
nothing between them) measures that on the same N devices and is the reference by default (``STANDS_IN``). A
campaign that measured the single device but not jbod has its tax measured against N x single: the single device's
runs, their rates times N, stand in for jbod on the N devices of every layout of more than one device, under the
stand-in's name (``name``: ``"4 x single"``, or ``"N x single"`` where the layouts' device counts differ).

Both users read this module: ``recorder`` (the sequential tax test while a point runs, ``reference_runs``) and
``analysis.stand_in`` (the stand-in's rows in a results table, ``resolve``), so they name the same reference and the
same N x single values. It lives in ``measure`` because measure may not import analysis (import-linter's layers).

    reference_of(layouts, reference)   the layout whose runs a tax is measured against (the single device's for
                                       the stand-in), or None
    taxed(layout, devices, against)    whether a tax is asked of a layout on ``devices`` (the reference's own)
    scaled(runs, devices, against)     the reference's runs for a layout on ``devices`` (N x single's: times N)
    reference_runs(rates, ...)         the reference's runs at a point, scaled, as the sweep measured them
    as_reference(runs, most)           why the reference's own point stops: it runs to the most
    name(devices) / is_stand_in(name)  the stand-in's name
"""
from __future__ import annotations

from typing import Iterable

STANDS_IN = "jbod"  # N devices side by side, nothing between them: what N x single measures without building it
SINGLE = "single"
SCALED = ("bw_bytes", "iops", "read_bw_bytes", "write_bw_bytes", "io_bytes", "truth_bw_bytes")  # sums over devices


def name(devices: Iterable[int]) -> str:
    """``"4 x single"`` for one device count, ``"N x single"`` for several."""
    counts = sorted({int(n) for n in devices})
    return f"{counts[0]} x {SINGLE}" if len(counts) == 1 else f"N x {SINGLE}"


def is_stand_in(layout: str) -> bool:
    """True for the stand-in's name (``name``): a reference no run measured."""
    return str(layout).endswith(f" x {SINGLE}")


def reference_of(layouts: Iterable[str], reference: str = STANDS_IN) -> str | None:
    """The layout whose runs ``layouts``' taxes are measured against: ``reference`` where it is among them; the
    single device (``SINGLE``: N x single stands in) where ``reference`` is jbod, not measured, and the single
    device is measured beside another layout; None otherwise (no tax can be measured)."""
    names = set(layouts)
    if reference in names:
        return reference
    if reference == STANDS_IN and SINGLE in names and names - {SINGLE}:
        return SINGLE
    return None


def taxed(layout: str, devices: int, against: str | None, against_devices: int | None = None) -> bool:
    """Whether a tax is asked of ``layout`` on ``devices`` against ``against`` (``reference_of``): never of the
    reference itself; against N x single, only of a layout of more than one device (the stand-in has no copy at
    one device); against a measured reference on ``against_devices`` (None: not known), only of a layout on as many
    devices (the analysis matches the reference's row at the same devices)."""
    if against is None or layout == against:
        return False
    if against == SINGLE:
        return int(devices) > 1
    return against_devices is None or int(devices) == int(against_devices)


def scaled(runs, devices: int, against: str | None):
    """``against``'s runs (a number, a list's items or a pandas column) as the reference of a layout on
    ``devices``: the single device's times ``devices`` (N x single), any other reference's as they are."""
    if against != SINGLE:
        return runs
    if isinstance(runs, (list, tuple)):
        return [float(r) * int(devices) for r in runs]
    return runs * int(devices)


def as_reference(runs, most: int) -> str:
    """Why the tax reference's point stops after ``runs`` with a precision (``measure.sweep.REPS_REASONS``):
    ``reference`` once the most have run, else ``more``. Every layout's sequential test shares its runs, and Welch's
    test learns its spread from them alone: against three reference runs at 2% a true 8% tax was decided in 72% of
    draws and equivalence at none in 0.4%, against ten in 100% (in 4.5 runs of the layout, not 6.1) and 13%
    (tests/test_significance_sequential.py). It runs to the most because it is measured before its layouts, on
    their devices: no run of it can come after theirs without building it again. Where it can run between their
    runs, ``analysis.repetitions.shared_point`` samples it as the decisions need it instead (until precise, then
    as each layout's next look needs it)."""
    return "reference" if len(runs) >= most else "more"


def reference_runs(rates: dict, against: str | None, layout: str, devices: int, point: str,
                   against_devices: int | None = None) -> list[float] | None:
    """The reference's measured rates at ``point`` for ``layout`` on ``devices`` (``rates``: (layout, point, build)
    -> rates, as measured; every build of the reference's), ``scaled``. None where no tax is asked of ``layout``
    (``taxed``, the reference on ``against_devices``) or the reference has no runs at that point yet."""
    if not taxed(layout, devices, against, against_devices):
        return None
    runs = [float(r) for (measured, at, _), values in sorted(rates.items(), key=str)
            if (measured, at) == (against, point) for r in values]
    return scaled(runs, devices, against) if runs else None
