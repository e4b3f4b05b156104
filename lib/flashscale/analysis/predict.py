"""Predict before you build: what N devices in a layout should deliver, from one device's curve and the ceilings.

    curve(rows)                           the single-device curve: per (rw, bs, iodepth, numjobs) the mean of the
                                          repetitions, its interval and the CPU-seconds per byte where measured
    figures({"read": 3.2e9, ...})         a curve from published per-device figures (one value per rw, no spread)
    predict(curve, layout, points, lim)   per point: each term, the prediction (the smallest), the term that binds,
                                          and the interval the single device's intervals give it
    predict_results(frame, limits)        every point of a results table's layouts, from its own single-device rows
    score(prediction, frame)              measured against predicted: the error, in the interval or not, and what
                                          the model did not explain

A campaign that has measured its baseline calls, before it builds a layout,
``predict(curve(baseline_rows), "btrfs-raid0", points, Limits(...))`` with ``points`` the sweep's (rw, bs, numjobs,
iodepth, devices), and keeps the frame to ``score`` once the layout is measured.

The terms, each in bytes/s of the data fio moves, each its own column (``<term>_limit_bw_bytes``):

    devices   the layout's devices, each at the single-device curve at its own jobs, same rw, bs and iodepth,
              times the layout's design share (``core.design_share``: a mirror writes each byte twice). jbod (and
              single) spread the jobs over the devices as fio spreads them over targets (``jobs_per_device``): a
              device with no job gives nothing. Any other layout (a stripe, a mirror, one file system or volume over
              all devices) sends a share of every job's I/O to every device: numjobs / N jobs a device, the curve
              interpolated linearly between measured job counts and held at its first and last measured points
              outside them (a stripe splits each request, so even 1 / N of a job keeps every device working)
    pcie      N x each device's PCIe link x the design share (a mirror's second copy crosses the bus too)
    uplink    a link shared by k devices (a PCIe switch's or an HBA's): N / min(k, N) uplinks' worth x the share,
              the jobs being spread evenly
    network   links (default: one per host) x the link, for data that crosses the network
    memory    hosts x each host's memory bandwidth
    cpu       hosts x cores / (CPU-seconds per byte the single device cost at that point): the row's
              ``cpu_busy_cores`` (the whole machine's, from /proc/stat around the run: the recorder's), else fio's
              ``fio_usr_cpu`` + ``fio_sys_cpu`` (``usr_cpu`` + ``sys_cpu``: percent of one CPU, the run's jobs
              together)

The smallest term binds (``predicted_limit``); any other within 5% of it (``CLOSE``) is named beside it
(``predicted_close``): uncapped loop devices each keep about one core busy, so on 2 cores two of them meet the
devices' and the CPU's limits together, and naming one alone would hide the other. A term whose parameter is not
given is no term. A mixed rw (fio's 50/50) reaches a per-direction link (PCIe,
uplink, network) when either half does: twice the link. The interval: each point of the curve carries the t
interval of its repetitions (``stats.describe``); a device term is the same sum of the bounds (every device is
the same measured device, so their errors move together); a ceiling is a parameter, exact. ``predicted_lo`` and
``_hi`` are the smallest of the terms' bounds. A curve point of one run, or a published figure, has no spread and
counts as exact.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from . import core, stats
from .ceilings import FIO_READ_SHARE, MIXED, Ceilings, pcie_link_bw_bytes
from .significance import DEFAULT_MARGIN, check_margin
from ..errors import AnalysisError, ConfigError
from ..measure.units import percent, rate

TERMS = ("devices", "pcie", "uplink", "network", "memory", "cpu")  # ties bind in this order
CLOSE = 0.05  # a term within this fraction above the binding one binds as well, as far as the model can tell
PER_DEVICE = ("single", "jbod")  # one target per device: fio spreads the jobs over them
KEYS = ["layout", "devices", "rw", "bs", "numjobs", "iodepth"]
CURVE = ["rw", "bs", "iodepth", "numjobs", "bw_bytes", "bw_bytes_lo", "bw_bytes_hi", "reps", "cpu_s_per_byte"]


@dataclass(frozen=True)
class Limits:
    """The parameters of the ceilings, bytes/s; any left as None is no term. ``memory_bps`` and ``cores`` are
    each host's; ``links`` defaults to ``hosts``."""

    pcie_bps: float | None = None
    uplink_bps: float | None = None
    devices_per_uplink: int | None = None
    link_bps: float | None = None
    links: int | None = None
    hosts: int = 1
    memory_bps: float | None = None
    cores: float | None = None

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float, np.number))
                                      or not (np.isfinite(value) and value > 0)):
                raise ConfigError(f"limit {f.name} = {value!r} must be a positive number")
        for name in ("devices_per_uplink", "links", "hosts"):
            value = getattr(self, name)
            if value is not None and value != int(value):
                raise ConfigError(f"limit {name} = {value!r} must be a whole number")
        if (self.uplink_bps is None) != (self.devices_per_uplink is None):
            raise ConfigError("give both uplink_bps and devices_per_uplink, or neither")

    @classmethod
    def from_ceilings(cls, ceilings: Ceilings | Mapping, **more) -> "Limits":
        """From the ceilings module's parameters (a YAML file's mapping): PCIe from its generation, lanes and
        efficiency, the network's links and link, the memory; ``more`` (hosts, cores, uplink...) on top."""
        config = Ceilings.from_mapping(ceilings)
        values = dict(memory_bps=config.memory_bw_bytes, link_bps=config.network_link_bw_bytes,
                      links=config.network_links)
        if config.pcie_gen is not None:
            values["pcie_bps"] = pcie_link_bw_bytes(config.pcie_gen, config.pcie_lanes, config.pcie_efficiency)
        values.update({k: v for k, v in more.items() if v is not None})
        return cls(**values)


def jobs_per_device(numjobs: int, devices: int) -> list[int]:
    """The jobs each device of a jbod runs: fio's spread over targets (``fio.Job.jobs_per_target``), earlier
    devices take the remainder."""
    return [numjobs // devices + (1 if i < numjobs % devices else 0) for i in range(devices)]


def _cpu_cores(rows: pd.DataFrame) -> pd.Series:
    """CPU cores busy during each run, the first known of: ``cpu_busy_cores`` (the whole machine's, kernel threads
    included: on loop devices the copying is the loop workers', not fio's), fio's ``fio_usr_cpu`` + ``fio_sys_cpu``
    (percent of one CPU, all jobs together), or a table's own ``usr_cpu`` + ``sys_cpu`` (the same); NaN."""
    found = pd.Series(np.nan, index=rows.index)
    if "cpu_busy_cores" in rows.columns:
        found = pd.to_numeric(rows["cpu_busy_cores"], errors="coerce").astype("float64")
    for usr, sys_ in (("fio_usr_cpu", "fio_sys_cpu"), ("usr_cpu", "sys_cpu")):
        if {usr, sys_} <= set(rows.columns):
            fio_cores = (pd.to_numeric(rows[usr], errors="coerce") + pd.to_numeric(rows[sys_], errors="coerce")) / 100
            found = found.fillna(fio_cores.astype("float64"))
    return found


def curve(rows: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """The single-device curve of a results table: its measured rate rows with one device (``core.rates``; those of
    layout ``single`` when other one-device layouts are there too), per (rw, bs, iodepth, numjobs) the mean, the
    t interval of its repetitions (the mean itself where there is one run), ``reps`` and ``cpu_s_per_byte``: the
    least of its repetitions', for the machine's busy CPUs count whatever else ran meanwhile and only ever add to the
    run's own cost (the first runs after a precondition cost a capped device 1.2 cores at 200 MB/s, the next
    0.1: the kernel still settling the precondition's writes), and a CPU term made of such a run would bind where
    the CPU is not the limit. Rows measured under an emulated cap (a finite ``cap_bps``) give no CPU cost at all:
    the device waited on its throttle, not on the CPU, so its few busy CPUs are mostly whatever else the machine did
    (a capped device's reads seemed to cost 0.2 cores in one quickstart and 1.1 in the next, while tests ran
    beside it); the devices bind there, and the CPU term is left to uncapped devices."""
    rates = core.rates(rows)
    single = rates[rates["devices"] == 1]
    if "single" in set(single["layout"]):
        single = single[single["layout"] == "single"]
    if single.empty:
        raise AnalysisError("no single-device (devices == 1) rows to predict from; layouts present: "
                            f"{', '.join(map(repr, sorted(rates['layout'].astype(str).unique())))}")
    layouts = sorted(single["layout"].astype(str).unique())
    if len(layouts) > 1:
        raise AnalysisError(f"several one-device layouts ({', '.join(map(repr, layouts))}) and none is 'single': "
                            "say which one is the device's curve")
    single = single.assign(cpu_s_per_byte=_cpu_cores(single) / single["bw_bytes"])
    if "cap_bps" in single.columns:
        capped = pd.to_numeric(single["cap_bps"], errors="coerce").fillna(0) > 0
        single = single.assign(cpu_s_per_byte=single["cpu_s_per_byte"].mask(capped))
    out = []
    for (rw, bs, iodepth, numjobs), group in single.groupby(["rw", "bs", "iodepth", "numjobs"], sort=True):
        d = stats.describe(group["bw_bytes"].to_numpy(float), confidence)
        lo, hi = (d["lo"], d["hi"]) if d["reps"] >= 2 else (d["mean"], d["mean"])
        out.append(dict(rw=str(rw), bs=int(bs), iodepth=int(iodepth), numjobs=int(numjobs), bw_bytes=d["mean"],
                        bw_bytes_lo=lo, bw_bytes_hi=hi, reps=d["reps"],
                        cpu_s_per_byte=float(group["cpu_s_per_byte"].min())))
    return pd.DataFrame(out, columns=CURVE)


def figures(per_rw: Mapping[str, float], bs: int = core.BASELINE_BS, iodepth: int = 1, numjobs: int = 1,
            cpu_s_per_byte: Mapping[str, float] | None = None) -> pd.DataFrame:
    """A curve from published per-device figures, bytes/s per rw (a datasheet, a paper's single-device number): one
    point per rw with no spread; a curve of one job count stands for every job count."""
    rows = []
    for rw, value in per_rw.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not (
                np.isfinite(value) and value > 0):
            raise ConfigError(f"per-device figure for {rw!r} = {value!r} must be a rate above 0, bytes/s")
        cpu = (cpu_s_per_byte or {}).get(rw, np.nan)
        rows.append(dict(rw=rw, bs=bs, iodepth=iodepth, numjobs=numjobs, bw_bytes=float(value),
                         bw_bytes_lo=float(value), bw_bytes_hi=float(value), reps=1, cpu_s_per_byte=cpu))
    if not rows:
        raise ConfigError("no per-device figure given")
    return pd.DataFrame(rows, columns=CURVE)


def nearest(values: Iterable[int], wanted: int) -> int:
    """The measured value closest to ``wanted`` on a log scale (block sizes and queue depths double)."""
    values = sorted(set(int(v) for v in values))
    return min(values, key=lambda v: (abs(np.log2(v / wanted)), v))


def _curve_at(base: pd.DataFrame, rw: str, bs: int, iodepth: int) -> tuple[dict | None, str, bool]:
    """The curve's points over numjobs for one (rw, bs, iodepth) as arrays sorted by numjobs (None when the curve
    has no such rw); the nearest measured bs and iodepth when the exact ones were not, with a note saying so; and
    whether they were the exact ones."""
    rows = base[base["rw"] == rw]
    if rows.empty:
        return None, f"no single-device {rw} rows", False
    notes = []
    near_bs = nearest(rows["bs"], bs)
    if near_bs != bs:
        notes.append(f"single device measured at bs {near_bs}, not {bs}")
    rows = rows[rows["bs"] == near_bs]
    near_qd = nearest(rows["iodepth"], iodepth)
    if near_qd != iodepth:
        notes.append(f"single device measured at iodepth {near_qd}, not {iodepth}")
    rows = rows[rows["iodepth"] == near_qd].sort_values("numjobs")
    points = {c: rows[c].to_numpy(float) for c in ("numjobs", "bw_bytes", "bw_bytes_lo", "bw_bytes_hi",
                                                    "cpu_s_per_byte")}
    return points, "; ".join(notes), (near_bs, near_qd) == (bs, iodepth)


def _at_jobs(points: dict, jobs: float, column: str) -> float:
    """The curve's ``column`` at ``jobs`` jobs a device: 0 with no job; linear between measured job counts, held at
    the first and last measured points outside them."""
    if jobs == 0:
        return 0.0
    return float(np.interp(jobs, points["numjobs"], points[column]))


def _devices_term(points: dict, layout: str, devices: int, numjobs: int) -> dict:
    """The devices' sum (value, lo, hi) before the design share, the job count a device runs and how many work."""
    if layout in PER_DEVICE:
        spread = jobs_per_device(numjobs, devices)
    else:
        spread = [numjobs / devices] * devices
    counts = {jobs: spread.count(jobs) for jobs in set(spread)}
    sums = {c: sum(k * _at_jobs(points, jobs, c) for jobs, k in counts.items())
            for c in ("bw_bytes", "bw_bytes_lo", "bw_bytes_hi")}
    cpu = _at_jobs(points, max(spread), "cpu_s_per_byte") if np.isfinite(points["cpu_s_per_byte"]).all() else np.nan
    measured = set(points["numjobs"].tolist())
    note = ""
    largest = int(points["numjobs"].max())
    if len(points["numjobs"]) > 1 and max(spread) > largest:
        note = f"{max(spread):g} jobs a device, beyond the single device's largest measured ({largest}): held there"
    return dict(sums, cpu_s_per_byte=cpu, jobs_per_device=numjobs / devices,
                busy_devices=sum(k for jobs, k in counts.items() if jobs > 0), note=note,
                exact=all(jobs in measured for jobs in counts if jobs > 0))


def _duplex(rw: str) -> float:
    """How much more than one direction's link a rw's data may use: a mixed rw's larger half reaches it first."""
    return 1.0 / max(FIO_READ_SHARE, 1.0 - FIO_READ_SHARE) if rw in MIXED else 1.0


def _ceiling_terms(limits: Limits, rw: str, devices: int, share: float, cpu_s_per_byte: float) -> dict[str, float]:
    duplex = _duplex(rw)
    hosts = limits.hosts
    terms = {"pcie": devices * limits.pcie_bps * share * duplex if limits.pcie_bps else np.nan, "uplink": np.nan,
             "network": (limits.links or hosts) * limits.link_bps * duplex if limits.link_bps else np.nan,
             "memory": hosts * limits.memory_bps if limits.memory_bps else np.nan,
             "cpu": hosts * limits.cores / cpu_s_per_byte if limits.cores and cpu_s_per_byte > 0 else np.nan}
    if limits.uplink_bps:
        terms["uplink"] = devices / min(limits.devices_per_uplink, devices) * limits.uplink_bps * share * duplex
    return terms


def _check_points(points) -> pd.DataFrame:
    frame = pd.DataFrame(points).reset_index(drop=True)
    wanted = ["devices", "rw", "bs", "numjobs", "iodepth"]
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise ConfigError(f"points lack column(s) {', '.join(map(repr, missing))}; each point needs {wanted}")
    for name in ("devices", "bs", "numjobs", "iodepth"):
        for value in frame[name]:
            if isinstance(value, bool) or not (isinstance(value, (int, float, np.number)) and np.isfinite(value)
                                               and value >= 1 and value == int(value)):
                raise ConfigError(f"point {name} = {value!r} must be a whole number above 0")
    return frame[wanted].astype({n: "int64" for n in wanted if n != "rw"}).assign(rw=frame["rw"].astype(str))


def predict(base: pd.DataFrame, layout: str, points, limits: Limits = Limits()) -> pd.DataFrame:
    """Per point of ``points`` (rows or a frame of devices, rw, bs, numjobs, iodepth) of ``layout``: each term
    (``<term>_limit_bw_bytes``, the devices' with ``_lo``/``_hi``), ``layout_share``, ``jobs_per_device``,
    ``busy_devices``, ``hosts``, ``cpu_s_per_byte``, and ``predicted_bw_bytes`` (the smallest term),
    ``predicted_lo``, ``predicted_hi``, ``predicted_limit`` (the term that binds), ``predicted_close`` (the other
    terms within ``CLOSE`` of it, comma-separated: where two limits meet, both are named), ``predicted_exact``
    (each busy device runs a point the single device was measured at: this rw, bs, iodepth and job count, nothing
    nearest or interpolated standing in) and ``predicted_note``.
    ``base`` is a ``curve`` or ``figures``."""
    if not isinstance(layout, str) or not layout.strip():
        raise ConfigError(f"layout {layout!r} must be a layout's name")
    if not isinstance(limits, Limits):
        raise ConfigError(f"limits must be a predict.Limits; got {type(limits).__name__}")
    missing = [c for c in CURVE if c not in base.columns]
    if missing:
        raise ConfigError(f"the single-device curve lacks {missing}: make it with predict.curve or predict.figures")
    rows, curves = [], {}
    for point in _check_points(points).itertuples(index=False):
        share = core.design_share(layout, point.rw)
        where = (point.rw, point.bs, point.iodepth)
        at, note, here = curves[where] if where in curves else curves.setdefault(where, _curve_at(base, *where))
        dev = (_devices_term(at, layout, point.devices, point.numjobs) if at is not None else
               dict(bw_bytes=np.nan, bw_bytes_lo=np.nan, bw_bytes_hi=np.nan, cpu_s_per_byte=np.nan,
                    jobs_per_device=point.numjobs / point.devices, busy_devices=0, note="", exact=False))
        exact = dev["exact"] and here  # the curve's own (rw, bs, iodepth), no nearest one standing in
        terms = {"devices": dev["bw_bytes"] * share,
                 **_ceiling_terms(limits, point.rw, point.devices, share, dev["cpu_s_per_byte"])}
        lows = {**terms, "devices": dev["bw_bytes_lo"] * share}
        highs = {**terms, "devices": dev["bw_bytes_hi"] * share}
        if limits.cores and not np.isfinite(dev["cpu_s_per_byte"]):
            note = "; ".join(filter(None, [note, "no CPU cost from the single device (not measured, or at a cap): "
                                                 "no cpu term"]))
        row = dict(layout=layout, **point._asdict(), hosts=limits.hosts, busy_devices=dev["busy_devices"],
                   jobs_per_device=dev["jobs_per_device"], layout_share=share, cpu_s_per_byte=dev["cpu_s_per_byte"],
                   **{f"{t}_limit_bw_bytes": terms[t] for t in TERMS},
                   devices_limit_bw_bytes_lo=lows["devices"], devices_limit_bw_bytes_hi=highs["devices"])
        row.update(_smallest(terms, lows, highs), predicted_exact=exact,
                   predicted_note="; ".join(filter(None, [note, dev["note"]])))
        rows.append(row)
    return pd.DataFrame(rows)


def _smallest(terms: dict, lows: dict, highs: dict) -> dict:
    """The prediction: the smallest term (NaN when the devices' is unknown), the one that binds, its interval, and
    the other terms within ``CLOSE`` of it (``predicted_close``, comma-separated): they bind as well, as far as
    the model can tell."""
    if not np.isfinite(terms["devices"]):
        return dict(predicted_bw_bytes=np.nan, predicted_lo=np.nan, predicted_hi=np.nan, predicted_limit="",
                    predicted_close="")
    known = [t for t in TERMS if np.isfinite(terms[t])]
    limit = min(known, key=lambda t: (terms[t], TERMS.index(t)))
    close = [t for t in known if t != limit and terms[t] <= terms[limit] * (1 + CLOSE)]
    return dict(predicted_bw_bytes=terms[limit], predicted_lo=min(lows[t] for t in known),
                predicted_hi=min(highs[t] for t in known), predicted_limit=limit, predicted_close=",".join(close))


def limit_words(limit: str, close: str = "") -> str:
    """The binding term in words, with those within ``CLOSE`` of it: "devices", "devices (cpu within 5%)"."""
    others = [t for t in str(close if isinstance(close, str) else "").split(",") if t]
    return f"{limit} ({' and '.join(others)} within {percent(CLOSE, 0)})" if others else str(limit)


def predict_results(frame: pd.DataFrame, limits: Limits = Limits(), confidence: float = 0.95) -> pd.DataFrame:
    """Every measured point of ``frame``'s layouts of more than one device, predicted from ``frame``'s own
    single-device rows (``curve``)."""
    base = curve(frame, confidence)
    points = core.point_means(frame)
    points = points[points["devices"] > 1]
    if points.empty:
        raise AnalysisError("no layout of more than one device to predict: the results hold single-device rows only")
    parts = [predict(base, str(layout), group[["devices", "rw", "bs", "numjobs", "iodepth"]], limits)
             for layout, group in points.groupby("layout", sort=True)]
    return pd.concat(parts, ignore_index=True)


def score(prediction: pd.DataFrame, frame: pd.DataFrame, confidence: float = 0.95,
          margin: float = DEFAULT_MARGIN) -> pd.DataFrame:
    """``prediction`` with what was measured at each point (``measured_bw_bytes``, the mean of its repetitions
    with its t interval ``_lo``/``_hi``, ``measured_reps``); ``error`` = measured / predicted - 1; ``in_interval``:
    the measured mean lies in the predicted interval (NA where that is unknown). The predicted interval holds the
    single device's uncertainty, not the measured point's own: a layout whose runs spread more than the single
    device's can land outside by its own noise (compare ``measured_bw_bytes_lo``/``_hi``); ``beyond_margin``: it
    lies outside the interval widened by ``margin`` (the tax's margin of practical equivalence, 2%) each way;
    ``unexplained`` = 1 - measured / predicted, what the model did not explain;
    ``devices_tax`` = 1 - measured / the devices term: the tax re-read against what these devices, at these jobs,
    deliver alone. Points not measured are left out."""
    missing = [c for c in (*KEYS, "predicted_bw_bytes", "predicted_lo", "predicted_hi", "devices_limit_bw_bytes")
               if c not in prediction.columns]
    if missing:
        raise AnalysisError(f"prediction lacks {missing}: make it with predict.predict")
    measured = stats.repetition_stats(frame, confidence=confidence)
    measured = measured.rename(columns={"bw_bytes": "measured_bw_bytes", "bw_bytes_lo": "measured_bw_bytes_lo",
                                        "bw_bytes_hi": "measured_bw_bytes_hi", "reps": "measured_reps"})
    measured = measured[[*KEYS, "measured_bw_bytes", "measured_bw_bytes_lo", "measured_bw_bytes_hi", "measured_reps"]]
    types = {k: "int64" for k in ("devices", "bs", "numjobs", "iodepth")}
    out = prediction.astype(types).merge(measured.astype(types).astype({"layout": str, "rw": str}), on=KEYS,
                                         how="inner", validate="one_to_one")
    value = out["measured_bw_bytes"]
    out["error"] = value / out["predicted_bw_bytes"] - 1
    inside = (value >= out["predicted_lo"]) & (value <= out["predicted_hi"])
    out["in_interval"] = inside.astype("boolean").mask(out["predicted_lo"].isna())
    check_margin(margin)
    near = (value >= out["predicted_lo"] * (1 - margin)) & (value <= out["predicted_hi"] * (1 + margin))
    out["beyond_margin"] = (~near).astype("boolean").mask(out["predicted_lo"].isna())
    out["unexplained"] = 1 - value / out["predicted_bw_bytes"]
    out["devices_tax"] = 1 - value / out["devices_limit_bw_bytes"]
    return out


def outside_sentences(scored: pd.DataFrame, drift: Mapping[str, float] | None = None) -> list[str]:
    """Each scored point whose measurement lies outside its predicted interval and beyond the margin, in words,
    with the term that bound: "btrfs-raid0 write, 4 devices, bs 1048576, 1 job, iodepth 1: measured 453 MB/s,
    predicted 800 MB/s (798 MB/s–802 MB/s), -43.4%; the devices bound". ``drift``: per rw, how far this machine's
    own measurements of one point drift apart (``scored.drift``); each sentence then says whether its error is
    inside that drift (a miss that cannot be told from it) or beyond it (``drift_words``)."""
    out = []
    for row in scored[scored["beyond_margin"].fillna(False).astype(bool)].itertuples(index=False):
        line = (f"{row.layout} {row.rw}, {row.devices} devices, bs {row.bs}, {core.count_of(row.numjobs, 'job')}, "
                f"iodepth {row.iodepth}: "
                f"measured {rate(row.measured_bw_bytes)}, predicted {rate(row.predicted_bw_bytes)} "
                f"({rate(row.predicted_lo)}–{rate(row.predicted_hi)}), {percent(row.error, signed=True)}; the "
                f"{limit_words(row.predicted_limit, getattr(row, 'predicted_close', ''))} bound")
        out.append(line + drift_words(row.error, row.rw, drift))
    return out


def drift_words(error: float, rw: str, drift: Mapping[str, float] | None, margin: float = DEFAULT_MARGIN) -> str:
    """A prediction's ``error`` held to how far this machine's own measurements of one point drift apart in ``rw``
    (``drift``, per rw, ``scored.drift``), where it is a miss (beyond the ``margin`` of practical equivalence):
    "; inside this machine's write drift (14.7%): not told from it", or "; beyond this machine's read drift
    (2.5%)"; nothing for an error within the margin (no miss to own) or where that drift was not measured."""
    own = (drift or {}).get(rw, np.nan)
    if not np.isfinite(own) or not np.isfinite(error) or abs(error) <= margin:
        return ""
    if abs(error) <= own:
        return f"; inside this machine's {rw} drift ({percent(own)}): not told from it"
    return f"; beyond this machine's {rw} drift ({percent(own)})"
