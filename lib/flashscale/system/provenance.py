"""What software made a number: flashscale's version and commit, the lock, and the Python packages that compute or
draw it.

    software()              {"flashscale": "0.1.0", "commit": "96bb572...", "dirty": False,
                             "lock": {"file": "requirements.lock", "sha256": "..."}, "python": "3.11.2",
                             "packages": {"pandas": "3.1.1", "numpy": "2.4.6", ...}}
    differences(then, now)  ["pandas 3.0.0 then, 3.1.1 now", "lock a1b2c3d4 then, e5f6a7b8 now"]
    machine(devices)        {"governor": "performance", "firmware": {"nvme0n1": "3B2QGXA7"}}: what else shapes a
                            number, read through ``System`` (``flashscale compare`` lists both among what differs)

``campaign.json`` and every run's ``env.json`` carry ``software()`` as measured; a report says it again as it was
analysed (``publish.report.how_made``), and ``differences`` names what changed between the two (a campaign
re-analysed after an upgrade).

``commit`` and ``dirty`` are those of the git checkout holding the package (or ``root``): None when there is no
checkout (an installed package), no ``.git`` in it, no git on the machine, or git refuses or takes too long; never
an error. ``dirty`` is True when a tracked file differs from the commit (staged or not), as ``git describe
--dirty`` says it: untracked files (results, reports, a scratch notebook) do not count, so a new module not yet
added to git is not seen. git runs with ``--no-optional-locks``: reading the checkout never takes its index lock
from someone committing in it, and works on a read-only checkout (the VM lab's).

This process's own ``software()`` is read once, at its first ask: its code is loaded once, so a notebook that
measures and then analyses says one software for both, whatever is committed in the checkout meanwhile.

``lock`` is the first of ``LOCK_FILES`` found at the top of the checkout, with its SHA-256; None when there is none.
``packages`` names only the installed ones of ``PACKAGES``.
"""
from __future__ import annotations

import copy
import functools
import hashlib
import importlib.metadata
import platform
import re
from pathlib import Path
from typing import Sequence

from ..errors import FlashscaleError
from .commands import Runner

# The project's lock file, the first found at the top of the checkout.
LOCK_FILES = ("requirements.lock", "requirements-lock.txt", "uv.lock", "pylock.toml", "conda-lock.yml")
# The packages that compute or draw a number: the table, its statistics, its figures, the executed report.
PACKAGES = ("pandas", "numpy", "scipy", "pyarrow", "statsmodels", "matplotlib", "seaborn", "papermill", "nbconvert")
GIT_TIMEOUT_S = 10
SHORT = 10  # characters of a commit or a hash in a sentence
E_NOTATION = re.compile(r"\d+[eE]\d+")


def checkout() -> Path | None:
    """The checkout this package runs from (an editable install, or ``lib`` on the path); None when installed."""
    top = Path(__file__).resolve().parents[3]
    return top if (top / "pyproject.toml").is_file() and (top / "lib" / "flashscale").is_dir() else None


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _git(root: Path, runner: Runner, *args: str) -> str | None:
    """git's stdout in ``root``, or None when it cannot answer (no git, not a checkout, refused, too slow). Any
    exit status is taken, so that a refusal is an answer of None here, not a warning in a report."""
    try:
        done = runner.run(["git", "--no-optional-locks", "-C", str(root), *args], ok_codes=range(256),
                          timeout=GIT_TIMEOUT_S)
    except (FlashscaleError, OSError):
        return None
    return done.stdout if done.returncode == 0 else None


def _commit(root: Path | None, runner: Runner) -> tuple[str | None, bool | None]:
    """The checkout's commit and whether a tracked file differs from it; (None, None) without one."""
    if root is None or not (root / ".git").exists():
        return None, None
    head = _git(root, runner, "rev-parse", "--verify", "HEAD")
    if not head or not head.strip():
        return None, None
    status = _git(root, runner, "status", "--porcelain", "--untracked-files=no")
    return head.strip(), None if status is None else bool(status.strip())


def lock(root: Path | None) -> dict | None:
    """The first of ``LOCK_FILES`` in ``root``: its name and SHA-256; None when there is none."""
    for name in LOCK_FILES if root is not None else ():
        path = root / name
        if path.is_file():
            return {"file": name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    return None


def software(root: Path | None = None, runner: Runner | None = None) -> dict:
    """The software of this process: flashscale's version, the commit and lock of ``root`` (by default the checkout
    holding the package), Python's version and those of ``PACKAGES`` that are installed. This process's own (no
    ``root``, no ``runner``) is read once (``_this_process``)."""
    if root is None and runner is None:
        return copy.deepcopy(_this_process())
    return _read(Path(root) if root is not None else checkout(), runner or Runner())


@functools.cache
def _this_process() -> dict:
    """The software this process runs, read at its first ask: its code is loaded once, so a commit made in the
    checkout while a notebook measures and then analyses does not change what either ran."""
    return _read(checkout(), Runner())


def _read(root: Path | None, runner: Runner) -> dict:
    commit, dirty = _commit(root, runner)
    packages = {name: version for name in PACKAGES if (version := _version(name)) is not None}
    return {"flashscale": _version("flashscale"), "commit": commit, "dirty": dirty, "lock": lock(root),
            "python": platform.python_version(), "packages": packages}


def machine(devices: Sequence = (), system=None) -> dict:
    """What campaign.json's environment says of the machine beside its kernel and fio: the CPUs' frequency governor
    (``System.governor``: ``unknown: ...`` with why where the machine has none, as in most VMs) and the firmware of
    each device the place names (``Place.devices``), by kernel name (``System.firmware``); an emulated array names
    none (its loop devices, made later, have no firmware)."""
    from .devices import System

    system = system or System()
    names = [system.name_of(device.path) for device in devices]
    return {"governor": system.governor(), "firmware": {name: system.firmware(name) for name in names}}


def short(digest: str) -> str:
    """The first ``SHORT`` characters of a commit or a hash, longer while they would read as a number in e-notation
    (``12e4567890``: a report's reader would take it for 1.2 x 10^4567891)."""
    size = SHORT
    while size < len(digest) and E_NOTATION.fullmatch(digest[:size]):
        size += 1
    return digest[:size]


def commit_words(facts: dict) -> str:
    """``commit 96bb5720ab``, with ``with uncommitted changes`` when dirty; ``no git commit`` without one."""
    if not facts.get("commit"):
        return "no git commit"
    return f"commit {short(facts['commit'])}" + (" with uncommitted changes" if facts.get("dirty") else "")


def lock_words(facts: dict) -> str:
    """``lock requirements.lock a1b2c3d4e5``, or ``no lock file``."""
    found = facts.get("lock")
    return f"lock {found['file']} {short(found['sha256'])}" if found else "no lock file"


def _then_now(what: str, then: object, now: object) -> str:
    return f"{what} {then} then, {now} now" if what else f"{then} then, {now} now"


def differences(then: dict, now: dict) -> list[str]:
    """Sentences naming what differs between two ``software()``: flashscale, the commit, the lock, Python and each
    package (one missing on a side is ``not installed``); empty when they are the same. A side that recorded no
    software (a campaign from before it was kept) gives one sentence saying so."""
    if not then or not now:
        return [f"the software was not recorded {'then' if not then else 'now'}"]
    found = []
    if then.get("flashscale") != now.get("flashscale"):
        found.append(_then_now("flashscale", then.get("flashscale") or "unknown", now.get("flashscale") or "unknown"))
    if (then.get("commit"), bool(then.get("dirty"))) != (now.get("commit"), bool(now.get("dirty"))):
        found.append(_then_now("", commit_words(then), commit_words(now)))
    if then.get("lock") != now.get("lock"):
        found.append(_then_now("", lock_words(then), lock_words(now)))
    if then.get("python") != now.get("python"):
        found.append(_then_now("Python", then.get("python") or "unknown", now.get("python") or "unknown"))
    was, is_now = then.get("packages") or {}, now.get("packages") or {}
    for name in sorted(set(was) | set(is_now)):
        if was.get(name) != is_now.get(name):
            found.append(_then_now(name, was.get(name) or "not installed", is_now.get(name) or "not installed"))
    return found
