"""Every layout that needs md or device-mapper, built by ``arrays.layouts.build`` from its descriptor on a VM's real
NVMe namespaces, checked and torn down. Runs inside the VM only (started by tests/test_layout_descriptors.py; its
name has no ``test_`` prefix, so the host's ``pytest tests`` does not collect it)::

    FLASHSCALE_VM_DEVICES='["wwid:nvme.1b36-...", "wwid:nvme.1b36-..."]' IMSM_NO_PLATFORM=1 \\
        python -m pytest tests/vm_guest/guest_layouts.py -p no:cacheprovider

FLASHSCALE_VM_DEVICES lists the identities of at least two QEMU NVMe namespaces these tests may destroy; without it
every test is skipped.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from flashscale import layouts as descriptors
from flashscale.arrays import layouts
from flashscale.system.commands import Runner
from flashscale.system.devices import System
from flashscale.system.teardown import Teardown
from flashscale.system.vmlab.vm import prepare_guest

ENV = "FLASHSCALE_VM_DEVICES"
IN_THE_LAB = [descriptors.known(name) for name in descriptors.BUILT if descriptors.known(name).needs]

pytestmark = pytest.mark.skipif(not os.environ.get(ENV), reason=f"runs inside the VM only: set {ENV}")


@pytest.fixture(scope="module", autouse=True)
def guest_kernel():
    """md and device-mapper loaded, as the VM lab's campaigns have them (``system.vmlab.vm.prepare_guest``)."""
    prepare_guest(Runner(), System())


@pytest.mark.parametrize("descriptor", IN_THE_LAB, ids=lambda d: d.name)
def test_the_layout_is_built_from_its_descriptor_and_undone(descriptor, tmp_path):
    system = System()
    ids = json.loads(os.environ[ENV])
    devices = [d for d in (system.identify(f"/dev/{name}") for name in system.block_names()
                           if name.startswith("nvme")) if d.id in ids][:2]
    assert len(devices) == 2, f"the VM's devices {ids} were not found"
    teardown = Teardown(tmp_path / "manifest.json", Runner(), system)
    try:
        # the devices are this session's: an earlier layout's file system may be on them, as in a campaign
        built = layouts.build(descriptor.name, devices, Runner(), teardown, confirm=[d.id for d in devices],
                              system=system, claimed=[d.path for d in devices])
        mounted = {line.split()[1]: line.split()[2] for line in Path("/proc/mounts").read_text().splitlines()}
        assert [mounted.get(t) for t in built.targets] == [descriptor.file_system_of("xfs")]
        made = [e.details["path"] for e in teardown.entries if e.kind in ("md", "lvm-lv")]
        assert made and all(Path(path).exists() for path in made)
    finally:
        teardown.close()
    assert not (tmp_path / "manifest.json").exists()
    assert not any(Path(path).exists() for path in made)  # the array, the volume: stopped, removed
