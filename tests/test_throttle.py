"""Bandwidth caps: cgroup v1 for real (as root), cgroup v2 against a stand-in cgroup tree."""
from __future__ import annotations

from pathlib import Path

import pytest

from flashscale.errors import UnsupportedError
from flashscale.system.throttle import Throttle, detect


def fake_v2(tmp_path: Path, subtree: str = "io memory") -> Path:
    root = tmp_path / "cg2"
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpu io memory pids\n")
    (root / "cgroup.subtree_control").write_text(subtree + "\n")
    mounts = tmp_path / "mounts"
    mounts.write_text(f"cgroup2 {root} cgroup2 rw,nosuid 0 0\n")
    return mounts


def test_v2_caps_are_written_to_io_max(tmp_path):
    mounts = fake_v2(tmp_path)
    assert detect(mounts) == ("v2", tmp_path / "cg2")
    throttle = Throttle.create(proc_mounts=mounts)
    throttle.cap("7:3", 200_000_000, 100_000_000)
    assert (throttle.path / "io.max").read_text() == "7:3 rbps=200000000 wbps=100000000"
    assert throttle.procs_file == throttle.path / "cgroup.procs"
    (throttle.path / "io.max").unlink()  # cgroupfs files vanish with the directory; a plain one needs help
    throttle.remove()
    assert not throttle.path.exists()


def test_v2_without_io_in_subtree_control_says_how_to_enable_it(tmp_path):
    with pytest.raises(UnsupportedError, match=r"echo \+io"):
        Throttle.create(proc_mounts=fake_v2(tmp_path, subtree="memory"))


def test_v1_blkio_is_preferred_and_no_controller_is_an_error(tmp_path):
    mounts = tmp_path / "mounts"
    mounts.write_text("cgroup /sys/fs/cgroup/blkio cgroup rw,relatime,blkio 0 0\n")
    assert detect(mounts) == ("v1", Path("/sys/fs/cgroup/blkio"))
    mounts.write_text("proc /proc proc rw 0 0\n")
    with pytest.raises(UnsupportedError, match="no cgroup v1 blkio"):
        detect(mounts)


def test_a_cgroup_that_still_holds_processes_is_not_removed(tmp_path):
    throttle = Throttle.create(proc_mounts=fake_v2(tmp_path))
    throttle.procs_file.write_text("4242\n")
    with pytest.raises(UnsupportedError, match="4242"):
        throttle.remove()
    assert throttle.path.exists()


@pytest.mark.root
def test_v1_caps_are_kept_by_the_kernel_and_removed():
    kind, _ = detect()
    throttle = Throttle.create(prefix="flashscale-test")
    try:
        throttle.cap("7:0", 123_000_000, None) if kind == "v1" else pytest.skip("machine uses cgroup v2")
        assert "7:0 123000000" in (throttle.path / "blkio.throttle.read_bps_device").read_text()
        assert (throttle.path / "blkio.throttle.write_bps_device").read_text().strip() == ""
    finally:
        throttle.remove()
    assert not throttle.path.exists()
