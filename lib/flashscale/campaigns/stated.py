"""Predictions stated before measuring: before a campaign builds each layout after its baseline, what that layout
should deliver at every point of the sweep, from the baseline's rows as measured so far (``analysis.predict``).

    state = stated.Stating(directory, spec.sweep.points(), devices_of, limits)
    state("jbod")        # appends jbod's predicted points to predictions.csv, with predicted_at (UTC)

Each layout is predicted once: a resumed campaign keeps the predictions it stated before (a layout already in
``predictions.csv`` is not predicted again, after the fact). Nothing is predicted for the baseline layout itself,
nor when no single-device rate was measured first (a campaign without ``single``, and no ``baseline`` campaign,
such as a study's ``01_baseline``, that measured one: ``curve`` has nothing to read).
The limits are what this machine says of itself: the CPUs this process may use and, on devices with a PCIe link,
the slowest one's; and what the campaign's ``CEILINGS`` say (memory, the network's links, PCIe). Where both name a
PCIe link, the ceilings' wins: it is what the engineer stated, and it can carry the protocol's cost
(``pcie_efficiency``) that sysfs's raw link rate does not; each prediction's note names both (``limits``, ``said``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Mapping, Sequence

from ..analysis import predict
from ..analysis.ceilings import PCIE_LANE_BW_BYTES, pcie_link_bw_bytes
from ..errors import AnalysisError, ConfigError
from ..measure import results
from ..system.devices import System
from ..measure.units import rate

BASELINE = "single"
GENERATIONS = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}  # GT/s per lane -> PCIe generation


def cores() -> int:
    """The CPUs this process may run on (its affinity), else the machine's count."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def pcie_bps(paths: Sequence[str], system: System) -> float | None:
    """The slowest PCIe link of the devices at ``paths``, bytes/s per direction (``ceilings.pcie_link_bw_bytes``);
    None when any of them has no PCIe link sysfs can name (loop devices), or one of an unknown speed or width."""
    links = [system.pcie_link(system.name_of(path)) for path in paths]
    if not links or any(link is None for link in links):
        return None
    rates = []
    for speed, lanes in links:
        gen = GENERATIONS.get(speed)
        if gen not in PCIE_LANE_BW_BYTES:
            return None
        try:
            rates.append(pcie_link_bw_bytes(gen, lanes))
        except ConfigError:
            return None
    return min(rates)


def limits(paths: Sequence[str] = (), system: System | None = None, ceilings: Mapping | None = None,
           **more) -> predict.Limits:
    """This machine's limits: ``cores()`` and the devices' PCIe link where they have one; the ``ceilings``' memory,
    network and PCIe on top (their PCIe link wins over sysfs's); ``more`` on top of all."""
    given = predict.Limits.from_ceilings(ceilings or {}, **{"cores": cores(), **more})
    if given.pcie_bps is not None or "pcie_bps" in more or not paths:
        return given
    found = pcie_bps(paths, system or System())
    return given if found is None else replace(given, pcie_bps=found)


def said(paths: Sequence[str] = (), system: System | None = None, ceilings: Mapping | None = None) -> str:
    """What the predictions' note says of their ``ceilings``: that their PCIe link was used where sysfs names one
    too (and sysfs's), and that a device's datasheet rate is no term (the devices' term is the single device as
    measured); "" when there is nothing to say."""
    if not ceilings:
        return ""
    notes = []
    stated = predict.Limits.from_ceilings(ceilings).pcie_bps
    found = pcie_bps(paths, system or System()) if paths and stated is not None else None
    if found is not None:
        sysfs = "the same as" if round(found) == round(stated) else f"not the {rate(found)} of"
        notes.append(f"PCIe from CEILINGS, {rate(stated)} a device, {sysfs} the link sysfs names: the "
                     "ceilings win")
    datasheet = sorted(k for k in ("device_read_bw_bytes", "device_write_bw_bytes") if k in ceilings)
    if datasheet:
        notes.append(f"{' and '.join(datasheet)} of CEILINGS: no term, the devices' term is the single device as "
                     "measured")
    return "; ".join(notes)


def record(directory: Path, prediction) -> None:
    """Append ``prediction`` (``predict.predict``'s frame, or a cluster's) to ``directory``'s predictions.csv with
    ``predicted_at``, the UTC time it is stated: before what it predicts is measured."""
    at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    results.append_predictions(directory, prediction.assign(predicted_at=at))


@dataclass
class Stating:
    """Called with a layout's name before it is built (``Recorder.before_build``): predicts its points from the
    campaign's single-device rows and appends them to ``predictions.csv``. ``devices_of(name)`` is how many devices
    the layout will use; ``note`` (``said``) is added to each point's ``predicted_note``. ``baseline``: another
    campaign's folder (a study's ``01_baseline``) whose single-device rows are read when this campaign has measured
    none itself; the campaign's own, measured on the same devices just before, come first."""

    directory: Path
    points: Sequence[dict]
    devices_of: Callable[[str], int]
    limits: predict.Limits
    note: str = ""
    baseline: Path | None = None

    def __call__(self, layout: str) -> None:
        if layout == BASELINE:
            return
        earlier = results.read_predictions(self.directory)
        if not earlier.empty and layout in set(earlier["layout"]):
            return  # stated before this run was interrupted: kept as it was
        rows = self._baseline_rows()
        if rows.empty:
            return
        try:
            base = predict.curve(rows[rows["workload"] == "fio"])
        except AnalysisError:
            return  # the baseline measured no rate (every run failed or too short): nothing to predict from
        devices = self.devices_of(layout)
        points = [{**{k: p[k] for k in ("rw", "bs", "numjobs", "iodepth")}, "devices": devices} for p in self.points]
        prediction = predict.predict(base, layout, points, self.limits)
        if self.note:
            notes = prediction["predicted_note"]
            prediction["predicted_note"] = ["; ".join(filter(None, [note, self.note])) for note in notes]
        record(self.directory, prediction)

    def _baseline_rows(self):
        """The single-device rows measured so far: this campaign's, else ``baseline``'s; empty when neither has."""
        for folder in filter(None, (self.directory, self.baseline)):
            rows = results.to_frame(results.read_rows(folder)[0])
            if not rows.empty and BASELINE in set(rows["layout"]):
                return rows
        return results.to_frame([])
