"""A campaign on the emulated array: loop devices of flashscale's own, each capped by the kernel's block throttling,
so N devices deliver N x the cap and no more (the known truth every row is checked against).

    check_space(array, system)          refuse a device file bigger than the free space where it would go
    caps(array, layout=None)            the cap per rw a row's truth check holds it to
    run(spec, todo, recorder, runner)   each layout built on the array, swept, torn down
"""
from __future__ import annotations

from ..arrays import layouts
from ..arrays.emulated import ArraySpec, EmulatedArray, choose_backing_root
from ..arrays.support import MOUNTED
from ..errors import ConfigError
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


def caps(array: ArraySpec, layout: str | None = None) -> dict:
    """The emulated array's cap per rw (its "read" and "write" are also the caps of the truth check of a mixed rw);
    a row carries it only when fio ran inside the throttled cgroup. With ``layout``: the cap per device of which
    that layout's truth is its devices x, from the devices it uses at their own caps (``ArraySpec.layout_caps``)."""
    read, write = array.layout_caps(layout) if layout else (array.read_bps, array.write_bps)
    read, write = (cap or float("nan") for cap in (read, write))  # a cap of 0 is none: no cap_bps, no truth
    return {"read": read, "randread": read, "write": write, "randwrite": write}


def run(spec, todo: list[str], recorder: Recorder, runner: Runner) -> None:
    """Each layout of ``todo`` on a fresh emulated array (``spec``: a ``campaign.CampaignSpec``), torn down after."""
    system = System(runner=runner)
    with EmulatedArray(spec.array, runner, system) as array:
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
