"""Emulated hosts and background processes: made, recorded, and undone by a teardown or by ``flashscale reap``;
a process is stopped only while its pid still has the start time recorded."""
from __future__ import annotations

import json
import os

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
    with pytest.raises(RefusedError, match=f"in use.* on {hosts[0].link}.*flashscale reap"):  # a second cluster
        netns.check_free(netns.SUBNET, system)
    # the run "dies" here: its manifest is all that is left, and reap undoes it
    outcomes = reap([manifest], runner=runner, system=system)
    assert [o.state for o in outcomes] == ["reaped"], outcomes
    assert not {h.netns for h in hosts} & set(system.netns_names())
    assert not {h.link for h in hosts} & set(system.net_links())
    assert not server.running()
    server.popen.wait()


def test_a_range_in_use_is_refused_naming_each_link_and_reap_only_for_a_link_of_ours():
    class Machine:
        def __init__(self, networks):
            self.networks = networks

        def ipv4_networks(self):
            return self.networks

    left = Machine([("10.213.1.1/24", "fs92da900"), ("10.213.1.0/24", "fs92da900"), ("192.168.7.3/24", "eth0")])
    with pytest.raises(RefusedError) as refused:
        netns.check_free("10.213.0.0/16", left)
    assert "(10.213.1.1/24, 10.213.1.0/24 on fs92da900)" in str(refused.value)
    assert "fs92da900 is the root end of an emulated host's link" in str(refused.value)
    assert "flashscale reap" in str(refused.value)
    someone = Machine([("10.213.0.0/16", "wg0"), ("10.213.9.0/24", "")])
    with pytest.raises(RefusedError) as refused:
        netns.check_free("10.213.0.0/16", someone)
    assert "(10.213.0.0/16 on wg0; 10.213.9.0/24)" in str(refused.value) and "reap" not in str(refused.value)
    assert str(netns.check_free("10.214.0.0/16", left)) == "10.214.0.0/16"


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
