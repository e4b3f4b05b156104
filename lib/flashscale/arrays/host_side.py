"""A real host's side of an SSH campaign: the same guard, erase, layouts, facts, monitor and reap, run on the host.

The driver (``flashscale.campaigns.ssh_cluster``) ships flashscale as one zip to a fresh folder of its own in the host's
root-only place (``system.ssh.shipped``, ``system.private``) and runs, for each step, ``python3 -I -S -c <boot> FOLDER
SHA256 OP REQUEST`` there: the zip's SHA-256 checked first, then run with no site-packages and no environment, so
only Python's standard library and this checkout's own modules are imported (system and arrays: no pandas, no
pyarrow, no YAML). Each step answers one JSON line on stdout (``{"ok": true, ...}``, or ``ok`` false with the
error's class and message); the log goes to stderr.

    check      what the campaign needs of the host: fio's version, Python's, root, the programs every layout's plan
               runs, each test bed identity found, the guard's refusals of each layout (read only), the clock
    facts      the host's settings that shape the numbers (``machine.json``): kernel, CPUs, NUMA, each device's
    build      a layout built through the guard on devices named by identity and confirmed (``layouts.build``)
    directory  a directory of ours inside an existing mount point (``layouts.use_directory``)
    serve      ``fio --server`` on a unix socket in a folder of ours (mode 0700), for as long as the driver's ssh
               session lasts: it answers once the server listens, then stops it when its stdin ends, or when the
               driver has been silent ``SILENT_S`` seconds, or when the server ended; no TCP port is opened
    monitor    a sampler of the devices under the targets and the CPUs, written once a second to a file
    reap       undo the named manifests (``system.reap``), then remove the named shipped folders

Everything a step makes is recorded in a manifest on the host before it exists (``system.teardown``), in a folder
of its own beside the host's other manifests (``host_manifests``), named by the driver, which records the names
first in its own manifest: a later ``reap`` step, or ``flashscale reap`` on the driver, undoes them.
"""
from __future__ import annotations

import json
import logging
import os
import platform
import re
import select
import signal
import socket
import sys
import time
import traceback
from pathlib import Path
from typing import Sequence

from . import erase, layouts
from .guard import Guard
from ..errors import ConfigError, FlashscaleError, RefusedError, UnsupportedError
from ..system import monitor, private, processes
from ..system.commands import Runner
from ..system.devices import System
from ..system.reap import reap_one
from ..system.ssh.forwarded import SILENT_S
from ..system.ssh.client import SOCKET_PATH_MAX
from ..system.teardown import Teardown, manifest_dir
from ..system.undo import make_scratch

log = logging.getLogger("flashscale.remote")

MANIFEST_NAME = re.compile(r"flashscale-[A-Za-z0-9._-]+\.json")
SERVER_READY_S = 10.0
OWN_FILES = re.compile(r"(flashscale\.pyz|flashscale-[A-Za-z0-9._-]+\.(log|jsonl))")


def host_manifests() -> Path:
    """Where a host keeps the manifests of SSH campaigns: a folder of its own in its manifest directory, so that a
    plain ``flashscale reap`` there never takes a running campaign's manifests for a dead one's."""
    return private.folder(manifest_dir() / "hosts")


def manifest(name: str) -> Path:
    if not isinstance(name, str) or not MANIFEST_NAME.fullmatch(name):
        raise ConfigError(f"manifest name {name!r} is not one of flashscale's (flashscale-*.json)")
    return host_manifests() / name


def _fio_version(runner: Runner) -> str | None:
    if runner.which("fio") is None:
        return None
    return runner.run(["fio", "--version"], timeout=30).stdout.strip()


def _layout_programs(name: str, devices, options: layouts.Options) -> set[str]:
    """Every program layout ``name``'s plan runs: its erase, its steps, and what the guard reads with."""
    programs = {"blkid"}
    for device in layouts.chosen(name, devices):
        if options.erase.startswith("nvme"):
            programs.add("nvme")
        else:
            programs |= {argv[0] for argv in erase.commands(device, options.erase)}
    programs |= {step.argv[0] for step in layouts.plan(name, devices, options=options)}
    return programs


def _confirmed(request: dict, devices) -> list[str]:
    """The confirmation a host's guard is given; RefusedError when it names none of the host's devices (the guard
    takes no empty confirmation)."""
    confirm = list(request.get("confirm") or ())
    if not confirm:
        raise RefusedError("the confirmation does not match the campaign's devices (not confirmed: "
                           f"{', '.join(d.id for d in devices)}): CONFIRM names none of this host's devices")
    return confirm


def check(request: dict, runner: Runner, system: System) -> dict:
    """What the host offers of what the campaign needs; the driver decides what is missing."""
    options = layouts.Options(**request.get("options", {}))
    found, missing_ids = [], {}
    for ident in request.get("ids", []):
        try:
            found.append(system.find(ident))
        except FlashscaleError as exc:
            missing_ids[ident] = str(exc)
    programs, refusals, support = set(request.get("programs", [])), {}, {}
    for name in request.get("layouts", []):
        if not found or missing_ids:
            break
        programs |= _layout_programs(name, found, options)
        support[name] = layouts.missing(name, system, runner)
        try:
            Guard(found, _confirmed(request, found), request.get("wipe", False), system).check(
                layouts.chosen(name, found))
        except FlashscaleError as exc:
            refusals[name] = str(exc)
    return {"fio": _fio_version(runner), "python": platform.python_version(), "euid": system.euid(),
            "hostname": platform.node(), "kernel": platform.release(), "missing_ids": missing_ids,
            "missing_programs": sorted(p for p in programs if runner.which(p) is None), "refusals": refusals,
            "missing_support": {k: v for k, v in support.items() if v}, "time": time.time()}


def facts(request: dict, runner: Runner, system: System) -> dict:
    """The host's facts: what ``machine.json`` records for it."""
    devices = sorted({n for target in request.get("targets", []) for n in system.devices_under(target)})
    return {"hostname": platform.node(), "kernel": platform.release(), "python": platform.python_version(),
            "fio": _fio_version(runner), "cpus": os.cpu_count(), "numa_nodes": system.numa_nodes(),
            "pcie": {n: system.pcie_link(system.parent_of(n) or n) for n in devices},
            **monitor.facts(devices, system)}


def build(request: dict, runner: Runner, system: System) -> dict:
    """A layout on devices named by identity, confirmed, through the guard; left built (a later ``reap`` undoes it)."""
    devices = [system.find(ident) for ident in request["ids"]]
    teardown = Teardown(manifest(request["manifest"]), runner, system)
    try:
        layout = layouts.build(request["layout"], devices, runner, teardown, confirm=_confirmed(request, devices),
                               wipe=request.get("wipe", False), options=layouts.Options(**request.get("options", {})),
                               claimed=request.get("claimed", ()), system=system)
    except BaseException:
        teardown.close()
        raise
    return {"targets": list(layout.targets), "devices": layout.devices, "backend": layout.backend,
            "description": layout.description, "commands": list(layout.commands),
            "erased": [d.path for d in layouts.chosen(request["layout"], devices)]}


def directory(request: dict, runner: Runner, system: System) -> dict:
    """A directory of ours inside an existing mount point of the host."""
    teardown = Teardown(manifest(request["manifest"]), runner, system)
    layout = layouts.use_directory(request["dir"], teardown, devices=request.get("devices"))
    return {"targets": list(layout.targets), "devices": layout.devices, "backend": "remote",
            "description": layout.description}


def _listening(sock: Path) -> bool:
    with socket.socket(socket.AF_UNIX) as probe:
        probe.settimeout(1)
        return probe.connect_ex(str(sock)) == 0


def serve(request: dict, runner: Runner, system: System) -> dict:
    """``fio --server`` on a unix socket in a folder of ours (0700: only this login and root reach it; fio's server
    has no authentication), both recorded; answers its socket once it listens, then serves until the driver goes
    (``_until_driver_goes``), and undoes both."""
    teardown = Teardown(manifest(request["manifest"]), runner, system)
    for sig in (signal.SIGTERM, signal.SIGHUP):  # the teardown runs, whatever ends this step
        signal.signal(sig, lambda *_: sys.exit(1))
    try:
        sock = make_scratch(host_manifests(), "fio", teardown, mode=0o700) / "fio.sock"
        if len(str(sock)) > SOCKET_PATH_MAX:
            raise UnsupportedError(f"{sock} is longer than a unix socket's path may be ({SOCKET_PATH_MAX})")
        process = processes.start(["fio", f"--server=sock:{sock}"], teardown, Path(request["log"]), system=system)
        deadline = time.monotonic() + SERVER_READY_S
        while not _listening(sock):
            if not process.running() or time.monotonic() > deadline:
                said = process.output().strip()[-300:] or "it said nothing"
                raise UnsupportedError(f"fio --server=sock:{sock} did not listen: {said}")
            time.sleep(0.05)
        print(json.dumps({"ok": True, "socket": str(sock), "pid": process.pid, "start": process.start}), flush=True)
        return {"ended": _until_driver_goes(process)}
    finally:
        teardown.close()


def _until_driver_goes(process: processes.Process) -> str:
    """Wait while the fio server runs and the driver's session lasts (its stdin: a line every
    ``forwarded.HEARTBEAT_S``); why the wait ended."""
    heard = time.monotonic()
    while process.running():
        ready, _, _ = select.select([sys.stdin], [], [], 1.0)
        if ready:
            if not os.read(sys.stdin.fileno(), 4096):
                return "the driver's ssh session ended"
            heard = time.monotonic()
        elif time.monotonic() - heard > SILENT_S:
            return f"the driver said nothing for {SILENT_S:g} s"
    return "the fio server ended"


def start_monitor(request: dict, runner: Runner, system: System) -> dict:
    """A sampler of the devices under ``targets`` and the CPUs (``sample``), in the background, recorded."""
    devices = sorted({n for target in request.get("targets", []) for n in system.devices_under(target)})
    teardown = Teardown(manifest(request["manifest"]), runner, system)
    ask = {"out": request["out"], "devices": devices, "interval_s": request.get("interval_s", 1.0)}
    boot = [sys.executable, "-I", "-S", "-c", private.program(), "boot", request["folder"], request["sha256"]]
    process = processes.start([*boot, "sample", json.dumps(ask)], teardown, Path(request["log"]), system=system)
    return {"devices": devices, "pid": process.pid, "start": process.start}


def sample(request: dict, runner: Runner, system: System) -> dict:
    """Until stopped: each interval's rates of ``devices`` and the CPUs, one JSON line each, with the host's time
    (``at``, seconds since the epoch) at the interval's end."""
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    out, interval = Path(request["out"]), float(request.get("interval_s", 1.0))
    previous = (time.monotonic(), system.diskstats(), system.cpu_times())
    with open(out, "a") as fh:
        while not stop:
            time.sleep(interval)
            now = (time.monotonic(), system.diskstats(), system.cpu_times())
            elapsed = now[0] - previous[0]
            common = {"at": time.time(), "interval_s": elapsed, **monitor.cpu_shares(previous[2], now[2])}
            for name in [n for n in request["devices"] if n in now[1] and n in previous[1]] or [None]:
                rates = monitor.device_rates(previous[1][name], now[1][name], elapsed) if name else {}
                fh.write(json.dumps({"device": name, **common, **rates}) + "\n")
            fh.flush()
            previous = now
    return {}


def reap(request: dict, runner: Runner, system: System) -> dict:
    """Undo each named manifest (one already gone was undone before); then, when everything was, remove each named
    shipped folder (``ships``) and the folders reaps of it left: the files of ours in each (the zip, logs, monitor
    series), then the folder itself. The one this step runs from goes last: nothing is imported from it after."""
    problems = []
    for name in request.get("manifests", []):
        path = manifest(name)
        if not path.exists():
            continue
        outcome = reap_one(path, runner, system, named=True)
        if outcome.state != "reaped":
            problems.append(f"{name}: {outcome.state}: {'; '.join(outcome.problems)}")
    if problems:
        return {"problems": problems}
    base = private.owned(private.runtime_dir() / private.SHIP)
    ships = [n for n in request.get("ships", []) if isinstance(n, str) and private.SHIP_NAME.fullmatch(n)]
    earlier = {p.name for n in ships for p in base.glob(f"{n}-r*") if private.SHIP_NAME.fullmatch(p.name)}
    for name in sorted(earlier - set(ships)) + ships:
        _remove_ship(base / name)
    return {"problems": []}


def _remove_ship(folder: Path) -> None:
    """A shipped folder of ours (``private.owned``: this login's alone), the files of ours in it, then itself."""
    if not folder.exists():
        return
    for child in private.owned(folder).iterdir():
        if OWN_FILES.fullmatch(child.name) and child.is_file() and not child.is_symlink():
            child.unlink()
    folder.rmdir()


OPS = {"check": check, "facts": facts, "build": build, "directory": directory, "serve": serve,
       "monitor": start_monitor, "sample": sample, "reap": reap}


def main(argv: Sequence[str]) -> int:
    """``OP REQUEST``: run one step and print its answer as one JSON line; 0 even when the step failed (ssh's own
    failures are 255: the driver tells them apart)."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    if len(argv) != 2 or argv[0] not in OPS:
        print(json.dumps({"ok": False, "kind": "ConfigError", "error": f"usage: OP REQUEST, OP one of {list(OPS)}"}))
        return 0
    try:
        runner = Runner()
        answer = OPS[argv[0]](json.loads(argv[1]), runner, System(runner=runner))
        print(json.dumps({"ok": True, **answer}, default=str))
    except FlashscaleError as exc:
        print(json.dumps({"ok": False, "kind": type(exc).__name__, "error": str(exc)}))
    except Exception as exc:  # the driver must hear of it, named, whatever it was
        traceback.print_exc()
        print(json.dumps({"ok": False, "kind": "FlashscaleError", "error": f"{type(exc).__name__}: {exc}"}))
    return 0

