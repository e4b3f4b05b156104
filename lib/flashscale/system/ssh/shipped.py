"""flashscale shipped to a host over SSH, and run there only as the driver shipped it.

    zipped = Zip.write(folder)                 # package(): this checkout's Python files, and their SHA-256
    agent = install(link, zipped, name)        # into a fresh folder of the host's root-only place (``private``)
    agent.ask("check", {...})                  # python3 -I -S -c <private's program> boot FOLDER SHA check REQUEST
    undo_remote(entry, contacts)               # a manifest's ``remote`` entry undone on its host

The zip travels on ssh's stdin to ``private.install`` on the host (``ssh host python3 -c ...``: no scp, no path
given to a remote shell), which makes the folder ``<runtime>/ship/<name>`` fresh (mode 0700; refused when it
exists) and keeps the zip (0600) only when its SHA-256 is the driver's. Every run of it on the host goes through
``private.boot``, which checks the folders and the zip are the user's alone and the zip's SHA-256 is the one the
driver computed, and runs nothing otherwise: the refusal names the file.

``Contacts`` is how each host is reached, by name: the inventory's (or ``REMOTE_HOSTS``') address, port and user
and the campaign's SSH options, never what a manifest says. A manifest's ``remote`` entry names only the host,
the folder shipped to (none when a folder of that name was there first: it is not ours) and the manifests the host
keeps; ``undo_remote`` ships a zip of its own to a fresh folder
(a zip left on a host is never run again), and the host's reap undoes those manifests and removes both folders.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import secrets
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .. import private
from .client import Link
from ... import errors
from ...errors import CommandError, FlashscaleError, UnsupportedError

PACKAGE = private.PACKAGE
AGENT_MAIN = "flashscale.arrays.host_side"  # the host's side, run from the shipped zip (never imported here)


def package() -> bytes:
    """flashscale's own Python files, as this checkout has them, zipped with a ``__main__`` that runs the host's side:
    what runs on a host, with nothing else installed there."""
    root = Path(__file__).resolve().parents[2]  # lib/flashscale
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(root.rglob("*.py")):
            if "__pycache__" not in path.parts:
                zf.write(path, str(Path("flashscale") / path.relative_to(root)))
        zf.writestr("__main__.py", f"import sys\nfrom {AGENT_MAIN} import main\nsys.exit(main(sys.argv[1:]))\n")
    return buffer.getvalue()


@dataclass(frozen=True)
class Zip:
    """The zip shipped to hosts, as a file on this machine, and its SHA-256 (computed here, checked there)."""

    path: Path
    sha256: str

    @classmethod
    def write(cls, folder: Path) -> "Zip":
        """``package()`` written to ``folder`` (a folder of ours, 0700) as a file of mode 0600."""
        data = package()
        path = Path(folder) / PACKAGE
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        return cls(path, hashlib.sha256(data).hexdigest())


def ship_name(token: str, host: str) -> str:
    """The folder a campaign (``token``, 8 hex digits) ships to on ``host``: ``private.SHIP_NAME``."""
    return f"flashscale-ship-{token}-{hashlib.sha256(host.encode()).hexdigest()[:12]}"


def answer(said: str, returncode: int, op: str, host: str) -> dict:
    """The one JSON line a step answered on stdout; its error raised as the class it was, the host named."""
    lines = [line for line in said.splitlines() if line.startswith("{")]
    if not lines:
        raise UnsupportedError(f"host {host}: flashscale did not answer {op} (exit status {returncode})")
    told = json.loads(lines[0] if op == "serve" else lines[-1])
    if not told.get("ok"):
        kind = getattr(errors, told.get("kind", ""), FlashscaleError)
        kind = kind if isinstance(kind, type) and issubclass(kind, FlashscaleError) else FlashscaleError
        raise kind(f"on host {host}: {told.get('error')}")
    return told


@dataclass(frozen=True)
class Agent:
    """flashscale in a shipped folder of one host: each step run through ``private.boot`` (the zip checked first)."""

    link: Link
    folder: str
    sha256: str

    def argv(self, op: str, request: dict | None = None) -> list[str]:
        """The host's command that runs step ``op`` with ``request`` once the zip is checked."""
        return ["python3", "-I", "-S", "-c", private.program(), "boot", self.folder, self.sha256, op,
                json.dumps(request or {})]

    def ask(self, op: str, request: dict | None = None, timeout: float | None = None) -> dict:
        """Run step ``op`` (``arrays.host_side``) on the host; its answer, or its error raised here as the class it was,
        the host named (a zip that is not the one shipped: RefusedError naming it, and nothing ran)."""
        done = self.link.run(self.argv(op, request), timeout=timeout, ok_codes=range(255))
        try:
            return answer(done.stdout, done.returncode, op, self.link.host.name)
        except UnsupportedError as exc:
            said = (done.stderr.strip().splitlines() or ["it said nothing"])[-1]
            raise UnsupportedError(f"{exc}: {said}") from None


def install(link: Link, zipped: Zip, name: str) -> Agent:
    """Ship ``zipped`` to the host into the fresh folder ``name`` (``private.install``); its agent there."""
    try:
        done = link.run(["python3", "-I", "-S", "-c", private.program(), "install", name, zipped.sha256],
                        stdin=zipped.path, timeout=link.options.step_timeout_s, ok_codes=range(255))
    except CommandError as exc:
        raise UnsupportedError(f"host {link.host.name}: flashscale could not be shipped: {exc}") from None
    try:
        told = answer(done.stdout, done.returncode, "install", link.host.name)
    except UnsupportedError as exc:
        said = (done.stderr.strip().splitlines() or ["it said nothing"])[-1]
        raise UnsupportedError(f"{exc}: {said} (flashscale needs python3 there)") from None
    return Agent(link, told["folder"], zipped.sha256)


@dataclass
class Contacts:
    """How each host is reached, by its name (the campaign's inventory and SSH options), and the zip they are given."""

    links: dict[str, Link]
    zipped: Zip

    def link(self, name: str) -> Link:
        if name not in self.links:
            raise UnsupportedError(f"host {name!r} is not a host of the campaign given: flashscale reaches a host "
                                   "only as the campaign's inventory and SSH options say, never as a manifest says "
                                   "(flashscale reap --campaign FILE, with the -p parameters it ran with)")
        return self.links[name]


def undo_remote(details: dict, contacts: Contacts | None) -> list[str]:
    """What a manifest's ``remote`` entry asks: on its host, reached through ``contacts``, a zip of ours shipped to a
    fresh folder undoes each manifest the entry names and removes the folder the campaign shipped to (and its own);
    the problems the host reported (empty: everything there is gone)."""
    name, ship = details.get("name"), details.get("ship")
    if contacts is None:
        raise UnsupportedError(f"host {name!r}: flashscale reap needs the campaign to reach it (--campaign FILE, "
                               "with the -p parameters it ran with): a manifest never says how to connect")
    if ship is not None and (not isinstance(ship, str) or not private.SHIP_NAME.fullmatch(ship)):
        raise UnsupportedError(f"host {name!r}: the folder {ship!r} this entry names is not one flashscale ships "
                               "to (an older flashscale's, or not flashscale's): nothing was run there")
    link = contacts.link(name)
    own = f"{ship}-r{secrets.token_hex(4)}" if ship else ship_name(secrets.token_hex(4), str(name))
    agent = install(link, contacts.zipped, own)
    told = agent.ask("reap", {"manifests": details.get("manifests", []), "ships": [s for s in (ship, own) if s]})
    return told.get("problems", [])
