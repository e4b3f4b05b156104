"""The driver's side of a cluster campaign over real hosts reached by SSH (``KNOWN_HOSTS`` given).

    with RemoteCluster(hosts, plan, runner, directory) as cluster:   # connected, flashscale shipped, every host checked
        for name in plan.order(hosts):
            with cluster.layout(name) as (served, dead):              # built, a fio server each, forwarded, monitored
                sweep.run(...)                                         # fio --client=sock:<the forwarded socket>

Each host gets, in parallel (one thread per host): a master SSH connection (``system.ssh.client.Link``), flashscale shipped
as one zip to a fresh folder of its root-only place and checked by its SHA-256 before every run
(``system.ssh.shipped``), and every step of the campaign run there by that zip (``arrays.host_side``): the check, each
layout built through the guard on the devices the hosts test bed names by identity and the user confirmed, a fio
server on a unix socket of the host's root-only place forwarded to one of ours (``system.ssh.forwarded``: no TCP port
anywhere), the monitor, the facts, and the teardown. Before anything is built every host is checked
(``problems``), a fio server started there and asked its version through the forward, and the campaign refuses,
naming each host and reason, when one falls short.

What is made is recorded before it exists: here, per host, a manifest holding the master connection and each fio
server's session (processes of ours) and a ``remote`` entry naming the host, the folder shipped to and the
manifests kept there, each name added before the host makes it (never how to reach the host: that is the
campaign's, ``shipped.Contacts``); on the host, those manifests. A layout's manifests are reaped at its end;
whatever a host could not undo (it stopped answering) is tried again when the campaign ends, and is left, named in
the notes, for ``flashscale reap --campaign``, which reaches the host as the campaign does.
"""
from __future__ import annotations

import contextlib
import json
import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Sequence

from ..errors import FlashscaleError, RefusedError
from ..measure import campaign_folder, fio_client as fio_cluster
from ..measure.fio_client import Target
from ..system.ssh import forwarded, shipped
from ..system import private
from ..system.commands import Runner
from ..system.devices import System
from ..system.ssh.client import Link, SshHost, SshOptions, Unreachable
from ..system.teardown import Built, Entry, Teardown, manifest_dir
from ..system.undo import make_scratch

PYTHON_MIN = (3, 10)
SPECIAL = ("local", "mounted")  # a directory of ours in the host's local_dir, or in its mount_dir


@dataclass(frozen=True)
class Plan:
    """What the hosts are to build and measure: device layouts on the hosts test bed's devices, confirmed."""

    layouts: tuple[str, ...] = ()
    testbed: dict = field(default_factory=dict)  # host name -> identities
    confirm: tuple[str, ...] = ()
    wipe: object = False
    options: dict = field(default_factory=dict)  # layouts.Options' fields
    clock_tolerance_s: float = 1.0
    fio_version: str = ""

    def confirm_for(self, host: str) -> tuple[str, ...]:
        """The confirmation one host's guard is given: its own identities confirmed, and any confirmed identity that
        no host names (which the guard refuses, as a test bed's would)."""
        everyone = {i for ids in self.testbed.values() for i in ids}
        return tuple(i for i in self.confirm if i in self.testbed.get(host, ()) or i not in everyone)


def problems(name: str, answer: dict, plan: Plan, *, root: bool, python: tuple[int, ...],
             offset_s: float, uncertainty_s: float) -> list[str]:
    """Why host ``name`` cannot run the campaign, from what it answered to ``check``; empty when it can."""
    said = []
    if tuple(python) < PYTHON_MIN:
        return [f"its python3 is {'.'.join(map(str, python))}; flashscale needs {'.'.join(map(str, PYTHON_MIN))} "
                "or newer"]
    if answer.get("fio") is None:
        said.append("fio is not installed")
    elif answer["fio"] != plan.fio_version:
        said.append(f"it runs {answer['fio']}, the driver {plan.fio_version}: fio's client/server protocol needs "
                    "the same fio on both sides")
    if answer.get("missing_programs"):
        said.append(f"it lacks {', '.join(answer['missing_programs'])}, which the campaign runs there")
    if root and answer.get("euid") != 0:
        said.append(f"flashscale logs in as uid {answer.get('euid')}, not root, and building a layout needs root")
    said += [f"it has no device {ident} ({why})" for ident, why in answer.get("missing_ids", {}).items()]
    said += [f"it cannot build {layout}: {why}" for layout, why in answer.get("missing_support", {}).items()]
    said += [f"the guard refuses {layout}: {why}" for layout, why in answer.get("refusals", {}).items()]
    if abs(offset_s) - uncertainty_s > plan.clock_tolerance_s:
        said.append(f"its clock is {offset_s:+.2f} s off this machine's, more than CLOCK_TOLERANCE_S="
                    f"{plan.clock_tolerance_s:g} (its monitor samples are placed in runs by time): set it by NTP")
    return said


@dataclass
class _Host:
    """One host of the campaign: its link, the driver's manifest of it and its ``remote`` entry, the name of its
    folder there and the agent run from it, its fio server, what it measured."""

    spec: object  # campaigns.cluster.RemoteHost
    link: Link
    teardown: Teardown
    ship: str
    entry: Entry | None = None
    agent: shipped.Agent | None = None
    offset_s: float = 0.0
    server: forwarded.Server | None = None
    erased: list[str] = field(default_factory=list)  # devices an earlier layout erased: its own signatures there

    @property
    def name(self) -> str:
        return self.link.host.name

    def remember(self, *names: str, forget: Sequence[str] = ()) -> list[str]:
        """Add manifest names to the ``remote`` entry (before the host makes them), or drop reaped ones."""
        kept = [n for n in self.entry.details.get("manifests", []) if n not in forget]
        self.teardown.amend(self.entry, manifests=[*kept, *[n for n in names if n not in kept]])
        return list(names)


class RemoteCluster(Built):
    """Context manager (``system.teardown.Built``): every host connected, shipped and checked on entry (``_build``);
    everything undone on exit, or as soon as entering fails."""

    def __init__(self, hosts: Sequence, options: SshOptions, plan: Plan, directory: Path,
                 runner: Runner | None = None, manifests: Path | None = None):
        self.specs, self.options, self.plan, self.directory = list(hosts), options, plan, Path(directory)
        self.runner = runner or Runner()
        self.system = System(runner=self.runner)
        self.manifests = manifests or manifest_dir()
        self.token = secrets.token_hex(4)
        self.hosts: list[_Host] = []
        self.lost: dict[str, str] = {}  # host name -> why it stopped answering
        self.notes: list[str] = []
        self.windows: list[dict] = []  # the sweep's runs: raw_dir, start and end (this machine's time), what ran
        self._stack = contextlib.ExitStack()
        self._pool = ThreadPoolExecutor(max_workers=max(1, min(16, len(self.specs))), thread_name_prefix="ssh")
        self.heartbeat = forwarded.Heartbeat()

    # ---- every host at once ---------------------------------------------------------------------------------
    def each(self, step: Callable, hosts: Sequence | None = None) -> dict[str, object]:
        """``step(host)`` on every host in parallel; each host's answer, or the exception it raised."""
        hosts = self.hosts if hosts is None else hosts
        futures = {h.name if isinstance(h, _Host) else h.name: self._pool.submit(self._catch, step, h) for h in hosts}
        return {name: future.result() for name, future in futures.items()}

    @staticmethod
    def _catch(step: Callable, host):
        try:
            return step(host)
        except Exception as exc:  # every host's outcome is collected; the caller decides
            return exc

    @staticmethod
    def _refuse(outcomes: dict[str, object], what: str) -> None:
        failed = {n: o for n, o in outcomes.items() if isinstance(o, BaseException)}
        if failed:
            raise RefusedError(f"{what}: " + "; ".join(f"host {n}: {o}" for n, o in failed.items()))

    # ---- entering: connect, ship, check --------------------------------------------------------------------
    def _build(self) -> None:
        control = Teardown(self.manifests / f"flashscale-ssh-{self.token}.json", self.runner, self.system)
        self._stack.callback(control.close)  # last: the sockets' folder, once every master is gone
        self.control = make_scratch(self.manifests, f"ssh-{self.token}", control, mode=0o700)
        self.contacts = shipped.Contacts({}, shipped.Zip.write(self.control))
        outcomes = self.each(self._connect, self.specs)
        self._refuse(outcomes, "the campaign refuses: not every host could be reached")
        self.check()

    def _connect(self, spec) -> _Host:
        link = Link(SshHost(spec.name, spec.address, spec.ssh_port, spec.user), self.options, self.runner,
                    self.control)
        teardown = Teardown(self.manifests / f"flashscale-ssh-{self.token}-{spec.name}.json", self.runner,
                            self.system, contacts=self.contacts)
        host = _Host(spec, link, teardown, shipped.ship_name(self.token, spec.name))
        self.hosts.append(host)  # from each thread: list.append and a new key are atomic
        self.contacts.links[spec.name] = link
        link.connect(teardown, self.control / f"flashscale-master-{host.ship[-12:]}.log")
        teardown.record("remote", name=spec.name, ship=host.ship, manifests=[])
        host.entry = teardown.entries[-1]
        return host

    def check(self) -> None:
        """Every host checked before anything is built; RefusedError naming each host and reason."""
        root = bool(self.plan.layouts)
        outcomes = self.each(lambda h: self._check(h, root))
        said = [f"host {name}: {'; '.join(o) if isinstance(o, list) else o}" for name, o in outcomes.items()
                if o and (isinstance(o, BaseException) or isinstance(o, list))]
        if said:
            raise RefusedError("the campaign refuses before anything runs: " + " | ".join(said))

    def _check(self, host: _Host, root: bool) -> list[str]:
        version = host.link.run(["python3", "-c", "import sys; print(*sys.version_info[:3], sep='.')"],
                                timeout=60, ok_codes=range(255))
        if version.returncode != 0:
            return [f"it has no python3 (flashscale runs there from a zip: {PYTHON_MIN[0]}.{PYTHON_MIN[1]} or newer, "
                    f"its standard library only): {version.stderr.strip()[-200:]}"]
        python = tuple(int(p) for p in version.stdout.split(".")[:3])
        answer = {}
        if python >= PYTHON_MIN:
            host.agent = self._install(host)
            answer = host.agent.ask("check", {
                "programs": ["fio"], "ids": list(self.plan.testbed.get(host.name, ())),
                "layouts": list(self.plan.layouts), "confirm": list(self.plan.confirm_for(host.name)),
                "wipe": self.plan.wipe, "options": self.plan.options})
        host.offset_s, uncertainty = self._clock(host)
        said = problems(host.name, answer, self.plan, root=root, python=python, offset_s=host.offset_s,
                        uncertainty_s=uncertainty)
        return said or self._try_server(host)

    @staticmethod
    def _install(host: _Host) -> shipped.Agent:
        """flashscale shipped to the host's fresh folder; a folder of that name there already is not ours: it is
        dropped from the ``remote`` entry (never removed) and the refusal goes on."""
        try:
            return shipped.install(host.link, host.teardown.contacts.zipped, host.ship)
        except RefusedError as exc:
            if private.EXISTS in str(exc):
                host.teardown.amend(host.entry, ship=None)
            raise

    def _try_server(self, host: _Host) -> list[str]:
        """A fio server started on the host and asked its version through the forward, then stopped: the path every
        layout takes; what failed, when it does."""
        said = []
        try:
            local = self._start_server(host, "probe")
            fio_cluster.probe(fio_cluster.Endpoint(host.name, socket=str(local)), self.runner, self.control,
                              wait_s=5.0, job=f"{local.stem}.fio")
        except FlashscaleError as exc:
            said = [f"its fio server cannot be reached through a unix socket forwarded by ssh (fio's --server=sock: "
                    "and OpenSSH 6.7 or newer, its sshd allowing AllowStreamLocalForwarding, are needed: no TCP port "
                    f"is opened for fio): {exc}"]
        finally:
            self._stop_server(host)
        name = self._names(host, "probe")["server"]
        if not host.agent.ask("reap", {"manifests": [name]})["problems"]:
            host.remember(forget=[name])
        return said

    def _start_server(self, host: _Host, label: str) -> Path:
        """A fio server on ``host`` for ``label`` (its manifest named in the ``remote`` entry before the host makes
        it), forwarded and kept alive by the heartbeat: the local socket."""
        name = host.remember(self._names(host, label)["server"])[0]
        host.server = forwarded.Server(host.agent, host.teardown, self.control, label)
        local = host.server.start(name, f"{host.agent.folder}/flashscale-fio-{label}.log")
        self.heartbeat.add(host.server)
        return local

    def _stop_server(self, host: _Host) -> None:
        if host.server is not None:
            self.heartbeat.discard(host.server)
            try:
                host.server.stop()
            finally:
                host.server = None

    def _clock(self, host: _Host, tries: int = 3) -> tuple[float, float]:
        """The host's clock minus this machine's, and how far that can be off (half the quickest round trip)."""
        best = None
        for _ in range(tries):
            before = time.time()
            said = host.link.run(["date", "+%s.%N"], timeout=30).stdout.strip()
            after = time.time()
            sample = (float(said) - (before + after) / 2, (after - before) / 2)
            best = sample if best is None or sample[1] < best[1] else best
        return best

    # ---- one layout on every host ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def layout(self, name: str) -> Iterator[tuple[list[Target], dict[str, str]]]:
        """Build ``name`` on every host, start its fio server and monitor, forward its port; on exit stop and undo
        them on each host. Each host that serves it is a ``Target`` (its fio server at a unix socket of ours); one
        that stops answering is given back in ``dead`` with the reason."""
        live = [h for h in self.hosts if h.name not in self.lost]
        outcomes = self.each(lambda h: self._set_up(h, name), live)
        dead = {n: f"it could not be set up for {name}: {o}" for n, o in outcomes.items()
                if isinstance(o, Unreachable)}
        dead.update({h.name: f"it stopped answering earlier: {self.lost[h.name]}" for h in self.hosts
                     if h.name in self.lost})
        served = [o for o in outcomes.values() if isinstance(o, Target)]
        try:
            wrong = {n: o for n, o in outcomes.items() if isinstance(o, BaseException) and n not in dead}
            self._refuse(wrong, f"layout {name}")
            yield served, dead
        finally:
            self.each(lambda h: self._tear_down(h, name, outcomes.get(h.name)), live)

    def _names(self, host: _Host, layout: str) -> dict[str, str]:
        base = f"flashscale-{self.token}-{host.ship[-12:]}-{layout}"
        return {"layout": f"{base}.json", "server": f"{base}-server.json", "monitor": f"{base}-monitor.json"}

    def _set_up(self, host: _Host, layout: str) -> Target:
        names, folder = self._names(host, layout), host.agent.folder
        host.remember(names["layout"])
        if layout in SPECIAL:
            where = host.spec.local_dir if layout == "local" else host.spec.mount_dir
            built = host.agent.ask("directory", {"dir": where, "manifest": names["layout"],
                                                 "devices": host.spec.devices})
        else:
            built = host.agent.ask("build", {
                "layout": layout, "ids": list(self.plan.testbed[host.name]), "wipe": self.plan.wipe,
                "confirm": list(self.plan.confirm_for(host.name)), "options": self.plan.options,
                "manifest": names["layout"], "claimed": host.erased})
            host.erased = sorted(set(host.erased) | set(built["erased"]))
        local = self._start_server(host, layout)
        host.remember(names["monitor"])
        host.agent.ask("monitor", {"manifest": names["monitor"], "targets": built["targets"], "folder": folder,
                                   "sha256": host.agent.sha256, "out": f"{folder}/flashscale-monitor-{layout}.jsonl",
                                   "log": f"{folder}/flashscale-monitor-{layout}.log"})
        facts = host.agent.ask("facts", {"targets": built["targets"]})
        raw = self.directory / "raw" / layout
        raw.mkdir(parents=True, exist_ok=True)
        (raw / f"machine-{host.name}.json").write_text(json.dumps(
            {**{k: v for k, v in facts.items() if k != "ok"}, "clock_offset_s": host.offset_s,
             "built": {k: v for k, v in built.items() if k != "ok"}}, indent=1, default=str))
        return Target(fio_cluster.Endpoint(host.name, socket=str(local)), layout, tuple(built["targets"]),
                      int(built["devices"]), {}, network_bw_bytes=host.spec.link_bps if layout == "mounted" else None,
                      backend="remote")

    def _tear_down(self, host: _Host, layout: str, outcome) -> None:
        """Stop the fio server, keep the monitor's series, undo the layout's manifests on the host; a host that does
        not answer keeps them (tried again at the end, then left to reap) and is not asked again."""
        names = self._names(host, layout)
        try:
            self._stop_server(host)
            if isinstance(outcome, Target):
                self._keep_series(host, layout)
            answer = host.agent.ask("reap", {"manifests": [names["monitor"], names["server"], names["layout"]]})
        except FlashscaleError as exc:
            self.lost[host.name] = str(exc)
            self.notes.append(f"Host {host.name}: the teardown of {layout} could not run there ({exc}); it is tried "
                              "again when the campaign ends, and `flashscale reap` undoes it once the host answers.")
            return
        if answer["problems"]:  # kept in the remote entry: tried again at the end, then left for reap
            self.notes.append(f"Host {host.name}: the teardown of {layout} left things there: "
                              f"{'; '.join(answer['problems'])}.")
            return
        host.remember(forget=list(names.values()))

    def _keep_series(self, host: _Host, layout: str) -> None:
        """The host's monitor samples of ``layout``, each put in the run it fell in (by time, the host's clock
        corrected by its measured offset): ``monitor-<host>.jsonl`` in the run's raw folder, and the campaign's
        ``monitor.jsonl`` with ``host``."""
        said = host.link.run(["cat", f"{host.agent.folder}/flashscale-monitor-{layout}.jsonl"], ok_codes=(0, 1)).stdout
        samples = [json.loads(line) for line in said.splitlines() if line.startswith("{")]
        runs = [w for w in self.windows if w["layout"] == layout]
        kept = []
        for run in runs:
            mine = [{**s, "t_s": round(s["at"] - host.offset_s - run["start"], 3)} for s in samples
                    if run["start"] <= s["at"] - host.offset_s <= run["end"] + 1.0]
            if not mine:
                continue
            folder = self.directory / run["raw_dir"]
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"monitor-{host.name}.jsonl").write_text("".join(json.dumps(s) + "\n" for s in mine))
            what = {k: v for k, v in run.items() if k not in ("start", "end")}
            kept += [{**what, "workload": "fio", "host": host.name, **s} for s in mine]
        campaign_folder.append_monitor(self.directory, kept)

    # ---- leaving --------------------------------------------------------------------------------------------
    def close(self) -> None:
        """Undo every host's share (its ``remote`` entry: what it keeps, the folder shipped to; then its master);
        what a host cannot undo is named in the notes and left in the manifest for ``flashscale reap``."""
        outcomes = self.each(self._close_host)
        self.heartbeat.close()
        for name, outcome in outcomes.items():
            if isinstance(outcome, BaseException):
                manifest = next(h.teardown.manifest for h in self.hosts if h.name == name)
                self.notes.append(f"Host {name}: what the campaign made there could not all be undone ({outcome}); "
                                  f"`flashscale reap --campaign CAMPAIGN {manifest}` undoes it once the host "
                                  "answers.")
        self._pool.shutdown()
        self._stack.close()

    def _close_host(self, host: _Host) -> None:
        try:
            self._stop_server(host)
            host.teardown.close()
        finally:
            if host.link.master is not None:
                host.link.master.popen.poll()  # its exit collected: stopped by pid and start time, it is our child

