"""fio over several hosts: ``fio --server`` on each, one ``fio --client`` run per point from the driver.

What fio 3.33 does, and what this module does about it:

- ``fio --client=A --client=B job.fio`` gives the job file to B only and drops A, exit status 0: every ``--client``
  here is followed by its own job file (``client_argv``), each host's naming its own targets.
- The JSON has no ``jobs``: each host's result is in ``client_stats`` with ``hostname`` (the address given to
  ``--client``) and ``port``. The "All clients" entry fio adds is ignored (its hostname is one host's, it has no
  latency percentiles, and it disappears with group_reporting and several job sections): flashscale's aggregate
  (``aggregate``) is the sum of the hosts' bytes over the longest host's run time.
- A host whose server died mid-run, or whose section the server could not parse, is simply missing from the JSON
  (exit status 1 or even 0): ``by_host`` turns every host without a good entry into a failure with its reason,
  never a silently missing row.
- ``probe`` asks each server for its version before the first run: a missing host is noticed then, not mid-sweep.
- A server on a unix socket (``Endpoint.socket``: ``--client=sock:PATH``, how an SSH campaign reaches a host's
  server through its forward) is named in ``client_stats`` by that path, with fio's default port.

``OnHosts`` is where a cluster campaign's fio runs: the transport of every campaign's recorder (``measure.recorder``).
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Mapping, Sequence

from . import fio, fio_output, results, truth
from ..errors import CommandError, ConfigError, FioError, UnsupportedError
from ..system import idle
from ..system.commands import Runner
from ..system.devices import System

PORT = 8765
ALL_CLIENTS = "All clients"
PROBE_JOB = "[flashscale-probe]\nioengine=null\nrw=read\nsize=1m\n"  # no I/O on any device
VERSION_LINE = re.compile(r"hostname=(?P<hostname>[^,]*),.*\bfio=(?P<version>\S+?),")
PROBE_TIMEOUT_S = 60  # a version asked of a server that answers takes well under a second
CLIENT_TIMEOUT_S = 120  # beyond the job's own time: fio's client gives up on a silent server after about 40 s


@dataclass(frozen=True)
class Endpoint:
    """A fio server the driver talks to: a name for the rows, its address and port, or its unix socket."""

    name: str
    address: str = ""
    port: int = PORT
    socket: str | None = None  # an absolute path: fio's client connects there (sock:), not to address and port

    def __post_init__(self) -> None:
        if self.socket is not None:
            if not self.name or not self.socket.startswith("/") or any(c.isspace() for c in self.socket):
                raise ConfigError(f"host {self.name!r}: socket {self.socket!r} must be an absolute path")
            return
        if not self.name or not self.address or "," in self.address:
            raise ConfigError(f"host {self.name!r} at {self.address!r}: a host needs a name and a plain address")
        if isinstance(self.port, bool) or not isinstance(self.port, int) or not 0 < self.port < 65536:
            raise ConfigError(f"host {self.name!r}: port={self.port!r} must be a TCP port number")

    @property
    def client(self) -> str:
        return f"sock:{self.socket}" if self.socket else f"{self.address},{self.port}"

    def named(self, entry: dict) -> bool:
        """Whether an entry of fio's ``client_stats`` is this server's."""
        if self.socket:
            return entry.get("hostname") == self.socket
        return entry.get("hostname") == self.address and entry.get("port") == self.port


def probe(endpoint: Endpoint, runner: Runner, folder: Path, wait_s: float = 0.0, job: str = "probe.fio") -> str:
    """The fio version ``endpoint``'s server answers with; UnsupportedError, naming the host, when it does not
    (asked again for up to ``wait_s`` seconds: a server just started may not listen yet). The job file is ``job``
    in ``folder``."""
    jobfile = Path(folder) / job
    jobfile.write_text(PROBE_JOB)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            done = runner.run(["env", "--ignore-signal=PIPE", "fio", f"--client={endpoint.client}", str(jobfile)],
                              ok_codes=range(-64, 256), timeout=PROBE_TIMEOUT_S)  # gone mid-answer: no SIGPIPE
        except CommandError as exc:  # a server that takes the connection and never answers: stopped at the timeout
            raise UnsupportedError(f"host {endpoint.name} ({endpoint.client}): its fio server does not answer: "
                                   f"{exc}") from None
        found = VERSION_LINE.search(done.stdout)
        if (done.returncode == 0 and found) or time.monotonic() >= deadline:
            break
        time.sleep(0.2)
    if done.returncode != 0 or found is None:
        said = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no answer"]
        raise UnsupportedError(f"host {endpoint.name} ({endpoint.client}): its fio server does not answer "
                               f"(exit status {done.returncode}: {said[0]}); start `fio --server` there")
    return found["version"]


def check_servers(endpoints: Sequence[Endpoint], runner: Runner, folder: Path, version: str,
                  wait_s: float = 5.0) -> dict[str, str]:
    """Every server answers and runs ``version``; UnsupportedError names each host that does not."""
    problems, versions = [], {}
    for endpoint in endpoints:
        try:
            versions[endpoint.name] = probe(endpoint, runner, folder, wait_s)
        except UnsupportedError as exc:
            problems.append(str(exc))
            continue
        if versions[endpoint.name] != version:
            problems.append(f"host {endpoint.name} runs {versions[endpoint.name]}, the driver {version}: "
                            "the client/server protocol needs the same fio on both sides")
    if problems:
        raise UnsupportedError("; ".join(problems))
    return versions


def client_argv(jobfiles: Mapping[Endpoint, Path], output: Path) -> list[str]:
    """``fio --client=A job_A --client=B job_B ... --output-format=json``: each host with its own job file.

    fio runs with SIGPIPE ignored (``env --ignore-signal=PIPE``): a host whose connection closes mid-run (its server
    or the SSH connection carrying it died) would otherwise kill the client with SIGPIPE, and every other host's
    result with it; ignored, fio reads the error, drops that host and reports the others."""
    argv = ["env", "--ignore-signal=PIPE", "fio", "--output-format=json", f"--output={output}"]
    for endpoint, jobfile in jobfiles.items():
        argv += [f"--client={endpoint.client}", str(jobfile)]
    return argv


def run(jobs: Mapping[Endpoint, fio.FioJob], outdir: Path, runner: Runner) -> dict[str, dict | str]:
    """Run one point on every host at once; each host's fio result, or the reason it has none.

    ``outdir`` (new) keeps ``job-<host>.fio``, ``fio.json`` and ``fio.stderr``."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=False)
    jobfiles = {}
    for endpoint, job in jobs.items():
        jobfiles[endpoint] = outdir / f"job-{endpoint.name}.fio"
        jobfiles[endpoint].write_text(fio.render(job))
    output = outdir / "fio.json"
    timeout = max(j.runtime_s + j.ramp_s for j in jobs.values()) + CLIENT_TIMEOUT_S
    done = runner.run(client_argv(jobfiles, output), ok_codes=range(-64, 256), timeout=timeout)  # killed: no JSON
    (outdir / "fio.stderr").write_text(done.stderr + done.stdout)
    status = f"fio exited with status {done.returncode}"
    said = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()][-2:]
    if not output.exists() or not output.read_text().strip():
        return {e.name: f"no result: {status}, no JSON ({'; '.join(said) or 'nothing said'})" for e in jobs}
    data = fio_output.load_output(output.read_text(), source=str(output))
    return by_host(data, list(jobs), f"{status}{': ' + '; '.join(said) if said and done.returncode else ''}")


def by_host(data: dict, endpoints: Sequence[Endpoint], status: str = "") -> dict[str, dict | str]:
    """Each host's entries of ``client_stats`` as a fio result ``fio_output.parse`` reads, or why it has none."""
    entries = [e for e in data.get("client_stats", []) if e.get("jobname") != ALL_CLIENTS]
    out: dict[str, dict | str] = {}
    for endpoint in endpoints:
        own = [e for e in entries if endpoint.named(e)]
        result = {"fio version": data.get("fio version", ""), "jobs": own}
        try:
            if not own:
                raise FioError("fio returned no result for this host")
            fio_output.validate(result, source=f"host {endpoint.name}")
        except FioError as exc:
            out[endpoint.name] = f"{exc}{' (' + status + ')' if status else ''}"
            continue
        out[endpoint.name] = result
    return out


def aggregate(rows: Sequence[dict]) -> dict:
    """The cluster's row of one point from its hosts' rows: bytes summed over the longest run time, ``host`` all.

    Latency is not aggregated (NaN): each host's own row has it."""
    runtime_s = max(r["runtime_s"] for r in rows)
    io = {d: sum(r[f"{d}_bw_bytes"] * r["runtime_s"] for r in rows) for d in ("read", "write")}
    nan = float("nan")
    return {"bw_bytes": (io["read"] + io["write"]) / runtime_s, "read_bw_bytes": io["read"] / runtime_s,
            "write_bw_bytes": io["write"] / runtime_s,
            "iops": sum(r["iops"] * r["runtime_s"] for r in rows) / runtime_s, "runtime_s": runtime_s,
            "io_bytes": int(sum(r["io_bytes"] for r in rows)), "devices": int(sum(r["devices"] for r in rows)),
            **{k: nan for k in ("clat_mean_ns", "clat_p50_ns", "clat_p99_ns", "clat_p999_ns", "clat_p9999_ns",
                                "clat_stddev_ns", "lat_mean_ns")},
            "fio_version": rows[0]["fio_version"]}


ALL = "all"  # the ``host`` of the rows that aggregate every host of a run


@dataclass(frozen=True)
class Target:
    """One host of a cluster's layout: where its server is, what its jobs name, its devices, caps and link."""

    endpoint: Endpoint
    layout: str
    targets: tuple[str, ...]
    devices: int
    caps: dict
    link: str | None = None  # the emulated host's link, whose bytes are counted
    network_bw_bytes: float | None = None  # the data per second its link carries, when this layout's data crosses it
    backend: str = "loop"
    asked: dict = field(default_factory=dict)  # the caps per rw asked, where ``caps`` were lowered to fit the harness
    carried: dict = field(default_factory=dict)  # direction -> what the host carried with its caps lifted

    name = property(lambda self: self.endpoint.name)  # the host's, as its rows name it
    socket = property(lambda self: self.endpoint.socket)  # where its server is reached, over SSH (else None)


def carried(by_direction: dict, rw: str | None) -> float:
    """What the harness carried uncapped (``by_direction``) in ``rw``'s direction; NaN unmeasured or for a mixed rw."""
    directions = fio_output.DIRECTIONS.get(rw, ())
    return float(by_direction.get(directions[0], float("nan"))) if len(directions) == 1 else float("nan")


class OnHosts:
    """fio run through its client on the first ``count`` of ``hosts`` at once (``at`` moves the count and tells
    ``before``: the predictions), each host's row and the cluster's from one run; a host that no longer answers
    (``dead``: why) failed at every later run. ``windows`` gets each run's raw folder, start and end (a real host's
    monitor samples go by them); ``cpu_latency_us``: this machine's CPUs held (None: the hosts' own)."""

    def __init__(self, hosts: Sequence[Target], counts: Sequence[int], directory: Path, runner: Runner, *,
                 cpu_latency_us: int | None, before: Callable[[list[Target]], str | None] | None = None,
                 dead: Mapping[str, str] | None = None, windows: list | None = None):
        self.hosts, self.counts, self.directory, self.runner = list(hosts), tuple(counts), Path(directory), runner
        self.cpu_latency_us, self.before, self.windows = cpu_latency_us, before, windows
        self.dead = dict(dead or {})  # host name -> why it no longer answers
        self.system = System(runner=runner)
        self.notes: list[str] = []
        self.now = self.hosts

    def at(self, count: int, state: bool = True) -> int:
        """The runs from now on are on the first ``count`` hosts (``state``: told to ``before`` first)."""
        self.now = self.hosts[:count]
        said = self.before(self.now) if state and self.before else None
        self.notes += [said] if said else []
        return count

    def run(self, job: fio.FioJob, raw: Path, shared: dict) -> list[dict]:
        """One run of ``job`` (its targets each host's own) on the hosts at once: each host's row and the cluster's,
        last; ``shared`` the columns every row of the run has (``raw_dir``, ``rep``, ``point``, ``phase``...)."""
        hosts = self.now
        jobs = {h.endpoint: replace(job, targets=h.targets) for h in hosts}
        live = {e: j for e, j in jobs.items() if e.name not in self.dead}
        before = {h.endpoint.name: self.system.link_bytes(h.link) for h in hosts if h.link}
        begun, started = time.time(), results.now()
        with idle.held(self.cpu_latency_us) as latency_us:
            try:
                outcome = run(live, self.directory / raw, self.runner) if live else {}
            except CommandError as exc:  # the client itself failed (its time ran out): every host's run failed
                outcome = {e.name: str(exc) for e in live}
        if self.windows is not None:
            self.windows.append({"raw_dir": str(raw), "layout": hosts[0].layout, "point": shared["point"],
                                 "rep": shared["rep"], "start": begun, "end": time.time()})
        outcome.update({name: f"its fio server stopped answering earlier: {why}" for name, why in self.dead.items()
                        if name in {e.name for e in jobs}})
        rows = [self._row(h, job, outcome[h.endpoint.name], before,
                          {**shared, "started_at": started, "hosts": len(hosts), "cpu_latency_us": latency_us})
                for h in hosts]
        rows.append(self._cluster_row(rows, hosts))
        self._forget_silent([h for h in hosts if isinstance(outcome[h.endpoint.name], str)])
        return rows

    def _row(self, host: Target, job: fio.FioJob, result, before: dict, shared: dict) -> dict:
        direction = fio_output.DIRECTIONS[job.rw][0]
        network = host.network_bw_bytes
        row = {**shared, "host": host.endpoint.name, "layout": host.layout, "devices": host.devices, "rw": job.rw,
               "bs": job.bs, "numjobs": job.numjobs, "jobs_per_host": job.numjobs, "iodepth": job.iodepth,
               "backend": host.backend, "cap_bps": host.caps.get(direction, float("nan")),
               "cap_asked_bps": (host.asked or host.caps).get(direction, float("nan")),
               "harness_bw_bytes": carried(host.carried, job.rw),
               "network_bw_bytes": float("nan") if network is None else float(network)}
        if isinstance(result, str):
            return {**row, **results.failed(result)}
        after = self.system.link_bytes(host.link) if host.link else None
        row = {**row, **fio_output.parse(result), "status": "ok", "error": None,
               "link_bytes": after - before[host.endpoint.name] if after is not None else None}
        return {**row, **truth.evidence(row, host.caps, network)}

    @staticmethod
    def _cluster_row(rows: list[dict], hosts: list[Target]) -> dict:
        links = [h.network_bw_bytes for h in hosts]
        network = None if None in links else float(sum(links))  # one link per host
        base = {**rows[0], "host": ALL, "numjobs": sum(r["numjobs"] for r in rows), "link_bytes": None,
                "harness_bw_bytes": sum(r["harness_bw_bytes"] for r in rows),
                "devices": sum(r["devices"] for r in rows),
                "network_bw_bytes": float("nan") if network is None else network}
        failed = [r["host"] for r in rows if r["status"] != "ok"]
        if failed:
            return {**base, **results.failed(f"{len(failed)} of {len(rows)} hosts failed: {', '.join(failed)}")}
        row = {**base, **aggregate(rows), "status": "ok", "error": None}
        return {**row, **truth.evidence(row, hosts[0].caps, network)}  # all hosts' devices x cap, or links

    def _forget_silent(self, failed: list[Target]) -> None:
        """Probe each host that failed again; one that no longer answers is left out of every later run."""
        for host in failed:
            if host.endpoint.name in self.dead:
                continue
            try:
                probe(host.endpoint, self.runner, self.directory)
            except UnsupportedError as exc:
                self.dead[host.endpoint.name] = str(exc)
                self.notes.append(f"Host {host.endpoint.name} stopped answering: {exc}. Its later points are "
                                  "recorded as failed; the other hosts' rows are kept.")
