"""A campaign on plain directories of the local disk, where loop devices cannot be made: no devices, no erase, no
caps, only the layouts plain directories can stand in for (``single``, ``jbod`` and ``mounted``:
``Descriptor.on_directories``); the report says its efficiency compares directories that share one disk, not
devices.

    OnDirectories(runner, array, options, mounted, notes)   the place (``campaigns.place.Place``): a scratch folder
                                                             of the campaign's, each layout's directories in it,
                                                             removed after the layout is measured
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from ..arrays import layouts
from ..arrays.layouts import Layout
from ..layouts import DESCRIPTORS, describe
from ..measure.recorder import Recorder
from ..system.teardown import Teardown, manifest_dir
from .place import Place

# what plain directories can stand in for (``Descriptor.on_directories``): single, jbod and mounted
LAYOUTS = tuple(name for name, layout in DESCRIPTORS.items() if layout.on_directories)
WORDS = "plain directories on the local disk (no devices, no caps)"


class OnDirectories(Place):
    """Directories of a scratch folder inside the campaign's own, as many as the layout's devices, all on whatever
    disk holds them; layouts that need block devices are skipped, said in the notes."""

    backend = "directory"

    def words(self) -> str:
        return WORDS

    def build_problem(self, name: str) -> str | None:
        return None if describe(name).on_directories else "needs block devices; this run measures plain directories"

    def problems(self, names, workloads) -> None:
        """Nothing to refuse: a layout plain directories cannot stand in for is skipped (``cannot_measure``)."""

    def cannot_measure(self, name: str) -> str | None:
        return None if describe(name).on_directories else "plain directories cannot be striped into an array"

    def creates(self) -> list[str]:
        return ["a scratch folder scratch-XXXXXXXX in the campaign folder, removed after the campaign"]

    def layout_commands(self, name: str) -> str:
        count = describe(name).devices_used(self.array.devices)
        return f"mkdir scratch-XXXXXXXX/flashscale-{name}-XXXXXXXX and {count} director{'y' if count == 1 else 'ies'} in it"

    def make(self, directory: Path) -> None:
        self.scratch = Path(tempfile.mkdtemp(prefix="scratch-", dir=directory))
        self.manifest = f"{directory.name}-{self.scratch.name}"
        teardown = Teardown(manifest_dir() / f"{self.manifest}.json", self.runner, self.system)
        self.stack.callback(teardown.close)
        teardown.record("dir", path=str(self.scratch))

    def teardown_of(self, name: str, recorder: Recorder) -> Teardown:
        return Teardown(manifest_dir() / f"{self.manifest}-{name}.json", self.runner, self.system)

    def build(self, name: str, teardown: Teardown) -> Layout:
        return layouts.build_directories(name, self.array.devices, self.scratch, teardown)
