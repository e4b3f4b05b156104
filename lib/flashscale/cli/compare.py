"""Compare two campaigns point by point: faster, slower, equivalent within the margin, or inconclusive.

A and B are campaign folders, results tables (.parquet, .csv) or archive queries (archive:FILE?layout=md-raid0&last=3).
What differs between their machines and environments is listed first, then each point both ran and each metric
(bandwidth, IOPS, p99 latency): B's change from A with its 95% interval and the verdict, largest changes first.
--fail-on slower exits 5 where a verdict is slower. Guide: docs/howto/compare.md; every option:
docs/reference/commands.md#flashscale-compare.
"""
from __future__ import annotations

import argparse
import json
import re
import sys

from ..analysis import defaults

GATE_FAILED = 5  # a --fail-on gate failed (1 is any flashscale error: bad input, a file not found; 2 bad usage)
WIDTH = 100
MOST_DIFFERENCES = 20  # environment differences shown in the table; --format json has them all


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", metavar="A", help="the campaign compared against: a folder, a table or archive:FILE?...")
    parser.add_argument("b", metavar="B", help="the campaign compared, as A")
    parser.add_argument("--margin", type=float, default=None,
                        help="margin of practical equivalence, a fraction (default: A's TAX_MARGIN, stated before "
                             f"it measured, else B's, else {defaults.DEFAULT_MARGIN}; another is said)")
    parser.add_argument("--confidence", type=float, default=0.95, help="confidence of the intervals")
    parser.add_argument("--format", choices=["table", "csv", "json"], default="table", help="output format")
    parser.add_argument("--fail-on", default=None, metavar="slower[:PCT]|inconclusive",
                        help=f"exit {GATE_FAILED} where a verdict is slower (slower:5 only where it is slower by "
                             "5%% or more, its whole interval); inconclusive: also where a verdict is not decided")
    parser.add_argument("--figure", default=None, metavar="FILE.png",
                        help="also draw the changes with their intervals into FILE (.png or .svg)")


def read_gate(text: str) -> tuple[str, float]:
    """``--fail-on``'s value: ('slower', 0.0), ('slower', 0.05) of slower:5, or ('inconclusive', 0.0)."""
    from ..errors import ConfigError

    match = re.fullmatch(r"(slower|inconclusive)(?::(\d{1,2}(?:\.\d{1,6})?)%?)?", text.strip())
    if match is None or (match[1] == "inconclusive" and match[2]):
        raise ConfigError(f"--fail-on {text!r}: expected slower, slower:PCT (e.g. slower:5) or inconclusive")
    return match[1], float(match[2] or 0) / 100


def margin_of(args: argparse.Namespace, sides) -> tuple[float, str]:
    """The margin and where it came from: --margin, else A's TAX_MARGIN, else B's, else the default; the note says
    a stated margin that differs from the one used."""
    from ..analysis.agreement import check_margin

    stated = []
    for name, side in zip("AB", sides):
        for record in side.records:
            value = (record.get("spec") or {}).get("tax_margin") if isinstance(record.get("spec"), dict) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1:
                stated.append((name, float(value)))
    margin = check_margin(args.margin) if args.margin is not None else (
        stated[0][1] if stated else defaults.DEFAULT_MARGIN)
    source = "--margin" if args.margin is not None else (f"{stated[0][0]}'s TAX_MARGIN" if stated else "default")
    others = sorted({f"{n} stated {100 * v:g}%" for n, v in stated if abs(v - margin) > 1e-12})
    return margin, f"margin {100 * margin:g}% ({source}" + (f"; {', '.join(others)})" if others else ")")


def main(args: argparse.Namespace) -> int:
    from ..analysis import campaign_diff, environment_diff
    from ..measure import sides

    gate = read_gate(args.fail_on) if args.fail_on else None
    a, b = sides.read(args.a), sides.read(args.b)
    margin, margin_note = margin_of(args, (a, b))
    changed = campaign_diff.changes(a.rows, b.rows, margin, args.confidence)
    _, alone = campaign_diff.points(a.rows, b.rows)
    differs = environment_diff.differences(*(environment_diff.combined(
        [environment_diff.facts(r, s.rows) for r in s.records] or [environment_diff.facts(None, s.rows)])
        for s in (a, b)))
    failed = campaign_diff.gate(changed, *gate) if gate else changed.iloc[:0]
    said = campaign_diff.sentence(changed, alone)
    if args.figure:
        from ..publish import comparison

        comparison.save(comparison.changes_figure(changed, margin), args.figure)
    if args.format == "csv":
        changed.to_csv(sys.stdout, index=False)
    elif args.format == "json":
        print(json.dumps(_json(changed, alone, differs, margin, margin_note, said, failed, (a, b)), indent=1,
                         default=str))
    else:
        print(_table(changed, alone, differs, margin_note, said, failed, (a, b)))
    return GATE_FAILED if len(failed) else 0


def _records(frame) -> list[dict]:
    return json.loads(frame.to_json(orient="records"))


def _json(changed, alone, differs, margin, margin_note, said, failed, sides) -> dict:
    return {"a": sides[0].label, "b": sides[1].label, "margin": margin, "margin_note": margin_note,
            "environment": _records(differs), "changes": _records(changed), "only_in_one": _records(alone),
            "sentence": said, "gate_failed": _records(failed)}


def _table(changed, alone, differs, margin_note, said, failed, sides) -> str:
    from ..publish import comparison

    return comparison.text(changed, alone, differs, margin_note, said, failed, sides, WIDTH, MOST_DIFFERENCES)
