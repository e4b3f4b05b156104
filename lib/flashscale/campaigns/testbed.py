"""A campaign on devices named by identity: a test bed's real devices, or the VM lab's NVMe devices inside its guest.

    testbed_devices(spec, runner)    the test bed, the devices the campaign uses, and their confirmation
    plan(spec, runner)               the exact commands a test bed campaign would execute (the dry run)
    run_on_testbed(spec, testbed, todo, recorder, runner, capped=False)
                                     each layout built through the guard, swept, torn down; ``capped`` (the VM
                                     lab's): every device capped by the guest's block throttling, truth known
"""
from __future__ import annotations

import contextlib
import os
import secrets
from dataclasses import replace
from pathlib import Path

from ..arrays import layouts
from ..arrays.emulated import cap_fit_policy
from ..arrays.support import MOUNTED
from ..arrays.testbed import TestBed
from ..errors import ConfigError
from ..measure import harness
from ..measure.recorder import Recorder
from ..system.commands import Runner
from ..system.devices import System
from ..system.teardown import Teardown, manifest_dir
from ..system.throttle import Throttle


def testbed_devices(spec, runner: Runner) -> tuple[TestBed, list, tuple[str, ...] | None]:
    """The test bed, the devices this campaign uses (its first ``use_devices``), and the confirmation of those."""
    bed = TestBed.load(spec.testbed)
    devices = bed.resolve(System(runner=runner))
    if spec.use_devices is not None:
        if spec.use_devices > len(devices):
            raise ConfigError(f"USE_DEVICES={spec.use_devices} but the test bed {spec.testbed} names only "
                              f"{len(devices)} devices")
        devices = devices[:spec.use_devices]
    ids = {d.id for d in devices}
    # the user confirmed the whole test bed; a campaign on part of it needs only that part's confirmation
    confirm = spec.confirm if spec.confirm is None or spec.use_devices is None else tuple(
        i for i in spec.confirm if i in ids or i not in bed.ids)
    return bed, devices, confirm


def plan(spec, runner: Runner | None = None) -> str:
    """The exact commands a test bed campaign would execute, layout by layout; with ``confirm``, the guard checks
    the devices now (reading only) and refuses as the real run would."""
    if spec.testbed is None:
        raise ConfigError("plan() is for a test bed campaign (TESTBED); the emulated array is flashscale's own")
    runner = runner or Runner()
    _, devices, confirm = testbed_devices(spec, runner)
    listing = [f"# {d.path} is {d.id}" for d in devices]
    blocks = []
    for name in spec.layouts:
        if name == MOUNTED:
            blocks.append(f"# layout mounted: mkdir {spec.mount_dir}/flashscale-XXXXXXXX (ours, removed after)")
            continue
        text = layouts.dry_run(name, devices, spec.options, confirm=confirm, wipe=spec.wipe, runner=runner,
                               fill_passes=spec.precondition_passes)
        blocks.append(f"# layout {name}\n{text}")
    return "\n".join([*listing, *blocks])


def run_on_testbed(spec, testbed: tuple, todo: list[str], recorder: Recorder,
                    runner: Runner, capped: bool = False) -> list[str]:
    """Each layout on the test bed's devices; ``capped`` (the VM lab's): fio runs in a cgroup of ours that caps
    every device at the array's read and write caps, so the truth is known as on the emulated array, once the
    devices were measured uncapped (``_capped``). The notes' sentences of that."""
    bed, devices, confirm = testbed
    erased: list[str] = []  # devices this campaign has erased: what they carry now is its own making
    system = System(runner=runner)
    said: list[str] = []
    with contextlib.ExitStack() as stack:
        procs = _capped(spec, devices, recorder, runner, system, stack, said) if capped else []
        for name in todo:
            _layout_on_testbed(spec, bed, devices, confirm, name, erased, recorder, runner, procs)
    return said


def _capped(spec, devices: list, recorder: Recorder, runner: Runner, system: System, stack,
            said: list[str]) -> list[Path]:
    """A throttled cgroup capping every device, torn down when ``stack`` closes: at the array's caps where this
    machine carries at least twice them, measured on the devices uncapped first (``measure.harness``: the VM lab's
    own devices, made by the lab and confirmed, before their first erase), else lowered to fit (``CAP_FIT``)."""
    teardown = Teardown(manifest_dir() / f"caps-{os.getpid()}-{secrets.token_hex(4)}.json", runner, system)
    stack.callback(teardown.close)
    asked = {"read": spec.array.read_bps, "write": spec.array.write_bps}
    held, carried, sentences = harness.hold_local(spec.sweep, [d.path for d in devices], asked,
                                                  cap_fit_policy(spec.array.cap_fit), recorder.directory, runner)
    fitted = replace(spec.array, read_bps=round(held["read"]), write_bps=round(held["write"]))
    recorder.hold(fitted.rw_caps(), {name: fitted.rw_caps(name) for name in recorder.layout_caps}, carried)
    said += sentences
    throttle = Throttle.create(system, teardown)
    for device in devices:
        throttle.cap(system.majmin(device.path), fitted.read_bps, fitted.write_bps)
    return [throttle.procs_file]


def _layout_on_testbed(spec, bed: TestBed, devices: list, confirm, name: str, erased: list[str],
                       recorder: Recorder, runner: Runner, procs: list[Path]) -> None:
    """One layout of a test bed campaign: built through the guard, swept, torn down."""
    teardown = Teardown(manifest_dir() / f"{bed.name}-{recorder.run_id}-{name}.json", runner, System(runner=runner))
    recorder.building(name)
    try:
        if name == MOUNTED:
            recorder.sweep(layouts.use_directory(spec.mount_dir, teardown, devices=spec.mount_devices), [])
            return
        layout = layouts.build(name, devices, runner, teardown, confirm=confirm, wipe=spec.wipe, options=spec.options,
                               claimed=erased, fill_passes=spec.precondition_passes)
        erased += [d.path for d in layouts.chosen(name, devices)]
        recorder.sweep(replace(layout, backend="vm") if procs else layout, procs)
    finally:
        teardown.close()
