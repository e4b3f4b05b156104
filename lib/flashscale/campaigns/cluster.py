"""A cluster campaign: the same sweep on 1..H hosts at once, one row per host and point and one for the cluster.

    spec = ClusterSpec.from_parameters(CAMPAIGN="cluster", HOSTS=[1, 2], DEVICES=2, ...)
    result = run(spec)          # result.table, result.notes, result.directory

Emulated (the default): ``arrays.emulated_cluster.EmulatedCluster`` makes max(HOSTS) hosts, each a network namespace with its
own capped array and fio server, once for each storage in ``STORAGE``: ``local`` (layout ``jbod``: each host's own
xfs; truth hosts x devices x cap) and ``nbd`` (layout ``nbd``: each host's devices served over its link, so every
byte crosses it; truth hosts x the smaller of devices x cap and the data the link carries, ``LINK_BPS`` of frames).
The tax of the network storage is measured against the local one (``analysis.cluster_numbers.tax``). Local storage is
measured first: one host alone on it is the baseline of every prediction.

Predicted before measuring: before each host count of each storage is measured, the campaign states what the
cluster and each host should deliver at every point (``analysis.cluster_numbers.predict_hosts``), from one host measured
alone on its own storage (the 1-host rows of ``local``: the devices' curve is a host's), with each host's link a
term where the data crosses it (``nbd``: the data a link carries, as the truth counts it), and appends it with
``predicted_at`` to ``predictions.csv`` (``result.predictions``); a layout and host count already there is kept as it
was stated. Nothing is predicted before one host was measured alone (``HOSTS`` without 1: a note says so).

Real hosts over SSH (``KNOWN_HOSTS`` given; hosts from ``REMOTE_HOSTS`` or an Ansible ``INVENTORY``'s
``HOST_GROUP``): ``campaigns.ssh_cluster`` connects to every host, ships flashscale there, checks each host before anything
runs, builds each of ``LAYOUTS`` on the devices the hosts test bed (``TESTBED``) names by identity and ``CONFIRM``
confirms, through the same guard, starts a fio server on a unix socket of each host's root-only place reached
through a forward of the connection (no TCP port: the emulated hosts' servers, each in its own network namespace,
stay on TCP), and undoes everything; ``local`` and ``mounted`` are a directory of ours in each host's
``local_dir`` and ``mount_dir``.

Real hosts without SSH (``REMOTE_HOSTS`` and no ``KNOWN_HOSTS``: each host's own ``fio --server`` at address and
port, started by hand): flashscale measures inside the mount point each host names (layout ``mounted``), and in its
local directory (layout ``local``) when every host names one, and only there; nothing is built on such a host.
Anyone who reaches such a server's port can run any job on it as root: prefer SSH.

Where it runs is a place (``campaigns.hosts``: emulated hosts, hosts serving fio, hosts over SSH; the interface
every campaign's place implements, ``campaigns.place.Place``), picked once by ``hosts.choose``. The campaign folder
is written through ``measure.campaign_folder``, as every campaign's is.

Rows go to ``data/campaigns/<name>/rows.jsonl`` as each point finishes (``results.parquet`` is rebuilt from them).
``host`` is the host's name, or ``all`` for the cluster's own aggregate (``measure.fio_client.aggregate``); ``hosts``
is how many hosts ran the point; ``status`` is ``ok`` or ``failed``, with ``error`` (as a campaign's failed rows, with
NaN numbers) saying why. A host that fails is probed
again; one that no longer answers is recorded as failed, with the reason, at every later point.
"""
from __future__ import annotations

import os
import platform
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence


from ..arrays.emulated_cluster import STORAGE
from ..analysis import cluster_numbers as cluster_analysis
from ..arrays.emulated import ArraySpec
from ..arrays.layouts import Options
from . import over_ssh as remote, parameters, preregistered
from .hosts import Target, choose as choose_place
from ..system.host import cores as host_cores
from ..errors import AnalysisError, ConfigError, RefusedError, UnsupportedError
from ..measure import campaign_folder, fio_client as fio_cluster, fio_output, precondition, results, resume
from ..measure.fio_client import Endpoint
from ..measure.results import CampaignResult
from ..measure.progress import Progress
from ..measure.sweep import Sweep
from ..system.commands import Runner
from ..system.devices import System
from ..system import idle, provenance
from ..system.ssh import host_names
from ..system.netns import SUBNET
from ..measure import truth

ALL = cluster_analysis.ALL
REMOTE_KEYS = ("name", "address", "port", "mount_dir", "devices", "local_dir", "link_bps", "ssh_port", "user")
REFUSED_ON_REMOTE = ("device", "devices_path", "layout", "erase", "testbed", "confirm")


@dataclass(frozen=True)
class RemoteHost:
    """A real host: reached over SSH (``ssh_port``, ``user``) when the campaign gives ``KNOWN_HOSTS``, else its own
    ``fio --server`` at ``port``, measured inside ``mount_dir`` only."""

    name: str
    address: str
    mount_dir: str | None = None
    port: int = fio_cluster.PORT
    devices: int = 1  # devices under the mount point, for efficiency against N x baseline
    local_dir: str | None = None  # a local file system on the host: the reference of the mount point's tax
    link_bps: int | None = None  # the data per second the host's network link carries: the network's ceiling
    ssh_port: int = 22
    user: str = "root"

    def __post_init__(self) -> None:
        host_names.host_name(self.name)
        host_names.host_name(self.address, f"host {self.name}: address")

    @classmethod
    def from_mapping(cls, entry: dict) -> "RemoteHost":
        asked = sorted(set(entry) & set(REFUSED_ON_REMOTE))
        if asked:
            raise RefusedError(f"remote host {entry.get('name')!r}: {', '.join(asked)} refused. On a remote host "
                               "flashscale measures inside an existing mount point only (mount_dir): it cannot run "
                               "the guard there, so it never touches a raw device, erases or builds a layout")
        unknown = sorted(set(entry) - set(REMOTE_KEYS))
        if unknown or not entry.get("name") or not entry.get("address"):
            raise ConfigError(f"remote host {entry!r}: give name, address, and mount_dir, local_dir, devices, "
                              f"link_bps, ssh_port, user (or port: a fio server you started); unknown: {unknown}")
        link = entry.get("link_bps")
        if link is not None and (isinstance(link, bool) or not isinstance(link, (int, float)) or link <= 0):
            raise ConfigError(f"remote host {entry.get('name')!r}: link_bps={link!r} must be a positive number of "
                              "bytes/s, or left out")
        return cls(**entry)


# An emulated host's array is smaller than the quickstart's: H hosts' arrays share this machine's memory.
CLUSTER_ARRAY = {"devices": 2, "device_size": 2**30}


@dataclass(frozen=True)
class ClusterSpec:
    name: str
    hosts: tuple[int, ...] = (1, 2)
    array: ArraySpec = field(default_factory=lambda: ArraySpec(**CLUSTER_ARRAY))
    sweep: Sweep = field(default_factory=Sweep)
    link_bps: int | None = None
    subnet: str = SUBNET
    storage: tuple[str, ...] = ("local",)  # the emulated hosts' storage, each in turn (STORAGE)
    remote: tuple[RemoteHost, ...] = ()
    data_dir: str = "data/campaigns"
    # over SSH (campaigns.ssh_cluster): the hosts, how they are reached, what is built on them
    inventory: str | None = None
    host_group: str = "all"
    known_hosts: str | None = None
    ssh_identity: str | None = None
    ssh_config: str | None = None
    layouts: tuple[str, ...] = ()
    testbed: str | None = None
    confirm: object = None
    wipe: object = False
    options: Options = field(default_factory=Options)
    clock_tolerance_s: float = 1.0

    def __post_init__(self) -> None:
        parameters.check_campaign_name(self.name)
        counts = tuple(self.hosts)
        if not counts or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in counts):
            raise ConfigError(f"hosts={list(counts)!r} must list host counts >= 1")
        remote.resolve_hosts(self, RemoteHost.from_mapping)
        if self.remote and max(counts) > len(self.remote):
            raise ConfigError(f"hosts={list(counts)} but only {len(self.remote)} remote hosts are named")
        storage = (self.storage,) if isinstance(self.storage, str) else tuple(self.storage)
        wrong = [s for s in storage if s not in STORAGE]
        if not storage or wrong or len(set(storage)) != len(storage):
            raise ConfigError(f"storage={list(storage)!r} must list each of {', '.join(STORAGE)} at most once "
                              f"(wrong: {wrong})")
        if "nbd" in storage and self.sweep.nrfiles:
            raise ConfigError(f"storage nbd serves whole devices, and rw={list(self.sweep.rw)} makes files in a "
                              "file system: measure metadata on local storage")
        if self.sweep.precision is not None or self.sweep.batch_reps or self.sweep.builds != 1 or self.sweep.bracket:
            raise ConfigError(f"precision={self.sweep.precision!r}, batch_reps={self.sweep.batch_reps!r}, "
                              f"builds={self.sweep.builds!r}, bracket={self.sweep.bracket!r}: a cluster campaign runs "
                              "REPETITIONS on every host count (not yet PRECISION, BATCH_REPS, BUILDS or BRACKET)")
        if self.remote and storage != ("local",):
            raise ConfigError(f"storage={list(storage)} is for the emulated hosts; a real host measures its "
                              "mount_dir (and its local_dir, when it names one)")
        locals_named = {h.local_dir is not None for h in self.remote}
        if len(locals_named) > 1:
            raise ConfigError("give local_dir for every remote host or for none: the tax compares the same hosts")
        object.__setattr__(self, "hosts", counts)
        object.__setattr__(self, "storage", storage)

    @classmethod
    def from_parameters(cls, **p) -> "ClusterSpec":
        """From a notebook's UPPER_CASE parameters, checked first as a campaign's are (``parameters.PARAMETERS``
        says which field each sets: the array's, the sweep's, and the cluster's own, ``HOSTS``, ``STORAGE``,
        ``LINK_BPS``, ``SUBNET``, ``REMOTE_HOSTS``, ``DATA_DIR``); parameters of the notebook itself are ignored."""
        parameters.check(p, PARTS)
        parts = parameters.split(p, PARTS)
        own = parts["spec"]
        remote = tuple(RemoteHost.from_mapping(dict(h)) for h in own.pop("remote", ()))
        return cls(name=p.get("CAMPAIGN", "cluster"), array=ArraySpec(**{**CLUSTER_ARRAY, **parts["array"]}),
                   sweep=Sweep(**parts["sweep"]), remote=remote, options=Options(**parts["options"]), **own)


# The dataclass of each part of the parameters (``parameters.PARTS``): the layouts' options are for SSH hosts.
PARTS = {"array": ArraySpec, "sweep": Sweep, "options": Options, "spec": ClusterSpec}


def run(spec: ClusterSpec, runner: Runner | None = None) -> CampaignResult:
    """Run the cluster campaign; every host's rows and the cluster's, failed points included with their reason."""
    if resume.reanalyzing():  # flashscale run --reanalyze: the stored campaign, nothing measured
        stored = resume.stored_campaign(campaign_folder.data_root(spec.data_dir) / spec.name, asdict(spec))
        return CampaignResult(*stored)
    runner = runner or Runner()
    place = choose_place(spec, runner)  # where: emulated hosts, hosts serving fio, hosts over SSH
    place.check()
    directory = campaign_folder.fresh_directory(campaign_folder.data_root(spec.data_dir) / spec.name)
    version = runner.run(["fio", "--version"]).stdout.strip()
    run_id = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    env = {"hostname": platform.node(), "kernel": platform.release(), "fio": version, "cpus": os.cpu_count(),
           "software": provenance.software(), **place.facts()}
    campaign_folder.write_campaign(directory, run_id, asdict(spec), env)
    todo, _ = place.layouts(spec.layouts)
    sweep = _Sweep(spec, directory, runner, run_id, version,
                   Progress(spec.sweep, len(todo), directory, repeat=len(spec.hosts)))
    said: list[str] = []
    try:
        with place.opened(directory):
            said = place.run(todo, sweep)
    finally:
        table = results.rebuild_table(directory) if campaign_folder.has_rows(directory) else None
    notes = sweep.notes + said
    campaign_folder.write_notes(directory, notes)
    return CampaignResult(table, directory, place.backend, notes)


def _carried(carried: dict, rw: str) -> float:
    """What a host carried in ``rw``'s one direction with its caps lifted; NaN for a mixed rw or none measured."""
    directions = fio_output.DIRECTIONS.get(rw, ())
    return float(carried.get(directions[0], float("nan"))) if len(directions) == 1 else float("nan")


def rows_point(job, point: dict | None) -> str:
    """The ``point`` a run's rows name: the job's, or the precondition's."""
    return job.point if point is not None else precondition.point(job)


def state(directory: Path, hosts: Sequence[Target], points: Sequence[dict], cores: float | None) -> str | None:
    """Before ``hosts`` (one layout) are measured: what they should deliver at every point, appended to
    ``predictions.csv`` with the time (``analysis.cluster_numbers.predict_hosts``, from ``analysis.cluster_numbers.host_curve`` of
    the rows measured so far; ``cores``: this machine's, shared by the hosts, or None), each host's link a term where
    its data crosses it. Kept as it was when this layout and host count was stated before. Nothing when no host was
    measured alone on its own storage first: a sentence saying so (none for that baseline itself)."""
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


class _Sweep:
    """The points on 1..H hosts; each host's row and the cluster's appended as soon as a point finishes."""

    def __init__(self, spec: ClusterSpec, directory: Path, runner: Runner, run_id: str, version: str,
                 progress: Progress):
        self.spec, self.directory, self.runner, self.run_id, self.version = spec, directory, runner, run_id, version
        self.progress = progress
        self.system = System(runner=runner)
        self.dead: dict[str, str] = {}  # host name -> why it no longer answers
        self.windows: list | None = None  # each run's raw folder and times, for a real host's monitor samples
        self.notes: list[str] = []
        # the emulated hosts share this machine's CPUs; a real host's are its own, unknown here
        self.cores = None if spec.remote else host_cores()

    def run(self, hosts: list[Target], dead: dict[str, str] | None = None, windows: list | None = None) -> None:
        """Every point on 1..H of ``hosts`` (one layout: their servers are fresh); ``dead``: hosts already known not
        to answer, with the reason; ``windows`` gets each run's raw folder, start and end (``time.time``)."""
        self.dead, self.windows = dict(dead or {}), windows
        raw = campaign_folder.raw_dir(hosts[0].layout)
        fio_cluster.check_servers([h.endpoint for h in hosts if h.endpoint.name not in self.dead], self.runner,
                                  self.directory, self.version)
        if self.spec.sweep.precondition and not self.spec.sweep.nrfiles:  # every file the reads open, written first
            self._point(hosts, None, raw / precondition.PHASE, rep=0, warmup=False, phase=precondition.PHASE)
        for count in self.spec.hosts:
            self._state(hosts[:count])
            for point in self.spec.sweep.points():
                for rep, warmup in self.spec.sweep.reps():
                    self._point(hosts[:count], point, raw / f"hosts{count}", rep=rep, warmup=warmup,
                                phase="measure")
        self.progress.layout_done(hosts[0].layout)

    def run_served(self, served: Sequence, dead: dict[str, str], windows: list) -> None:
        """One layout on real hosts over SSH (``campaigns.ssh_cluster.Served``, in the campaign's order of hosts): each
        reached at its forwarded unix socket; a host in ``dead`` (no socket) gets failed rows."""
        self.run([Target(Endpoint(s.name, socket=s.socket) if s.socket else Endpoint(s.name, "unreachable"),
                         s.layout, s.targets, s.devices, {},
                         network_bw_bytes=s.link_bps if s.layout == "mounted" else None, backend="remote")
                  for s in served], dead, windows)

    def _state(self, hosts: list[Target]) -> None:
        said = state(self.directory, hosts, self.spec.sweep.points(), self.cores)
        self.notes += [said] if said else []

    def _jobs(self, hosts: list[Target], point: dict | None) -> dict:
        if point is None:
            return {h.endpoint: precondition.job(self.spec.sweep, h.targets) for h in hosts}
        return {h.endpoint: self.spec.sweep.job(point, h.targets) for h in hosts}

    def _point(self, hosts: list[Target], point: dict | None, raw: Path, **how) -> None:
        jobs = self._jobs(hosts, point)
        first = next(iter(jobs.values()))
        if point is not None:
            raw = raw / first.point / f"rep{how['rep']}"
        live = {e: j for e, j in jobs.items() if e.name not in self.dead}
        self.progress.started(hosts[0].layout, first.point if point else precondition.point(first),
                              f"rep{how['rep']} on {len(hosts)} host(s)")
        before = {h.endpoint.name: self.system.link_bytes(h.link) for h in hosts if h.link}
        started = results.now()
        begun = time.time()
        with idle.held(None if self.spec.remote else self.spec.sweep.cpu_latency_us) as latency_us:  # this machine's
            outcome = fio_cluster.run(live, self.directory / raw, self.runner) if live else {}
        if self.windows is not None:
            self.windows.append({"raw_dir": str(raw), "layout": hosts[0].layout, "point": rows_point(first, point),
                                 "rep": how["rep"], "start": begun, "end": time.time()})
        outcome.update({name: f"its fio server stopped answering earlier: {why}" for name, why in self.dead.items()
                        if name in {e.name for e in jobs}})
        rows = [{**self._row(h, jobs[h.endpoint], outcome[h.endpoint.name], raw, started, len(hosts), before, **how),
                 "cpu_latency_us": latency_us} for h in hosts]
        rows.append(self._cluster_row(rows, hosts))
        self._forget_silent([h for h in hosts if isinstance(outcome[h.endpoint.name], str)])
        campaign_folder.append_rows(self.directory, rows)
        self.progress.finished(rows[-1])  # the cluster's row

    def _row(self, host: Target, job, result, raw: Path, started: str, count: int, before: dict, *, rep: int,
             warmup: bool, phase: str) -> dict:
        point = job.point if phase == "measure" else precondition.point(job)
        network = host.network_bw_bytes
        row = {"campaign": self.spec.name, "host": host.endpoint.name, "hosts": count, "layout": host.layout,
               "devices": host.devices, "rw": job.rw, "bs": job.bs, "numjobs": job.numjobs,
               "jobs_per_host": job.numjobs, "iodepth": job.iodepth, "rep": rep, "warmup": warmup,
               "run_id": self.run_id, "point": point, "backend": host.backend,
               "cap_bps": host.caps.get(fio_output.DIRECTIONS[job.rw][0], float("nan")) if host.caps else float("nan"),
               "cap_asked_bps": (host.asked or host.caps).get(fio_output.DIRECTIONS[job.rw][0], float("nan")),
               "harness_bw_bytes": _carried(host.carried, job.rw),
               "network_bw_bytes": float("nan") if network is None else float(network),
               "raw_dir": str(raw), "started_at": started, "phase": phase}
        if isinstance(result, str):
            return {**row, **results.failed(result)}
        after = self.system.link_bytes(host.link) if host.link else None
        row = {**row, **fio_output.parse(result), "status": "ok", "error": None,
               "link_bytes": after - before[host.endpoint.name] if after is not None else None}
        return {**row, **truth.evidence(row, host.caps, network)}

    def _cluster_row(self, rows: list[dict], hosts: list[Target]) -> dict:
        links = [h.network_bw_bytes for h in hosts]
        network = None if None in links else float(sum(links))  # one link per host
        base = {**rows[0], "host": ALL, "numjobs": sum(r["numjobs"] for r in rows), "link_bytes": None,
                "harness_bw_bytes": sum(r["harness_bw_bytes"] for r in rows),
                "devices": sum(r["devices"] for r in rows),
                "network_bw_bytes": float("nan") if network is None else network}
        failed = [r["host"] for r in rows if r["status"] != "ok"]
        if failed:
            return {**base, **results.failed(f"{len(failed)} of {len(rows)} hosts failed: {', '.join(failed)}")}
        row = {**base, **fio_cluster.aggregate(rows), "status": "ok", "error": None}
        return {**row, **truth.evidence(row, hosts[0].caps, network)}  # all hosts' devices x cap, or links

    def _forget_silent(self, failed: list[Target]) -> None:
        """Probe each host that failed again; one that no longer answers is left out of every later point."""
        for host in failed:
            try:
                fio_cluster.probe(host.endpoint, self.runner, self.directory)
            except UnsupportedError as exc:
                self.dead[host.endpoint.name] = str(exc)
                self.notes.append(f"Host {host.endpoint.name} stopped answering: {exc}. Its later points are "
                                  "recorded as failed; the other hosts' rows are kept.")
