"""A scratch directory's undo (``system.undo._undo_scratch``) removes ours, with everything in it, and never one
with something mounted inside it (a fresh root's /dev or /sys bound there): removing that would reach into what is
mounted."""
from __future__ import annotations

import pytest

from flashscale.errors import UnsupportedError
from flashscale.system import undo
from flashscale.system.usage import Mount


class Mounted:
    """A machine whose mount table is ``points`` (mountinfo's fifth field), nothing else asked of it."""

    def __init__(self, *points: str):
        self.points = points

    def mounts(self) -> list[Mount]:
        return [Mount("0:1", point, "devtmpfs", "udev") for point in self.points]


def scratch(tmp_path):
    folder = tmp_path / f"{undo.SCRATCH_PREFIX}root-0123abcd"
    (folder / "dev").mkdir(parents=True)
    (folder / undo.SCRATCH_MARKER).write_text("ours\n")
    (folder / "dev" / "null").write_text("stands for a device\n")
    return folder


def test_a_scratch_directory_with_a_mount_inside_is_refused_and_left_whole(tmp_path):
    folder = scratch(tmp_path)
    with pytest.raises(UnsupportedError, match=f"{folder} is not removed: {folder}/dev is mounted in it"):
        undo.UNDO["scratch"]({"path": str(folder)}, None, Mounted("/", str(folder / "dev")))
    assert (folder / "dev" / "null").is_file() and (folder / undo.SCRATCH_MARKER).is_file()


def test_a_mount_beside_it_is_not_inside_it_and_ours_is_removed(tmp_path):
    folder = scratch(tmp_path)
    undo.UNDO["scratch"]({"path": str(folder)}, None, Mounted("/", f"{folder}-other/dev", str(tmp_path)))
    assert not folder.exists()
