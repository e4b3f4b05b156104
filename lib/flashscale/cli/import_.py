"""Import fio output from anywhere (fio 2.0 to 3.x: json, json+, terse, normal, client/server) into a campaign folder.

flashscale import PATH... --to DIR --layout NAME --devices N; or --pattern '{layout}/{bs}/{rw}-{iodepth}-{numjobs}.json'
or --map FILE for what a file cannot say (the file wins where its name disagrees; a job's filename list of devices
gives its device count). DIR is new or an earlier import's. Files are read whatever their names; those that are
not fio's output are left aside by their content. Bad files are refused by name and the rest imported (exit
status 3); no fio output at all is an error (exit status 1). Then: flashscale analyze DIR --reference LAYOUT.
How to: docs/howto/import.md; what it reads of each fio version and every outcome: docs/reference/import.md
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..measure.fio_import import file_names

SOME_REFUSED = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="fio output files, folders or globs")
    parser.add_argument("--to", required=True, metavar="DIR", help="the campaign folder: new, or an earlier import's")
    parser.add_argument("--layout", default=None, help="the layout of every file (unless --pattern or --map says)")
    parser.add_argument("--devices", default=None, type=int, metavar="N",
                        help="devices under every file's layout (unless --pattern or --map says, or a job's "
                             "filename lists its devices)")
    parser.add_argument("--host", default=None, help="the host that ran fio (a client/server file names its own)")
    parser.add_argument("--pattern", default=None, metavar="PATTERN",
                        help="the end of each file's path, with fields: "
                             f"{', '.join('{' + f + '}' for f in file_names.FIELDS)}, {{*}}; e.g. "
                             "'{layout}/{bs}/{rw}-{iodepth}-{numjobs}.json' (fio-plot's bench-fio)")
    parser.add_argument("--map", default=None, metavar="FILE",
                        help="YAML: a list of {match: GLOB, output: N, job: GLOB, layout: NAME, devices: N, ...}; each "
                             "field from the first matching entry that gives it")


def main(args: argparse.Namespace) -> int:
    from ..measure.fio_import import importer
    from ..measure.fio_import.bounds import shown
    from ..measure.fio_import.file_names import Naming

    given = {k: v for k, v in (("layout", args.layout), ("devices", args.devices), ("host", args.host))
             if v is not None}
    rules = tuple(file_names.read_map(Path(args.map))) if args.map else ()
    naming = Naming(pattern=args.pattern, rules=rules, given=given)
    summary = importer.run_import(args.paths, Path(args.to), naming, argv=sys.argv)
    for outcome in summary.outcomes:
        for sentence in outcome.said:
            print(f"{shown(outcome.path)}: {shown(sentence)}", file=sys.stderr)
    for reason, paths in summary.refusals():  # a reason several files share is said once, with their count
        print(f"refused {importer.named(paths)}: {shown(reason)}", file=sys.stderr)
    print(summary.line())
    if summary.added or summary.already:
        print(f"campaign folder: {args.to} (flashscale analyze {args.to} --reference LAYOUT)")
    return SOME_REFUSED if summary.refused else 0
