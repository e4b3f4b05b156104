"""Erase devices named by path or identity, only after the guard passes them and their identities are confirmed.

If any device is refused, none is erased and the exit status is 1; --dry-run checks everything and prints the
commands. Each device erased (or, with --dry-run, each that would be) is one row: a table by default, --format json
one JSON record a line (JSON Lines, as --record keeps them), --format csv one line of CSV. Guide:
docs/howto/real-devices.md#3-erase-dry-run-first; every option: docs/reference/commands.md#flashscale-erase.
"""
from __future__ import annotations

import argparse
import json

from ..arrays import erase
from .output import add_format, emit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("devices", nargs="+", metavar="DEVICE", help="a device path or identity")
    parser.add_argument("--confirm", action="append", required=True, metavar="ID[,ID...]",
                        help="the identities of the devices named, comma-separated (may be repeated)")
    parser.add_argument("--method", choices=erase.METHODS, default="discard", help="how to erase (default discard)")
    parser.add_argument("--fallback", choices=erase.METHODS, default=None,
                        help="method to use when discard is unsupported or leaves a signature (default: none)")
    parser.add_argument("--wipe-signatures", nargs="?", const="all", default=None, metavar="TYPE[,TYPE...]",
                        help="erase even devices that carry a signature (all, or only these types, e.g. xfs)")
    parser.add_argument("--dry-run", action="store_true", help="check everything, print the commands, run nothing")
    parser.add_argument("--record", metavar="FILE", help="append one JSON line per erased device to FILE")
    add_format(parser)


def _wipe(value: str | None) -> bool | list[str]:
    if value is None:
        return False
    return True if value == "all" else [v.strip() for v in value.split(",") if v.strip()]


def _shown(record: dict) -> dict:
    """One erase record as the table shows it: its commands as words, one after the other."""
    commands = "; ".join(c if isinstance(c, str) else " ".join(map(str, c)) for c in record.get("commands", []))
    return dict(device=record["device"], id=record["id"], method=record["method"], commands=commands,
                note=record.get("note") or ("dry run: nothing ran" if record.get("dry_run") else ""))


def main(args: argparse.Namespace) -> int:
    from ..arrays.guard import Guard
    from ..system.commands import Runner
    from ..system.devices import System

    runner = Runner()
    system = System(runner=runner)
    devices = [system.resolve(name) for name in args.devices]
    guard = Guard(devices, ",".join(args.confirm), _wipe(args.wipe_signatures), system)
    records = erase.erase(devices, guard, runner, method=args.method, fallback=args.fallback, dry_run=args.dry_run)
    emit(records, args.format, table=[_shown(item) for item in records], json_lines=True)
    if args.record and not args.dry_run:
        with open(args.record, "a") as fh:
            fh.writelines(json.dumps(item) + "\n" for item in records)
    return 0
