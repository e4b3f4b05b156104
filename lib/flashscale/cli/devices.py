"""List block devices with the stable identity to confirm them by, and whether flashscale may erase them.

For each device: path, id (its identity: WWN, NGUID, EUI-64, model+serial+namespace, or a loop device's backing
file), model, serial, firmware, size in bytes, rotational, NUMA node, and a verdict: safe, or every reason it is not
(mounted, a member of a mounted btrfs, held by md/dm/LVM, active swap, the root disk, a signature, no identity).
"""
from __future__ import annotations

import argparse
import json

from ..measure.units import size
from ..system.devices import System


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH", help="only these devices (default: every block device)")
    parser.add_argument("--json", action="store_true", help="one JSON list instead of a table")


def main(args: argparse.Namespace) -> int:
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
