"""A campaign on plain directories of the local disk, where loop devices cannot be made: no devices, no erase, no
caps, only ``single`` and ``jbod`` (and ``mounted``); the report says its efficiency compares directories that
share one disk, not devices.

    run(spec, todo, recorder, directory, runner)   each layout in a scratch folder of the campaign's, removed after
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from ..arrays import layouts
from ..arrays.support import MOUNTED
from ..layouts import DESCRIPTORS
from ..measure.recorder import Recorder
from ..system.commands import Runner
from ..system.devices import System
from ..system.teardown import Teardown, manifest_dir

# what plain directories can stand in for (``Descriptor.on_directories``): single, jbod and mounted
LAYOUTS = tuple(name for name, layout in DESCRIPTORS.items() if layout.on_directories)


def run(spec, todo: list[str], recorder: Recorder, directory: Path, runner: Runner) -> None:
    """Each layout of ``todo`` (``spec``: a ``campaign.CampaignSpec``) in its own directories under a scratch folder
    inside the campaign's ``directory``; what was made is recorded in a manifest and removed after."""
    scratch = Path(tempfile.mkdtemp(prefix="scratch-", dir=directory))
    teardown = Teardown(manifest_dir() / f"{directory.name}-{scratch.name}.json", runner, System(runner=runner))
    teardown.record("dir", path=str(scratch))
    try:
        for name in todo:
            recorder.building(name)
            layout = layouts.use_directory(spec.mount_dir, teardown, devices=spec.mount_devices) \
                if name == MOUNTED else layouts.build_directories(name, spec.array.devices, scratch, teardown)
            recorder.sweep(layout, [])
    finally:
        teardown.close()
