"""Everything flashscale creates is recorded here, as a kind and its details, and undone in reverse order.

``record(kind, **details)`` is the one way to say "this is (about to be) made": the details, with the pid of the
run, go to the manifest (a JSON file, rewritten after every record, headed by the pid and start time of the process
writing it), so a run that dies still leaves the list of what it made for ``flashscale reap``. The undo of each kind
is ``flashscale.system.undo``'s, the same for a live teardown and for reap, and it is verified. ``close`` undoes
every entry even when one fails, retrying a bounded number of times while the kernel says the thing is busy, and
raises at the end with every failure named.
"""
from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import private
from .. import faults
from .commands import Runner
from .devices import System
from ..errors import CommandError, ConfigError, FlashscaleError
from .undo import UNDO, undo

log = logging.getLogger("flashscale.teardown")

BUSY_WORDS = ("busy", "EBUSY")


@dataclass
class Entry:
    kind: str
    details: dict


def manifest_dir() -> Path:
    """Where manifests of runs in progress live (``private.runtime_dir``): /run/flashscale for root (gone at reboot,
    like loop devices), else $XDG_RUNTIME_DIR/flashscale, else a folder of the user's own in the temporary
    directory; checked on every use to be the user's alone (mode 0700), refused otherwise."""
    return private.runtime_dir()


@dataclass
class Teardown:
    """The manifest of one run's making, and the runner and machine its undo goes through."""

    manifest: Path
    runner: Runner
    system: System
    retries: int = 5
    wait_s: float = 0.5
    entries: list[Entry] = field(default_factory=list)
    contacts: object = None  # how a ``remote`` entry's host is reached (``shipped.Contacts``): never the manifest
    # The run the manifest names (pid, start): this process, or the dead run whose things a reap is undoing. A reap
    # keeps that name as it rewrites the manifest, so a reap killed half-way leaves the rest to the next recovery of
    # that run (``lock.recover`` looks for the run's pid), not under a pid no one will look for.
    writer: tuple[int, int | None] | None = None

    def __post_init__(self) -> None:
        # the start time, with the pid, names the writer for good (``processes.may_still_run``, for reap)
        self.writer = self.writer or (os.getpid(), self.system.process_start(os.getpid()))

    def record(self, kind: str, **details) -> None:
        """Record that a ``kind`` (one of ``undo.UNDO``) is, or is about to be, made; ``details`` say which."""
        if kind not in UNDO:
            raise ConfigError(f"cannot record a {kind!r}: flashscale knows how to undo only {', '.join(UNDO)}")
        self.entries.append(Entry(kind, {**details, "pid": os.getpid()}))
        self._write()
        faults.reached("manifest-recorded")

    def identify(self, **details) -> None:
        """Add to the last entry what names its thing for good once it exists (a link's ifindex), so its undo
        touches that thing only."""
        self.amend(self.entries[-1], **details)

    def amend(self, entry: Entry, **details) -> None:
        """Add ``details`` to ``entry``, one of this teardown's (what a host keeps, named before it is made)."""
        entry.details.update(details)
        self._write()

    def _write(self, entries: list[Entry] | None = None) -> None:
        """The manifest, rewritten whole: a file of mode 0600 (``private.owned`` is what reap asks of it)."""
        data = [{"kind": e.kind, **e.details} for e in (self.entries if entries is None else entries)]
        text = json.dumps({"pid": self.writer[0], "start": self.writer[1], "created": data}, indent=1)
        tmp = self.manifest.with_suffix(".tmp")
        handle = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(handle, "w") as out:
            os.fchmod(out.fileno(), 0o600)
            out.write(text)
        faults.reached("manifest-writing")
        tmp.replace(self.manifest)

    def _undo(self, entry: Entry) -> None:
        for attempt in range(self.retries + 1):
            try:
                undo(entry.kind, entry.details, self.runner, self.system, self.contacts)
                return
            except CommandError as exc:
                if attempt == self.retries or not any(w in exc.stderr for w in BUSY_WORDS):
                    raise
                log.info("%s busy, retrying in %.1fs: %s", entry.kind, self.wait_s, entry.details)
                time.sleep(self.wait_s)

    def close(self) -> None:
        """Undo everything recorded, last first; keep going past failures.

        The manifest is deleted when everything was undone; otherwise it keeps just what is left behind, and
        FlashscaleError names each of those.
        """
        failures: list[str] = []
        left: list[Entry] = []
        while self.entries:
            entry = self.entries.pop()
            try:
                self._undo(entry)
            except Exception as exc:  # keep going: the rest must still be undone
                failures.append(f"{entry.kind} {entry.details}: {exc}")
                left.insert(0, entry)
                log.error("could not undo %s %s: %s", entry.kind, entry.details, exc)
            self._write(self.entries + left)
            faults.reached("layout-tearing-down")
        self.entries = left
        if failures:
            self._write()
            raise FlashscaleError("teardown left things behind: " + "; ".join(failures))
        self.manifest.unlink(missing_ok=True)
        self.manifest.with_suffix(".tmp").unlink(missing_ok=True)  # _write's own, left by a run killed inside it


class Built:
    """A context manager of things made in ``_build`` and undone in ``close``: when building fails or is
    interrupted, whatever was made is undone before the error goes on; leaving the ``with`` block undoes it all.

    ``runner`` and ``system`` are how it acts on and reads the machine; ``_build`` records what it makes in the
    teardown ``start_teardown`` opens (its manifest in ``manifests``, default ``manifest_dir()``), and the default
    ``close`` undoes it."""

    teardown: Teardown | None = None

    def __init__(self, runner: Runner | None = None, system: System | None = None, manifests: Path | None = None):
        self.runner = runner or Runner()
        self.system = system or System(runner=self.runner)
        self.manifests = manifests
        self.teardown = None

    def start_teardown(self, name: str) -> Teardown:
        """The teardown of what ``_build`` makes, its manifest ``<name>.json``, recorded before anything exists."""
        self.teardown = Teardown((self.manifests or manifest_dir()) / f"{name}.json", self.runner, self.system)
        return self.teardown

    def _build(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        if self.teardown is not None:
            self.teardown.close()
            self.teardown = None

    def __enter__(self):
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()
