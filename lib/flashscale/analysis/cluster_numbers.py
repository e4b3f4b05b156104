"""A cluster's numbers: per-host and aggregate rows (``host`` = ``all``) of a cluster campaign (``flashscale.campaigns.cluster``).

    curve(table)                         per layout, hosts, rw and jobs per host: the best point, its 95% interval
    efficiency(table)                    best aggregate / (hosts x the best of one host alone), per layout, rw and
                                         host count
    tax(table, reference)                each layout's best aggregate against the reference layout's (the hosts'
                                         local storage) at the same rw and host count: the shared or network
                                         storage's tax
    ceilings(table, read_bps, ...)       the best of each host and of the cluster against the devices' ceiling
                                         and, where the rows' data crosses a network of known bandwidth
                                         (``network_bw_bytes``), the network's: the host's link, the fabric of
                                         all of them; which binds, in words
    host_curve(table)                    the baseline of a cluster's predictions: one host measured alone on its
                                         own storage, its rate per (rw, bs, iodepth, jobs per host)
    predict_hosts(curve, layout, points, count, names, devices, link_bps, cores)
                                         what ``count`` hosts should deliver at each point, the cluster's and
                                         each host's, before they are measured: each term and the one that binds

A row's ``layout`` says where its data lives: ``jbod`` (each emulated host's local xfs), ``nbd`` (its devices over
its link), ``mounted`` (a real host's mount point), ``local`` (a real host's local file system).
"""
from __future__ import annotations

import pandas as pd

from . import baseline_and_tax, evidence
from .stats import intervals_by
from .prediction import predict
from .prediction.ceilings import Ceilings, binding_sentence, ceiling_table
from ..errors import AnalysisError

ALL = "all"  # the ``host`` of the rows that aggregate every host of a point
LOCAL = ("jbod", "local")  # the layouts that are a host's own storage: the reference of the tax


def measured_ok(table: pd.DataFrame) -> pd.DataFrame:
    """The measured rows of hosts that answered (failed hosts and precondition or warm-up rows left out), each
    with a ``layout`` (one for all of them when the table has none)."""
    ok = baseline_and_tax.runs(table)
    return ok if "layout" in ok.columns else ok.assign(layout="")


def curve(table: pd.DataFrame, all_hosts: str = ALL) -> pd.DataFrame:
    """What the cluster figure draws: per layout, host count, rw and jobs per host of the cluster's own rows (host
    ``all_hosts``), the point (bs, iodepth where the table has them) with the best mean bandwidth, ``bw_bytes_lo``
    and ``bw_bytes_hi`` (the 95% interval of its mean: ``stats.intervals_by``, the tables' own) and ``reps``."""
    rows = measured_ok(table)
    rows = rows[rows["host"] == all_hosts]
    keys = ["layout", "hosts", "rw", "jobs_per_host", *(c for c in ("bs", "iodepth") if c in rows.columns)]
    grouped = rows.groupby(keys, sort=True, observed=True)["bw_bytes"]
    points = grouped.agg(bw_bytes="mean", reps="size").reset_index()
    points = points.merge(intervals_by(rows, keys, ["bw_bytes"]), on=keys, how="left", validate="one_to_one")
    best = points.sort_values("bw_bytes", ascending=False, kind="mergesort")
    line = ["layout", "hosts", "rw", "jobs_per_host"]
    return best.drop_duplicates(line).sort_values(line, kind="mergesort").reset_index(drop=True)


def efficiency(table: pd.DataFrame) -> pd.DataFrame:
    """Cluster efficiency per layout, rw and host count: best aggregate / (hosts x best of one host alone)."""
    ok = measured_ok(table)
    alone = ok[(ok["hosts"] == 1) & (ok["host"] != ALL)].groupby(["layout", "rw"])["bw_bytes"].max().rename(
        "per_host_best")
    best = ok[ok["host"] == ALL].groupby(["layout", "rw", "hosts"])["bw_bytes"].max().rename(
        "best_bw_bytes").reset_index()
    out = best.merge(alone.reset_index(), on=["layout", "rw"], how="left")
    out["efficiency"] = out["best_bw_bytes"] / (out["hosts"] * out["per_host_best"])
    return out


def reference_layout(table: pd.DataFrame) -> str:
    """The hosts' own storage among the table's layouts (``LOCAL``); AnalysisError, naming them, when none is."""
    layouts = set(measured_ok(table)["layout"])
    found = [name for name in LOCAL if name in layouts]
    if not found:
        raise AnalysisError(f"no layout of the hosts' own storage ({', '.join(LOCAL)}) among {sorted(layouts)}: "
                            "the tax needs one to measure against")
    return found[0]


def tax(table: pd.DataFrame, reference: str | None = None) -> pd.DataFrame:
    """Each layout's best aggregate per rw and host count against ``reference``'s (default: ``reference_layout``):
    ``reference_bw_bytes`` and ``tax`` (``baseline_and_tax.tax``), the share of the local storage's bandwidth it loses."""
    reference = reference or reference_layout(table)
    ok = measured_ok(table)
    best = ok[ok["host"] == ALL].groupby(["layout", "rw", "hosts"], as_index=False)["bw_bytes"].max().rename(
        columns={"bw_bytes": "best_bw_bytes"})
    return baseline_and_tax.with_tax(best, reference, ["rw", "hosts"])


def ceilings(table: pd.DataFrame, read_bps: float | None = None, write_bps: float | None = None) -> pd.DataFrame:
    """The best of each host and of the cluster (``host`` = ``all``) per layout, rw and host count against its
    ceilings: the devices (devices x the per-device cap: ``read_bps`` and ``write_bps`` where the caller knows them,
    else the one the rows were held to, ``cap_bps``: the caps asked, or lowered to what the machine carried; none
    on real hosts) and, for a layout whose data crosses a link of known bandwidth, the network (the host's own link;
    for the cluster, one link per host: the fabric, at the hosts' ``network_bw_bytes``), with the limit that binds
    in words."""
    ok = measured_ok(table)
    read_bps = read_bps if read_bps is not None else evidence.held_cap(ok, "read")
    write_bps = write_bps if write_bps is not None else evidence.held_cap(ok, "write")
    best = ok.groupby(["layout", "rw", "hosts", "host", "devices"], as_index=False)["bw_bytes"].max()
    best = best.rename(columns={"bw_bytes": "best_bw_bytes"})
    links = (ok[ok["host"] != ALL].groupby("layout")["network_bw_bytes"].max()
             if "network_bw_bytes" in ok.columns else pd.Series(dtype=float))
    parts = []
    for (layout, count, host), group in best.groupby(["layout", "hosts", "host"]):
        link = links.get(layout)
        network = ({"network_links": count if host == ALL else 1, "network_link_bw_bytes": link}
                   if pd.notna(link) and link else {})
        parts.append(ceiling_table(group, {"device_read_bw_bytes": read_bps, "device_write_bw_bytes": write_bps,
                                           **network}))
    out = pd.concat(parts, ignore_index=True)
    out["binds"] = [binding_sentence(row) for _, row in out.iterrows()]
    return out


def host_curve(table: pd.DataFrame, reference: str | None = None) -> pd.DataFrame:
    """The baseline of a cluster's predictions: one host measured alone (``hosts`` 1) on the hosts' own storage
    (``reference``, default ``reference_layout``), as ``predict.curve`` makes a device's curve, the host standing for
    the device: per (rw, bs, iodepth, jobs per host) its mean rate and interval. Every host has the same devices,
    so H hosts deliver H x this curve at each host's jobs unless a ceiling binds first; over a network storage the
    same devices are reached across the link, which is a term of its own (``predict_hosts``). AnalysisError, saying
    so, when no host was measured alone there."""
    ok = measured_ok(table)
    reference = reference or next((name for name in LOCAL if name in set(ok["layout"])), None)
    alone = ok[(ok["layout"] == reference) & (ok["hosts"] == 1) & (ok["host"] != ALL)] if reference else ok.iloc[:0]
    if alone.empty:
        raise AnalysisError(f"no host was measured alone (hosts 1) on its own storage "
                            f"({reference or ' or '.join(LOCAL)}) first: a cluster's prediction starts from one "
                            "host's rate")
    return predict.curve(alone.assign(devices=1))


def predict_hosts(base: pd.DataFrame, layout: str, points, count: int, names, devices: int,
                  link_bps: float | None = None, cores: float | None = None) -> pd.DataFrame:
    """What ``count`` hosts of ``layout`` should deliver at each of ``points`` (rw, bs, numjobs a host, iodepth),
    from one host's curve ``base`` (``host_curve``): ``predict.predict`` with each host as one device of a jbod (it
    runs its own jobs), one row for the cluster (``host`` all: ``count`` hosts, ``count`` links) and one for each of
    the first ``count`` of ``names`` (one host, its link). ``link_bps`` is the data one host's link carries per
    second, where the layout's data crosses it (None: no network term); ``cores``, each host's CPUs. Each row names
    its ``host``, the ``hosts`` that run the point and its real ``devices`` (``devices`` a host) and ``numjobs``
    (the hosts' jobs together for the cluster), as the cluster's rows do."""
    points = [{k: p[k] for k in ("rw", "bs", "numjobs", "iodepth")} for p in points]
    parts = []
    for host, units in [(ALL, count), *((name, 1) for name in list(names)[:count])]:
        ceilings = Ceilings(network_link_bw_bytes=link_bps, network_links=units if link_bps else None, hosts=units,
                            cores=cores)
        unit_points = [{**p, "numjobs": p["numjobs"] * units, "devices": units} for p in points]
        out = predict.predict(base, "jbod", unit_points, ceilings)  # a host as a jbod's device: its own jobs
        busy = [units * sum(1 for jobs in predict.jobs_per_device(p["numjobs"], devices) if jobs) for p in points]
        note = out["predicted_note"].str.replace("the single device", "one host alone", regex=False)
        parts.append(out.assign(layout=layout, devices=units * devices, hosts=count, busy_devices=busy,
                                jobs_per_device=out["numjobs"] / (units * devices), predicted_note=note,
                                host=host))
    out = pd.concat(parts, ignore_index=True)
    order = list(out.columns[:-1])
    return out[[*order[:order.index("hosts") + 1], "host", *order[order.index("hosts") + 1:]]]
