"""Tear down what an interrupted run left behind, from its manifest, and nothing else.

Without MANIFEST, every manifest in the manifest directory whose run is over; exit status 1 if anything is left
behind or refused. A manifest, or its folder, that is not the user's alone is refused. What an SSH campaign left on
its hosts is undone there only with the campaign given (``--campaign`` and the ``-p`` it ran with): the hosts are
reached as its inventory and SSH parameters say, never as a manifest says. Guide:
docs/howto/real-devices.md#8-after-a-crash-use-flashscale-reap; every option:
docs/reference/commands.md#flashscale-reap.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from .output import add_format, emit

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("manifests", nargs="*", metavar="MANIFEST", help="manifest files to reap (default: scan)")
    parser.add_argument("--manifest-dir", type=Path, default=None, metavar="DIR",
                        help="where to look for manifests (default: /run/flashscale for root)")
    parser.add_argument("--campaign", default=None, metavar="FILE",
                        help="the campaign file an SSH campaign ran: its hosts and SSH parameters reach them")
    parser.add_argument("-p", "--parameter", action="append", default=[], metavar="NAME=YAML",
                        help="a parameter the SSH campaign ran with (as flashscale run -p), e.g. -p INVENTORY=hosts.ini")
    parser.add_argument("--dry-run", action="store_true", help="say what would be undone, undo nothing")
    add_format(parser, json_alias=True)


def _shown(outcome) -> dict:
    """One manifest's outcome as the table shows it: what it lists, and each problem."""
    things = ", ".join(f"{e['kind']} {e.get('path') or e.get('vg') or e.get('name') or ''}".strip()
                       for e in outcome.entries)
    return dict(manifest=outcome.manifest, state=outcome.state, entries=things, problems="; ".join(outcome.problems))


def main(args: argparse.Namespace) -> int:
    import tempfile
    from dataclasses import asdict

    from ..campaigns import over_ssh
    from ..notebooks.execute import load_campaign, parse_overrides
    from ..system import reap
    from ..system.commands import Runner
    from ..system.teardown import manifest_dir

    directory = None if args.manifests else (args.manifest_dir or manifest_dir())
    parameters = {**(load_campaign(args.campaign)["parameters"] if args.campaign else {}),
                  **parse_overrides(args.parameter)}
    with tempfile.TemporaryDirectory(prefix="flashscale-reap-", dir=manifest_dir()) as folder:
        runner = Runner()
        contacts = over_ssh.contacts(parameters, Path(folder), runner)
        outcomes = reap.reap([Path(m) for m in args.manifests], directory, dry_run=args.dry_run, runner=runner,
                             contacts=contacts)
    if outcomes or args.format != "table":
        emit([asdict(o) for o in outcomes], args.format, table=[_shown(o) for o in outcomes])
    else:
        print(f"nothing to reap in {directory}")
    return 1 if any(o.state in ("left-behind", "refused") for o in outcomes) else 0
