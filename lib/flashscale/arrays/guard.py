"""The guard: the one function every destructive step goes through.

``Guard.run(runner, argv, writes)`` re-checks every device the command writes, right before it runs, and refuses
(``RefusedError``, naming each device and every reason) when a device

- is not a block device (a regular file named like one, a missing path) or is not in the campaign's list;
- is no longer the device that was named: the identity now at its path differs;
- is mounted, has a mounted partition, is a member of a mounted btrfs, is held by an md / dm / LVM device, is
  active swap, or holds the root or boot file system (or is the disk or array member under it);
- cannot be opened exclusively (O_EXCL), or carries a signature (``blkid -p``) the plan did not say to wipe;
- was not confirmed. The confirmation is the list of identities as strings; if it does not match the campaign's
  list exactly, everything is refused.

Devices the plan itself made (an md array, a logical volume) are ``adopt``-ed: they are checked for use but have no
identity to confirm. A campaign device a step has already written is ``claimed``: the signatures flashscale's own
steps leave (``OWN_SIGNATURES``: a file system, an md superblock, an LVM label) are expected on it; any other
signature found there is still refused.

papermill's ``-p CONFIRM 0123`` arrives as the integer 123; identities are never numbers, so a confirmation that is
not made of strings is a ConfigError that says how to pass it (``-r CONFIRM 0123``, or a quoted YAML string).
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from ..system.commands import Completed, Runner
from ..system.devices import Device, System
from ..errors import ConfigError, RefusedError

log = logging.getLogger("flashscale.guard")

# The signatures flashscale's own steps write (mkfs, mdadm, pvcreate): expected on a device this plan claimed.
OWN_SIGNATURES = ("xfs", "ext4", "btrfs", "linux_raid_member", "isw_raid_member", "LVM2_member")

PAPERMILL_HINT = ("papermill's -p turns 0123 into the number 123 (and YAML reads it as 83): pass identities as "
                  "strings, with papermill -r NAME VALUE, or quoted in YAML: -y 'CONFIRM: \"0123\"', "
                  "flashscale run -p 'CONFIRM=\"0123\"'")


def confirmation(value: object) -> tuple[str, ...]:
    """The identities a user confirmed: ``"id1,id2"`` or a list of strings. Anything else is a ConfigError."""
    items = value.split(",") if isinstance(value, str) else value
    if isinstance(value, (bytes, bytearray)) or not isinstance(items, (list, tuple)):
        raise ConfigError(f"confirmation {value!r} is a {type(value).__name__}, not a string or a list of "
                          f"strings; {PAPERMILL_HINT}")
    for item in items:
        if not isinstance(item, str):
            raise ConfigError(f"confirmation item {item!r} is a {type(item).__name__}, not a string; {PAPERMILL_HINT}")
    ids = tuple(dict.fromkeys(item.strip() for item in items if item.strip()))
    if not ids:
        raise ConfigError(f"confirmation {value!r} names no identity")
    return ids


def _wipe_policy(wipe: bool | Iterable[str]) -> bool | frozenset[str]:
    if isinstance(wipe, bool):
        return wipe
    if isinstance(wipe, str):
        raise ConfigError(f"wipe={wipe!r}: give True, False, or a list of signature types such as ['xfs']")
    return frozenset(wipe)


@dataclass
class Guard:
    """The campaign's devices, the user's confirmation, and what the plan may wipe."""

    devices: Sequence[Device]
    confirm: object
    wipe: bool | Iterable[str] = False
    system: System = field(default_factory=System)
    adopted: set[str] = field(default_factory=set)
    claimed: set[str] = field(default_factory=set)
    confirmed: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        self.confirmed = confirmation(self.confirm)
        self.wipe = _wipe_policy(self.wipe)
        self.devices = list(self.devices)

    def adopt(self, path: str) -> None:
        """A device this plan created (md array, logical volume): ours to write, with no identity to confirm."""
        self.adopted.add(os.path.realpath(path))

    def _listed(self, path: str) -> Device | None:
        real = os.path.realpath(path)
        return next((d for d in self.devices if os.path.realpath(d.path) == real), None)

    def _confirmation_problem(self) -> str | None:
        listed = [d.id for d in self.devices]
        unconfirmed = [i for i in listed if i not in self.confirmed]
        unknown = [i for i in self.confirmed if i not in listed]
        if not unconfirmed and not unknown:
            return None
        parts = ([f"not confirmed: {', '.join(unconfirmed)}"] if unconfirmed else []) + \
                ([f"confirmed but not in the campaign's list: {', '.join(unknown)}"] if unknown else [])
        return "the confirmation does not match the campaign's devices (" + "; ".join(parts) + ")"

    def reasons(self, target: str | Device) -> list[str]:
        """Every reason to refuse writing to ``target``; empty when it may be written now."""
        path = target.path if isinstance(target, Device) else str(target)
        expected = self._listed(path)
        if isinstance(target, Device) and expected is not None and expected.id != target.id:
            return [f"it was named as {target.id!r} but the campaign lists {expected.id!r} at this path"]
        adopted = os.path.realpath(path) in self.adopted
        reasons = [] if expected or adopted else ["it is not in the campaign's list"]
        try:
            self.system.majmin(path)
        except RefusedError:
            kind = "no such path" if not os.path.lexists(path) else "not a block device"
            return reasons + [f"it is {kind}"]
        if expected is not None:
            now = self.system.identity_of(self.system.name_of(path))
            if now != expected.id:
                return reasons + [f"it is no longer the named device: {now!r} sits there now, not {expected.id!r}"]
        reasons += self.system.usage(path)
        if reasons:
            return reasons  # in use: do not even open it
        problem = self.system.exclusive_problem(path)
        if problem:
            return [problem]
        if not adopted:
            ours = OWN_SIGNATURES if os.path.realpath(path) in self.claimed else ()
            reasons += [f"it carries a {s} signature the plan did not say to wipe"
                        for s in self.system.signatures(path) if not self._may_wipe(s) and s not in ours]
        return reasons

    def _may_wipe(self, signature: str) -> bool:
        return self.wipe if isinstance(self.wipe, bool) else signature in self.wipe

    def check(self, targets: Sequence[str | Device]) -> None:
        """Refuse unless every target may be written now; the error names each refused device and why."""
        problem = self._confirmation_problem()
        refusals = []
        for target in targets:
            path = target.path if isinstance(target, Device) else str(target)
            listed = self._listed(path)
            label = f"{path} ({listed.id})" if listed else path
            reasons = [problem] if problem and os.path.realpath(path) not in self.adopted else []
            reasons = reasons or self.reasons(target)
            if reasons:
                refusals.append(f"{label}: " + "; ".join(reasons))
        if refusals:
            log.info("refused: %s", " | ".join(refusals))
            raise RefusedError("refused to write to " + " | ".join(refusals))

    def run(self, runner: Runner, argv: Sequence[str], writes: Sequence[str | Device],
            ok_codes: Iterable[int] = (0,), before: Callable[[], None] | None = None) -> Completed:
        """Check every device ``argv`` writes, then ``before`` (e.g. record what it makes in the manifest), then
        run it; the devices it wrote are claimed by this plan."""
        self.check(writes)
        if before is not None:
            before()
        done = runner.run(argv, ok_codes=ok_codes)
        self.claimed.update(os.path.realpath(t.path if isinstance(t, Device) else str(t)) for t in writes)
        return done
