"""Erase devices through the guard, verify that no signature is left, and record what was done.

    discard        blkdiscard DEVICE                                 exit 2 (or "not supported"): cannot discard
    zero           blkdiscard --zeroout DEVICE                       the kernel writes zeros (offloaded if it can)
    wipe           wipefs --all DEVICE                               the signatures only
    nvme-format    nvme format NAMESPACE --namespace-id=N --ses=1 --force     user-data erase of one namespace
    nvme-sanitize  nvme sanitize CONTROLLER --sanact=2, then nvme sanitize-log until done
                   (block erase of the whole controller: refused unless all its namespaces are being erased)

All devices are checked before the first is touched, and each again right before its command. Afterwards
``blkid -p`` must find no signature. When discard is unsupported or leaves a signature (a device that does not
read back zeros), the ``fallback`` method runs if the plan names one; otherwise the erase fails and says so.
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Sequence

from ..errors import CommandError, ConfigError, FlashscaleError, RefusedError, UnsupportedError

if TYPE_CHECKING:  # named in annotations only: METHODS is read by erase --help without the machine's modules
    from ..system.commands import Runner
    from ..system.devices import Device, System
    from .guard import Guard

METHODS = ("discard", "zero", "wipe", "nvme-format", "nvme-sanitize")
SANITIZE_BLOCK_ERASE = 2
SANITIZE_DONE, SANITIZE_RUNNING = 1, 2


@dataclass(frozen=True)
class Nvme:
    controller: str  # /dev/nvme0: the character device sanitize and the logs go to
    namespace: str   # /dev/nvme0n1: the block device
    nsid: str


def nvme_of(device: Device, system: System, runner: Runner) -> Nvme:
    """The NVMe controller and namespace id behind ``device``; UnsupportedError (before anything runs) if none."""
    name = system.name_of(device.path)
    match = re.fullmatch(r"nvme(\d+)(?:c\d+)?n(\d+)", name)
    if match is None:
        raise UnsupportedError(f"{device.path} is not an NVMe namespace: nvme-cli methods need /dev/nvmeXnY")
    node = system.node(name)
    nsid = (node / "nsid").read_text().strip() if (node / "nsid").exists() else match.group(2)
    parent = (node / "device").resolve().name if (node / "device").exists() else ""
    controller = parent if re.fullmatch(r"nvme\d+", parent) else f"nvme{match.group(1)}"
    if runner.which("nvme") is None:
        raise UnsupportedError("nvme-cli is not installed (no 'nvme' program): apt-get install nvme-cli")
    if not (system.dev / controller).exists():
        raise UnsupportedError(f"{device.path}: its NVMe controller {system.dev / controller} does not exist")
    return Nvme(str(system.dev / controller), device.path, nsid)


def commands(device: Device, method: str, nvme: Nvme | None = None) -> list[tuple[str, ...]]:
    """The argv that erases ``device`` with ``method`` (sanitize's log polling is not included)."""
    if method == "discard":
        return [("blkdiscard", device.path)]
    if method == "zero":
        return [("blkdiscard", "--zeroout", device.path)]
    if method == "wipe":
        return [("wipefs", "--all", device.path)]
    if method == "nvme-format":
        return [("nvme", "format", nvme.namespace, f"--namespace-id={nvme.nsid}", "--ses=1", "--force")]
    if method == "nvme-sanitize":
        return [("nvme", "sanitize", nvme.controller, f"--sanact={SANITIZE_BLOCK_ERASE}")]
    raise ConfigError(f"erase method {method!r} is not one of {', '.join(METHODS)}")


def _check_sanitize_scope(nvmes: dict[str, Nvme], system: System) -> None:
    """Sanitize erases every namespace of a controller: all of them must be among the devices being erased."""
    erasing = {n.namespace for n in nvmes.values()}
    for nvme in {n.controller for n in nvmes.values()}:
        folder = system.sys / "class" / "nvme" / nvme.rsplit("/", 1)[-1]
        names = [p.name for p in folder.iterdir() if re.fullmatch(r"nvme\d+(c\d+)?n\d+", p.name)] \
            if folder.is_dir() else []
        missing = sorted(n for n in names if n not in {system.name_of(p) for p in erasing})
        if missing:
            raise RefusedError(f"refused: nvme-sanitize erases every namespace of {nvme}, but "
                               f"{', '.join(missing)} is not among the devices to erase")


def _sanitize_status(stdout: str) -> int | None:
    def find(node):
        if isinstance(node, dict):
            if "sstat" in node:
                value = node["sstat"]
                return value.get("status") if isinstance(value, dict) else int(value) & 0x7
            return next((r for r in map(find, node.values()) if r is not None), None)
        return None
    return find(json.loads(stdout or "{}"))


def _wait_sanitize(nvme: Nvme, runner: Runner, poll_s: float, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        log = runner.run(["nvme", "sanitize-log", nvme.controller, "--output-format=json"])
        status = _sanitize_status(log.stdout)
        if status == SANITIZE_DONE:
            return
        if status != SANITIZE_RUNNING or time.monotonic() > deadline:
            raise FlashscaleError(f"sanitize of {nvme.controller} did not complete (sanitize status {status})")
        time.sleep(poll_s)


def _unsupported_discard(exc: CommandError) -> bool:
    return exc.argv[0] == "blkdiscard" and (exc.returncode == 2 or "not supported" in exc.stderr.lower())


@dataclass
class _Eraser:
    guard: Guard
    runner: Runner
    nvmes: dict[str, Nvme]
    poll_s: float
    timeout_s: float

    def __post_init__(self) -> None:
        self.sanitized: set[str] = set()

    def run_method(self, device: Device, method: str) -> list[str]:
        nvme = self.nvmes.get(device.path)
        if method == "nvme-sanitize" and nvme.controller in self.sanitized:
            return []  # one sanitize per controller erases all its namespaces
        writes = [d for d in self.guard.devices if d.path in self.nvmes
                  and self.nvmes[d.path].controller == nvme.controller] if method == "nvme-sanitize" else [device]
        done = []
        for argv in commands(device, method, nvme):
            self.guard.run(self.runner, argv, writes)
            done.append(" ".join(argv))
        if method == "nvme-sanitize":
            self.sanitized.add(nvme.controller)
            _wait_sanitize(nvme, self.runner, self.poll_s, self.timeout_s)
        return done

    def erase_one(self, device: Device, method: str, fallback: str | None) -> dict:
        started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        done, used, note = [], method, None
        try:
            done += self.run_method(device, method)
        except CommandError as exc:
            if not _unsupported_discard(exc):
                raise
            if fallback is None:
                raise UnsupportedError(f"{device.path} does not support discard (blkdiscard exit {exc.returncode}); "
                                       "erase with --method zero or wipe, or allow a fallback") from exc
            note = f"discard unsupported (blkdiscard exit {exc.returncode}); fell back to {fallback}"
        left = [] if note else self.guard.system.signatures(device.path)
        if note or (left and fallback and fallback != method):
            note = note or f"{method} left {', '.join(left)}; fell back to {fallback}"
            used = fallback
            done += self.run_method(device, fallback)
            left = self.guard.system.signatures(device.path)
        if left:
            raise FlashscaleError(f"{device.path} still carries {', '.join(left)} after {used}: it does not read "
                                  "back zeros after this method; erase with --method zero or wipe")
        return {"device": device.path, "id": device.id, "method": used, "commands": done, "note": note,
                "verified": "blkid -p finds no signature", "started": started,
                "finished": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def erase(devices: Sequence[Device], guard: Guard, runner: Runner, *, method: str = "discard",
          fallback: str | None = None, dry_run: bool = False, poll_s: float = 5.0,
          timeout_s: float = 6 * 3600.0) -> list[dict]:
    """Erase ``devices`` (all checked first: any refusal and nothing is touched); one record per device.

    With ``dry_run`` the guard still checks everything, and the records list the commands without running them.
    """
    for name in (method, fallback):
        if name is not None and name not in METHODS:
            raise ConfigError(f"erase method {name!r} is not one of {', '.join(METHODS)}")
    if not devices:
        raise ConfigError("nothing to erase: no devices named")
    uses_nvme = {method, fallback} & {"nvme-format", "nvme-sanitize"}
    nvmes = {d.path: nvme_of(d, guard.system, runner) for d in devices} if uses_nvme else {}
    if "nvme-sanitize" in uses_nvme:
        _check_sanitize_scope(nvmes, guard.system)
    guard.check(devices)
    if dry_run:
        return [{"device": d.path, "id": d.id, "method": method, "dry_run": True,
                 "commands": [" ".join(a) for a in commands(d, method, nvmes.get(d.path))]} for d in devices]
    eraser = _Eraser(guard, runner, nvmes, poll_s, timeout_s)
    return [eraser.erase_one(d, method, fallback) for d in devices]
