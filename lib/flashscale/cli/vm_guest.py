"""Inside the VM lab: measure the campaign the host asked for (started by the lab, not by hand).

The host (``campaigns.vmlab.run_campaign``) boots the VM with this command and a request file; the campaign runs as
a test bed of the lab's NVMe devices, and the answer goes back beside the request. Guide: docs/howto/vm-lab.md;
every option: docs/reference/commands.md#flashscale-vm-guest.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import FlashscaleError

NO_FLASH = ("The VM's NVMe devices are files of the host's: there is no flash to precondition, so they were not "
            "written in full after each erase (PRECONDITION_PASSES is for real devices).")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("request", type=Path, help="the request file the VM lab wrote")


def main(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from ..arrays.testbed import TestBed
    from ..campaigns import campaign, vmlab
    from ..system.commands import Runner
    from ..system.devices import System
    from ..system.vmlab.vm import prepare_guest

    request = vmlab.guest_request(args.request)
    runner = Runner()
    try:
        prepared = prepare_guest(runner, System(runner=runner))
        host_spec = campaign.CampaignSpec.from_dict(request["spec"])
        spec = replace(host_spec, testbed=request["testbed"], confirm=TestBed.load(request["testbed"]).ids,
                       dry_run=False, precondition_passes=0)
        result = campaign.run(spec, runner, progress=True, guest={
            "facts": request["facts"], "spec": request["spec"],
            "notes": [*request["notes"], f"In the guest flashscale {'; '.join(prepared)}.", NO_FLASH]})
    except FlashscaleError as exc:
        vmlab.answer(request, error=str(exc), kind=type(exc).__name__)
        raise
    vmlab.answer(request, directory=str(result.directory), notes=result.notes)
    return 0
