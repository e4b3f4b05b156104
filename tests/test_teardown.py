"""Teardown undoes in reverse, keeps going past failures, retries while busy, and keeps its manifest honest."""
from __future__ import annotations

import json

import pytest

from flashscale.errors import CommandError, FlashscaleError
from flashscale.system.teardown import Teardown


def test_undo_runs_last_first_and_the_manifest_goes_when_all_is_undone(tmp_path):
    done = []
    teardown = Teardown(tmp_path / "m.json")
    for name in ("dir", "file", "loop", "mount"):
        teardown.record(name, lambda n=name: done.append(n), path=f"/x/{name}")
    assert [e["kind"] for e in json.loads((tmp_path / "m.json").read_text())["created"]] == ["dir", "file", "loop",
                                                                                             "mount"]
    teardown.close()
    assert done == ["mount", "loop", "file", "dir"]
    assert not (tmp_path / "m.json").exists()


def test_a_failure_does_not_stop_the_rest_and_stays_in_the_manifest(tmp_path):
    done = []
    teardown = Teardown(tmp_path / "m.json", retries=0)
    teardown.record("dir", lambda: done.append("dir"), path="/x")

    def fail():
        raise CommandError(["umount", "/x/m"], 32, "umount: /x/m: not mounted")

    teardown.record("mount", fail, path="/x/m")
    teardown.record("file", lambda: done.append("file"), path="/x/f")
    with pytest.raises(FlashscaleError, match="mount.*/x/m"):
        teardown.close()
    assert done == ["file", "dir"]
    assert json.loads((tmp_path / "m.json").read_text())["created"] == [{"kind": "mount", "path": "/x/m"}]


def test_busy_is_retried_a_bounded_number_of_times(tmp_path):
    attempts = []

    def busy_twice():
        attempts.append(1)
        if len(attempts) < 3:
            raise CommandError(["umount", "/m"], 32, "umount: /m: target is busy.")

    teardown = Teardown(tmp_path / "m.json", retries=5, wait_s=0)
    teardown.record("mount", busy_twice, path="/m")
    teardown.close()
    assert len(attempts) == 3

    always = Teardown(tmp_path / "n.json", retries=2, wait_s=0)
    calls = []
    always.record("mount", lambda: (calls.append(1), (_ for _ in ()).throw(
        CommandError(["umount", "/m"], 32, "target is busy"))), path="/m")
    with pytest.raises(FlashscaleError):
        always.close()
    assert len(calls) == 3
