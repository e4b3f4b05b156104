"""Bandwidth caps: cgroup v1 for real (as root), cgroup v2 against a stand-in cgroup tree on a fake machine."""
from __future__ import annotations

import json

import pytest

from flashscale.errors import FlashscaleError, UnsupportedError
from flashscale.system.devices import System
from flashscale.system.teardown import Teardown
from flashscale.system.throttle import Throttle, detect

from test_devices import FakeMachine


@pytest.fixture
def machine(tmp_path) -> FakeMachine:
    return FakeMachine(tmp_path / "machine")


def test_v2_caps_are_written_to_io_max_and_the_cgroup_is_recorded_before_it_is_made(machine, tmp_path):
    root = machine.cgroup("v2", tmp_path / "cg2")
    assert detect(machine) == ("v2", root)
    teardown = Teardown(tmp_path / "m.json", machine.runner, machine)
    throttle = Throttle.create(machine, teardown)
    assert json.loads((tmp_path / "m.json").read_text())["created"][0]["path"] == str(throttle.path)
    throttle.cap("7:3", 200_000_000, 100_000_000)
    assert (throttle.path / "io.max").read_text() == "7:3 rbps=200000000 wbps=100000000"
    assert throttle.procs_file == throttle.path / "cgroup.procs"
    (throttle.path / "io.max").unlink()  # cgroupfs files vanish with the directory; a plain one needs help
    teardown.close()
    assert not throttle.path.exists()


def test_v2_without_io_in_subtree_control_says_how_to_enable_it(machine, tmp_path):
    root = machine.cgroup("v2", tmp_path / "cg2")
    (root / "cgroup.subtree_control").write_text("memory\n")
    with pytest.raises(UnsupportedError, match=r"echo \+io"):
        Throttle.create(machine, Teardown(tmp_path / "m.json", machine.runner, machine))
    assert [p.name for p in root.iterdir()] == ["cgroup.controllers", "cgroup.subtree_control"]


def test_v1_blkio_is_preferred_and_no_controller_is_an_error(machine, tmp_path):
    machine.add_mount("cgroup", "/sys/fs/cgroup/cpu", "cgroup", options="rw,cpu")
    with pytest.raises(UnsupportedError, match="no cgroup v1 blkio"):
        detect(machine)
    v2 = machine.cgroup("v2", tmp_path / "cg2")
    (v2 / "cgroup.controllers").write_text("cpu memory\n")  # a v2 hierarchy without io caps nothing
    with pytest.raises(UnsupportedError, match="no cgroup v1 blkio"):
        detect(machine)
    v1 = machine.cgroup("v1", tmp_path / "blkio")
    (v2 / "cgroup.controllers").write_text("cpu io memory\n")
    assert detect(machine) == ("v1", v1)


def test_a_cgroup_that_still_holds_processes_is_not_removed(machine, tmp_path):
    machine.cgroup("v2", tmp_path / "cg2")
    teardown = Teardown(tmp_path / "m.json", machine.runner, machine)
    throttle = Throttle.create(machine, teardown)
    throttle.procs_file.write_text("4242\n")
    with pytest.raises(FlashscaleError, match="4242"):
        teardown.close()
    assert throttle.path.exists()


@pytest.mark.root
def test_v1_caps_are_kept_by_the_kernel_and_removed(tmp_path):
    system = System()
    kind, _ = detect(system)
    teardown = Teardown(tmp_path / "m.json", system.runner, system)
    throttle = Throttle.create(system, teardown, prefix="flashscale-test")
    try:
        throttle.cap("7:0", 123_000_000, None) if kind == "v1" else pytest.skip("machine uses cgroup v2")
        assert "7:0 123000000" in (throttle.path / "blkio.throttle.read_bps_device").read_text()
        assert (throttle.path / "blkio.throttle.write_bps_device").read_text().strip() == ""
    finally:
        teardown.close()
    assert not throttle.path.exists()
