"""A campaign on the emulated array: loop devices of flashscale's own, each capped by the kernel's block throttling,
so N devices deliver N x the cap and no more (the known truth every row is checked against).

    check_space(array, system)          refuse a device file bigger than the free space where it would go
    hold(spec, array, recorder, runner) the caps held, once the array is measured uncapped (measure.harness)
    run(spec, todo, recorder, runner)   each layout built on the array, swept, torn down
"""
from __future__ import annotations

from dataclasses import replace

from ..arrays import layouts
from ..arrays.emulated import ArraySpec, EmulatedArray, cap_fit_policy, choose_backing_root
from ..arrays.support import MOUNTED
from ..errors import ConfigError
from ..measure import harness
from ..measure.recorder import Recorder
from ..system.commands import Runner
from ..system.devices import System
from ..system.teardown import Teardown, manifest_dir


def check_space(array: ArraySpec, system: System) -> None:
    """Refuse, before anything is made, a device file bigger than the free space where it would go."""
    root = choose_backing_root(array, system)
    free = system.free_bytes(root)
    if free is None:
        raise ConfigError(f"BACKING_DIR={str(root)!r} is not an existing directory")
    if array.device_size > free:
        raise ConfigError(f"DEVICE_SIZE={array.device_size} is more than the {free:,} bytes free in {root}, "
                          "where the emulated devices' backing files go; give a smaller DEVICE_SIZE or BACKING_DIR")


def hold(spec, array: EmulatedArray, recorder: Recorder, runner: Runner) -> list[str]:
    """Before any layout: the array's devices measured uncapped (``measure.harness``), and the recorder told the
    caps its rows are held to, lowered where this machine cannot carry the ones asked (``CAP_FIT``); the notes'
    sentences."""
    asked = {"read": spec.array.read_bps, "write": spec.array.write_bps}
    held, carried, said = harness.hold_local(spec.sweep, [d.path for d in array.devices], asked,
                                             cap_fit_policy(spec.array.cap_fit), recorder.directory, runner)
    fitted = replace(spec.array, read_bps=round(held["read"]), write_bps=round(held["write"]))
    if fitted != spec.array:
        array.recap(fitted)
    recorder.hold(fitted.rw_caps(), {name: fitted.rw_caps(name) for name in recorder.layout_caps}, carried)
    return said


def run(spec, todo: list[str], recorder: Recorder, runner: Runner) -> list[str]:
    """Each layout of ``todo`` on a fresh emulated array (``spec``: a ``campaign.CampaignSpec``), torn down after,
    once the caps it holds are known to be ones this machine carries (``hold``): the notes' sentences of that."""
    system = System(runner=runner)
    with EmulatedArray(spec.array, runner, system) as array:
        said = hold(spec, array, recorder, runner)
        for name in todo:
            recorder.building(name)
            teardown = Teardown(manifest_dir() / f"{array.workdir.name}-{name}.json", runner, system)
            try:
                layout = layouts.use_directory(spec.mount_dir, teardown, devices=spec.mount_devices) \
                    if name == MOUNTED else layouts.build(
                        name, array.devices, runner, teardown, confirm=[d.id for d in array.devices],
                        claimed=[d.path for d in array.devices], options=spec.options)
                recorder.sweep(layout, array.cgroup_procs if name != MOUNTED else [])
            finally:
                teardown.close()
    return said
