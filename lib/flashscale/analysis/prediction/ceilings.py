"""Ceilings: what bounds throughput besides the devices' own rate, as one type (``Ceilings``), held two ways: as the
terms of a prediction (``ceiling_terms``: ``predict``, ``sizing``, a campaign's forecast) and against a measured
table (``ceiling_table``: which one a measurement came closest to).

Ceilings are parameters, not measurements: a YAML file's mapping (``Ceilings.from_mapping``, ``CEILINGS``,
``--ceilings``), flags on top (``Ceilings.with_values``: ``flashscale plan --pcie-bps``...), or what a machine says
of itself (``system.host.ceilings``: its cores, its memory's copy rate, its devices' PCIe links).
Any left as None is no ceiling. For a layout of N devices and an rw, bytes/s:

    device    N x the datasheet sequential read (read, randread) or write (write, randwrite) bandwidth: held
              against a measurement only (a prediction's devices term is the single device as measured)
    pcie      N x each device's link (``pcie_link_bw_bytes``, or lanes x the effective per-lane rate of the PCIe
              generation x ``pcie_efficiency``), x the design share in a prediction (a mirror's second copy
              crosses the bus too)
    uplink    a link shared by k devices (a PCIe switch's or an HBA's): N / min(k, N) uplinks' worth (prediction)
    network   links (default: one per host) x the link, for data that crosses the network
    memory    hosts x each host's memory bandwidth
    cpu       hosts x cores / (CPU-seconds per byte the point costs: the device's, plus a layer's where calibrated):
              a prediction's only

A mixed rw reaches a per-direction link (device, PCIe, uplink, network) when either part does: total =
min(read limit / read share, write limit / write share), fio's 50% where the split is not measured. The expected
ceiling of a measurement is the smallest; its fraction of each says which one binds (the smallest is the one the
measurement comes closest to). ``SHARED`` are the terms of a prediction that do not grow with the devices (with
``host``, what several devices together were measured to deliver at most, ``calibration.host_ceiling``): where
none of them (nor a layer's cost) is known, nothing bounds a prediction but the devices, as far as anyone measured
(``UNBOUNDED``).

PCIe per-lane rates (``PCIE_LANE_BW_BYTES``) are after line encoding, before protocol overhead:

    gen 1   2.5 GT/s  8b/10b     2.5e9 x 8/10 / 8    =  250.0 MB/s
    gen 2   5.0 GT/s  8b/10b     5.0e9 x 8/10 / 8    =  500.0 MB/s
    gen 3   8.0 GT/s  128b/130b  8.0e9 x 128/130 / 8 =  984.6 MB/s
    gen 4  16.0 GT/s  128b/130b                      = 1969.2 MB/s
    gen 5  32.0 GT/s  128b/130b                      = 3938.5 MB/s

Packet headers, flow control and read completions cost a further 10-20% in practice; ``pcie_efficiency``
(default 1.0, i.e. none) is where to say so. Seed 004's "PCIe Gen2 x8 is limited to approximately 3.2 GB/s" is
the 4.0 GB/s link at about 80% efficiency.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Mapping

import numpy as np
import pandas as pd

from ..core import POINT, measured, point_means
from ...errors import AnalysisError, ConfigError
from ...measure.units import percent, rate

PCIE_LANE_BW_BYTES: dict[int, float] = {
    1: 2.5e9 * 8 / 10 / 8,
    2: 5.0e9 * 8 / 10 / 8,
    3: 8.0e9 * 128 / 130 / 8,
    4: 16.0e9 * 128 / 130 / 8,
    5: 32.0e9 * 128 / 130 / 8,
}
READS = {"read", "randread"}
WRITES = {"write", "randwrite"}
MIXED = {"rw", "readwrite", "randrw"}
LIMITS = ("device", "pcie", "network", "memory")  # the ceilings a measured table is held to (``ceiling_table``)
COUNTS = ("pcie_gen", "pcie_lanes", "network_links", "devices_per_uplink", "hosts")  # whole numbers
FIO_READ_SHARE = 0.5  # fio's rwmixread default: a mixed rw without its split measured reads half its bytes
SHARED = ("uplink", "network", "memory", "cpu", "host", "layer")  # prediction terms that do not grow with the devices
UNBOUNDED = "bounded only by the devices, as far as known"


def pcie_rate(gen: int, lanes: int, efficiency: float = 1.0) -> float:
    """Effective bandwidth of one PCIe link, bytes/s per direction."""
    if gen not in PCIE_LANE_BW_BYTES:
        raise ConfigError(f"PCIe generation {gen!r} is unknown; expected one of {sorted(PCIE_LANE_BW_BYTES)}")
    if lanes not in (1, 2, 4, 8, 12, 16, 32):
        raise ConfigError(f"PCIe lane count {lanes!r} is not a link width (1, 2, 4, 8, 12, 16 or 32)")
    return PCIE_LANE_BW_BYTES[gen] * lanes * efficiency


def _number(name: str, value) -> int | float:
    """A ceiling parameter as a mapping gives it (a YAML file's text or number), checked: a count whole."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"ceiling parameter {name} = {value!r} is not a number") from None
    if name in COUNTS and not (np.isfinite(number) and number == int(number)):
        raise ConfigError(f"ceiling parameter {name} = {value!r} must be a whole number")
    return int(number) if name in COUNTS else number


@dataclass(frozen=True)
class Ceilings:
    """The parameters of the ceilings, bytes/s where a rate; any left as None is no ceiling. ``memory_bw_bytes`` and
    ``cores`` are each host's; ``network_links`` defaults to ``hosts``. Each device's PCIe link is given either as
    ``pcie_link_bw_bytes`` or as ``pcie_gen`` and ``pcie_lanes`` (with ``pcie_efficiency``), not both."""

    device_read_bw_bytes: float | None = None
    device_write_bw_bytes: float | None = None
    pcie_gen: int | None = None
    pcie_lanes: int | None = None
    pcie_efficiency: float = 1.0
    pcie_link_bw_bytes: float | None = None
    uplink_bw_bytes: float | None = None
    devices_per_uplink: int | None = None
    network_links: int | None = None
    network_link_bw_bytes: float | None = None
    hosts: int = 1
    memory_bw_bytes: float | None = None
    cores: float | None = None

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float, np.number))
                                      or not (np.isfinite(value) and value > 0)):
                raise ConfigError(f"ceiling parameter {f.name} = {value!r} must be a positive number")
            if value is not None and f.name in COUNTS and value != int(value):
                raise ConfigError(f"ceiling parameter {f.name} = {value!r} must be a whole number")
        if self.pcie_efficiency > 1:
            raise ConfigError(f"pcie_efficiency {self.pcie_efficiency!r} must not exceed 1")
        for one, other in (("pcie_gen", "pcie_lanes"), ("uplink_bw_bytes", "devices_per_uplink")):
            if (getattr(self, one) is None) != (getattr(self, other) is None):
                raise ConfigError(f"give both {one} and {other}, or neither")
        if self.network_links is not None and self.network_link_bw_bytes is None:
            raise ConfigError("network_links needs network_link_bw_bytes: the links' rate")
        if self.pcie_gen is not None:
            if self.pcie_link_bw_bytes is not None:
                raise ConfigError("give each device's PCIe link as pcie_link_bw_bytes or as pcie_gen and pcie_lanes, "
                                  "not both")
            pcie_rate(self.pcie_gen, self.pcie_lanes)

    @classmethod
    def from_mapping(cls, mapping: Mapping) -> "Ceilings":
        """From a mapping such as a parsed YAML file; unknown keys are refused by name."""
        if isinstance(mapping, Ceilings):
            return mapping
        if not isinstance(mapping, Mapping):
            raise ConfigError(f"ceilings must be a mapping of parameter: value; got {type(mapping).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(mapping) - known)
        if unknown:
            raise ConfigError(f"unknown ceiling parameter(s) {', '.join(map(repr, unknown))}; known: {sorted(known)}")
        return cls(**{name: _number(name, value) for name, value in mapping.items() if value is not None})

    def with_values(self, **values) -> "Ceilings":
        """These ceilings with ``values`` on top (those not None): a PCIe link given as ``pcie_link_bw_bytes``
        replaces a generation and lanes, so a flag wins over a file."""
        given = {name: value for name, value in values.items() if value is not None}
        if "pcie_link_bw_bytes" in given:
            given.update(pcie_gen=None, pcie_lanes=None)
        return replace(self, **given)

    def pcie_link(self) -> float | None:
        """Each device's PCIe link, bytes/s per direction: ``pcie_link_bw_bytes``, else from its generation, lanes
        and efficiency; None when neither is given."""
        if self.pcie_gen is not None:
            return pcie_rate(self.pcie_gen, self.pcie_lanes, self.pcie_efficiency)
        return self.pcie_link_bw_bytes

    def network(self) -> float | None:
        """The network's ceiling, bytes/s per direction: links (default one per host) x the link."""
        if self.network_link_bw_bytes is None:
            return None
        return (self.network_links or self.hosts) * self.network_link_bw_bytes

    def shared(self) -> bool:
        """Whether any ceiling of a prediction that does not grow with the devices is given (the cpu's needs
        ``cores``)."""
        return any(v is not None for v in (self.uplink_bw_bytes, self.network_link_bw_bytes, self.memory_bw_bytes,
                                           self.cores))


def _duplex(rw: str) -> float:
    """How much more than one direction's link a rw's data may use: a mixed rw's larger half reaches it first."""
    return 1.0 / max(FIO_READ_SHARE, 1.0 - FIO_READ_SHARE) if rw in MIXED else 1.0


def ceiling_terms(ceilings: Ceilings, rw: str, devices: int, share: float, cpu_s_per_byte: float) -> dict[str, float]:
    """Each ceiling's term of a prediction at one point, bytes/s (NaN where its parameter is not given; the cpu's
    also where the point's CPU cost is unknown). ``share``: the layout's design share."""
    duplex, hosts, pcie, network = _duplex(rw), ceilings.hosts, ceilings.pcie_link(), ceilings.network()
    known_cpu = ceilings.cores and np.isfinite(cpu_s_per_byte) and cpu_s_per_byte > 0
    terms = {"pcie": devices * pcie * share * duplex if pcie else np.nan, "uplink": np.nan,
             "network": network * duplex if network else np.nan,
             "memory": hosts * ceilings.memory_bw_bytes if ceilings.memory_bw_bytes else np.nan,
             "cpu": hosts * ceilings.cores / cpu_s_per_byte if known_cpu else np.nan}
    if ceilings.uplink_bw_bytes:
        per = ceilings.uplink_bw_bytes * share * duplex
        terms["uplink"] = devices / min(ceilings.devices_per_uplink, devices) * per
    return terms


def _direction_limits(config: Ceilings, direction: str, devices: int) -> dict[str, float]:
    """The per-direction ceilings (device, PCIe, network: each full duplex), bytes/s, of one direction."""
    out: dict[str, float] = {}
    per_device = config.device_read_bw_bytes if direction == "read" else config.device_write_bw_bytes
    if per_device is not None:
        out["device"] = devices * per_device
    if config.pcie_link() is not None:
        out["pcie"] = devices * config.pcie_link()
    if config.network() is not None:
        out["network"] = config.network()
    return out


def ceilings_for(config: Ceilings | Mapping, rw: str, devices: int, read_share: float | None = None) -> dict[str, float]:
    """The ceilings, bytes/s of the total (read + write), that apply to ``devices`` devices doing ``rw``; only those
    with parameters. Device, PCIe and network limits hold per direction; memory holds the sum. A mixed rw moving
    ``read_share`` of its bytes as reads (default fio's 50%) reaches a per-direction limit when either part does:
    total ceiling = min(read limit / share, write limit / (1 - share)); a limit lacking one direction's parameter
    (device_write_bw_bytes) is left out unless that direction moves nothing."""
    config = Ceilings.from_mapping(config)
    share = {"read": 1.0, "write": 0.0}.get(_direction(rw), FIO_READ_SHARE if read_share is None else read_share)
    if not 0.0 <= share <= 1.0:
        raise AnalysisError(f"read share {share!r} of rw {rw!r} must lie between 0 and 1")
    if rw not in READS | WRITES | MIXED:
        out = {}
    else:
        parts = {"read": share, "write": 1.0 - share}
        limits = {d: _direction_limits(config, d, devices) for d, part in parts.items() if part > 0}
        names = set.intersection(*(set(v) for v in limits.values()))
        out = {k: min(limits[d][k] / parts[d] for d in limits) for k in LIMITS if k in names}
    if config.memory_bw_bytes is not None:
        out["memory"] = config.hosts * config.memory_bw_bytes
    return out


def _direction(rw: str) -> str:
    return "read" if rw in READS else "write" if rw in WRITES else "mixed"


def binding_limit(ceilings: Mapping[str, float]) -> tuple[str, float]:
    """The smallest ceiling: (name, bytes/s)."""
    if not ceilings:
        raise AnalysisError("no ceiling applies: give at least one ceiling parameter for this rw")
    name = min(ceilings, key=lambda k: (ceilings[k], LIMITS.index(k) if k in LIMITS else len(LIMITS)))
    return name, ceilings[name]


def _read_share(row: pd.Series) -> tuple[float | None, str]:
    """The share of a mixed row's bytes that are reads, from its ``read_bw_bytes`` and ``write_bw_bytes``; None
    (fio's default) with a note when the row lacks them."""
    if str(row["rw"]) not in MIXED:
        return None, ""
    read, write = (float(row.get(f"{d}_bw_bytes", np.nan)) for d in ("read", "write"))
    if np.isfinite(read) and np.isfinite(write) and read >= 0 and write >= 0 and read + write > 0:
        return read / (read + write), ""
    return None, f"read/write split not measured: fio's {percent(FIO_READ_SHARE, 0)} reads assumed"


def _ceiling_row(row: pd.Series, config: Ceilings, value: str) -> dict:
    share, note = _read_share(row)
    limits = ceilings_for(config, str(row["rw"]), int(row["devices"]), share)
    out = {f"ceiling_{k}_bw_bytes": limits.get(k, np.nan) for k in LIMITS}
    out.update({f"fraction_of_{k}": row[value] / limits[k] if k in limits else np.nan for k in LIMITS})
    name, ceiling = binding_limit(limits) if limits else ("", np.nan)
    out.update(expected_ceiling_bw_bytes=ceiling, binding_limit=name, fraction_of_ceiling=row[value] / ceiling)
    for side in ("lo", "hi"):
        if f"{value}_{side}" in row.index:
            out[f"fraction_of_ceiling_{side}"] = row[f"{value}_{side}"] / ceiling
    out["ceiling_note"] = note
    return out


def with_direction_split(summary: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """``summary`` (a ``core.summarize`` table of ``frame``) with ``read_bw_bytes`` and ``write_bw_bytes``: the mean
    of each direction over the repetitions of each row's best point (NaN when ``frame`` lacks the columns), so that
    ``ceiling_table`` holds each part of a mixed rw against its own direction's limits."""
    if not {"read_bw_bytes", "write_bw_bytes"} <= set(frame.columns):
        return summary.assign(read_bw_bytes=np.nan, write_bw_bytes=np.nan)
    rows = measured(frame)
    split = rows.assign(**{d: pd.to_numeric(rows[d], errors="coerce") for d in ("read_bw_bytes", "write_bw_bytes")})
    split = split.groupby(POINT, sort=False, observed=True)[["read_bw_bytes", "write_bw_bytes"]].mean().reset_index()
    split = split.rename(columns={"bs": "best_bs", "numjobs": "best_numjobs", "iodepth": "best_iodepth"})
    keys = ["layout", "devices", "rw", "best_bs", "best_numjobs", "best_iodepth"]
    return summary.merge(split, on=keys, how="left", validate="many_to_one").set_axis(summary.index)


def ceiling_table(summary: pd.DataFrame, ceilings: Ceilings | Mapping, value: str = "best_bw_bytes") -> pd.DataFrame:
    """``summary`` (needs ``devices``, ``rw`` and ``value``) plus each ceiling, the fraction of it reached, the
    expected (smallest) ceiling, the ``binding_limit`` and ``fraction_of_ceiling`` (with ``_lo`` / ``_hi`` when
    ``summary`` has ``{value}_lo`` / ``_hi``, e.g. from ``stats.summary_intervals``). A mixed rw is held per
    direction (``ceilings_for``) with the read share of its ``read_bw_bytes`` / ``write_bw_bytes`` columns
    (``with_direction_split``), else fio's 50% with a ``ceiling_note`` saying so. A row with no ceiling for its rw
    (a metadata op, or a mixed rw with only the read side's device ceiling) gets NaN and an empty ``binding_limit``."""
    missing = [c for c in ("devices", "rw", value) if c not in summary.columns]
    if missing:
        raise AnalysisError(f"summary lacks column(s) {', '.join(map(repr, missing))} needed for ceilings")
    config = Ceilings.from_mapping(ceilings)
    extra = pd.DataFrame([_ceiling_row(row, config, value) for _, row in summary.iterrows()], index=summary.index)
    return pd.concat([summary, extra], axis=1)


def measured_peaks(frame: pd.DataFrame, bs=(4096, 131072), devices: int = 1) -> pd.DataFrame:
    """Long table ``rw, bs, metric, measured``: the best point-mean bandwidth (``bw_bytes``) and IOPS (``iops``,
    when present) over numjobs, iodepth and layouts, for ``devices`` devices at each block size in ``bs``."""
    points = point_means(frame)
    points = points[(points["devices"] == devices) & points["bs"].isin(list(bs))]
    metrics = ["bw_bytes", *(["iops"] if "iops" in points.columns else [])]
    best = points.groupby(["rw", "bs"], sort=True, observed=True)[metrics].max().reset_index()
    return best.melt(id_vars=["rw", "bs"], value_vars=metrics, var_name="metric", value_name="measured")


def datasheet_vs_measured(datasheet: pd.DataFrame, measured: pd.DataFrame) -> pd.DataFrame:
    """Seed 004's Table 3: ``rw, bs, metric, datasheet, measured, ratio`` (measured / datasheet; NaN where either
    is not given). ``datasheet`` has ``rw, bs, metric, datasheet``; ``measured`` has ``rw, bs, metric, measured``."""
    keys = ["rw", "bs", "metric"]
    for name, table, column in (("datasheet", datasheet, "datasheet"), ("measured", measured, "measured")):
        missing = [c for c in (*keys, column) if c not in table.columns]
        if missing:
            raise AnalysisError(f"{name} table lacks column(s) {', '.join(map(repr, missing))}")
    left = datasheet[[*keys, "datasheet"]]
    right = measured[[*keys, "measured"]]
    out = left.merge(right, on=keys, how="outer", validate="one_to_one").sort_values(keys, kind="mergesort")
    out["ratio"] = out["measured"] / out["datasheet"]
    return out.reset_index(drop=True)


def binding_sentence(row: Mapping) -> str:
    """Which limit binds one row of ``ceiling_table``, in words: "the network binds: its ceiling is 100 MB/s, the
    measurement reached 98% of it"."""
    name = row.get("binding_limit")
    if not name:
        return "no ceiling applies to this rw"
    return (f"the {name} binds: its ceiling is {rate(row['expected_ceiling_bw_bytes'])}, the measurement "
            f"reached {percent(row['fraction_of_ceiling'], 0)} of it")
