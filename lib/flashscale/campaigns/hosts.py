"""The places a cluster campaign runs: its hosts, behind the interface every place implements
(``campaigns.place.Place``), picked here once (``choose``) and run by every campaign's loop (``campaign.run_at``).

    EmulatedHosts   max(HOSTS) emulated hosts (``arrays.emulated_cluster.EmulatedCluster``), made for each storage in turn
                    (``local`` first: one host alone on it is every prediction's baseline), each measured with every
                    cap lifted by the harness first (its truth, ``measure.harness.hold_cluster``), undone after
    ServingHosts    real hosts each serving fio itself (``REMOTE_HOSTS`` without ``KNOWN_HOSTS``, started by hand):
                    inside the mount point each names, and its local directory when every host names one
    HostsOverSsh    real hosts reached over SSH (``KNOWN_HOSTS``): ``campaigns.over_ssh`` builds each layout on them
                    through the same guard, serves fio on their loopback and undoes everything

Each makes a layout's hosts (``swept``: each a ``measure.fio_client.Target``) and hands them to the recorder as where
its fio runs (``measure.fio_client.OnHosts``), swept on each count of ``HOSTS``, each count predicted first (``state``).
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Sequence

from ..analysis import cluster_numbers as cluster_analysis
from ..arrays.emulated_cluster import STORAGE, EmulatedCluster
from ..arrays.emulated import cap_fit_policy
from ..arrays.layouts import Layout
from ..errors import AnalysisError
from ..measure import campaign_folder, harness, results
from ..measure.fio_client import Endpoint, OnHosts, Target, check_servers
from ..measure.units import rate, size
from ..system import netns
from ..system.commands import Runner
from ..system.host import cores as host_cores
from ..system.teardown import manifest_dir
from . import over_ssh, preregistered
from .place import Place, caps_words

LOCAL, MOUNTED = "local", "mounted"  # a host's own local directory, and the mount point it names
STORAGES = {layout: storage for storage, layout in STORAGE.items()}  # the layout its rows name -> its storage


def state(directory: Path, hosts: Sequence[Target], points: Sequence[dict], cores: float | None) -> str | None:
    """Before ``hosts`` (one layout) are measured: what they should deliver at every point (``cluster_numbers.
    predict_hosts`` from ``host_curve`` of the rows so far; ``cores``: this machine's, or None; each host's link a term
    where its data crosses it), appended to ``predictions.csv``, kept as stated before; without one host measured
    alone on its own storage first, a sentence saying so (none for that baseline itself)."""
    layout, count = hosts[0].layout, len(hosts)
    earlier = campaign_folder.read_predictions(directory)
    if not earlier.empty and ((earlier["layout"] == layout) & (earlier["hosts"] == count)).any():
        return None  # stated before: kept as it was
    try:
        base = cluster_analysis.host_curve(results.to_frame(campaign_folder.read_rows(directory)[0]))
    except AnalysisError as exc:
        if count == 1 and layout in cluster_analysis.LOCAL:
            return None
        return f"{layout} on {count} host(s) was not predicted before it was measured: {exc}."
    links = [h.network_bw_bytes for h in hosts]
    link = None if None in links else sum(links) / count  # the data a host's link carries, as the truth counts it
    prediction = cluster_analysis.predict_hosts(base, layout, points, count, [h.endpoint.name for h in hosts],
                                                hosts[0].devices, link_bps=link,
                                                cores=cores / count if cores else None)
    preregistered.record(directory, prediction)
    return None


class Hosts(Place):
    """A cluster's hosts: every host's devices capped alike (no ``CAP_SCALE``), its layouts its own (storages, or
    what is built and named on real hosts), each swept on 1..H hosts where their fio servers run."""

    def __init__(self, runner: Runner, spec):
        super().__init__(runner, spec.array, spec.options)
        self.spec = spec  # the cluster's spec (``cluster.ClusterSpec``): its hosts, storages, links, SSH settings
        self.said: list[str] = []  # what the hosts' runs said for the notes: harness, predictions, hosts lost

    def check(self, names: Sequence[str] = (), workloads: Sequence = ()) -> None:
        self.array.refuse_cap_scale("cluster")

    def host_counts(self) -> tuple[int, ...]:
        return self.spec.hosts

    def layouts(self, names: Sequence[str]) -> tuple[list[str], list[str]]:
        """A real host's layouts, in order (``over_ssh.order``): those built, then its directories."""
        return over_ssh.order(self.spec), []

    def run(self, todo: Sequence[str], recorder) -> list[str]:
        """Every campaign's run (truth, builds, sweeps), then what the hosts' runs said."""
        said = super().run(todo, recorder)
        return list(dict.fromkeys([*said, *self.said]))

    def _sweep(self, recorder, hosts: list[Target], phase: str, dead: dict | None = None,
               windows: list | None = None) -> None:
        """``hosts`` (one layout, their servers fresh) swept by ``recorder`` on each host count (``OnHosts``)."""
        here = not self.spec.remote  # emulated hosts share this machine's CPUs; a real host's are its own
        cores = host_cores() if here else None
        transport = OnHosts(hosts, self.spec.hosts, recorder.directory, self.runner,
                            cpu_latency_us=self.spec.sweep.cpu_latency_us if here else None, dead=dead,
                            windows=windows,
                            before=lambda now: state(recorder.directory, now, self.spec.sweep.points(), cores))
        check_servers([h.endpoint for h in hosts if h.endpoint.name not in (dead or {})], self.runner,
                      recorder.directory, recorder.environment["fio"])
        first = hosts[0]
        layout = Layout(first.layout, first.devices, first.targets, first.backend,
                        f"{first.layout} on each of {len(hosts)} host(s)")
        try:
            recorder.sweep(layout, [], phase=phase, transport=transport)
        finally:
            self.said += transport.notes


class EmulatedHosts(Hosts):
    """Emulated hosts, each a network namespace with its own capped array and fio server."""

    backend = "loop"

    def check(self, names: Sequence[str] = (), workloads: Sequence = ()) -> None:
        """Also ``SUBNET``: a private range no address or route of this machine is in (reading only)."""
        super().check(names, workloads)
        netns.check_free(self.spec.subnet, self.system)

    def words(self) -> str:
        return (f"{max(self.spec.hosts)} emulated host(s), each {self.array.devices} emulated device(s) (capped loop "
                f"devices), {caps_words(self.array)}")

    def creates(self) -> list[str]:
        link = f", its link capped at {rate(self.spec.link_bps)} of frames (tc tbf)" if self.spec.link_bps else ""
        return [f"{max(self.spec.hosts)} emulated host(s) in {self.spec.subnet}, made anew for each storage: each a "
                f"network namespace with a veth link{link}, {self.array.devices} loop device(s) of "
                f"{size(self.array.device_size)} held at {caps_words(self.array)} (a cgroup), and a fio server"]

    def commands(self, todo: Sequence[str]) -> list[str]:
        return [f"# storage {STORAGES[name]} ({name}): the hosts measured uncapped, then fio --client to each "
                f"host's server, on {', '.join(map(str, self.spec.hosts))} host(s) at once" for name in todo]

    def layouts(self, names: Sequence[str]) -> tuple[list[str], list[str]]:
        """The layout of each storage asked for (``STORAGE``: what its rows name), the hosts' own (local) first:
        the baseline of every prediction."""
        return [STORAGE[s] for s in sorted(self.spec.storage, key=lambda s: s != LOCAL)], []

    def swept(self, name: str, label: str, recorder, phase: str = "measure") -> None:
        """Layout ``name``'s storage on freshly made hosts, measured uncapped first and held to what they carry,
        swept; their fio servers' logs in ``servers/<storage>`` (a later build's ``<storage>-build<k>``)."""
        storage = STORAGES[name]
        with EmulatedCluster(max(self.spec.hosts), self.array, runner=self.runner, link_bps=self.spec.link_bps,
                             log_dir=recorder.directory / "servers" / (storage + label[len(name):]),
                             subnet=self.spec.subnet, storage=storage) as emulated:
            caps, carried, said = harness.hold_cluster(emulated, self.spec.sweep, cap_fit_policy(self.array.cap_fit),
                                                       recorder.directory, self.runner)
            self.said += said
            self._sweep(recorder, [Target(Endpoint(h.name, h.host.address, h.port), h.layout, h.targets, h.devices,
                                          caps, h.host.link, emulated.network_bw_bytes, asked=self.array.rw_caps(),
                                          carried={d: by_host[h.name] for d, by_host in carried.items()})
                                   for h in emulated.hosts], phase)
        self.said += self.link_notes()

    def link_notes(self) -> list[str]:
        """What the report says of the links capped (``LINK_BPS``), per storage measured."""
        if self.spec.link_bps is None:
            return []
        notes = [f"Each host's link was capped at {rate(self.spec.link_bps)} of frames (tc tbf), which carry "
                 f"{rate(netns.payload_bps(self.spec.link_bps))} of data at MTU {netns.MTU}."]
        if "nbd" in self.spec.storage:
            notes.append("Over nbd every byte crosses the host's link, so the truth per host is the smaller of its "
                         "devices x cap and that.")
        if LOCAL in self.spec.storage:
            notes.append(f"On local storage ({STORAGE[LOCAL]}) the data stays on each host's devices: fio's "
                         "client/server protocol carries only commands and results over the link (link_bytes says "
                         "how much crossed), so the link cap does not bind there.")
        return notes


class ServingHosts(Hosts):
    """Real hosts each running its own ``fio --server`` (started by hand): measured inside the mount point each
    names (``mounted``), and its local directory (``local``) when every host names one; nothing built."""

    backend = "remote"

    def words(self) -> str:
        return f"{len(self.spec.remote)} real host(s) serving fio themselves, inside the directories they name"

    def commands(self, todo: Sequence[str]) -> list[str]:
        return [f"# layout {layout}: fio --client={h.address},{h.port} inside "
                f"{h.local_dir if layout == LOCAL else h.mount_dir} (a directory of ours, removed after)"
                for layout in todo for h in self.spec.remote]


    def swept(self, name: str, label: str, recorder, phase: str = "measure") -> None:
        self._sweep(recorder, [Target(Endpoint(h.name, h.address, h.port), name,
                                      (h.local_dir if name == LOCAL else h.mount_dir,), h.devices, {},
                                      network_bw_bytes=h.link_bps if name == MOUNTED else None, backend=self.backend)
                               for h in self.spec.remote], phase)


class HostsOverSsh(Hosts):
    """Real hosts reached over SSH: each layout built on them through the same guard, undone (``over_ssh``)."""

    backend = "remote"

    def words(self) -> str:
        return f"{len(self.spec.remote)} real host(s) over SSH"

    def creates(self) -> list[str]:
        return [f"on {h.name} ({h.user}@{h.address}, ssh port {h.ssh_port}): flashscale shipped to a root-only "
                "folder, a fio server on a unix socket forwarded by the connection" for h in self.spec.remote]

    def commands(self, todo: Sequence[str]) -> list[str]:
        built = [f"# layout {layout}: built on each host's devices of {self.spec.testbed} through the guard, swept, "
                 "torn down" for layout in todo if layout in self.spec.layouts]
        return built + [f"# layout {layout}: a directory of ours in each host's {layout} directory"
                        for layout in todo if layout not in self.spec.layouts]


    def recover(self, folder: Path, contacts=None) -> list[str]:
        """A run that died left things on the hosts too: reached as this campaign reaches them."""
        with tempfile.TemporaryDirectory(prefix="flashscale-reap-", dir=manifest_dir()) as work:
            return super().recover(folder, over_ssh.contacts_of(self.spec, Path(work), self.runner))

    def run(self, todo: Sequence[str], recorder) -> list[str]:
        """Every host connected, shipped to and checked (``ssh_cluster.RemoteCluster``), its layouts swept, undone."""
        with over_ssh.remote_cluster(self.spec, recorder.directory, self.runner,
                                     recorder.environment["fio"]) as self.cluster:
            said = super().run(todo, recorder)
        return said + self.cluster.notes

    def swept(self, name: str, label: str, recorder, phase: str = "measure") -> None:
        with self.cluster.layout(name) as (served, dead):
            by_name = {s.name: s for s in served}  # a host in ``dead`` has failed rows
            self._sweep(recorder, [by_name.get(h.name) or Target(
                Endpoint(h.name, "unreachable"), name, (), 0, {}, backend=self.backend,
                network_bw_bytes=h.link_bps if name == MOUNTED else None) for h in self.spec.remote],
                phase, dead, self.cluster.windows)


def choose(spec, runner: Runner) -> Hosts:
    """The place a cluster campaign runs, decided here once: hosts over SSH (``KNOWN_HOSTS``), real hosts serving
    fio themselves (``REMOTE_HOSTS``), else emulated hosts."""
    if spec.known_hosts:
        return HostsOverSsh(runner, spec)
    return ServingHosts(runner, spec) if spec.remote else EmulatedHosts(runner, spec)
