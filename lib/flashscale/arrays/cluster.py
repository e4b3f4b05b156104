"""The emulated cluster: H hosts, each a network namespace with its own capped emulated array and a fio server.

Host ``i`` gets an ``EmulatedArray`` of N loop devices capped at the array's read and write caps, a ``jbod`` (one xfs
per device) mounted at mount points of its own in the root namespace (the namespaces share the machine's mounts,
so each host's job file names its own), and ``fio --server`` on its address, inside its namespace and inside its
array's throttled cgroup, so the jobs the server forks are capped. The truth is therefore H x N x cap, unless a
per-host link cap (``link_bps``, tc tbf on each veth) is smaller, in which case the network ceiling is the
smaller one (``analysis.ceilings``).

Everything is torn down in reverse order of its making, on success, error and Ctrl-C: the servers (their process
groups), each host's layout and array, then the namespaces, veths and qdiscs.
"""
from __future__ import annotations

import secrets
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from . import layouts
from .emulated import ArraySpec, EmulatedArray
from .layouts import Layout
from ..errors import ConfigError
from ..system import netns, processes
from ..system.commands import Runner
from ..system.devices import System
from ..system.teardown import Built, Teardown, manifest_dir

PORT = 8765
LAYOUT = "jbod"


@dataclass
class EmulatedHost:
    """One host of the emulated cluster: its network identity, its array and layout, and its fio server."""

    host: netns.Host
    array: EmulatedArray
    layout: Layout
    server: processes.Process
    port: int = PORT

    @property
    def name(self) -> str:
        return self.host.name


class EmulatedCluster(Built):
    """Context manager: ``with EmulatedCluster(2, ArraySpec(devices=2), log_dir=...) as cluster: cluster.hosts``."""

    def __init__(self, hosts: int, array: ArraySpec, *, log_dir: Path, link_bps: int | None = None,
                 subnet: str = netns.SUBNET, runner: Runner | None = None, system: System | None = None,
                 options: layouts.Options = layouts.Options()):
        if isinstance(hosts, bool) or not isinstance(hosts, int) or hosts < 1:
            raise ConfigError(f"hosts={hosts!r} must be a whole number >= 1")
        self.count, self.spec, self.link_bps, self.subnet = hosts, array, link_bps, subnet
        self.runner = runner or Runner()
        self.system = system or System(runner=self.runner)
        self.log_dir, self.options = Path(log_dir), options
        self.hosts: list[EmulatedHost] = []
        self._stack = ExitStack()

    def _teardown(self, label: str) -> Teardown:
        teardown = Teardown(manifest_dir() / f"flashscale-cluster-{secrets.token_hex(4)}-{label}.json",
                            self.runner, self.system)
        self._stack.callback(teardown.close)
        return teardown

    def _build(self) -> None:
        network = netns.make_hosts(self.count, self._teardown("network"), self.runner, self.system,
                                   subnet=self.subnet, link_bps=self.link_bps)
        built = []
        for host in network:
            array = self._stack.enter_context(EmulatedArray(self.spec, self.runner, self.system))
            layout = layouts.build(LAYOUT, array.devices, self.runner, self._teardown(f"{host.name}-layout"),
                                   confirm=[d.id for d in array.devices], claimed=[d.path for d in array.devices],
                                   options=self.options, system=self.system)
            built.append((host, array, layout))
        servers = self._teardown("servers")  # last made, first undone: nothing holds the mounts when they go
        self.log_dir.mkdir(parents=True, exist_ok=True)
        for host, array, layout in built:
            server = processes.start([*host.exec_prefix(), "fio", f"--server={host.address},{PORT}"], servers,
                                     self.log_dir / f"server-{host.name}.log", cgroup_procs=array.cgroup_procs,
                                     system=self.system)
            self.hosts.append(EmulatedHost(host, array, layout, server))

    @property
    def truth_bw_bytes(self) -> dict[str, float]:
        """What the devices can deliver, per direction: hosts x devices x cap (the link cap aside)."""
        devices = self.count * self.spec.devices
        return {"read": devices * self.spec.read_bps, "write": devices * self.spec.write_bps}

    def close(self) -> None:
        for host in self.hosts:
            host.server.stop()
        self._stack.close()
