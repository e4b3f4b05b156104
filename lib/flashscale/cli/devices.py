"""List block devices with the stable identity to confirm them by, and whether flashscale may erase them.

Each device: path, identity, model, serial, size, and safe or every reason it is not; --format csv and json give
every field (size in bytes). Guide:
docs/howto/real-devices.md#1-find-the-identities; every option: docs/reference/commands.md#flashscale-devices.
"""
from __future__ import annotations

import argparse

from .output import add_format, emit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH", help="only these devices (default: every block device)")
    add_format(parser, json_alias=True)


def main(args: argparse.Namespace) -> int:
    from ..measure.units import size
    from ..system.devices import System

    system = System()
    for path in args.paths:
        system.majmin(path)  # RefusedError names a path that is not a block device
    infos = [system.describe(system.name_of(p)) for p in args.paths] if args.paths else system.discover()
    shown = [dict(path=info.path, size=size(info.size_bytes), model=info.model or "-",
                  identity=info.id or "(no stable identity)",
                  erase="safe" if info.safe else "in use: " + "; ".join(info.reasons)) for info in infos]
    emit([info.as_dict() for info in infos], args.format, table=shown)
    return 0
