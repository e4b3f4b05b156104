"""Keep every campaign in one archive file (SQLite), list them, merge two archives.

flashscale archive add FOLDER --archive FILE records each campaign under FOLDER (its machine, environment,
layouts, devices with serials hashed unless --keep-serials, and its rows); archive list filters by host, device
model, layout and date; archive merge OTHER adds another archive's campaigns, none lost or doubled. flashscale
compare takes archive:FILE?layout=NAME&last=N as either side. Guide: docs/howto/compare.md.
"""
from __future__ import annotations

import argparse
import json
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["add", "list", "merge"], metavar="ACTION",
                        help="add: record the campaigns under PATH; list: the archive's campaigns, oldest first; "
                             "merge: add the campaigns of the archive PATH")
    parser.add_argument("path", nargs="?", default=None, metavar="PATH",
                        help="add: a campaign folder, or a folder of several; merge: the other archive file")
    parser.add_argument("--archive", required=True, metavar="FILE", help="the archive file (add and merge make it)")
    parser.add_argument("--keep-serials", action="store_true",
                        help="add: store device serials and identities as they are (default: hashed)")
    parser.add_argument("--host", default=None, help="list: only campaigns run on this host")
    parser.add_argument("--model", default=None, help="list: only campaigns with a device of this model")
    parser.add_argument("--layout", default=None, help="list: only campaigns that measured this layout")
    parser.add_argument("--since", default=None, metavar="YYYY-MM-DD", help="list: only campaigns run on or after")
    parser.add_argument("--last", default=None, metavar="N", help="list: only the N that ran last of those")
    parser.add_argument("--format", choices=["table", "json"], default="table", help="list: output format")


FILTERS = ("host", "model", "layout", "since", "last")


def main(args: argparse.Namespace) -> int:
    from ..errors import ConfigError
    from ..measure import archive

    if (args.path is None) != (args.action == "list"):
        raise ConfigError(f"flashscale archive {args.action}: " + (
            "takes no PATH" if args.action == "list" else "name the " + (
                "folder to add" if args.action == "add" else "archive to merge")))
    if args.action != "list" and any(getattr(args, f) is not None for f in FILTERS):
        raise ConfigError(f"flashscale archive {args.action}: --host, --model, --layout, --since and --last "
                          "filter a listing only")
    if args.keep_serials and args.action != "add":
        raise ConfigError(f"flashscale archive {args.action}: --keep-serials is for add only")
    if args.action == "add":
        for entry, added in archive.add(args.archive, args.path, keep_serials=args.keep_serials):
            said = "added" if added else "already archived"
            print(f"{said}: {entry.name} {entry.id[:12]} ({entry.runs} rows, {', '.join(entry.layouts)})")
        return 0
    if args.action == "merge":
        added, already = archive.merge(args.archive, args.path)
        print(f"{added} campaign(s) added, {already} already archived")
        return 0
    return _list(args)


def _list(args: argparse.Namespace) -> int:
    from ..measure import archive, sides

    given = {k: sides.checked_value(k, str(v)) for k in FILTERS if (v := getattr(args, k)) is not None}
    entries = archive.listed(args.archive, archive.Filters(**given))
    if args.format == "json":
        print(json.dumps([vars(e) | {"models": list(e.models), "layouts": list(e.layouts)} for e in entries],
                         indent=1))
        return 0
    for e in entries:
        print(f"{e.id[:12]}  {e.run_id or e.added_at:<16.16}  {e.hostname or '-':<16.16}  {e.name:<20.20}  "
              f"{','.join(e.layouts):<24.24}  {','.join(e.models) or '-':<.30}")
    print(f"{len(entries)} campaign(s)", file=sys.stderr)
    return 0
