"""List block devices with the stable identity to confirm them by, and whether flashscale may erase them.

Each device: path, identity, model, serial, size, and safe or every reason it is not. Guide:
docs/howto/real-devices.md#1-find-the-identities; every option: docs/reference/commands.md#flashscale-devices.
"""
from __future__ import annotations

import argparse
import json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH", help="only these devices (default: every block device)")
    parser.add_argument("--json", action="store_true", help="one JSON list instead of a table")


def main(args: argparse.Namespace) -> int:
    from ..measure.units import size
    from ..system.devices import System

    system = System()
    for path in args.paths:
        system.majmin(path)  # RefusedError names a path that is not a block device
    infos = [system.describe(system.name_of(p)) for p in args.paths] if args.paths else system.discover()
    if args.json:
        print(json.dumps([info.as_dict() for info in infos], indent=1))
        return 0
    for info in infos:
        verdict = "safe" if info.safe else "in use: " + "; ".join(info.reasons)
        print(f"{info.path}\t{size(info.size_bytes)}\t{info.model or '-'}\t{info.id or '(no stable identity)'}\n"
              f"\t{verdict}")
    return 0
