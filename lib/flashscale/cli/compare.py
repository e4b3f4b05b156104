"""Compare two campaigns point by point: faster, slower, equivalent within the margin, or inconclusive.

A and B are campaign folders, results tables (.parquet, .csv) or archive queries (archive:FILE?layout=md-raid0&last=3).
What differs between their machines and environments is listed first, then each point both ran and each metric
(bandwidth, IOPS, p99 latency): B's change from A with its 95% interval and the verdict, largest changes first.
--fail-on slower exits 5 where a verdict is slower; --report DIR also executes the report notebook
(notebooks/compare.ipynb) into DIR/compare.ipynb and publishes DIR/compare.html. Guide: docs/howto/compare.md;
every option: docs/reference/commands.md#flashscale-compare.
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
    parser.add_argument("--metric", choices=["bw", "iops", "p99"], default=None,
                        help="compare this metric only (default: bandwidth, IOPS and p99 latency, each where both "
                             "sides have it); the verdicts are controlled together over the metrics compared")
    parser.add_argument("--figure", default=None, metavar="FILE.png",
                        help="also draw the changes with their intervals into FILE (.png or .svg)")
    parser.add_argument("--report", default=None, metavar="DIR",
                        help="also execute the report notebook into DIR: compare.ipynb, executed, and compare.html")


def read_gate(text: str) -> tuple[str, float]:
    """``--fail-on``'s value: ('slower', 0.0), ('slower', 0.05) of slower:5, or ('inconclusive', 0.0)."""
    from ..errors import ConfigError

    match = re.fullmatch(r"(slower|inconclusive)(?::(\d{1,2}(?:\.\d{1,6})?)%?)?", text.strip())
    if match is None or (match[1] == "inconclusive" and match[2]):
        raise ConfigError(f"--fail-on {text!r}: expected slower, slower:PCT (e.g. slower:5) or inconclusive")
    return match[1], float(match[2] or 0) / 100


def main(args: argparse.Namespace) -> int:
    from ..analysis import campaign_diff
    from ..notebooks import compare_report

    gate = read_gate(args.fail_on) if args.fail_on else None
    if args.report:
        compare_report.report_folder(args.report)
    compared = compare_report.compare(args.a, args.b, args.margin, args.confidence, args.metric)
    changed = compared.changed
    failed = campaign_diff.gate(changed, *gate) if gate else changed.iloc[:0]
    if args.figure:
        from ..publish import comparison

        comparison.save(comparison.changes_figure(changed, compared.margin), args.figure)
    if args.format == "csv":
        changed.to_csv(sys.stdout, index=False)
    elif args.format == "json":
        print(json.dumps(_json(compared, failed), indent=1, default=str))
    else:
        print(_table(compared, failed))
    if args.report:
        html = compare_report.report(args.a, args.b, args.report, args.margin, args.confidence, args.metric)
        print(f"Report: {html}", file=sys.stderr)
    return GATE_FAILED if len(failed) else 0


def _records(frame) -> list[dict]:
    return json.loads(frame.to_json(orient="records"))


def _json(compared, failed) -> dict:
    return {"a": compared.a.label, "b": compared.b.label, "margin": compared.margin,
            "margin_note": compared.margin_note, "environment": _records(compared.differs),
            "changes": _records(compared.changed), "only_in_one": _records(compared.alone),
            "sentence": compared.said, "gate_failed": _records(failed)}


def _table(compared, failed) -> str:
    from ..publish import comparison

    return comparison.text(compared.changed, compared.alone, compared.differs, compared.margin_note, compared.said,
                           failed, (compared.a, compared.b), WIDTH, MOST_DIFFERENCES)
