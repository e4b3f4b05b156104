"""One device's curve, indexed by the I/O outstanding on it: what the prediction's devices term reads.

    curve(rows)                    per (rw, bs, iodepth, numjobs) of the single-device rows: the mean rate, its t
                                   interval, ``outstanding`` (numjobs x iodepth), the CPU-seconds per byte and the
                                   mean latency of a request (``lat_ns``)
    figures({"read": 3.2e9})       a curve from published per-device figures (one value per rw, no spread)
    at(curve, rw, bs)              the curve of one rw at the measured block size nearest ``bs``: a ``Slice``
    Slice.rate(outstanding, ...)   what the device delivers with that many requests in flight

A device does not see jobs, it sees requests: a jbod's device runs its own jobs (jobs x iodepth in flight), a
stripe's member receives whatever the routing sends it (``analysis.prediction.routing``), which is a count of requests, not of
jobs. So the curve's axis is the I/O outstanding on the device:

    measured          the point itself, where this job count and iodepth were measured (``exact``)
    between           linear on the outstanding axis between the two nearest measured counts; where several
                      job counts and iodepths give the same count (2 jobs at iodepth 1, 1 job at iodepth 2), the
                      one of the asked iodepth when measured, else the best of them
    below the first   between two bounds (``bound_lo``, ``bound_hi``): Little's law from the device's own latency,
                      throughput = outstanding x bs / latency, the latency being the mean of fio's ``lat_mean_ns``
                      (else ``clat_mean_ns``) at the least outstanding measured, without a latency column the same
                      line through that point (a request does not get slower with fewer in flight: the lower bound);
                      and the rate measured there (a device does not get faster with fewer in flight: the upper).
                      The point inside: the saturating curve X(n) = n / (a + b n) through the two least measured
                      counts (Little's line where they show no bend: b <= 0), or, with one count measured, the
                      geometric middle of the bounds
    above the last    held at the largest measured count (saturated, as far as the curve shows), with a note; its
                      upper end is not known (``beyond``: the prediction takes it from the ceilings, else open)
    none              0

The CPU-seconds per byte follow the same axis (held outside it); at a cap they are fio's own, a floor
(``cpu_at_cap``). ``latency(outstanding)`` is a request's mean time
in the device at that load by Little's law on the curve itself (outstanding x bs / rate), which the layer's
calibration (``analysis.prediction.calibration``) subtracts from what a layout measured.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from .. import baseline_and_tax, stats
from ...errors import AnalysisError, ConfigError
from ...measure.units import duration

CURVE = ["rw", "bs", "iodepth", "numjobs", "outstanding", "bw_bytes", "bw_bytes_lo", "bw_bytes_hi", "reps",
         "cpu_s_per_byte", "lat_ns"]
CPU_AT_CAP = "cpu_at_cap"  # a curve's column: its CPU cost read at a cap, fio's own (``cpu_s_per_byte``'s floor)
VALUES = ("bw_bytes", "bw_bytes_lo", "bw_bytes_hi")
BOUNDS = ("bound_lo", "bound_hi")  # the ends the unknown load gives besides the runs' spread (``Slice.values``)
LATENCY_COLUMNS = ("lat_mean_ns", "clat_mean_ns")  # fio's total latency first: submission to completion


def _cpu_cores(rows: pd.DataFrame) -> pd.Series:
    """CPU cores busy during each run, the first known of: ``cpu_busy_cores`` (the whole machine's, kernel threads
    included: on loop devices the copying is the loop workers', not fio's), fio's ``fio_usr_cpu`` + ``fio_sys_cpu``
    (percent of one CPU, all jobs together), or a table's own ``usr_cpu`` + ``sys_cpu`` (the same); NaN."""
    found = pd.Series(np.nan, index=rows.index)
    if "cpu_busy_cores" in rows.columns:
        found = pd.to_numeric(rows["cpu_busy_cores"], errors="coerce").astype("float64")
    return found.fillna(_fio_cores(rows))


def _fio_cores(rows: pd.DataFrame) -> pd.Series:
    """CPU cores fio's own jobs kept busy during each run: ``fio_usr_cpu`` + ``fio_sys_cpu`` (else a table's
    ``usr_cpu`` + ``sys_cpu``), percent of one CPU / 100; NaN where neither was recorded."""
    found = pd.Series(np.nan, index=rows.index)
    for usr, sys_ in (("fio_usr_cpu", "fio_sys_cpu"), ("usr_cpu", "sys_cpu")):
        if {usr, sys_} <= set(rows.columns):
            cores = (pd.to_numeric(rows[usr], errors="coerce") + pd.to_numeric(rows[sys_], errors="coerce")) / 100
            found = found.fillna(cores.astype("float64"))
    return found


def capped(rows: pd.DataFrame) -> pd.Series:
    """Whether each row was held at an emulated cap (a finite ``cap_bps`` above 0)."""
    if "cap_bps" not in rows.columns:
        return pd.Series(False, index=rows.index)
    return pd.to_numeric(rows["cap_bps"], errors="coerce").fillna(0) > 0


def cpu_floor_s_per_byte(rows: pd.DataFrame) -> pd.Series:
    """Each row's CPU-seconds per byte as fio's own jobs spent them (their usr + sys time / the rate), at a cap as
    anywhere: what moving a byte certainly cost, a floor of the whole cost (the kernel's threads, a loop device's
    workers, are not fio's); NaN where fio's CPU was not recorded."""
    return _fio_cores(rows) / pd.to_numeric(rows["bw_bytes"], errors="coerce")


def cpu_s_per_byte(rows: pd.DataFrame) -> pd.Series:
    """Each row's CPU-seconds per byte moved: its busy cores (``cpu_busy_cores``, else fio's own) / its rate; NaN
    where a row was held at an emulated cap (a finite ``cap_bps``): the device waited on its throttle, not on the
    CPU, so its few busy CPUs are mostly whatever else the machine did."""
    return (_cpu_cores(rows) / pd.to_numeric(rows["bw_bytes"], errors="coerce")).mask(capped(rows))


def latency_ns(rows: pd.DataFrame) -> pd.Series:
    """Each row's mean request latency, ns: fio's ``lat_mean_ns`` (submission to completion), else
    ``clat_mean_ns``; NaN where neither was measured."""
    found = pd.Series(np.nan, index=rows.index)
    for column in LATENCY_COLUMNS:
        if column in rows.columns:
            found = found.fillna(pd.to_numeric(rows[column], errors="coerce").astype("float64"))
    return found


def single_rows(rows: pd.DataFrame, layout: str | None = None) -> pd.DataFrame:
    """The measured rate rows of one device (``baseline_and_tax.rates``): those of ``layout`` (``--baseline-layout``) when
    given, else of layout ``single`` when other one-device layouts are there too, else of the one one-device
    layout; AnalysisError naming the layouts when there are none, or several and no way to choose."""
    rates = baseline_and_tax.rates(rows)
    single = rates[rates["devices"] == 1]
    layouts = sorted(single["layout"].astype(str).unique())
    if layout is not None:
        if layout not in layouts:
            raise ConfigError(f"--baseline-layout {layout!r} has no one-device (devices == 1) rows; the one-device "
                              f"layouts: {', '.join(map(repr, layouts)) or 'none'}")
        return single[single["layout"].astype(str) == layout]
    if "single" in layouts:
        single = single[single["layout"] == "single"]
    if single.empty:
        raise AnalysisError("no single-device (devices == 1) rows to predict from; layouts present: "
                            f"{', '.join(map(repr, sorted(rates['layout'].astype(str).unique())))}")
    if len(layouts) > 1 and "single" not in layouts:
        raise AnalysisError(f"several one-device layouts ({', '.join(map(repr, layouts))}) and none is 'single': "
                            "say which one is the device's curve (--baseline-layout NAME)")
    return single


def curve(rows: pd.DataFrame, confidence: float = 0.95, layout: str | None = None) -> pd.DataFrame:
    """The single-device curve of a results table (``single_rows``): per (rw, bs, iodepth, numjobs) the mean, the t
    interval of its repetitions (the mean itself where there is one run), ``reps``, ``outstanding`` (numjobs x
    iodepth), ``lat_ns`` (the mean of the repetitions' ``latency_ns``) and ``cpu_s_per_byte``: the least of its
    repetitions', for the machine's busy CPUs count whatever else ran meanwhile and only ever add to the run's own
    cost (the first runs after a precondition cost a capped device 1.2 cores at 200 MB/s, the next 0.1), and a CPU
    term made of such a run would bind where the CPU is not the limit. A point measured under an emulated cap takes
    fio's own CPU per byte instead (``cpu_floor_s_per_byte``, the least of its repetitions'; ``cpu_at_cap`` True):
    the machine's busy CPUs there are mostly whatever else ran (1.3 to 1.8 cores beside a device capped at 200 MB/s
    whose fio used 0.01, tests/golden/capped_cpu_results.csv), while fio's time per byte is still measured; a floor
    of the cost (the kernel's threads uncounted), so the cpu term it gives is an upper end, never too low.
    ``layout``: the one-device layout whose rows are the curve (``single_rows``)."""
    single = single_rows(rows, layout)
    single = single.assign(cpu_s_per_byte=cpu_s_per_byte(single), cpu_floor=cpu_floor_s_per_byte(single),
                           at_cap=capped(single), lat_ns=latency_ns(single))
    out = []
    for (rw, bs, iodepth, numjobs), group in single.groupby(["rw", "bs", "iodepth", "numjobs"], sort=True):
        d = stats.describe(group["bw_bytes"].to_numpy(float), confidence)
        lo, hi = (max(d["lo"], 0.0), d["hi"]) if d["reps"] >= 2 else (d["mean"], d["mean"])  # no rate below 0
        cpu, at_cap = float(group["cpu_s_per_byte"].min()), bool(group["at_cap"].all())
        if at_cap:  # the throttle held it: fio's own CPU per byte, what a byte certainly cost (a floor)
            cpu = float(group["cpu_floor"].min())
        out.append(dict(rw=str(rw), bs=int(bs), iodepth=int(iodepth), numjobs=int(numjobs),
                        outstanding=int(numjobs) * int(iodepth), bw_bytes=d["mean"], bw_bytes_lo=lo, bw_bytes_hi=hi,
                        reps=d["reps"], cpu_s_per_byte=cpu, lat_ns=float(group["lat_ns"].mean()),
                        **{CPU_AT_CAP: at_cap and np.isfinite(cpu)}))
    return pd.DataFrame(out, columns=[*CURVE, CPU_AT_CAP])


def figures(per_rw: Mapping[str, float], bs: int = baseline_and_tax.BASELINE_BS, iodepth: int = 1, numjobs: int = 1,
            cpu_s_per_byte: Mapping[str, float] | None = None) -> pd.DataFrame:
    """A curve from published per-device figures, bytes/s per rw (a datasheet, a paper's single-device number): one
    point per rw with no spread and no latency; a curve of one point stands for every load above it (held)."""
    rows = []
    for rw, value in per_rw.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not (
                np.isfinite(value) and value > 0):
            raise ConfigError(f"per-device figure for {rw!r} = {value!r} must be a rate above 0, bytes/s")
        cpu = (cpu_s_per_byte or {}).get(rw, np.nan)
        rows.append(dict(rw=rw, bs=bs, iodepth=iodepth, numjobs=numjobs, outstanding=numjobs * iodepth,
                         bw_bytes=float(value), bw_bytes_lo=float(value), bw_bytes_hi=float(value), reps=1,
                         cpu_s_per_byte=cpu, lat_ns=np.nan, **{CPU_AT_CAP: False}))
    if not rows:
        raise ConfigError("no per-device figure given")
    return pd.DataFrame(rows, columns=[*CURVE, CPU_AT_CAP])


def with_outstanding(base: pd.DataFrame) -> pd.DataFrame:
    """``base`` with the columns a curve made before they existed lacks: ``outstanding``, ``lat_ns`` and
    ``cpu_at_cap`` (False)."""
    if "outstanding" not in base.columns:
        base = base.assign(outstanding=base["numjobs"].astype(int) * base["iodepth"].astype(int))
    base = base if CPU_AT_CAP in base.columns else base.assign(**{CPU_AT_CAP: False})
    return base if "lat_ns" in base.columns else base.assign(lat_ns=np.nan)


def nearest(values: Iterable[int], wanted: float) -> int:
    """The measured value closest to ``wanted`` on a log scale (block sizes and queue depths double)."""
    values = sorted(set(int(v) for v in values))
    return min(values, key=lambda v: (abs(np.log2(v / wanted)), v))


@dataclass(frozen=True)
class Rate:
    """What the device delivers at one load: bytes/s with its interval, CPU-seconds per byte, whether the point was
    measured as asked (``exact``) and what stood in where it was not (``note``)."""

    bw_bytes: float
    bw_bytes_lo: float
    bw_bytes_hi: float
    cpu_s_per_byte: float
    exact: bool
    note: str = ""
    bound_lo: float = np.nan  # the ends the load leaves (``Slice.values``); NaN: the interval's own
    bound_hi: float = np.nan
    beyond: bool = False  # beyond the largest measured count: held, its upper end not known


@dataclass(frozen=True)
class Slice:
    """The curve of one rw at one measured block size ``bs``: its rows (``points``) sorted by outstanding."""

    rw: str
    bs: int
    points: pd.DataFrame

    def _axis(self, iodepth: int | None) -> pd.DataFrame:
        """One row per outstanding count: of ``iodepth`` where that iodepth was measured, else the best."""
        rows = self.points
        if iodepth is not None and (rows["iodepth"] == iodepth).any():
            own = rows[rows["iodepth"] == iodepth]
            rows = pd.concat([own, rows[~rows["outstanding"].isin(own["outstanding"])]])
        rows = rows.sort_values(["outstanding", "bw_bytes"], ascending=[True, False], kind="mergesort")
        return rows.drop_duplicates("outstanding", keep="first")

    def values(self, outstanding, iodepth: int | None = None) -> dict[str, np.ndarray]:
        """The curve at each of ``outstanding`` (an array of counts in flight): bytes/s with its interval, the
        bounds the load leaves (``BOUNDS``: the interval, and below the least measured count Little's law to the
        rate measured there) and the CPU-seconds per byte; linear between measured counts, the saturating curve
        below them (module docstring), held above them, 0 at 0."""
        wanted = np.atleast_1d(np.asarray(outstanding, dtype=float))
        axis = self._axis(iodepth)
        counts = axis["outstanding"].to_numpy(float)
        out = {c: np.interp(wanted, counts, axis[c].to_numpy(float)) for c in (*VALUES, "cpu_s_per_byte")}
        out["bound_lo"], out["bound_hi"] = out["bw_bytes_lo"].copy(), out["bw_bytes_hi"].copy()
        below = (wanted < counts[0]) & (wanted > 0)
        if below.any():
            first = axis.iloc[0]
            mean = float(first["bw_bytes"])
            latency = float(first["lat_ns"])
            line = (wanted * self.bs * 1e9 / latency if np.isfinite(latency) and latency > 0
                    else wanted * mean / counts[0])
            line = np.minimum(line, mean)
            fitted = self._saturating(wanted, axis)
            point = np.clip(np.where(np.isfinite(fitted), fitted, np.sqrt(line * mean)), line, mean)
            for c in VALUES:
                out[c] = np.where(below, point * float(first[c]) / mean, out[c])
            out["bound_lo"] = np.where(below, line * float(first["bw_bytes_lo"]) / mean, out["bound_lo"])
            out["bound_hi"] = np.where(below, float(first["bw_bytes_hi"]), out["bound_hi"])
        for c in (*VALUES, *BOUNDS):
            out[c] = np.where(wanted > 0, out[c], 0.0)
        return out

    @staticmethod
    def _saturating(wanted: np.ndarray, axis: pd.DataFrame) -> np.ndarray:
        """Below the least measured count: X(n) = n / (a + b n) through the two least measured counts (1 / X is
        linear in 1 / n, a the slope, b the intercept), where it rises through the origin (a > 0); where they show
        no bend (b <= 0) Little's line through the least; NaN with one count (``values`` then takes the geometric
        middle of its bounds)."""
        if len(axis) < 2:
            return np.full(len(wanted), np.nan)
        (n1, x1), (n2, x2) = axis[["outstanding", "bw_bytes"]].to_numpy(float)[:2]
        if not (x1 > 0 and x2 > 0):
            return np.full(len(wanted), np.nan)
        a = (1 / x1 - 1 / x2) / (1 / n1 - 1 / n2)
        b = 1 / x1 - a / n1
        if not a > 0:
            return np.full(len(wanted), np.nan)
        return wanted / (a + max(b, 0.0) * wanted)  # b <= 0: no bend between them, Little's line

    def _inside_words(self, outstanding: float, iodepth: int | None) -> str:
        """Which point ``values`` takes below the least measured count, in words."""
        axis = self._axis(iodepth)
        if len(axis) < 2 or not np.isfinite(self._saturating(np.array([outstanding]), axis)[0]):
            return "their geometric middle (one load measured)"
        (n1, x1), (n2, x2) = axis[["outstanding", "bw_bytes"]].to_numpy(float)[:2]
        if x2 / x1 >= n2 / n1 * (1 - 1e-9):  # no bend: b <= 0
            return "Little's law itself (its two least measured loads lie on its line)"
        return "the saturating curve through its two least measured loads"

    def rate(self, outstanding: float, numjobs: int | None = None, iodepth: int | None = None) -> Rate:
        """The device at ``outstanding`` requests in flight (``numjobs`` x ``iodepth`` where the device runs its own
        jobs): the measured point where that job count and iodepth were measured (``exact``), else ``values``,
        with a note where Little's law or the held last point stood in."""
        if outstanding <= 0:
            return Rate(0.0, 0.0, 0.0, 0.0, True, bound_lo=0.0, bound_hi=0.0)
        rows = self.points
        if numjobs is not None and iodepth is not None:
            same = rows[(rows["numjobs"] == numjobs) & (rows["iodepth"] == iodepth)]
            if len(same):
                lo, hi = float(same.iloc[0]["bw_bytes_lo"]), float(same.iloc[0]["bw_bytes_hi"])
                return Rate(*(float(same.iloc[0][c]) for c in (*VALUES, "cpu_s_per_byte")), True, bound_lo=lo,
                            bound_hi=hi)
        found = {c: float(v[0]) for c, v in self.values([outstanding], iodepth).items()}
        counts = self._axis(iodepth)["outstanding"].to_numpy(float)
        note = ""
        if outstanding < counts[0]:
            first = self._axis(iodepth).iloc[0]
            how = (f"its latency there ({duration(first['lat_ns'], 'ns')})" if np.isfinite(first["lat_ns"])
                   else "the line through its rate there")
            inside = self._inside_words(outstanding, iodepth)
            note = (f"{outstanding:g} in flight, below the single device's least measured ({counts[0]:g}): "
                    f"between Little's law from {how} and its rate there, {inside}")
        elif outstanding > counts[-1] and len(counts) > 1:
            note = (f"{outstanding:g} in flight a device, beyond the single device's largest measured "
                    f"({counts[-1]:g}): held there")
        exact = numjobs is None and bool(np.isin(outstanding, counts))
        return Rate(found["bw_bytes"], found["bw_bytes_lo"], found["bw_bytes_hi"], found["cpu_s_per_byte"], exact,
                    note, found["bound_lo"], found["bound_hi"], bool(outstanding > counts[-1]))

    @property
    def largest(self) -> float:
        """The largest count in flight measured."""
        return float(self.points["outstanding"].max())

    def latency_s(self, outstanding: float, iodepth: int | None = None) -> float:
        """A request's mean time in the device at ``outstanding`` in flight, seconds: Little's law on the curve
        (outstanding x bs / rate); NaN with nothing in flight."""
        if outstanding <= 0:
            return np.nan
        found = float(self.values([outstanding], iodepth)["bw_bytes"][0])
        return outstanding * self.bs / found if found > 0 else np.nan


def at(base: pd.DataFrame, rw: str, bs: int) -> tuple[Slice | None, str]:
    """The curve of ``rw`` at the measured block size nearest ``bs`` (None when the curve has no such rw), with a
    note when it is not ``bs`` itself."""
    base = with_outstanding(base)
    rows = base[base["rw"] == rw]
    if rows.empty:
        return None, f"no single-device {rw} rows"
    near = nearest(rows["bs"], bs)
    note = f"single device measured at bs {near}, not {bs}" if near != bs else ""
    rows = rows[rows["bs"] == near].sort_values(["outstanding", "numjobs"], kind="mergesort").reset_index(drop=True)
    return Slice(str(rw), int(near), rows), note
