"""``flashscale reap``: find the manifests of interrupted runs and undo what each lists, and nothing else.

A manifest whose writing process is still alive is left alone: it belongs to a run in progress. The writer is its
pid and start time (``processes.may_still_run``: a pid reused by another program since is not the writer); a
manifest that records no start time, written before they were, is left alone while its pid is in use. What is
undone, and how each thing is verified gone, is ``flashscale.system.undo``: the same code as a live teardown's.

A manifest is someone else's input until shown otherwise: reap reads one only when it and its folder are the
user's alone (``private.owned``: the file of mode 0600, the folder 0700, neither a symlink), and refuses it,
named, otherwise. A manifest never says how to reach a host: a ``remote`` entry's host is reached through
``contacts`` (``shipped.Contacts``, the campaign's inventory and SSH options), or not at all.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from . import private, processes
from .commands import Runner
from .devices import System
from ..errors import ConfigError, FlashscaleError, RefusedError
from .teardown import Entry, Teardown
from .undo import present


@dataclass
class Outcome:
    manifest: str
    state: str  # reaped | running | unknown-owner | left-behind | planned | unreadable | refused
    entries: list[dict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def owner_pid(data: dict) -> int | None:
    """The pid of the run that wrote a manifest: its top-level "pid", else the one its entries carry."""
    if isinstance(data.get("pid"), int):
        return data["pid"]
    pids = {e.get("pid") for e in data.get("created", []) if isinstance(e.get("pid"), int)}
    return pids.pop() if len(pids) == 1 else None


def owner_start(data: dict) -> int | None:
    """The start time of the process that wrote a manifest (``System.process_start``), when it recorded one."""
    start = data.get("start")
    return start if isinstance(data.get("pid"), int) and isinstance(start, int) else None


def manifests_in(directory: Path) -> list[Path]:
    """The manifests in ``directory``: each ``*.json``, and each ``*.tmp`` with no ``.json`` beside it (a run killed
    while it wrote its first manifest: the things it lists may have been made, the ``.json`` never was)."""
    found = sorted(Path(directory).glob("*.json"))
    return found + sorted(t for t in Path(directory).glob("*.tmp") if not t.with_suffix(".json").exists())


def reap_one(manifest: Path, runner: Runner, system: System, *, named: bool, dry_run: bool = False,
             contacts=None) -> Outcome:
    """Undo what one manifest lists, if its run is over; see ``reap``. RefusedError when it or its folder is not the
    user's alone."""
    if not os.path.lexists(manifest):
        raise ConfigError(f"manifest {manifest} cannot be read: no such file")
    private.owned(private.owned(Path(manifest).parent) / Path(manifest).name, 0o600)
    try:
        data = json.loads(manifest.read_text())
        entries = [dict(e) for e in data["created"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"manifest {manifest} cannot be read as a flashscale manifest: {exc}") from None
    pid = owner_pid(data)
    if pid is not None and pid != os.getpid() and processes.may_still_run(pid, owner_start(data), system):
        return Outcome(str(manifest), "running", entries, [f"process {pid} that wrote it is still running"])
    if pid is None and not named:
        return Outcome(str(manifest), "unknown-owner", entries,
                       ["no pid recorded: name this manifest to reap it if its run is over"])
    if dry_run:
        return Outcome(str(manifest), "planned", entries)
    teardown = Teardown(manifest, runner, system, contacts=contacts,
                        writer=(pid, owner_start(data)) if pid is not None else None, entries=[Entry(e["kind"], {k: v for k, v in e.items() if k != "kind"}) for e in entries])
    try:
        teardown.close()
    except FlashscaleError as exc:
        return Outcome(str(manifest), "left-behind", entries, [str(exc)])
    still = [f"{e['kind']} {e.get('path', '')}" for e in entries if present(e["kind"], e, system)]
    return Outcome(str(manifest), "left-behind" if still else "reaped", entries, still)


def reap(manifests: Sequence[Path] = (), directory: Path | None = None, *, runner: Runner | None = None,
         system: System | None = None, dry_run: bool = False, contacts=None) -> list[Outcome]:
    """Reap the named manifests, or every finished run's manifest in ``directory``; returns what happened to each.

    A manifest named explicitly is reaped even when it records no pid; one found by scanning is reaped only when
    the process that wrote it is known to be gone. The newest manifest goes first: a layout's mounts before the
    array of loop devices under them. ``directory``, when it is there, must be the user's alone (RefusedError
    otherwise); a manifest found there that is not is ``refused``; one named that is not raises RefusedError.
    ``contacts``: how the hosts of ``remote`` entries are reached.
    """
    runner = runner or Runner()
    system = system or System(runner=runner)
    named = [Path(m) for m in manifests]
    scan = directory is not None and not named and os.path.lexists(directory)  # a folder that is not there: none
    found = manifests_in(private.owned(Path(directory))) if scan else []
    ordered = sorted(named + found, key=lambda m: m.lstat().st_mtime if m.exists() else 0, reverse=True)
    outcomes = []
    for manifest in ordered:
        try:
            outcomes.append(reap_one(manifest, runner, system, named=manifest in named, dry_run=dry_run,
                                     contacts=contacts))
        except (ConfigError, RefusedError) as exc:
            if manifest in named:
                raise
            state = "refused" if isinstance(exc, RefusedError) else "unreadable"
            outcomes.append(Outcome(str(manifest), state, [], [str(exc)]))
    return outcomes
