"""How many devices (and hosts) reach a target throughput, and which limit binds first, from one device's curve.

The curve: a results table or campaign folder, or --device-bps figures; the other limits: --pcie-bps, --link-bps,
--memory-bps, --cores, --hosts or --devices-per-host, --ceilings. Every rate carries its unit: 12.5GB/s, 100Gb/s.
Guide: docs/explanation/prediction.md#how-many-devices-flashscale-plan; every option:
docs/reference/commands.md#flashscale-plan.
"""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..analysis import defaults
from ..errors import ConfigError
from .analyze import ceilings_file, load_table, per_rw
from .output import add_format, emit

if TYPE_CHECKING:
    import pandas as pd

    from ..analysis.prediction.ceilings import Ceilings

# What a run computes with is imported where it runs, not here: --help builds this parser without pandas or numpy.


def parse_rate(text: str, option: str) -> float:
    """'12.5GB/s' -> 12.5e9 bytes/s, '100Gb/s' -> 12.5e9 (bits / 8), '3GiB/s' -> 3 x 2^30: the one reader of rates
    (``units.read_rate``); a number without its unit is refused, naming the option and the value."""
    from ..measure.units import read_rate

    return read_rate(text, option)


def device_figures(text: str, rws: list[str]) -> dict[str, float]:
    """``--device-bps``: 'RATE' (for each rw of --rw) or 'read=RATE,write=RATE'."""
    if "=" not in text:
        return dict.fromkeys(rws, parse_rate(text, "--device-bps"))
    return per_rw(text, "--device-bps", "RATE", lambda rate, rw: parse_rate(rate, f"--device-bps for {rw!r}:"))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", nargs="?", default=None,
                        help="results table (.parquet or .csv) or campaign folder whose single-device rows are the "
                             "device's curve; or give --device-bps")
    parser.add_argument("--target", required=True, metavar="RATE", help="the throughput to reach: 12.5GB/s, 100Gb/s")
    parser.add_argument("--device-bps", metavar="RATE|RW=RATE,...", help="one device's published throughput")
    parser.add_argument("--rw", default=None, metavar="RW[,RW...]",
                        help="which rws to answer (default every rw of the curve; read for a bare --device-bps)")
    parser.add_argument("--layout", default="jbod", help="the layout to predict (default jbod: one file system per "
                        "device; a stripe or mirror spreads every job over all devices)")
    parser.add_argument("--bs", default=defaults.BASELINE_BS, metavar="SIZE", help="block size of the device's best "
                        "point: 1M, 4k, 1048576 (k, M are powers of 1024; default %(default)s; the nearest measured)")
    for name, what in (("pcie-bps", "each device's PCIe link"), ("uplink-bps", "a link shared by "
                       "--devices-per-uplink devices"), ("link-bps", "each host's network link"),
                       ("memory-bps", "each host's memory bandwidth")):
        parser.add_argument(f"--{name}", metavar="RATE", help=what)
    parser.add_argument("--devices-per-uplink", type=int, default=None, help="devices sharing one --uplink-bps")
    parser.add_argument("--hosts", type=int, default=None, help="a fixed count of hosts (default 1)")
    parser.add_argument("--devices-per-host", type=int, default=None, help="devices a host holds: hosts grow with N")
    parser.add_argument("--cores", type=float, default=None,
                        help="cores each host gives the I/O (a cpu term where the curve measured CPU)")
    parser.add_argument("--ceilings", metavar="FILE", default=None, help="YAML file of ceiling parameters "
                        "(flashscale.analysis.prediction.ceilings.Ceilings); the flags above take precedence")
    parser.add_argument("--max-devices", type=int, default=defaults.MAX_DEVICES,
                        help="the most devices an answer may name: every count up to it is answered")
    parser.add_argument("--chunk-bytes", default=None, metavar="SIZE",
                        help="the stripe unit of --layout: 512k, 64KiB (a stripe's requests reach ceil(bs / chunk) "
                             "members; default: the table's chunk_bytes column, else the tool's default, said: md's "
                             "512 KiB, lvcreate's 64 KiB)")
    parser.add_argument("--baseline-layout", default=None, metavar="LAYOUT",
                        help="the one-device layout of the table whose rows are the device's curve (default: "
                             "'single', or the only one-device layout)")
    add_format(parser)


FLAGS = {"pcie_link_bw_bytes": "pcie-bps", "uplink_bw_bytes": "uplink-bps", "network_link_bw_bytes": "link-bps",
         "memory_bw_bytes": "memory-bps"}  # the rate flags, by the ceiling each gives


def _ceilings(args: argparse.Namespace) -> Ceilings:
    """The ceilings file's (``--ceilings``), with the flags on top."""
    from ..analysis.prediction.ceilings import Ceilings

    rates = {name: parse_rate(getattr(args, flag.replace("-", "_")), f"--{flag}") for name, flag in FLAGS.items()
             if getattr(args, flag.replace("-", "_"))}
    counts = dict(devices_per_uplink=args.devices_per_uplink, hosts=args.hosts, cores=args.cores)
    return Ceilings.from_mapping(ceilings_file(args.ceilings) if args.ceilings else {}).with_values(**rates, **counts)


def _curve(args: argparse.Namespace, bs: int) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The device's curve, and the results table it came from (None for --device-bps)."""
    from ..analysis.prediction import predict

    rws = args.rw.split(",") if args.rw else None
    if (args.results is None) == (args.device_bps is None):
        raise ConfigError("give the device's curve: a results table or campaign folder, or --device-bps; not both")
    if args.device_bps is not None:
        return predict.figures(device_figures(args.device_bps, rws or ["read"]), bs=bs), None
    table = load_table(args.results)
    base = predict.curve(table, layout=args.baseline_layout)
    if rws:
        unknown = sorted(set(rws) - set(base["rw"]))
        if unknown:
            raise ConfigError(f"--rw {args.rw!r}: the single device has no {', '.join(map(repr, unknown))} rows; "
                              f"it has {', '.join(map(repr, sorted(set(base['rw']))))}")
        base = base[base["rw"].isin(rws)]
    return base, table


def _rate(value: float) -> str:
    from ..publish import tables

    return tables.cell(value, "bandwidth", ("GB/s", 1e9) if value >= 10e9 else ("MB/s", 1e6))


def answer_sentence(answer, layout: str) -> str:
    """One rw's answer in words."""
    import numpy as np

    from ..analysis import baseline_and_tax

    target = _rate(answer.target_bw_bytes)
    if not np.isfinite(answer.devices):
        return f"{answer.rw}: no count up to {answer.max_devices} devices reaches {target}: " + _why_not(answer, layout)
    hosts = f" on {baseline_and_tax.count_of(answer.hosts, 'host')}"
    source = getattr(answer, "source", "") or "model"
    how = ("measured in the table" if source == "measured" else f"predicted for {layout}, the "
           f"{answer.predicted_limit} binding" + ("" if source == "model" else f", {source}"))
    devices = baseline_and_tax.count_of(answer.devices, "device")
    text = (f"{answer.rw}: {devices}{hosts} reach{'es' if answer.devices == 1 else ''} {target} "
            f"({_rate(answer.predicted_bw_bytes)} {how})")
    if np.isfinite(answer.devices_lo) and answer.devices_lo != answer.devices:
        text += f"; {int(answer.devices_lo)} reach it at the low side of the interval"
    if answer.other_limit:
        text += f"; the {answer.other_limit} binds first, from {baseline_and_tax.count_of(answer.other_limit_devices, 'device')}"
    else:
        text += f"; no limit but the devices binds up to {answer.max_devices} devices"
    return text + "." + _extrapolated(answer)


def _why_not(answer, layout: str) -> str:
    """Why no count reaches the target: the limit that holds the last count, and from which count it binds; or the
    devices still growing where --max-devices stops them."""
    at = _rate(answer.ceiling_bw_bytes)
    if answer.ceiling_limit == "devices":
        text = (f"the devices still bind there, {layout} at {at} and growing with each device: --max-devices "
                f"{answer.max_devices} stops the counts; raise it.")
    else:
        text = f"the {answer.ceiling_limit} holds {layout} at {at}, binding from {answer.ceiling_from} devices on."
    return text + _extrapolated(answer)


def _extrapolated(answer) -> str:
    """An answer beyond what the evidence holds (``sizing``'s ``reach``), with the options that would hold it."""
    if not answer.extrapolated:
        return ""
    return (f" {answer.reach[0].upper()}{answer.reach[1:]} (--memory-bps, --link-bps, --uplink-bps, --cores with a "
            "curve that measured CPU, or --ceilings).")


def evidence_sentences(found: pd.DataFrame, layout: str) -> list[str]:
    """Each count at which the table's own rows of ``layout`` contradict the model beyond the margin, in words."""
    from ..analysis import baseline_and_tax
    from ..measure.units import percent

    return [f"the table measured {layout} {r.rw} on {r.devices} devices at {_rate(r.measured_bw_bytes)} (bs {r.bs}, "
            f"{baseline_and_tax.count_of(r.numjobs, 'job')}, iodepth {r.iodepth}), {percent(r.error, signed=True)} against the "
            f"model's {_rate(r.predicted_bw_bytes)}: the answers above {r.devices} devices are held to it."
            for r in found[found["contradicts"]].itertuples(index=False)]


def load_sentences(found: pd.DataFrame, base: pd.DataFrame, layout: str) -> list[str]:
    """Each of the table's own points of ``layout`` measured at a load on each device that the device's curve was
    not (``sizing.evidence``'s ``beyond_curve``), in words."""
    from ..analysis import baseline_and_tax

    out = []
    for r in found[found["beyond_curve"]].itertuples(index=False):
        most = base[base["rw"] == r.rw]["outstanding"].max()
        out.append(f"load: the table measured {layout} {r.rw} on {r.devices} devices at {baseline_and_tax.count_of(r.numjobs, 'job')} "
                   f"x iodepth {r.iodepth} ({r.numjobs * r.iodepth / r.devices:g} in flight a device), a load the "
                   f"device's curve was never measured at (at most {most:g}): the model holds the device at its "
                   "largest measured load there, and compares loads, not layouts.")
    return out


def people(table: pd.DataFrame, found: pd.DataFrame | None = None) -> pd.DataFrame:
    """The rows shown: devices, hosts, the prediction with its interval, each term present, the limit that binds."""
    from ..analysis.prediction import predict
    from ..publish import tables

    terms = [f"{t}_limit_bw_bytes" for t in predict.TERMS if table[f"{t}_limit_bw_bytes"].notna().any()]
    shown = table[["rw", "devices", "hosts", "predicted_bw_bytes", "predicted_limit", *terms]]
    if (table["predicted_lo"] != table["predicted_hi"]).any():  # an interval only where the curve had a spread
        shown = shown.assign(predicted_bw_bytes_lo=table["predicted_lo"], predicted_bw_bytes_hi=table["predicted_hi"])
    if "source" in table.columns and (table["source"] != "model").any():  # the table's own rows answered some
        shown = shown.assign(source=table["source"])
    beyond = set() if found is None else {(r.rw, r.devices) for r in found[found["beyond_curve"]].itertuples()}
    if beyond:  # a count the table measured at a load the curve never was
        shown = shown.assign(load_flag=["beyond the curve" if (rw, n) in beyond else ""
                                        for rw, n in zip(table["rw"], table["devices"])])
    return tables.formatted(shown)


def main(args: argparse.Namespace) -> int:
    from ..analysis.prediction import predict, sizing
    from ..measure.units import read_size

    target = parse_rate(args.target, "--target")
    bs = read_size(args.bs, "--bs")
    base, results_table = _curve(args, bs)
    given = _ceilings(args)
    chunk = None if args.chunk_bytes is None else read_size(args.chunk_bytes, "--chunk-bytes")
    if chunk is None and results_table is not None:  # an imported run's own chunk_bytes, where its rows give one
        chunk = predict.chunks(results_table).get(args.layout)
    table, answers = sizing.sizing(base, target, given, layout=args.layout, devices_per_host=args.devices_per_host,
                                   max_devices=args.max_devices, baseline_bs=bs, table=results_table,
                                   chunk_bytes=chunk)
    if args.format != "table":
        emit(answers, args.format)
        return 0
    found = sizing.evidence(results_table, base, args.layout, given, chunk, args.devices_per_host)
    emit(answers, args.format, table=people(sizing.shown(table, answers), found))
    print()
    for line in evidence_sentences(found, args.layout) + load_sentences(found, base, args.layout):
        print(line)
    for answer in answers.itertuples(index=False):
        print(answer_sentence(answer, args.layout))
    return 0
