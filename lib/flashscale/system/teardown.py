"""Everything flashscale creates is recorded here as it is created, and undone in reverse order.

The manifest (a JSON file) is rewritten after every record, so a run that dies still leaves the list of what it
made. ``close`` undoes every entry even when one fails, retrying a bounded number of times while the kernel says
the thing is busy, and raises at the end with every failure named.
"""
from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..errors import CommandError, FlashscaleError

log = logging.getLogger("flashscale.teardown")

BUSY_WORDS = ("busy", "EBUSY")


@dataclass
class Entry:
    kind: str
    details: dict
    undo: Callable[[], None]


def manifest_dir() -> Path:
    """Where manifests of runs in progress live: /run/flashscale for root (gone at reboot, like loop devices),
    else a folder of the user's own in the temporary directory (never the temporary directory itself)."""
    root = os.geteuid() == 0 and Path("/run").is_dir()
    base = Path("/run/flashscale") if root else Path(tempfile.gettempdir()) / f"flashscale-{os.geteuid()}"
    base.mkdir(mode=0o700, exist_ok=True)
    return base


@dataclass
class Teardown:
    manifest: Path
    retries: int = 5
    wait_s: float = 0.5
    entries: list[Entry] = field(default_factory=list)

    def record(self, kind: str, undo: Callable[[], None], **details) -> None:
        self.entries.append(Entry(kind, details, undo))
        self._write()

    def _write(self, entries: list[Entry] | None = None) -> None:
        data = [{"kind": e.kind, **e.details} for e in (self.entries if entries is None else entries)]
        tmp = self.manifest.with_suffix(".tmp")
        tmp.write_text(json.dumps({"pid": os.getpid(), "created": data}, indent=1))
        tmp.replace(self.manifest)

    def _undo(self, entry: Entry) -> None:
        for attempt in range(self.retries + 1):
            try:
                entry.undo()
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
        self.entries = left
        if failures:
            self._write()
            raise FlashscaleError("teardown left things behind: " + "; ".join(failures))
        self.manifest.unlink(missing_ok=True)
