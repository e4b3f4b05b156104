"""A workload's scratch directory is removed with everything in it, but only while it still carries our marker."""
from __future__ import annotations

from flashscale.system.commands import Runner
from flashscale.system.devices import System
from flashscale.system.teardown import Teardown
from flashscale.system.undo import SCRATCH_MARKER, make_scratch


def teardown(tmp_path) -> Teardown:
    return Teardown(tmp_path / "manifest.json", Runner(), System())


def test_our_scratch_directory_goes_with_everything_in_it(tmp_path):
    down = teardown(tmp_path)
    folder = make_scratch(tmp_path, "bonnie", down)
    (folder / "sub").mkdir()
    (folder / "sub" / "data").write_bytes(b"x" * 100)
    down.close()
    assert not folder.exists() and not (tmp_path / "manifest.json").exists()


def test_a_scratch_directory_without_our_marker_is_left_alone(tmp_path):
    down = teardown(tmp_path)
    folder = make_scratch(tmp_path, "bonnie", down)
    (folder / SCRATCH_MARKER).unlink()  # something else replaced what we made: not ours to remove
    (folder / "theirs").write_text("keep me")
    down.close()  # refused, with a warning: it is no longer the thing that was recorded
    assert (folder / "theirs").read_text() == "keep me"
