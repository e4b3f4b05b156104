"""``flashscale reap``: only finished runs, only what their manifest lists, never what is no longer ours.

Reaping a run killed on real loop devices is in test_layouts_loop.py.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from flashscale import cli
from flashscale.system import reap, undo
from flashscale.system.commands import Runner
from flashscale.system.devices import System
from flashscale.system.teardown import Teardown
from flashscale.errors import ConfigError, RefusedError

from test_devices import FakeMachine


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def write(path, created, **top):
    """A manifest as flashscale writes one: the user's alone (mode 0600, in a folder of mode 0700)."""
    path.write_text(json.dumps({**top, "created": created}))
    path.chmod(0o600)
    return path


def test_the_owner_is_the_top_level_pid_else_the_one_pid_the_entries_carry():
    assert reap.owner_pid({"pid": 7, "created": [{"pid": 8}]}) == 7
    assert reap.owner_pid({"created": [{"kind": "dir", "pid": 8}, {"kind": "mount", "pid": 8}]}) == 8
    assert reap.owner_pid({"created": [{"pid": 8}, {"pid": 9}]}) is None
    assert reap.owner_pid({"created": [{"kind": "dir"}]}) is None


def test_scanning_reaps_finished_runs_and_leaves_running_and_unknown_ones(tmp_path):
    folder = tmp_path / "made"
    folder.mkdir()
    (folder / "flashscale-t0.0.0").write_text("fio data")
    manifests = tmp_path / "manifests"
    manifests.mkdir(mode=0o700)
    finished = write(manifests / "a.json", [{"kind": "dir", "path": str(folder), "pid": dead_pid()}])
    running = write(manifests / "b.json", [{"kind": "dir", "path": str(tmp_path), "pid": os.getppid()}])
    unknown = write(manifests / "c.json", [{"kind": "dir", "path": str(tmp_path)}])
    (manifests / "d.json").write_text("not json")
    (manifests / "d.json").chmod(0o600)
    outcomes = {o.manifest: o.state for o in reap.reap(directory=manifests)}
    assert outcomes == {str(finished): "reaped", str(running): "running", str(unknown): "unknown-owner",
                        str(manifests / "d.json"): "unreadable"}
    assert not folder.exists() and not finished.exists() and running.exists() and unknown.exists()


def test_a_manifest_names_its_writer_by_pid_and_start_time(tmp_path):
    system = System()
    Teardown(tmp_path / "m.json", Runner(), system).record("dir", path=str(tmp_path / "made"))
    written = json.loads((tmp_path / "m.json").read_text())
    assert written["pid"] == os.getpid() and written["start"] == system.process_start(os.getpid()) is not None


def test_a_manifest_whose_pid_another_process_took_since_is_reaped(tmp_path):
    """The writer is its pid and start time; a manifest from before start times were recorded is left alone while
    its pid is in use (that cannot be told from a run in progress)."""
    machine = FakeMachine(tmp_path / "machine")
    machine.process(4242, start=1000)
    manifests = tmp_path / "manifests"
    manifests.mkdir(mode=0o700)
    for name, start in (("writer", 1000), ("reused", 999), ("older", None)):
        (tmp_path / name).mkdir()
        top = {"pid": 4242} if start is None else {"pid": 4242, "start": start}
        write(manifests / f"{name}.json", [{"kind": "dir", "path": str(tmp_path / name), "pid": 4242}], **top)
    outcomes = {o.manifest: o.state for o in reap.reap(directory=manifests, runner=machine.runner, system=machine)}
    assert outcomes == {str(manifests / "writer.json"): "running", str(manifests / "reused.json"): "reaped",
                        str(manifests / "older.json"): "running"}
    assert (tmp_path / "writer").exists() and not (tmp_path / "reused").exists() and (tmp_path / "older").exists()


def test_a_named_manifest_without_a_pid_is_reaped(tmp_path):
    made = tmp_path / "flashscale-single-x"
    made.mkdir()
    manifest = write(tmp_path / "m.json", [{"kind": "dir", "path": str(made)}, {"kind": "file",
                                                                                "path": str(tmp_path / "gone.img")}])
    assert [o.state for o in reap.reap([manifest])] == ["reaped"]
    assert not made.exists() and not manifest.exists()


def test_only_our_own_files_are_removed_and_what_is_left_is_kept_in_the_manifest(tmp_path, capsys):
    made = tmp_path / "ours"
    made.mkdir()
    (made / "flashscale-t1.0.0").write_text("fio data")
    (made / "notes.txt").write_text("someone put this here")
    manifest = write(tmp_path / "m.json", [{"kind": "dir", "path": str(made)}])
    assert cli.main(["reap", str(manifest)]) == 1
    assert "left-behind" in capsys.readouterr().out
    assert sorted(p.name for p in made.iterdir()) == ["notes.txt"]
    assert json.loads(manifest.read_text())["created"][0]["path"] == str(made)


def test_an_unknown_kind_is_never_guessed_at(tmp_path):
    manifest = write(tmp_path / "m.json", [{"kind": "zpool", "path": "/dev/whatever"}])
    [outcome] = reap.reap([manifest])
    assert outcome.state == "left-behind" and "manifest kind 'zpool' is unknown" in outcome.problems[0]
    with pytest.raises(ConfigError):
        undo.undo("zpool", {}, None, None)


def test_a_missing_or_foreign_manifest_is_named(tmp_path):
    with pytest.raises(ConfigError, match="nope.json cannot be read"):
        reap.reap([tmp_path / "nope.json"])
    write(tmp_path / "other.json", [])
    (tmp_path / "other.json").write_text('{"some": "thing"}')
    with pytest.raises(ConfigError, match="other.json cannot be read as a flashscale manifest"):
        reap.reap([tmp_path / "other.json"])


def test_a_dry_run_undoes_nothing(tmp_path):
    made = tmp_path / "ours"
    made.mkdir()
    manifest = write(tmp_path / "m.json", [{"kind": "dir", "path": str(made)}])
    [outcome] = reap.reap([manifest], dry_run=True)
    assert outcome.state == "planned" and made.exists() and manifest.exists()


def test_an_md_array_is_stopped_and_only_members_that_are_still_ours_are_cleared(tmp_path):
    machine = FakeMachine(tmp_path / "machine", md=True)
    machine.disk("nvme0n1", eui="0025385b71b00000")
    machine.disk("nvme1n1", eui="0025385b71b0beef")  # a different device sits where member 1 was
    machine.runner.history.append(("mdadm", "--create", "/dev/md/flashscale-x"))  # the array the run left
    manifest = write(tmp_path / "m.json", [
        {"kind": "md", "path": "/dev/md/flashscale-x", "members": [
            {"path": "/dev/nvme0n1", "id": "eui:0025385b71b00000"},
            {"path": "/dev/nvme1n1", "id": "eui:0025385b71b00001"}]}])
    [outcome] = reap.reap([manifest], runner=machine.runner, system=machine)
    assert outcome.state == "reaped"
    assert machine.runner.history[1:] == [("mdadm", "--stop", "/dev/md/flashscale-x"),
                                          ("mdadm", "--zero-superblock", "/dev/nvme0n1")]


def test_a_file_outside_a_directory_of_ours_is_never_removed(tmp_path):
    """A manifest can be edited or forged: a "file" entry removes only a file in a flashscale-* directory."""
    foreign = tmp_path / "data" / "results.db"
    foreign.parent.mkdir()
    foreign.write_text("someone's data")
    ours = tmp_path / "flashscale-array-x" / "device0.img"
    ours.parent.mkdir()
    ours.write_bytes(b"\0" * 4096)
    link = tmp_path / "flashscale-array-y" / "device0.img"
    link.parent.mkdir()
    link.symlink_to(foreign)
    manifest = write(tmp_path / "m.json", [{"kind": "file", "path": str(p)} for p in (foreign, ours, link)])
    [outcome] = reap.reap([manifest])
    assert outcome.state == "left-behind"
    assert foreign.read_text() == "someone's data" and link.is_symlink() and not ours.exists()


def test_a_mount_that_is_now_of_something_else_is_left_alone(tmp_path):
    machine = FakeMachine(tmp_path / "machine")
    machine.add_mount("tmpfs", "/mnt/y")
    manifest = write(tmp_path / "m.json", [{"kind": "mount", "path": "/mnt/y", "source": "/dev/loop3"}])
    [outcome] = reap.reap([manifest], runner=machine.runner, system=machine)
    assert machine.runner.history == [] and outcome.state == "left-behind"


def test_a_mount_that_is_now_of_another_device_is_left_alone(tmp_path):
    machine = FakeMachine(tmp_path / "machine")
    machine.disk("sdb", **{"device/wwid": "naa.2"})
    machine.add_mount("/dev/sdb", "/mnt/x")
    manifest = write(tmp_path / "m.json", [{"kind": "mount", "path": "/mnt/x", "source": "/dev/loop3"}])
    [outcome] = reap.reap([manifest], runner=machine.runner, system=machine)
    assert machine.runner.history == [] and outcome.state == "left-behind"


def test_a_manifest_or_folder_that_is_not_the_users_alone_is_refused_and_nothing_in_it_is_undone(tmp_path):
    """A manifest is read only when it (mode 0600) and its folder (0700) are the user's alone, neither a symlink:
    anyone who could write either could make reap undo what they chose."""
    made = tmp_path / "flashscale-x"
    made.mkdir()
    manifests = tmp_path / "manifests"
    manifests.mkdir(mode=0o755)
    manifests.chmod(0o755)
    planted = write(manifests / "planted.json", [{"kind": "dir", "path": str(made), "pid": dead_pid()}])
    with pytest.raises(RefusedError, match="manifests is owned by uid .*, mode 755, not a folder"):
        reap.reap(directory=manifests)
    with pytest.raises(RefusedError, match="manifests is owned by uid .*, mode 755"):
        reap.reap([planted])
    manifests.chmod(0o700)
    planted.chmod(0o644)
    ours = write(manifests / "ours.json", [{"kind": "file", "path": str(made / "gone.img"), "pid": dead_pid()}])
    outcomes = {o.manifest: o for o in reap.reap(directory=manifests)}
    assert outcomes[str(planted)].state == "refused" and "mode 644, not a file" in outcomes[str(planted)].problems[0]
    assert outcomes[str(ours)].state == "reaped" and made.exists() and planted.exists()
    (manifests / "link.json").symlink_to(planted)
    with pytest.raises(RefusedError, match="link.json is a symlink"):
        reap.reap([manifests / "link.json"])
    assert cli.main(["reap", "--manifest-dir", str(manifests)]) == 1 and made.exists()


def test_a_teardown_writes_its_manifest_for_its_user_alone(tmp_path):
    teardown = Teardown(tmp_path / "m.json", Runner(), System())
    teardown.record("dir", path=str(tmp_path / "made"))
    assert oct((tmp_path / "m.json").stat().st_mode & 0o777) == "0o600"


def test_a_remote_entry_never_takes_how_to_reach_its_host_from_the_manifest(tmp_path):
    """An entry as an older flashscale wrote it, or as someone forges one, with ssh options whose ProxyCommand would
    run a command: reap without the campaign reaches no host and runs nothing; the entry is kept."""
    evil = tmp_path / "ssh_config"
    evil.write_text(f"ProxyCommand touch {tmp_path / 'X'}\n")
    manifest = write(tmp_path / "m.json", [{"kind": "remote", "name": "n1", "address": "192.0.2.1", "port": 22,
                                            "user": "root", "ship": "/tmp/flashscale-ship-0-n1", "manifests": [],
                                            "ssh": {"known_hosts": str(evil), "config": str(evil)}}])
    [outcome] = reap.reap([manifest])
    assert outcome.state == "left-behind" and "needs the campaign to reach it" in outcome.problems[0]
    assert not (tmp_path / "X").exists() and json.loads(manifest.read_text())["created"][0]["name"] == "n1"
