"""A layer's own cost, measured on fewer devices than it is predicted on: what md, LVM or a file system adds to each
request's time and to each byte's CPU that one raw device never showed.

    cost = calibrate(raw, rows, layout, 2)         from the layout measured on 2 devices (``rows``) and the model's
                                                    prediction of the same points without a layer (``raw``)
    cost.at("read", 2**20, 4, 1)                    the layer's cost at a point of the layout on N devices
    check_not_scored_on(cost, layout, 4)            a calibration never measures what it is scored on
    host_ceiling(raw, jbod_rows)                    per rw, the most several raw devices delivered together, where
                                                    that is below what the model gave them: a shared limit
    reference_ceiling(curve, jbod_rows)             per rw, the most the reference (a jbod) carried on N devices
                                                    with each beyond the single device's largest measured load

The calibration is the layout on two devices, or, for a two-device layout, its file system on one device (btrfs on
one device for btrfs raid0 on two), or a pair of null_blk devices in the VM lab, whose device cost is known. At each
of its points (rw, bs, numjobs, iodepth: k = numjobs x iodepth requests in flight) the prediction of the raw
devices and ceilings (``predict.predict`` without a layer: ``predicted_bw_bytes``, ``cpu_s_per_byte``) is set
beside what the layout measured, and the difference is the layer's, per request and per byte:

    layer_s_per_io         k x bs / measured - k x bs / predicted: the time a request spends in the layer, by
                           Little's law on both (a request's time is what is in flight over the rate); 0 where the
                           layout did not measure below the raw prediction beyond the margin by the one rule of
                           agreement (``agreement.agree`` of its runs against the prediction's interval: "below"):
                           a calibration's own noise is no layer's cost
    layer_cpu_s_per_byte   the CPU-seconds per byte the layout cost (its busy CPUs over its rate, the least of its
                           repetitions as the device's curve takes it) less the device's at the same load; 0 where
                           not more, NaN where either was not measured (or held at a cap)

On N devices the same point (same rw, bs, numjobs and iodepth: the same requests in flight) pays the same per
request and per byte (``predict``'s ``layer`` and ``cpu`` terms): k x bs / (k x bs / the raw prediction +
layer_s_per_io), and cores / (the device's CPU per byte + the layer's). A point the calibration did not measure
takes its nearest (the same rw, the nearest bs and then the nearest count in flight, on a log scale): the time per
request scaled by the bytes where the bs differs, with a note. Per I/O and per byte are told apart where the
calibration measured two block sizes or more at the same load: the time and the CPU per request are then fitted as
a + b x bs (least squares, each part held at 0 or above); at one block size the whole cost is taken per byte.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .. import agreement, baseline_and_tax
from . import curve
from ...errors import AnalysisError, ConfigError

POINT = ["rw", "bs", "numjobs", "iodepth"]
COLUMNS = [*POINT, "outstanding", "measured_bw_bytes", "raw_bw_bytes", "verdict", "layer_s_per_io",
           "layer_cpu_s_per_byte", "per_io_s", "per_byte_s", "per_io_cpu_s", "per_byte_cpu_s"]


@dataclass(frozen=True)
class LayerCost:
    """What ``layout`` was measured to add on ``devices`` devices (``source`` in words: "lvm-striped on 2 devices",
    "btrfs on one device"), per point (``points``: ``COLUMNS``)."""

    layout: str
    devices: int
    source: str
    points: pd.DataFrame = field(repr=False)

    def at(self, rw: str, bs: int, numjobs: int, iodepth: int) -> tuple[float, float, str]:
        """The layer's (seconds per request, CPU-seconds per byte, note) at a point: the calibration's own, else its
        nearest (module docstring); (NaN, NaN, note) when it measured no such rw."""
        rows = self.points[self.points["rw"] == rw]
        if rows.empty:
            return np.nan, np.nan, f"the calibration ({self.source}) measured no {rw}"
        same = rows[(rows["bs"] == bs) & (rows["numjobs"] == numjobs) & (rows["iodepth"] == iodepth)]
        if len(same):
            row = same.iloc[0]
            return _fitted(row, bs)
        near_bs = curve.nearest(rows["bs"], bs)
        rows = rows[rows["bs"] == near_bs]
        wanted = numjobs * iodepth
        row = rows.loc[(np.log2(rows["outstanding"] / wanted).abs() + (rows["iodepth"] != iodepth) * 1e-3).idxmin()]
        seconds, cpu, _ = _fitted(row, bs)
        return seconds, cpu, (f"layer cost from the calibration's nearest point ({self.source}: bs {int(row['bs'])}, "
                              f"{int(row['numjobs'])} jobs, iodepth {int(row['iodepth'])})")

    def words(self) -> str:
        """The calibration in a few words, for a prediction's note."""
        return f"layer cost from {self.source}"


def _fitted(row: pd.Series, bs: int) -> tuple[float, float, str]:
    """A calibration point's per-request time and per-byte CPU at block size ``bs``: a + b x bs from its fit."""
    seconds = row["per_io_s"] + row["per_byte_s"] * bs
    cpu = (row["per_io_cpu_s"] + row["per_byte_cpu_s"] * bs) / bs
    return float(seconds), float(cpu), ""


def _measured(rows: pd.DataFrame) -> pd.DataFrame:
    """Per point of ``rows``: the mean rate, its repetitions and the least CPU-seconds per byte of them."""
    rates = baseline_and_tax.rates(rows)
    rates = rates.assign(cpu_s_per_byte=curve.cpu_s_per_byte(rates))
    grouped = rates.groupby(POINT, sort=True).agg(measured_bw_bytes=("bw_bytes", "mean"), runs=("bw_bytes", list),
                                                  measured_cpu_s_per_byte=("cpu_s_per_byte", "min"))
    return grouped.reset_index()


def _verdict(row: pd.Series, margin: float) -> str:
    """The one rule's verdict of a calibration point's runs against the raw prediction's interval."""
    reps = row.get("predicted_reps", np.nan)
    said = agreement.side(row["predicted_bw_bytes"], row["predicted_lo"], row["predicted_hi"],
                          reps - 1 if np.isfinite(reps) else np.nan)
    if said is None:
        return agreement.NO_INTERVAL
    return agreement.agree(agreement.Side.of(row["runs"]), said, margin).verdict


def _fit(frame: pd.DataFrame, per_point: str, per_io: str, per_byte: str) -> pd.DataFrame:
    """Per (rw, outstanding): ``per_point`` (a cost per request at each bs) as a + b x bs, least squares with both
    parts at 0 or above; one bs: a = 0, b = cost / bs."""
    out = frame.assign(**{per_io: 0.0, per_byte: frame[per_point] / frame["bs"]})
    for _, group in frame.groupby(["rw", "outstanding"]):
        known = group.dropna(subset=[per_point])
        if known["bs"].nunique() < 2:
            continue
        slope, intercept = np.polyfit(known["bs"].astype(float), known[per_point].astype(float), 1)
        if intercept < 0:
            slope, intercept = float((known["bs"] * known[per_point]).sum() / (known["bs"] ** 2).sum()), 0.0
        elif slope < 0:
            slope, intercept = 0.0, float(known[per_point].mean())
        out.loc[group.index, per_io] = intercept
        out.loc[group.index, per_byte] = slope
    return out


def calibrate(raw: pd.DataFrame, rows: pd.DataFrame, layout: str, devices: int, source: str = "",
              margin: float = agreement.DEFAULT_MARGIN) -> LayerCost:
    """The cost of ``layout`` measured on ``devices`` devices: ``rows`` are its results (the calibration's rows of
    that layout and count), ``raw`` the model's prediction of the same points without a layer (``predict.predict``
    with no ``layer``); a point's cost counts where its runs lie below the prediction beyond ``margin``
    (``verdict``). AnalysisError when no point of ``rows`` was predicted."""
    if not isinstance(devices, (int, np.integer)) or isinstance(devices, bool) or devices < 1:
        raise ConfigError(f"calibration devices = {devices!r} must be a whole number above 0")
    mine = rows[(rows["layout"].astype(str) == layout) & (rows["devices"] == devices)]
    if mine.empty:
        raise AnalysisError(f"no {layout} rows on {devices} devices to calibrate from")
    measured = _measured(mine)
    wanted = [*POINT, "predicted_bw_bytes", "predicted_lo", "predicted_hi", "cpu_s_per_byte"]
    keys = raw.reindex(columns=[*wanted, "predicted_reps"]).astype({"bs": "int64", "numjobs": "int64",
                                                                    "iodepth": "int64"})
    both = measured.astype({"bs": "int64", "numjobs": "int64", "iodepth": "int64"}).merge(keys, on=POINT)
    if both.empty:
        raise AnalysisError(f"the calibration ({layout} on {devices} devices) shares no point with its prediction")
    both = both.assign(outstanding=both["numjobs"] * both["iodepth"], raw_bw_bytes=both["predicted_bw_bytes"])
    work = both["outstanding"] * both["bs"]
    both["verdict"] = [_verdict(row, margin) for _, row in both.iterrows()]
    shown = both["verdict"].isin([agreement.BELOW, agreement.NO_INTERVAL])  # one run: its difference, as it is
    both["layer_s_per_io"] = (work / both["measured_bw_bytes"] - work / both["raw_bw_bytes"]).clip(lower=0).where(
        shown, 0.0)
    both["layer_cpu_s_per_byte"] = (both["measured_cpu_s_per_byte"] - both["cpu_s_per_byte"]).clip(lower=0)
    both["cpu_per_io"] = both["layer_cpu_s_per_byte"] * both["bs"]
    both = _fit(both, "layer_s_per_io", "per_io_s", "per_byte_s")
    both = _fit(both, "cpu_per_io", "per_io_cpu_s", "per_byte_cpu_s")
    source = source or f"{layout} on {baseline_and_tax.count_of(devices, 'device')}"
    return LayerCost(layout, int(devices), source, both[COLUMNS].reset_index(drop=True))


def check_not_scored_on(cost: LayerCost | None, layout: str, devices: int) -> None:
    """A calibration never measures the layout and device count it is then scored on: AnalysisError when ``cost``
    was measured on ``layout`` at ``devices`` devices (its prediction would be the measurement itself)."""
    if cost is not None and cost.layout == layout and cost.devices == devices:
        raise AnalysisError(f"the calibration of {layout} was measured on {devices} devices, the layout and count it "
                            "would predict: a calibration must come from fewer devices")


def host_ceiling(raw: pd.DataFrame, rows: pd.DataFrame, margin: float = agreement.DEFAULT_MARGIN) -> dict[str, float]:
    """Per rw, what a jbod of several devices (``rows``: one count) delivered at its best, where its runs there lie
    below the model's prediction of that point (``raw``: ``predict.predict`` of jbod's points) beyond ``margin``:
    the devices did not add up, so some part of the host they share (its CPUs, its memory, the VM's emulation of
    them) held them, and no more devices get past it. Nothing for a rw whose devices added up."""
    if rows.empty:
        return {}
    measured = _measured(rows)
    wanted = [*POINT, "predicted_bw_bytes", "predicted_lo", "predicted_hi", "predicted_reps"]
    both = measured.merge(raw.reindex(columns=wanted), on=POINT)
    found = {}
    for rw, group in both.groupby("rw", sort=True):
        best = group.loc[group["measured_bw_bytes"].idxmax()]
        if _verdict(best, margin) == agreement.BELOW:
            found[str(rw)] = float(best["measured_bw_bytes"])
    return found


def reference_ceiling(base: pd.DataFrame, rows: pd.DataFrame) -> dict[str, float]:
    """Per rw, the most the reference layout (``rows``: a jbod on one count of devices, each device running its own
    jobs) carried at a point where every device held at least the single device's largest measured load (``base``,
    the curve, at that rw): saturated as far as anyone measured, so what the host then moved is what these devices
    and the paths they share (PCIe root, memory) carry together, a measured fact about the host, and a ceiling for
    the layouts built on the same devices. Nothing for a rw the reference measured only below that load."""
    if rows.empty:
        return {}
    devices = int(rows["devices"].max())
    rows = rows[rows["devices"] == devices]
    measured = pd.concat([_measured(own) for _, own in rows.groupby("layout", sort=True)], ignore_index=True)
    largest = curve.with_outstanding(base).groupby("rw")["outstanding"].max()
    each = (measured["numjobs"] // devices) * measured["iodepth"]  # the fewest jobs a device runs, x its depth
    saturated = measured[each.to_numpy() >= measured["rw"].map(largest).to_numpy(float)]
    return {str(rw): float(group["measured_bw_bytes"].max()) for rw, group in saturated.groupby("rw", sort=True)}
