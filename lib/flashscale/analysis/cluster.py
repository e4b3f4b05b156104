"""A cluster's numbers: per-host and aggregate rows (``host`` = ``all``) of a cluster campaign (``flashscale.cluster``).

    efficiency(table)                    best aggregate / (hosts x the best of one host alone), per rw and host count
    ceilings(table, read_bps, ...)       the best aggregate against the devices' and the network's ceilings, and
                                         which binds, in words
"""
from __future__ import annotations

import pandas as pd

from . import core
from .ceilings import binding_sentence, ceiling_table

ALL = "all"  # the ``host`` of the rows that aggregate every host of a point


def measured_ok(table: pd.DataFrame) -> pd.DataFrame:
    """The measured rows of hosts that answered (failed hosts and precondition or warm-up rows left out)."""
    return core.runs(table)


def efficiency(table: pd.DataFrame) -> pd.DataFrame:
    """Cluster efficiency per rw and host count: best aggregate / (hosts x best of one host alone)."""
    ok = measured_ok(table)
    alone = ok[(ok["hosts"] == 1) & (ok["host"] != ALL)].groupby("rw")["bw_bytes"].max().rename("per_host_best")
    best = ok[ok["host"] == ALL].groupby(["rw", "hosts"])["bw_bytes"].max().rename("best_bw_bytes").reset_index()
    out = best.merge(alone.reset_index(), on="rw", how="left")
    out["efficiency"] = out["best_bw_bytes"] / (out["hosts"] * out["per_host_best"])
    return out


def ceilings(table: pd.DataFrame, read_bps: float, write_bps: float, link_bps: float | None = None) -> pd.DataFrame:
    """The cluster's best aggregate per rw and host count against its ceilings: the devices (hosts x devices x
    per-device cap) and the network (one link per host at ``link_bps``), with the limit that binds in words."""
    ok = measured_ok(table)
    best = ok[ok["host"] == ALL].groupby(["rw", "hosts", "devices"], as_index=False)["bw_bytes"].max().rename(
        columns={"bw_bytes": "best_bw_bytes"})
    parts = []
    for count, group in best.groupby("hosts"):
        config = {"device_read_bw_bytes": read_bps, "device_write_bw_bytes": write_bps,
                  **({"network_links": count, "network_link_bw_bytes": link_bps} if link_bps else {})}
        parts.append(ceiling_table(group, config))
    out = pd.concat(parts, ignore_index=True)
    out["binds"] = [binding_sentence(row) for _, row in out.iterrows()]
    return out
