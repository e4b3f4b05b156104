"""Predictions stated before measuring: before a campaign builds each layout after its baseline, what that layout
should deliver at every point of the sweep, from the baseline's rows as measured so far (``analysis.prediction.predict``).

    state = stated.Preregistration(directory, spec.sweep.points(), devices_of, limits)
    state("jbod")        # appends jbod's predicted points to predictions.csv, with predicted_at (UTC)

Each layout is predicted once: a resumed campaign keeps the predictions it stated before (a layout already in
``predictions.csv`` is not predicted again, after the fact). Nothing is predicted for the baseline layout itself,
nor when no single-device rate was measured first (a campaign without ``single``, and no ``baseline`` campaign,
such as a study's ``01_baseline``, that measured one: ``curve`` has nothing to read).
The limits are what this machine says of itself, measured once per campaign (``system.host``): the CPUs this
process may use, the memory's copy rate (a short probe) and, on devices with a PCIe link, the slowest one's; and
what the campaign's ``CEILINGS`` say (memory, the network's links, PCIe). Where both name a PCIe link or a memory,
the ceilings' wins: it is what the engineer stated, and it can carry the protocol's cost (``pcie_efficiency``)
that sysfs's raw link rate does not; each prediction's note names both (``limits``, ``limits_note``).

A layer's own cost (``analysis.prediction.calibration``) is stated with the prediction it enters: before a layout is built on
N devices, the same layout measured on fewer (2 <= n < N, the most there are) in this campaign's folder, its
``baseline``'s or a ``calibrations`` folder calibrates it; for a layout whose file system is not the baseline's
(btrfs raid0 over an xfs baseline), that file system measured on one device (a campaign of ``single`` with that
``FS``) does, where no fewer-device layout was measured. The raw prediction it is held against is made from the
calibration folder's own single device where it measured one (same machine, same minutes), else from this
campaign's. predictions.csv then carries ``calibration`` (what was measured: "lvm-striped on 2 devices"),
``layer_s_per_io`` and ``layer_cpu_s_per_byte``: larger layouts are predicted before they are built, from what
smaller ones cost, and never from themselves (``calibration.check_not_scored_on``).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Mapping, Sequence

import pandas as pd

from ..analysis.prediction import calibration, predict
from ..analysis.prediction.ceilings import PCIE_LANE_BW_BYTES, Ceilings, pcie_rate
from ..errors import AnalysisError, ConfigError
from ..layouts import describe
from ..measure import campaign_folder, results
from ..system import host
from ..system.devices import System
from ..measure.units import rate

BASELINE = "single"
GENERATIONS = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}  # GT/s per lane -> PCIe generation


def pcie_bps(paths: Sequence[str], system: System) -> float | None:
    """The slowest PCIe link of the devices at ``paths``, bytes/s per direction (``ceilings.pcie_rate``);
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
            rates.append(pcie_rate(gen, lanes))
        except ConfigError:
            return None
    return min(rates)


def limits(paths: Sequence[str] = (), system: System | None = None, ceilings: Mapping | None = None,
           probe: bool = True, **more) -> Ceilings:
    """This machine's ceilings: ``system.host.cores()``, the memory's copy rate (``probe``:
    ``system.host.memory_bw_bytes``, a short timed copy) and the devices' PCIe link where they have one; the
    ``ceilings``' (a ceilings file's mapping) on top (their PCIe link and memory win over what was measured);
    ``more`` (``Ceilings`` fields) on top of all."""
    given = Ceilings.from_mapping(ceilings or {}).with_values(**{"cores": host.cores(), **more})
    if probe and given.memory_bw_bytes is None:
        given = replace(given, memory_bw_bytes=host.memory_bw_bytes())
    if given.pcie_link() is not None or not paths:
        return given
    found = pcie_bps(paths, system or System())
    return given if found is None else replace(given, pcie_link_bw_bytes=found)


def limits_note(paths: Sequence[str] = (), system: System | None = None, ceilings: Mapping | None = None,
         measured: Ceilings | None = None) -> str:
    """What the predictions' note says of their limits: the memory's rate as the probe measured it (``measured``:
    the machine's ceilings, where the file gave no memory), that the ceilings' PCIe link was used where sysfs names one too
    (and sysfs's), and that a device's datasheet rate is no term (the devices' term is the single device as
    measured); "" when there is nothing to say."""
    notes = []
    if measured is not None and measured.memory_bw_bytes and "memory_bw_bytes" not in (ceilings or {}):
        notes.append(f"memory measured: a copy at {rate(measured.memory_bw_bytes)} (system.host)")
    if not ceilings:
        return "; ".join(notes)
    stated = Ceilings.from_mapping(ceilings).pcie_link()
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
    ``predicted_at``, the UTC time it is stated to the microsecond (``results.now``): before what it predicts is
    measured, which ``scoring.against`` checks against the layout's first run."""
    at = results.now()
    campaign_folder.append_predictions(directory, prediction.assign(predicted_at=at))


def _folder(folder: Path) -> tuple[pd.DataFrame, dict]:
    """A campaign folder's measured fio rows and its layouts' options (campaign.json's ``spec.options``)."""
    rows = results.to_frame(campaign_folder.read_rows(folder)[0])
    if not rows.empty:
        rows = rows[rows["workload"] == "fio"]
    options = (campaign_folder.read_campaign(folder) or {}).get("spec", {}).get("options", {})
    return rows, options


def file_system(layout: str, fs: str) -> str:
    """The file system a layout's data lives on: its own (the btrfs layouts': ``Descriptor.file_system``), else
    the campaign's ``fs``."""
    return describe(layout).file_system_of(fs)


@dataclass
class Preregistration:
    """Called with a layout's name before it is built (``Recorder.before_build``): predicts its points from the
    campaign's single-device rows and appends them to ``predictions.csv``. ``devices_of(name)`` is how many devices
    the layout will use; ``note`` (``limits_note``) is added to each point's ``predicted_note``. ``baseline``: another
    campaign's folder (a study's ``01_baseline``) whose single-device rows are read when this campaign has measured
    none itself; the campaign's own, measured on the same devices just before, come first. ``chunk_bytes`` and
    ``fs``: how the campaign builds its layouts (``layouts.Options``); ``calibrations``: folders of campaigns on
    fewer devices whose layouts calibrate a layer's cost (the module's docstring), looked in before ``baseline``'s
    and this campaign's own; ``tags``: the devices' queue depth (``system.host.queue_depth``), None unknown."""

    directory: Path
    points: Sequence[dict]
    devices_of: Callable[[str], int]
    limits: Ceilings
    note: str = ""
    baseline: Path | None = None
    chunk_bytes: int | None = None
    fs: str = "xfs"
    calibrations: Sequence[Path] = field(default_factory=tuple)
    tags: int | None = None

    def __call__(self, layout: str) -> None:
        if layout == BASELINE:
            return
        earlier = campaign_folder.read_predictions(self.directory)
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
        host = self.host(devices, base)
        layer = self.calibration(layout, devices, base, host)
        prediction = predict.predict(base, layout, points, self.limits, self.chunk_bytes, layer, self.tags, host)
        prediction["calibration"] = layer.source if layer is not None else ""
        if self.note:
            notes = prediction["predicted_note"]
            prediction["predicted_note"] = ["; ".join(filter(None, [note, self.note])) for note in notes]
        record(self.directory, prediction)

    def _sources(self) -> list[Path]:
        found = []
        for folder in (*self.calibrations, self.baseline, self.directory):
            if folder is not None and Path(folder) not in found and Path(folder).is_dir():
                found.append(Path(folder))
        return found

    def _fewer(self, layout: str, devices: int) -> tuple[pd.DataFrame, pd.DataFrame, dict] | None:
        """The rows of ``layout`` on the most devices fewer than ``devices`` (at least 2) in the first source folder
        that has any, with that folder's rows and options; None where none has."""
        for folder in self._sources():
            rows, options = _folder(folder)
            mine = rows[(rows["layout"] == layout) & (rows["devices"] < devices) & (rows["devices"] >= 2)] \
                if not rows.empty else rows
            if not mine.empty:
                return mine[mine["devices"] == mine["devices"].max()], rows, options
        return None

    def host(self, devices: int, base: pd.DataFrame) -> dict[str, float]:
        """Per rw, the host's ceiling a jbod on fewer devices measured where they did not add up
        (``calibration.host_ceiling``); {} where none was measured or they did."""
        found = self._fewer("jbod", devices)
        if found is None:
            return {}
        mine, rows, options = found
        points = mine[["rw", "bs", "numjobs", "iodepth"]].drop_duplicates().assign(devices=int(mine["devices"].max()))
        raw_prediction = predict.predict(self._own_curve(rows, options, base), "jbod", points, self.limits)
        return calibration.host_ceiling(raw_prediction, mine)

    def calibration(self, layout: str, devices: int, base: pd.DataFrame,
                    host: Mapping[str, float] | None = None) -> calibration.LayerCost | None:
        """The layer's cost of ``layout`` before it is built on ``devices`` devices: from the same layout on the
        most devices fewer than ``devices`` (at least 2) measured in a source folder, else from its file system on
        one device where that is not the baseline's; None where neither was measured, and for a jbod (its devices
        have no layer the single device had not). ``host``: the host's ceiling, held in the raw prediction as it is
        in the larger one's."""
        if describe(layout).per_device:
            return None  # no layer but the file system the single device has: what more devices share is ``host``
        found = self._fewer(layout, devices)
        if found is not None:
            mine, rows, options = found
            return self._calibrate(self._own_curve(rows, options, base), mine, layout, int(mine["devices"].max()),
                                   options.get("chunk_bytes", self.chunk_bytes), "", host)
        fs = file_system(layout, self.fs)
        if fs == self.fs or layout == BASELINE:
            return None
        for folder in self._sources():
            rows, options = _folder(folder)
            if not rows.empty and options.get("fs") == fs and BASELINE in set(rows["layout"]):
                ones = rows[(rows["layout"] == BASELINE) & (rows["devices"] == 1)]
                return self._calibrate(base, ones, BASELINE, 1, None, f"{fs} on one device", None)
        return None

    def _own_curve(self, rows: pd.DataFrame, options: dict, base: pd.DataFrame) -> pd.DataFrame:
        """The single device a calibration folder measured on the baseline's file system, else ``base``."""
        if options.get("fs", self.fs) != self.fs or BASELINE not in set(rows["layout"]):
            return base
        try:
            return predict.curve(rows)
        except AnalysisError:
            return base

    def _calibrate(self, base: pd.DataFrame, rows: pd.DataFrame, layout: str, count: int, chunk: int | None,
                   source: str, host: Mapping[str, float] | None) -> calibration.LayerCost | None:
        points = rows[["rw", "bs", "numjobs", "iodepth"]].drop_duplicates().assign(devices=count)
        raw_prediction = predict.predict(base, layout, points, self.limits, chunk, tags=self.tags, host=host)
        try:
            return calibration.calibrate(raw_prediction, rows, layout, count, source)
        except AnalysisError:
            return None

    def _baseline_rows(self):
        """The single-device rows measured so far: this campaign's, else ``baseline``'s; empty when neither has."""
        for folder in filter(None, (self.directory, self.baseline)):
            rows = results.to_frame(campaign_folder.read_rows(folder)[0])
            if not rows.empty and BASELINE in set(rows["layout"]):
                return rows
        return results.to_frame([])
