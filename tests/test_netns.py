"""Emulated hosts and background processes: made, recorded, and undone by a teardown or by ``flashscale reap``;
a process is stopped only while its pid still has the start time recorded."""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from flashscale.errors import RefusedError
from flashscale.system import netns, processes
from flashscale.system.commands import Runner
from flashscale.system.devices import System
from flashscale.system.reap import reap
from flashscale.system.teardown import Teardown


def test_a_process_is_stopped_only_while_its_pid_has_the_recorded_start(tmp_path):
    system = System()
    teardown = Teardown(tmp_path / "manifest.json", Runner(), system)
    sleeper = processes.start(["sleep", "60"], teardown, tmp_path / "sleep.log")
    entry = json.loads((tmp_path / "manifest.json").read_text())["created"][0]
    assert entry["kind"] == "process" and entry["process"] == sleeper.pid and entry["pid"] == os.getpid()
    assert entry["start"] == system.process_start(sleeper.pid) is not None
    processes.stop(sleeper.pid, sleeper.start + 1, system)  # another process that reused the pid: left alone
    assert sleeper.running()
    teardown.close()
    assert not sleeper.running() and not (tmp_path / "manifest.json").exists()
    sleeper.popen.wait()


@pytest.mark.root
def test_hosts_a_server_and_a_link_cap_are_undone_by_reap(tmp_path):
    runner = Runner()
    system = System(runner=runner)
    manifest = tmp_path / "manifest.json"
    teardown = Teardown(manifest, runner, system)
    hosts = netns.make_hosts(2, teardown, runner, system, link_bps=10_000_000)
    server = processes.start([*hosts[1].exec_prefix(), "fio", f"--server={hosts[1].address},8765"], teardown,
                             tmp_path / "server.log")
    assert {h.netns for h in hosts} <= set(system.netns_names())
    assert {h.link for h in hosts} <= set(system.net_links())
    assert "tbf" in runner.run(["tc", "qdisc", "show", "dev", hosts[0].link]).stdout
    links = system.net_links()
    recorded = [e for e in json.loads(manifest.read_text())["created"] if e["kind"] in ("veth", "qdisc")]
    assert len(recorded) == 4 and all(e["ifindex"] == links[e["link"]] for e in recorded)  # each link for good
    # the run "dies" here: its manifest is all that is left; a second cluster is refused, told so, and reap undoes it
    with pytest.raises(RefusedError, match=re.escape(f"on {hosts[0].link}; ") + ".*" +
                       re.escape(f"recorded in {manifest}, whose run is over: `flashscale reap` undoes it")):
        netns.check_free(netns.SUBNET, system, tmp_path)
    outcomes = reap([manifest], runner=runner, system=system)
    assert [o.state for o in outcomes] == ["reaped"], outcomes
    assert not {h.netns for h in hosts} & set(system.netns_names())
    assert not {h.link for h in hosts} & set(system.net_links())
    assert not server.running()
    server.popen.wait()


def test_a_range_in_use_is_refused_naming_each_link_and_the_run_that_recorded_it(tmp_path):
    """The links' run as reap finds it: over (reap undoes it), still going, or unknown; a link no manifest records
    (someone else's) gets no such words."""
    class Machine(System):
        def __init__(self, networks):
            super().__init__()
            self.networks = networks

        def ipv4_networks(self):
            return self.networks

    gone = subprocess.Popen(["true"])
    gone.wait()

    def manifest(name: str, pid: int | None, *links: str) -> Path:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"pid": pid, "start": None, "created": [
            {"kind": "veth", "link": link, "netns": f"flashscale-{link[2:8]}-h0"} for link in links]}))
        path.chmod(0o600)  # as flashscale writes one: reap reads no other
        return path

    over = manifest("over", gone.pid, "fs92da900", "fs92da901")
    going = manifest("going", os.getppid(), "fs0a0b0c0")  # pytest's parent: alive, and not this process
    unknown = manifest("unknown", None, "fs1a1b1c0")
    left = Machine([("10.213.1.1/24", "fs92da900"), ("10.213.1.0/24", "fs92da900"), ("10.213.2.1/24", "fs92da901"),
                    ("192.168.7.3/24", "eth0")])
    with pytest.raises(RefusedError) as refused:
        netns.check_free("10.213.0.0/16", left, tmp_path)
    said = str(refused.value)
    assert "(10.213.1.1/24, 10.213.1.0/24 on fs92da900; 10.213.2.1/24 on fs92da901)" in said
    assert f"fs92da900, fs92da901 are recorded in {over}, whose run is over: `flashscale reap` undoes it" in said
    assert "fs0a0b0c0" not in said and "eth0" not in said
    for link, words in (("fs0a0b0c0", f"fs0a0b0c0 is recorded in {going}, whose run is still going"),
                        ("fs1a1b1c0", f"`flashscale reap {unknown}` undoes it once its run is over")):
        with pytest.raises(RefusedError) as refused:
            netns.check_free("10.214.0.0/16", Machine([("10.214.3.1/24", link)]), tmp_path)
        assert words in str(refused.value) and "fs92da900" not in str(refused.value)
    someone = Machine([("10.213.0.0/16", "wg0"), ("10.213.9.0/24", "")])
    with pytest.raises(RefusedError) as refused:
        netns.check_free("10.213.0.0/16", someone, tmp_path)
    assert "(10.213.0.0/16 on wg0; 10.213.9.0/24)" in str(refused.value) and "recorded" not in str(refused.value)
    assert str(netns.check_free("10.215.0.0/16", left, tmp_path)) == "10.215.0.0/16"
    assert {p.name for p in tmp_path.iterdir()} == {"over.json", "going.json", "unknown.json"}  # a dry run
    assert netns.first_free(["10.213.0.0/16", "10.213.0.0/20", "10.213.128.0/17"], left, tmp_path) == "10.213.128.0/17"
    with pytest.raises(RefusedError) as none:
        netns.first_free(["10.213.0.0/17", "10.213.0.0/18"], left, tmp_path)
    assert str(none.value).startswith("no range for the emulated hosts is free: subnet 10.213.0.0/17 is in use")
    assert "; subnet 10.213.0.0/18 is in use" in str(none.value)


def test_a_link_that_is_no_longer_the_one_recorded_is_left_alone():
    """Same name, another ifindex: made by someone else after ours went. Its undo runs nothing."""
    from flashscale.system import undo

    class Machine:
        def net_links(self):
            return {"fsabc1230": 41}

    class Refuse:
        def run(self, argv, **kw):
            raise AssertionError(f"ran {argv}")

    for kind in ("veth", "qdisc"):
        undo.UNDO[kind]({"link": "fsabc1230", "ifindex": 7, "netns": "flashscale-abc123-h0"}, Refuse(), Machine())
    assert undo._our_link({"link": "fsabc1230", "ifindex": 41}, Machine())
