"""Baseline, best bandwidth, scaling efficiency and tax from a results table (Parquet or CSV) or campaign folder.

One row per (layout, devices, rw): the best point, its efficiency against devices x baseline and its tax against
--reference, with intervals and the tax's verdict at --margin; --metric iops the same of IOPS, --metric p99 (p50,
p999) fio's completion latency at each best point and its latency tax; --fit adds the knee and the USL, --ceilings
the binding limit, --predict each point predicted against measured. The table fits the terminal (100 columns when
it is none); --format csv or json gives every column. Every column and option:
docs/reference/commands.md#flashscale-analyze.
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..analysis import defaults
from ..errors import AnalysisError, ConfigError, FlashscaleError
from .output import FORMATS, emit

if TYPE_CHECKING:
    import pandas as pd

# What a run computes with is imported where it runs, not here: --help builds this parser without pandas or scipy.
METRICS = ("bw", "iops", "p50", "p99", "p999")  # analysis.metrics.METRICS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", help="results table: .parquet or .csv (or a campaign directory)")
    parser.add_argument("--reference", default=None, metavar="LAYOUT",
                        help="layout the tax is measured against (required, but with --predict)")
    parser.add_argument("--baseline-bs", default=str(defaults.BASELINE_BS), metavar="BYTES|RW=BYTES,...",
                        help=f"block size of the single-device baseline, bytes (default {defaults.BASELINE_BS}), or "
                             "one per rw: read=1048576,randread=4096; with --by bs each bs has its own")
    parser.add_argument("--baseline-layout", default=None, metavar="LAYOUT",
                        help="the one-device layout whose rows are the device's baseline and curve (default: "
                             "'single', or the only one-device layout); for a folder of several")
    parser.add_argument("--by", choices=defaults.BY_CHOICES, action="append", default=[], help="also group by this column")
    parser.add_argument("--format", choices=FORMATS, default="table",
                        help="table: for people, fitted to the terminal; csv or json: every column at full precision")
    parser.add_argument("--metric", choices=METRICS, default="bw",
                        help="what the table shows: bw (bandwidth), iops, or p50, p99, p999 (fio's completion latency, "
                             "clat, at each layout's best bandwidth point, and its latency tax against --reference)")
    parser.add_argument("--columns", default=None, metavar="NAME,...",
                        help="the table's columns, in order, by their names in --format csv (default: those read first, "
                             "as many as fit the terminal, 100 columns when not a terminal)")
    parser.add_argument("--wide", action="store_true", help="every column a person reads, however wide")
    parser.add_argument("--fit", action="store_true",
                        help="add the knee and the USL fit against numjobs (knee_numjobs, usl_sigma, usl_kappa, "
                             "usl_peak_numjobs, usl_r2, with _lo/_hi; fit_note says why a fit was refused)")
    parser.add_argument("--ceilings", metavar="FILE", default=None,
                        help="YAML file of ceiling parameters (docs/reference/ceilings.md): adds the expected "
                             "ceiling, the binding limit and the fraction of it reached")
    parser.add_argument("--predict", action="store_true",
                        help="print each layout's points predicted from the single-device rows (and --ceilings) "
                             "against the measured ones: error, binding limit, in or out of the interval")
    parser.add_argument("--stated", action="store_true",
                        help="with --predict and a campaign directory: score the predictions it stated before "
                             "building each layout (predictions.csv), its best points and its repeatability")
    parser.add_argument("--chunk-bytes", type=int, default=None, metavar="BYTES",
                        help="with --predict: the stripe unit of the layouts (default: the campaign's own, else the "
                             "rows' chunk_bytes)")
    parser.add_argument("--calibrate-up-to", type=int, default=None, metavar="K",
                        help="with --predict: predict each layout's device counts above K from those up to K "
                             "(Amdahl's law over the count, with its interval) and say from which K the "
                             "prediction holds within 5%%")
    parser.add_argument("--confidence", type=float, default=0.95, help="confidence of the _lo/_hi intervals")
    parser.add_argument("--margin", type=float, default=None,
                        help="margin of practical equivalence of the tax, a fraction (default: the campaign's "
                             f"TAX_MARGIN, stated before it measured, else {defaults.DEFAULT_MARGIN}; another is "
                             "said beside every verdict)")


def campaign_margin(path: str) -> float | None:
    """The margin the campaign at ``path`` stated before it measured (its campaign.json's ``spec.tax_margin``,
    TAX_MARGIN: the margin its sequential tests decided against), None for a table alone, a campaign that records
    none, or one whose value is not a margin (a file is someone else's input: it is checked, never trusted)."""
    from ..analysis.agreement import check_margin

    margin = _campaign_spec(path).get("tax_margin") if Path(path).is_dir() else None
    if isinstance(margin, bool) or not isinstance(margin, (int, float)):
        return None
    try:
        return check_margin(float(margin))
    except ConfigError:
        return None


def margin_said(margin: float, stated: float | None) -> str:
    """What stands beside each verdict read at ``margin``: nothing where it is the campaign's ``stated`` one (or the
    campaign stated none), else the margin and the one stated before measuring."""
    if stated is None or abs(margin - stated) < 1e-12:
        return ""
    return f" (at a {100 * margin:g}% margin; the campaign stated {100 * stated:g}%)"


def _campaign_spec(path: str) -> dict:
    """The spec the campaign at ``path`` recorded in its campaign.json; {} for a table alone, or a campaign.json
    that is not a campaign's record (someone else's file: its shape is checked, never trusted)."""
    from ..measure import campaign_folder

    record = campaign_folder.read_campaign(Path(path))
    spec = record.get("spec") if isinstance(record, dict) else None
    return spec if isinstance(spec, dict) else {}


def campaign_chunk(path: str) -> int | None:
    """The stripe unit the campaign at ``path`` built its layouts with (its campaign.json's ``options.chunk_bytes``),
    None for a table alone or a campaign that records none (then each row's own ``chunk_bytes``, if any)."""
    try:
        chunk = _campaign_spec(path).get("options", {}).get("chunk_bytes")
    except AttributeError:  # options that are not a mapping
        return None
    return int(chunk) if isinstance(chunk, (int, float)) and chunk > 0 else None


def ceilings_file(path: str) -> dict:
    """A --ceilings file, relative to the working directory as a command-line path is (``parameters.ceilings_file``)."""
    from ..campaigns import parameters

    return parameters.ceilings_file(Path(path), path)


def _count(text: str, what: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        value = 0
    if value <= 0:
        raise ConfigError(f"--baseline-bs {what}{text!r} is not a block size: a whole number of bytes above 0")
    return value


def per_rw(text: str, option: str, what: str, read) -> dict:
    """An option's 'rw=VALUE,rw=VALUE' (each rw once), each VALUE read by ``read(value, rw)``; ConfigError naming
    the option and the part it cannot read. ``what``: the VALUE's name in the message (BYTES, RATE)."""
    out: dict = {}
    for part in text.split(","):
        rw, sep, value = part.partition("=")
        if not sep or not rw.strip() or rw.strip() in out:
            raise ConfigError(f"{option} {text!r}: expected {what} or rw={what},... with each rw once; cannot read "
                              f"{part!r}")
        out[rw.strip()] = read(value, rw.strip())
    return out


def baseline_bs(text: str) -> int | dict[str, int]:
    """``--baseline-bs``: '1048576' (every rw) or 'read=1048576,randread=4096' (per rw)."""
    if "=" not in text:
        return _count(text, "")
    return per_rw(text, "--baseline-bs", "BYTES", lambda bs, rw: _count(bs, f"for {rw!r}: "))


def load_table(path: str):
    """The results table; a file pandas cannot read (empty, not CSV or Parquet inside) is refused by name."""
    import pandas as pd

    from ..measure import results

    try:
        return results.load(path)
    except FlashscaleError:
        raise
    except pd.errors.EmptyDataError:
        raise AnalysisError(f"results file {path!r} is empty: no header, no rows") from None
    except (ValueError, OSError) as exc:
        raise AnalysisError(f"results file {path!r} cannot be read: {exc}") from None


def _stated(path: str, frame: pd.DataFrame, args: argparse.Namespace) -> pd.DataFrame:
    """``--stated``: the campaign directory's own predictions, stated before each layout was built, scored."""
    import pandas as pd

    from ..analysis.prediction import scoring
    from ..measure import campaign_folder

    if args.ceilings:
        raise ConfigError("--stated scores what the campaign stated, with the ceilings it had then: drop --ceilings")
    stated = campaign_folder.read_predictions(Path(path)) if Path(path).is_dir() else pd.DataFrame()
    if stated.empty:
        raise ConfigError(f"--stated: {path!r} holds no stated predictions (predictions.csv of a campaign directory "
                          "that measured single before its other layouts)")
    return scoring.against(stated, frame, args.margin)


def _print_predicted(frame: pd.DataFrame, args: argparse.Namespace) -> int:
    """``--predict``: predicted against measured, per layout and point, and the points outside their interval;
    with ``--stated``, the campaign's own predictions, each layout's best point and the machine's repeatability."""
    import pandas as pd

    from ..analysis.prediction import ceilings, loads, predict, scoring
    from ..publish import console

    if args.stated:
        scored = _stated(args.results, frame, args)
    else:
        given = ceilings.Ceilings.from_mapping(ceilings_file(args.ceilings) if args.ceilings else {})
        chunk = args.chunk_bytes if args.chunk_bytes is not None else campaign_chunk(args.results)
        scored = predict.score(predict.predict_results(frame, given, args.confidence, chunk, args.baseline_layout),
                               frame, args.confidence, args.margin)
        beyond = loads.beyond_curve(scored, predict.curve(frame, args.confidence, args.baseline_layout))
        scored = scored.assign(load_flag=beyond.map({True: "beyond the curve", False: ""}))
    if args.format != "table":
        emit(scored, args.format)
        return 0
    shown = scoring.for_people(scored)
    where = ["layout", *(["hosts", "host"] if "host" in scored.columns else []), "devices", "rw", "bs", "numjobs",
             "iodepth"]
    flagged = [c for c in ("load_flag",) if c in scored.columns and scored[c].astype(bool).any()]
    width = _width(args)
    for line in console.table(shown.assign(**{c: scored[c] for c in flagged}),
                              _asked(args) or [*where, "predicted_bw_bytes", "measured_bw_bytes", "error",
                                               "predicted_limit", "inside",
                                               *[c for c in ("interval", "meets") if c in shown.columns], *flagged],
                              width=width, drop=PREDICTED_DROP_FIRST, kinds=scoring.KINDS):
        print(line)
    for row in scored[scored.get("load_flag", pd.Series("", index=scored.index)).astype(bool)].itertuples():
        _say(f"load: {row.layout} {row.rw} on {row.devices} devices at {row.numjobs} jobs x iodepth {row.iodepth} "
             f"({row.numjobs * row.iodepth / row.devices:g} in flight a device) was measured at a load the "
             "device's curve never was: its prediction holds the device at its largest measured load", width)
    for line in scoring.interval_sentences(scored) + scoring.undecided_sentences(scored, args.margin):
        _say(line, width)
    for sentence in scoring.outside_sentences(scored, args.margin):
        _say(f"beyond the margin: {sentence}", width)
    if args.stated:
        for sentence in scoring.at_best_sentences(scored, args.margin):
            _say(f"at its best: {sentence}", width)
        for sentence in scoring.repeatability_sentences(scored):
            _say(f"repeatability: {sentence}", width)
    return 0


# The columns of --predict's table left out first, first, where the terminal is narrow.
PREDICTED_DROP_FIRST = ("iodepth", "meets", "interval", "load", "predicted_limit", "host", "hosts", "bs", "devices")


def _width(args: argparse.Namespace) -> int | None:
    """The width the table fits: none with --wide or another format than table; else COLUMNS, the terminal's, or
    100 where the output is not a terminal."""
    return None if args.wide or args.format != "table" else shutil.get_terminal_size((100, 24)).columns


def _asked(args: argparse.Namespace) -> list[str]:
    """--columns, as names (checked against the table where it is shown)."""
    return [c.strip() for c in args.columns.split(",") if c.strip()] if args.columns else []


def _print_calibrated(frame: pd.DataFrame, args: argparse.Namespace) -> int:
    """``--predict --calibrate-up-to K``: each count above K predicted from those up to K, scored, and per layout
    and rw the K from which it holds within 5% (``analysis.prediction.fewer``)."""
    import pandas as pd

    from ..analysis.prediction import bounds, fewer, scoring
    from ..publish import console

    scored = fewer.calibrated(frame, args.calibrate_up_to, args.confidence)
    if scored.empty:
        raise ConfigError(f"--calibrate-up-to {args.calibrate_up_to}: no layout was measured on more devices")
    if args.format != "table":
        emit(scored, args.format)
        return 0
    shown = scored.assign(interval=[note or bounds.words(lo, hi) for lo, hi, note in zip(  # no fit: why not
                              scored["predicted_lo_bw_bytes"], scored["predicted_hi_bw_bytes"],
                              scored["predicted_note"].fillna(""))],
                          meets=scoring.meets_words(scored),
                          load=[f"{jobs:g} job(s) {design}" for jobs, design in zip(scored["jobs"], scored["design"])])
    width, no_fit = _width(args), scored["predicted_note"].fillna("")  # a "—" with its reason: no fit, and why
    for line in console.table(shown, _asked(args) or ["layout", "devices", "rw", "bs", "numjobs", "iodepth", "load",
                                                      "predicted_bw_bytes", "measured_bw_bytes", "error", "interval",
                                                      "meets"],
                              width=width, drop=PREDICTED_DROP_FIRST, kinds=scoring.KINDS,
                              reasons=dict.fromkeys(("predicted_bw_bytes", "error"), no_fit)):
        print(line)
    for line in scoring.interval_sentences(scored):
        _say(line, width)
    for row in fewer.holds_from(frame, confidence=args.confidence).itertuples():
        said = f"from K = {row.holds_from:g}" if pd.notna(row.holds_from) else "from no K the table allows"
        _say(f"{row.layout} {row.rw}: predicted within {fewer.WITHIN:.0%} {said} (worst error by K: "
             f"{row.errors or 'none fitted'})", width)
    return 0


def _baseline_rows(frame: pd.DataFrame, layout: str | None) -> pd.DataFrame | None:
    """``--baseline-layout``: the rows whose one-device points are the baseline (None: the table's own)."""
    from ..analysis.prediction import curve

    if layout is None:
        return None
    curve.single_rows(frame, layout)  # ConfigError naming the layout when it has no one-device rows
    return frame[frame["layout"].astype(str) == layout]


def _summary(frame: pd.DataFrame, args: argparse.Namespace) -> pd.DataFrame:
    """The summary of ``args.metric`` (``analysis.metrics``): of bandwidth or IOPS, or bandwidth's with the latency
    at each best point; with --fit and --ceilings."""
    from ..analysis import builds, metrics, scaling, stats
    from ..analysis.prediction import ceilings, loads

    rated = metrics.as_rates(frame, args.metric)
    by = tuple(args.by)
    summary = stats.summary_intervals(rated, reference=args.reference, baseline_bs=baseline_bs(args.baseline_bs),
                                      by=by, confidence=args.confidence, margin=args.margin,
                                      base_frame=_baseline_rows(rated, args.baseline_layout))
    summary = loads.flags(rated, summary, args.reference)
    if builds.more_than_once(rated):  # BUILDS: the best point's builds, and its interval over their means
        summary = builds.over_builds(summary, rated, args.confidence)
    if args.fit:
        keys = ["layout", "devices", "rw", *by]
        fits = scaling.fit_table(rated, by=by, confidence=args.confidence)
        summary = summary.merge(fits[[*keys, *scaling.FIT_COLUMNS]], on=keys, how="left", validate="one_to_one")
    if args.ceilings:
        split = ceilings.with_direction_split(summary, frame)
        summary = ceilings.ceiling_table(split, ceilings_file(args.ceilings)).drop(
            columns=[c for c in ("read_bw_bytes", "write_bw_bytes") if c not in summary.columns])
    summary = metrics.named(summary, args.metric)
    if args.metric in metrics.LATENCY:
        summary = metrics.latency_at_best(frame, summary, args.metric, args.reference, args.confidence)
    return summary


def main(args: argparse.Namespace) -> int:
    from ..analysis import evidence

    frame = load_table(args.results)
    stated_margin = campaign_margin(args.results)
    if args.margin is None:  # the margin stated before measuring, else the default
        args = argparse.Namespace(**{**vars(args), "margin": defaults.DEFAULT_MARGIN if stated_margin is None
                                     else stated_margin})
    if args.stated and not args.predict:
        raise ConfigError("--stated scores a campaign's stated predictions: give it with --predict")
    if args.calibrate_up_to is not None and not args.predict:
        raise ConfigError("--calibrate-up-to predicts from fewer devices: give it with --predict")
    if args.metric != "bw" and (args.predict or args.ceilings):
        raise ConfigError(f"--metric {args.metric}: --predict and --ceilings predict bandwidth; drop --metric")
    if args.calibrate_up_to is not None:
        return _print_calibrated(frame, args)
    if args.predict:
        return _print_predicted(frame, args)
    if args.reference is None:
        raise ConfigError("--reference LAYOUT is required: the layout the tax is measured against")
    summary = _summary(frame, args)
    width = _width(args)
    for sentence in evidence.too_short_sentences(frame) + evidence.truth_sentences(frame):
        _say(f"note: {sentence}", width, sys.stderr)
    beside = margin_said(args.margin, stated_margin)
    if beside:  # an analysis at another margin than the campaign's preregistered one says so
        summary = summary.assign(tax_margin_stated=stated_margin)
    if args.format != "table":
        emit(summary, args.format)
        return 0
    _print_summary(summary, frame, args, stated_margin, width)
    return 0


def _print_summary(summary: pd.DataFrame, frame: pd.DataFrame, args: argparse.Namespace, stated_margin: float | None,
                   width: int | None) -> None:
    """The summary for people: its table fitted to ``width`` (``publish.console``), then what it means in words."""
    from ..analysis import builds, evidence, family, metrics, stand_in
    from ..analysis.prediction import loads
    from ..publish import console, summary_table

    beside = margin_said(args.margin, stated_margin)
    shown = summary
    if beside and "tax_verdict" in summary.columns:
        claims = summary["tax_verdict"].isin(["tax", "gain", "equivalent", "inconclusive"])
        shown = summary.assign(tax_verdict=summary["tax_verdict"].where(~claims, summary["tax_verdict"] + beside))
        _say(f"margin: the campaign stated {100 * stated_margin:g}% before it measured (TAX_MARGIN, in its "
             f"campaign.json); the verdicts below are read at {100 * args.margin:g}%, chosen after", width)
    columns, said = summary_table.columns(summary, args.metric, args.by, args.columns, args.wide)
    for line in console.table(shown, columns, width=width, drop=summary_table.DROP_FIRST,
                              reasons=metrics.reasons(summary, args.reference)) + said:
        print(line)
    if args.metric == "iops" and metrics.iops_derived(frame):
        _say(metrics.IOPS_FROM_BW, width)
    against = stand_in.measured_against(summary, args.reference)
    if against != args.reference:
        _say(f"tax: against {against} ({args.reference} was not measured: each run of the single device, times its "
             "devices, stands in for it)", width)
    for prefix, sentences in (("load", loads.sentences(summary, frame, args.reference) if args.metric == "bw" else []),
                              ("verdicts", family.sentences(summary)),
                              ("drift", evidence.drift_sentences(frame, args.margin)),
                              ("builds", builds.sentences(builds.components(frame, args.confidence))
                               if builds.more_than_once(frame) else [])):
        for sentence in sentences:
            _say(f"{prefix}: {sentence}", width)
    _say("(--format csv or json: all columns, full precision; --wide: all for people)", width)


def _say(text: str, width: int | None, file=None) -> None:
    """A sentence under the table, folded to ``width``."""
    from ..publish import console

    print("\n".join(console.wrap(text, width)), file=file or sys.stdout)
