"""The ceilings a prediction is held to besides the devices: their parameters (``Limits``) and each as a term.

    Limits(pcie_bps=..., memory_bps=..., cores=...)   any left as None is no term
    Limits.from_ceilings(mapping, cores=2)            from a ceilings file's parameters (``ceilings.Ceilings``)
    ceiling_terms(limits, rw, devices, share, cpu)    each term's bytes/s at one point

The terms, bytes/s of the data fio moves:

    pcie      N x each device's PCIe link x the design share (a mirror's second copy crosses the bus too)
    uplink    a link shared by k devices (a PCIe switch's or an HBA's): N / min(k, N) uplinks' worth x the share
    network   links (default: one per host) x the link, for data that crosses the network
    memory    hosts x each host's memory bandwidth (``system.host.memory_bw_bytes`` probes it: a copy's rate)
    cpu       hosts x cores / (CPU-seconds per byte the point costs: the device's, plus a layer's where calibrated)

A mixed rw (fio's 50/50) reaches a per-direction link (PCIe, uplink, network) when either half does: twice the
link. ``SHARED`` are the terms that do not grow with the devices (with ``host``, what several devices together were
measured to deliver at most, ``calibration.host_ceiling``): where none of them (nor a layer's cost) is known,
nothing bounds a prediction but the devices, as far as anyone measured (``UNBOUNDED``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from .ceilings import FIO_READ_SHARE, MIXED, Ceilings, check_positive, pcie_link_bw_bytes
from ...errors import ConfigError

SHARED = ("uplink", "network", "memory", "cpu", "host", "layer")  # terms that do not grow with the devices
UNBOUNDED = "bounded only by the devices, as far as known"


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
        check_positive(self, "limit")
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

    def shared(self) -> bool:
        """Whether any ceiling that does not grow with the devices is given (the cpu's needs ``cores``)."""
        return any(v is not None for v in (self.uplink_bps, self.link_bps, self.memory_bps, self.cores))


def _duplex(rw: str) -> float:
    """How much more than one direction's link a rw's data may use: a mixed rw's larger half reaches it first."""
    return 1.0 / max(FIO_READ_SHARE, 1.0 - FIO_READ_SHARE) if rw in MIXED else 1.0


def ceiling_terms(limits: Limits, rw: str, devices: int, share: float, cpu_s_per_byte: float) -> dict[str, float]:
    """Each ceiling's term at one point, bytes/s (NaN where its parameter is not given; the cpu's also where the
    point's CPU cost is unknown)."""
    duplex = _duplex(rw)
    hosts = limits.hosts
    known_cpu = limits.cores and np.isfinite(cpu_s_per_byte) and cpu_s_per_byte > 0
    terms = {"pcie": devices * limits.pcie_bps * share * duplex if limits.pcie_bps else np.nan, "uplink": np.nan,
             "network": (limits.links or hosts) * limits.link_bps * duplex if limits.link_bps else np.nan,
             "memory": hosts * limits.memory_bps if limits.memory_bps else np.nan,
             "cpu": hosts * limits.cores / cpu_s_per_byte if known_cpu else np.nan}
    if limits.uplink_bps:
        terms["uplink"] = devices / min(limits.devices_per_uplink, devices) * limits.uplink_bps * share * duplex
    return terms
