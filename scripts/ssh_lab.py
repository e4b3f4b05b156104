"""``make demo-ssh-cluster``: a campaign over two real OpenSSH servers, made here, measured, and removed.

Each host is a network namespace with its own sshd, host key and the lab's user key (``flashscale.system.ssh.lab_hosts``,
on 10.216.0.0/17, not the tests' range), and two loop devices of its own (``EmulatedArray``, uncapped), named by
identity in a hosts test bed. The lab writes what a user writes for real hosts: an Ansible inventory, a known_hosts
file, the test bed; then ``flashscale run CAMPAIGN`` runs with those as parameters (and the identities confirmed),
and nothing is typed on any host. Every namespace, veth, sshd, loop device and file is recorded in a manifest before
it exists and removed at the end, on error and on Ctrl-C; after kill -9, ``flashscale reap`` removes them.

    .venv/bin/python scripts/ssh_lab.py runners/ssh-cluster.yaml [flashscale run options ...]
"""
from __future__ import annotations

import json
import subprocess
import sys
from contextlib import ExitStack

import yaml

from flashscale.arrays.emulated import ArraySpec, EmulatedArray
from flashscale.system import netns
from flashscale.system.devices import System
from flashscale.system.ssh.lab_hosts import SshLab

HOSTS = 2
SUBNETS = ["10.216.0.0/17", "10.218.0.0/17"]  # not the tests' ranges: a demo left behind stops no test run
DEVICE = ArraySpec(devices=2, device_size=2**30, read_bps=0, write_bps=0)


def run(campaign: str, extra: list[str]) -> int:
    with ExitStack() as stack:
        lab = stack.enter_context(SshLab(HOSTS, subnet=netns.first_free(SUBNETS, System())))
        arrays = [stack.enter_context(EmulatedArray(DEVICE)) for _ in lab.hosts]
        ids = {host.name: [d.id for d in array.devices] for host, array in zip(lab.hosts, arrays)}
        bed = lab.folder / "testbed.yaml"
        bed.write_text(yaml.safe_dump({"name": "ssh-lab", "hosts": ids}))
        print(f"The SSH lab: {', '.join(f'{h.name} at {h.address}' for h in lab.hosts)}; inventory {lab.inventory}",
              file=sys.stderr)
        given = {"INVENTORY": str(lab.inventory), "HOST_GROUP": "storage", "KNOWN_HOSTS": str(lab.known_hosts),
                 "SSH_IDENTITY": str(lab.identity), "SSH_CONFIG": "none", "TESTBED": str(bed),
                 "CONFIRM": [i for each in ids.values() for i in each]}
        # its own process: the campaign's lock is given up when it ends, whatever the lab still holds here
        argv = [sys.executable, "-m", "flashscale.cli", "run", campaign,
                *[a for k, v in given.items() for a in ("-p", f"{k}={json.dumps(v)}")], *extra]
        return subprocess.run(argv).returncode


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(run(sys.argv[1], sys.argv[2:]))
