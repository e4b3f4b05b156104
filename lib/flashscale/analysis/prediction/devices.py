"""The devices' term of a prediction: what the layout's devices deliver at what each receives (``routing``), each at
the single device's curve for what it holds (``curve``), with the bounds the unknowns leave (``bounds``).

    term(base, layout, point, chunk, tags)   the devices' sum (value, interval, bounds) before the design share
    routed(base, layout, point, unit, tags)  the same, routed by one stripe unit
    chunk_span(...)                          widened to every stripe unit the layout could have
    own_jobs(...), members(...)              a jbod's devices, a stripe's members
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from . import curve as curves, routing
from ...layouts import describe
from ...measure.units import rate

VALUES = curves.VALUES
SPREAD = (*VALUES, *curves.BOUNDS)  # what a device's rate carries through the routing

UNKNOWN = dict(bw_bytes=np.nan, bw_bytes_lo=np.nan, bw_bytes_hi=np.nan, bound_lo=np.nan, bound_hi=np.nan,
               beyond=False, stripe_span=1.0, cpu_s_per_byte=np.nan, busy_devices=0,
               member_outstanding=np.nan, busiest_member=np.nan, exact=False, routing="", members_per_request=0,
               piece_bytes=np.nan)



def own_jobs(base: pd.DataFrame, route: routing.Route, point) -> dict:
    """A jbod's devices, each running its own jobs: the sum of the curve at each device's jobs x iodepth."""
    where, note = curves.at(base, point.rw, point.bs)
    rates = {jobs: where.rate(jobs * point.iodepth, jobs, point.iodepth) for jobs in set(route.jobs) if jobs}
    sums = {c: sum(route.jobs.count(jobs) * getattr(r, c) for jobs, r in rates.items()) for c in SPREAD}
    top = rates[max(rates)]
    return dict(sums, cpu_s_per_byte=top.cpu_s_per_byte, busy_devices=sum(1 for j in route.jobs if j),
                beyond=any(r.beyond for r in rates.values()),
                member_outstanding=max(route.jobs) * point.iodepth, busiest_member=max(route.jobs) * point.iodepth,
                exact=not note and all(r.exact for r in rates.values()),
                note="; ".join(filter(None, [note, *{r.note for r in rates.values()}])))


def members(base: pd.DataFrame, route: routing.Route, point, tags: int | None, busiest: bool = True) -> dict:
    """A stripe's members, each at the curve for the pieces it holds: every member alike, or spread at random;
    with ``tags`` (a member's queue depth) and more in flight than it holds, each job's requests wait for theirs in
    its own queue (``routing.submitted``)."""
    where, note = curves.at(base, point.rw, round(route.piece_bytes))
    if route.kind == "every member":
        one = where.rate(route.per_member)
        return dict({c: route.members * getattr(one, c) for c in SPREAD}, cpu_s_per_byte=one.cpu_s_per_byte,
                    beyond=one.beyond, busy_devices=route.members, member_outstanding=route.per_member,
                    busiest_member=route.per_member, exact=one.exact and not note,
                    note="; ".join(filter(None, [route.note, note, one.note])))
    occupancy = np.arange(1, route.customers + 1) * route.weight
    values = where.values(occupancy)
    mean = routing.spread(values["bw_bytes"], route.members, busiest=busiest)
    found = {c: _spread_like(values[c], values["bw_bytes"], mean.throughput, route.members) for c in SPREAD[1:]}
    found["bw_bytes"] = mean.throughput
    cpu = float(where.values([max(mean.mean, 1e-9) * route.weight])["cpu_s_per_byte"][0])
    words = (f"{route.customers * route.weight:g} in flight land at random on {route.members} members "
             f"({route.per_request} a request): {mean.mean * route.weight:.3g} a member on average"
             + (f", the busiest {mean.busiest * route.weight:.3g}" if np.isfinite(mean.busiest) else ""))
    if tags and route.per_request == 1 and route.weight == 1 and route.customers > tags:
        counts = np.arange(1, tags + 1)
        latency = counts * route.piece_bytes / where.values(counts)["bw_bytes"]
        blocked = routing.submitted(latency, route.members, point.numjobs, point.iodepth, tags) * route.piece_bytes
        found = {c: blocked * found[c] / found["bw_bytes"] for c in SPREAD}
        words += (f"; {tags} tags a member: each job's requests wait in its queue for theirs (head-of-line, a "
                  "seeded simulation)")
    return dict(found, cpu_s_per_byte=cpu, busy_devices=mean.busy_members,
                beyond=mean.mean * route.weight > where.largest, member_outstanding=mean.mean * route.weight,
                busiest_member=mean.busiest * route.weight,
                exact=False, note="; ".join(filter(None, [route.note, note, words])))


def _spread_like(rates: np.ndarray, reference: np.ndarray, throughput: float, members: int) -> float:
    """``routing.spread``'s throughput of ``rates``: ``throughput`` (the reference's) scaled where ``rates`` are the
    reference's times one factor (an interval's end of a one-point curve: the product form's throughput scales
    with the rates), else spread anew."""
    if reference[0] > 0 and np.allclose(rates, reference * (rates[0] / reference[0]), rtol=1e-12, atol=0.0):
        return float(throughput * rates[0] / reference[0])
    return routing.spread(rates, members, busiest=False).throughput


def routed(base: pd.DataFrame, layout: str, point, unit: int | None, tags: int | None,
           route: routing.Route | None = None) -> dict:
    """What the devices deliver at ``point`` routed by the stripe unit ``unit`` (or by ``route`` when given), with
    the route's own columns."""
    given = route is not None  # a span's other routes: their busiest member is not shown
    route = route or routing.route(layout, point.devices, point.rw, point.bs, point.numjobs, point.iodepth, unit)
    found = own_jobs(base, route, point) if route.kind == "own jobs" else members(base, route, point, tags,
                                                                                   busiest=not given)
    return dict(found, routing=route.kind, members_per_request=route.per_request, piece_bytes=route.piece_bytes)


def _distinct_routes(layout: str, point, chunks) -> list[routing.Route]:
    """The routes ``chunks`` give ``point``, each once (chunks at least iodepth x bs all put a job's window on one
    member; chunks at most bs / N all reach every member): what the devices deliver depends on the route alone."""
    found: dict = {}
    for chunk in chunks:
        route = routing.route(layout, point.devices, point.rw, point.bs, point.numjobs, point.iodepth, chunk)
        found.setdefault(replace(route, note=""), route)
    return list(found.values())


def chunk_span(base: pd.DataFrame, layout: str, point, found: dict, unit: int | None, tags: int | None) -> dict:
    """``found`` (routed by the tool's default ``unit``, or by none: every member) widened to what every stripe unit
    the layout could have gives (``routing.chunks_possible``: ``stripe_span``, hi / lo of their points), said."""
    possible = routing.chunks_possible(layout, point.bs, point.iodepth)
    own = routing.route(layout, point.devices, point.rw, point.bs, point.numjobs, point.iodepth, unit)
    others = [routed(base, layout, point, None, tags, r) for r in _distinct_routes(layout, point, possible)
              if unit is None or replace(r, note="") != replace(own, note="")]
    if not others:
        return found
    every = [found, *others] if unit is not None else others
    points = [f["bw_bytes"] for f in every]
    out = dict(found, bound_lo=min(f["bound_lo"] for f in every), bound_hi=max(f["bound_hi"] for f in every),
               beyond=any(f["beyond"] for f in every), stripe_span=max(points) / min(points) if min(points) > 0
               else np.inf, exact=False)
    if unit is None:  # the point stays every member's (the old model's, the upper end of most), its span said
        out["note"] = "; ".join(filter(None, [found["note"], f"chunks of {possible[0]} to {possible[-1]} bytes give "
                                               f"{rate(min(points))} to {rate(max(points))}"]))
    return out


def term(base: pd.DataFrame, layout: str, point, chunk: int | None, tags: int | None, span: bool = True) -> dict:
    """The devices' sum (value, lo, hi and the bounds the unknowns leave) before the design share, what each device
    receives, and the runs of the single device behind it (``reps``, the fewest of its points'); a stripe routed by
    its tool's default or by no chunk spans the chunks it could have (``chunk_span``; not where ``span`` is False:
    the interval then leaves the stripe unit out, and ``stripe_span`` is NaN, not known)."""
    unit, assumed = routing.chunk_for(layout, chunk)
    found = dict(routed(base, layout, point, unit, tags), stripe_span=1.0)
    if not describe(layout).per_device and (assumed or unit is None):
        found = chunk_span(base, layout, point, found, unit, tags) if span else dict(found, stripe_span=np.nan)
    if assumed:
        found["note"] = "; ".join(filter(None, [assumed, found["note"]]))
    rows = curves.with_outstanding(base)
    reps = rows.loc[rows["rw"] == point.rw, "reps"].min()
    return dict(found, reps=reps)
