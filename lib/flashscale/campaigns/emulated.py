"""A campaign on the emulated array: loop devices of flashscale's own, each capped by the kernel's block throttling,
so N devices deliver N x the cap and no more (the known truth every row is checked against).

    OnEmulatedArray(runner, array, options, mounted)   the place (``campaigns.place.Place``): checked, the array
                                                        made, its truth held, each layout built, swept, torn down
    check_space(array, system)                         refuse a device file bigger than the free space where it
                                                        would go
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..arrays import layouts
from ..arrays.emulated import ArraySpec, EmulatedArray, backing_store_sentence, cap_fit_policy, choose_backing_root
from ..arrays.layouts import Layout
from ..errors import ConfigError
from ..measure import harness
from ..measure.recorder import Recorder
from ..measure.units import size as bytes_words
from ..system.devices import Device, System
from ..system.teardown import Teardown, manifest_dir
from .place import Place, caps_words


def check_space(array: ArraySpec, system: System) -> None:
    """Refuse, before anything is made, a device file bigger than the free space where it would go."""
    root = choose_backing_root(array, system)
    free = system.free_bytes(root)
    if free is None:
        raise ConfigError(f"BACKING_DIR={str(root)!r} is not an existing directory")
    if array.device_size > free:
        raise ConfigError(f"DEVICE_SIZE={array.device_size} is more than the {free:,} bytes free in {root}, "
                          "where the emulated devices' backing files go; give a smaller DEVICE_SIZE or BACKING_DIR")


class OnEmulatedArray(Place):
    """The emulated array (``arrays.emulated.EmulatedArray``): made when the campaign opens, measured uncapped by
    the harness before any layout (its truth, ``hold``), undone at the end."""

    backend = "loop"
    caps_each_device = True

    def problems(self, names, workloads) -> None:
        check_space(self.array, self.system)
        super().problems(names, workloads)

    def words(self) -> str:
        return f"{self.array.devices} emulated device(s) (capped loop devices), {caps_words(self.array)}"

    def creates(self) -> list[str]:
        """The array ``make`` would make (``arrays.emulated.EmulatedArray``), where its backing files would go."""
        count, size = self.array.devices, bytes_words(self.array.device_size)
        return [f"a folder flashscale-array-XXXXXXXX in {choose_backing_root(self.array, self.system)}: {count} "
                f"sparse backing file(s) of {size} each",
                f"{count} loop device(s) on them (losetup --find --show), named LOOP0, LOOP1... below",
                f"a cgroup holding each loop device at its cap ({caps_words(self.array)}; block throttling), lifted "
                "while the harness measures the devices uncapped before the first layout"]

    def stand_ins(self) -> list:
        return [Device(f"LOOP{i}", f"loop:device{i}.img") for i in range(self.array.devices)]

    def make(self, directory: Path) -> None:
        self.made = self.stack.enter_context(EmulatedArray(self.array, self.runner, self.system))

    def truth(self, recorder: Recorder) -> list[str]:
        """The array's devices measured uncapped (``measure.harness``), and the recorder told the caps its rows are
        held to, lowered where this machine cannot carry the ones asked (``CAP_FIT``); the notes' sentences."""
        asked = {"read": self.array.read_bps, "write": self.array.write_bps}
        held, carried, said = harness.hold_local(recorder.sweep_spec, [d.path for d in self.made.devices], asked,
                                                 cap_fit_policy(self.array.cap_fit), recorder.directory, self.runner)
        fitted = replace(self.array, read_bps=round(held["read"]), write_bps=round(held["write"]))
        if fitted != self.array:
            self.made.recap(fitted)
        recorder.hold(fitted.rw_caps(), {name: fitted.rw_caps(name) for name in recorder.layout_caps}, carried)
        store = backing_store_sentence(self.made.workdir, self.system)
        return said + ([store] if store else [])

    def cgroup_procs(self, name: str) -> list[Path]:
        return self.made.cgroup_procs

    def teardown_of(self, name: str, recorder: Recorder) -> Teardown:
        return Teardown(manifest_dir() / f"{self.made.workdir.name}-{name}.json", self.runner, self.system)

    def build(self, name: str, teardown: Teardown) -> Layout:
        devices = self.made.devices
        return layouts.build(name, devices, self.runner, teardown, confirm=[d.id for d in devices],
                             claimed=[d.path for d in devices], options=self.options)
