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
    actions = parser.add_subparsers(dest="action", required=True, metavar="{add,list,merge}")
    add = actions.add_parser("add", help="record the campaigns under FOLDER in the archive")
    add.add_argument("folder", metavar="FOLDER", help="a campaign folder, or a folder of several")
    add.add_argument("--keep-serials", action="store_true",
                     help="store device serials and identities as they are (default: hashed)")
    listing = actions.add_parser("list", help="the archive's campaigns, oldest first")
    listing.add_argument("--host", default=None, help="only campaigns run on this host")
    listing.add_argument("--model", default=None, help="only campaigns with a device of this model")
    listing.add_argument("--layout", default=None, help="only campaigns that measured this layout")
    listing.add_argument("--since", default=None, metavar="YYYY-MM-DD", help="only campaigns run on or after")
    listing.add_argument("--last", default=None, metavar="N", help="only the N that ran last of those")
    listing.add_argument("--format", choices=["table", "json"], default="table", help="output format")
    merge = actions.add_parser("merge", help="add another archive's campaigns to this one")
    merge.add_argument("other", metavar="OTHER", help="the other archive file")
    for sub in (add, listing, merge):
        sub.add_argument("--archive", required=True, metavar="FILE", help="the archive file (made by add or merge)")


def main(args: argparse.Namespace) -> int:
    from ..measure import archive

    if args.action == "add":
        for entry, added in archive.add(args.archive, args.folder, keep_serials=args.keep_serials):
            said = "added" if added else "already archived"
            print(f"{said}: {entry.name} {entry.id[:12]} ({entry.runs} rows, {', '.join(entry.layouts)})")
        return 0
    if args.action == "merge":
        added, already = archive.merge(args.archive, args.other)
        print(f"{added} campaign(s) added, {already} already archived")
        return 0
    return _list(args)


def _list(args: argparse.Namespace) -> int:
    from ..measure import archive, sides

    given = {k: sides.checked_value(k, str(v)) for k in ("host", "model", "layout", "since", "last")
             if (v := getattr(args, k)) is not None}
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
