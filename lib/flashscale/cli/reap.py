"""Tear down what an interrupted run left behind, from its manifest, and nothing else.

Without MANIFEST, every manifest in the manifest directory whose run is over; exit status 1 if anything is left
behind. Guide: docs/howto/real-devices.md#8-after-a-crash-use-flashscale-reap; every option:
docs/reference/commands.md#flashscale-reap.
"""
from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from ..system import reap
from ..system.teardown import manifest_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("manifests", nargs="*", metavar="MANIFEST", help="manifest files to reap (default: scan)")
    parser.add_argument("--manifest-dir", type=Path, default=None, metavar="DIR",
                        help="where to look for manifests (default: /run/flashscale for root)")
    parser.add_argument("--dry-run", action="store_true", help="say what would be undone, undo nothing")
    parser.add_argument("--json", action="store_true", help="one JSON list of outcomes")


def main(args: argparse.Namespace) -> int:
    directory = None if args.manifests else (args.manifest_dir or manifest_dir())
    outcomes = reap.reap([Path(m) for m in args.manifests], directory, dry_run=args.dry_run)
    if args.json:
        print(json.dumps([asdict(o) for o in outcomes], indent=1))
    else:
        for outcome in outcomes:
            things = ", ".join(f"{e['kind']} {e.get('path') or e.get('vg') or ''}".strip() for e in outcome.entries)
            print(f"{outcome.manifest}: {outcome.state}" + (f" ({things})" if things else "")
                  + "".join(f"\n\t{p}" for p in outcome.problems))
        if not outcomes:
            print(f"nothing to reap in {directory}")
    return 1 if any(o.state == "left-behind" for o in outcomes) else 0
