"""The reference a tax is measured against when it was not measured: N x the single device.

The tax is defined against N x the single-device baseline. jbod (each device its own file system, the devices side
by side, nothing between them) measures that on the same N devices, and is the reference by default
(``REFERENCE="jbod"``). A campaign that measured the single device but not jbod (``LAYOUTS=[single, md-raid0]``:
"what does md RAID-0 cost me over the drives alone?") has its tax measured against N x single: every measured run
of the single device, its bandwidth (and IOPS, bytes, truth) times N, stands in for the reference on the N devices
of every other layout, as a layout named ``"4 x single"`` (``"N x single"`` where the layouts have different
device counts). The tax against it is 1 - best / (N x the single device's best), tested (``stats.tax_tests``) on
those runs; its verdict and interval are what they would be against a jbod that scaled perfectly.

The rule itself (which layout is the reference for a set of layouts; which layouts are taxed against N x single;
how the single device's runs are scaled by devices) is ``measure.reference``'s, the one the sweep's sequential tax
test follows while points run (measure may not import analysis); this module applies it to a results table.

    resolve(frame, reference) the frame and the reference the tax is measured against (the stand-in's rows added)
    measured_against(table, reference)   the reference a summary's tax was measured against
"""
from __future__ import annotations

import pandas as pd

from ..measure.reference import SCALED, SINGLE, STANDS_IN, name, reference_of, scaled, taxed


def resolve(frame: pd.DataFrame, reference: str, source: pd.DataFrame | None = None) -> tuple[pd.DataFrame, str]:
    """``(frame, reference)`` unchanged where ``reference`` was measured (a row of ``frame``) or is not jbod, or
    where no single-device run (``source``'s, by default ``frame``'s: layout single, 1 device) or no layout of more
    than one device was measured: the caller then refuses the reference by name, as before. Otherwise ``frame`` with
    the stand-in's rows added (``source``'s single-device rows, one copy per device count N of ``frame``'s rows of
    more than one device, their ``SCALED`` columns times N) and the stand-in's name (``name``). ``frame`` is not
    changed."""
    source = frame if source is None else source
    single = source[(source["layout"] == SINGLE) & (source["devices"] == 1)]
    measured = set(frame["layout"]) | ({SINGLE} if not single.empty else set())
    against = reference_of(measured, reference)
    counts = sorted({int(n) for layout, n in zip(frame["layout"], frame["devices"]) if taxed(layout, n, against)})
    if reference != STANDS_IN or against != SINGLE or not counts:  # jbod measured, or nothing to stand in for
        return frame, reference
    stand_in = name(counts)
    copies = [single.assign(layout=stand_in, devices=single["devices"].dtype.type(n),
                            **{c: scaled(single[c], n, against) for c in SCALED if c in single.columns})
              for n in counts]
    return pd.concat([frame, *copies], ignore_index=True), stand_in


def measured_against(table: pd.DataFrame, reference: str) -> str:
    """The reference ``table``'s tax was measured against: its ``reference`` column where it holds one name (the
    stand-in's where it stood in), else ``reference``."""
    said = table["reference"].dropna().unique() if "reference" in table.columns else []
    return str(said[0]) if len(said) == 1 else reference
