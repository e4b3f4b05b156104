"""A campaign on devices named by identity: a test bed's real devices, or the VM lab's NVMe devices inside its guest.

    Bed(file, use_devices, confirm, wipe, precondition_passes, dry_run, campaign)   what a test bed campaign is given
    OnTestBed(runner, array, options, mounted, bed)   the place (``campaigns.place.Place``): every device guarded
                                                      before the first erase, each layout built through the guard,
                                                      preconditioned, swept, torn down; a dry run (``DryRun``: the
                                                      exact commands) unless ``dry_run`` is False
    InVmGuest(..., guest=request)                     the VM lab's devices inside its guest: the same, each device
                                                      capped by the guest's block throttling once the harness has
                                                      measured them uncapped (the truth known, as on the emulated
                                                      array); the host holds the folder's lock
"""
from __future__ import annotations

import contextlib
import os
import secrets
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

from ..arrays import layouts
from ..arrays.emulated import cap_fit_policy
from ..arrays.guard import Guard
from ..arrays.layouts import Layout
from ..arrays.testbed import TestBed
from ..errors import ConfigError
from ..measure import harness
from ..measure.recorder import Recorder
from ..system.teardown import Teardown, manifest_dir
from ..system.throttle import Throttle
from .place import DryRun, Place, caps_words


@dataclass(frozen=True)
class Bed:
    """What a test bed campaign is given: the test bed ``file``, its first ``use_devices`` devices only (None: all),
    the identities the user ``confirm``-ed (strings), the signature types the plan may ``wipe`` (True: any), the
    ``precondition_passes`` after each erase, whether it only prints its plan (``dry_run``), and the campaign's
    name (said in the dry run)."""

    file: str
    use_devices: int | None = None
    confirm: tuple[str, ...] | None = None
    wipe: bool | tuple[str, ...] = ()
    precondition_passes: int = 2
    dry_run: bool = True
    campaign: str = ""


class OnTestBed(Place):
    """Real devices named by identity in a test bed file, confirmed; no caps: the devices' own limits."""

    backend = "testbed"

    def __init__(self, *args, bed: Bed, **kw):
        super().__init__(*args, **kw)
        self.bed = bed
        self.erased: list[str] = []  # devices this campaign has erased: what they carry now is its own making
        if not self.notes:
            self.notes = [f"Real devices of the test bed {bed.file}, named by identity and confirmed; every "
                          "destructive step went through the guard. No bandwidth caps: the devices' own limits."]

    @cached_property
    def resolved(self) -> tuple[TestBed, list, tuple[str, ...] | None]:
        """The test bed, the devices this campaign uses (its first ``use_devices``), and the confirmation of those."""
        bed = TestBed.load(self.bed.file)
        devices = bed.resolve(self.system)
        wanted = self.bed.use_devices
        if wanted is not None:
            if wanted > len(devices):
                raise ConfigError(f"USE_DEVICES={wanted} but the test bed {self.bed.file} names only "
                                  f"{len(devices)} devices")
            devices = devices[:wanted]
        ids = {d.id for d in devices}
        # the user confirmed the whole test bed; a campaign on part of it needs only that part's confirmation
        confirm = self.bed.confirm if self.bed.confirm is None or wanted is None else tuple(
            i for i in self.bed.confirm if i in ids or i not in bed.ids)
        return bed, devices, confirm

    def devices(self) -> list:
        return self.resolved[1]

    def words(self) -> str:
        return f"{len(self.devices())} real device(s) of the test bed {self.bed.file}, no caps"

    def facts(self) -> dict:
        return {**super().facts(), "devices": [d.id for d in self.devices()]}

    def problems(self, names, workloads) -> None:
        """The kernel's needs; a dry run stops here with the plan; a measurement needs the confirmation, and every
        device the layouts use is checked now, before the first is erased."""
        super().problems(names, workloads)
        if self.bed.dry_run:
            raise DryRun(f"Dry run of campaign {self.bed.campaign!r} (DRY_RUN is True): nothing was touched. To "
                         "measure, set DRY_RUN=False and CONFIRM to the test bed's identities. It would run:\n"
                         f"{self.plan(names)}")
        if self.bed.confirm is None:
            raise ConfigError(f"campaign {self.bed.campaign!r}: DRY_RUN is False but CONFIRM is empty; list the "
                              f"identities of the devices in {self.bed.file} (see flashscale devices)")
        _, devices, confirm = self.resolved
        Guard(devices, confirm, self.bed.wipe, self.system).check(devices)

    def reproduction_problem(self, dry_run: bool, confirmed: bool) -> str | None:
        if not Path(self.bed.file).is_file():
            return f"the original measured the test bed {self.bed.file}, which is not a file here"
        if not dry_run and not confirmed:
            return (f"the original erased the devices of the test bed {self.bed.file} with their owner's "
                    "confirmation; a reproduction erases them again: confirm them yourself with -p CONFIRM=...")
        return None

    def plan(self, names) -> str:
        """The exact commands the campaign would execute, layout by layout; with a confirmation, the guard checks
        the devices now (reading only) and refuses as the real run would."""
        return "\n".join(self.commands(names))

    def commands(self, todo) -> list[str]:
        """Each device by its identity, then each layout's commands (``layout_commands``)."""
        return [*(f"# {d.path} is {d.id}" for d in self.devices()), *super().commands(todo)]

    def layout_commands(self, name: str) -> str:
        """With a confirmation, the guard checks the devices now (reading only) and refuses as the run would."""
        _, devices, confirm = self.resolved
        return layouts.dry_run(name, devices, self.options, confirm=confirm, wipe=self.bed.wipe,
                               runner=self.runner, fill_passes=self.bed.precondition_passes)

    def teardown_of(self, name: str, recorder: Recorder) -> Teardown:
        return Teardown(manifest_dir() / f"{self.resolved[0].name}-{recorder.run_id}-{name}.json", self.runner,
                        self.system)

    def build(self, name: str, teardown: Teardown) -> Layout:
        _, devices, confirm = self.resolved
        layout = layouts.build(name, devices, self.runner, teardown, confirm=confirm, wipe=self.bed.wipe,
                               options=self.options, claimed=self.erased, fill_passes=self.bed.precondition_passes,
                               system=self.system)  # the machine as check read it, read again for each build
        self.erased += [d.path for d in layouts.chosen(name, devices)]
        return layout


class InVmGuest(OnTestBed):
    """The VM half of an ``EMULATION="vm"`` campaign: the lab's NVMe devices as a test bed, each capped by the
    guest's block throttling, so the truth is known as on the emulated array; ``guest`` is the host's request (the
    VM's ``facts``, the host's ``spec`` and ``notes``). The host holds the campaign folder's lock."""

    backend = "vm"

    def __init__(self, *args, guest: dict, **kw):
        super().__init__(*args, notes=guest["notes"], **kw)
        self.guest = guest
        self.procs: list[Path] = []

    def words(self) -> str:
        return f"{len(self.devices())} NVMe device(s) of the VM lab, {caps_words(self.array)}"

    def facts(self) -> dict:
        return {"backend": self.backend, "place": self.words(), **self.guest["facts"],
                "devices": [d.id for d in self.devices()]}

    def recover(self, folder: Path) -> list[str]:
        return []  # the host recovered, and holds the lock

    def lock(self, directory: Path):
        return contextlib.nullcontext()

    def recorded(self, spec: dict) -> dict:
        return self.guest["spec"]  # the host's: what a resume and a re-analysis compare

    def truth(self, recorder: Recorder) -> list[str]:
        """A throttled cgroup capping every device, undone with the place: at the array's caps where this machine
        carries at least twice them, measured on the devices uncapped first (``measure.harness``: the lab's own
        devices, made by the lab and confirmed, before their first erase), else lowered to fit (``CAP_FIT``)."""
        teardown = Teardown(manifest_dir() / f"caps-{os.getpid()}-{secrets.token_hex(4)}.json", self.runner,
                            self.system)
        self.stack.callback(teardown.close)
        asked = {"read": self.array.read_bps, "write": self.array.write_bps}
        held, carried, said = harness.hold_local(recorder.sweep_spec, [d.path for d in self.devices()], asked,
                                                 cap_fit_policy(self.array.cap_fit), recorder.directory, self.runner)
        fitted = replace(self.array, read_bps=round(held["read"]), write_bps=round(held["write"]))
        recorder.hold(fitted.rw_caps(), {name: fitted.rw_caps(name) for name in recorder.layout_caps}, carried)
        throttle = Throttle.create(self.system, teardown)
        for device in self.devices():
            throttle.cap(self.system.majmin(device.path), fitted.read_bps, fitted.write_bps)
        self.procs = [throttle.procs_file]
        return said

    def cgroup_procs(self, name: str) -> list[Path]:
        return self.procs

    def build(self, name: str, teardown: Teardown) -> Layout:
        return replace(super().build(name, teardown), backend="vm")
