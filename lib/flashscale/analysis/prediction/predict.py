"""Predict before you build: what N devices in a layout should deliver, from one device's curve, the routing of the
layout's requests over its devices, the layer's own cost where a calibration measured it, and the ceilings.

    curve(rows)                           the single-device curve (``analysis.prediction.curve``): per (rw, bs, iodepth,
                                          numjobs) the mean, its interval, the I/O in flight, the latency and the
                                          CPU-seconds per byte
    figures({"read": 3.2e9, ...})         a curve from published per-device figures (one value per rw, no spread)
    predict(curve, layout, points, ceil)   per point: each term, the prediction (the smallest), the term that binds,
                                          and the interval the single device's intervals give it
    predict_results(frame, ceilings)      every point of a results table's layouts, from its own single-device rows
    score(prediction, frame)              measured against predicted: the error, in the interval or not, and what
                                          the model did not explain

A campaign that has measured its baseline calls, before it builds a layout,
``predict(curve(baseline_rows), "btrfs-raid0", points, Ceilings(...), chunk_bytes=..., layer=...)`` with ``points``
the sweep's (rw, bs, numjobs, iodepth, devices), and keeps the frame to ``score`` once the layout is measured.

The terms, each in bytes/s of the data fio moves, each its own column (``<term>_limit_bw_bytes``):

    devices   what the layout's devices deliver at what each receives (``analysis.prediction.routing``): a jbod's device runs
              its own jobs (fio's spread over targets), at the single device's curve for that many jobs in flight;
              a stripe's member receives a piece of every request when requests span every member, else requests
              that land on it at random (the closed network's product form: unevenly, the busiest member holding
              more), each member at the curve for the requests it holds (``analysis.prediction.curve``: indexed by the I/O
              outstanding, Little's law below the least measured); times the layout's design share
              (``baseline_and_tax.design_share``: a mirror writes each byte twice)
    pcie, uplink, network, memory, cpu    the ceilings (``ceilings.ceiling_terms``); the cpu's cost per byte is the
              device's at its load, plus the layer's where a calibration measured it
    host      what several devices together were measured to deliver at most where they did not add up (a jbod on
              fewer devices below the model: ``calibration.host_ceiling``), a part of the host they share
    layer     where a calibration measured the layout on fewer devices (``analysis.prediction.calibration``): each request
              spends layer_s_per_io more than the raw devices and ceilings allow it, so k x bs / (k x bs / the
              smallest of those terms + layer_s_per_io) with k = numjobs x iodepth in flight (Little's law)

Every prediction is also an interval whose ends come from what is unknown (``analysis.prediction.bounds``:
``predicted_lo_bw_bytes``, ``predicted_hi_bw_bytes``, ``predicted_unknown``). The smallest term binds
(``predicted_limit``); any other within 5% of it (``CLOSE``) is named beside it (``predicted_close``). A term whose parameter is not given is no term; where no term but the devices' (and PCIe's,
which grows with them) is known, the note says the prediction is ``ceilings.UNBOUNDED``. The interval: each point of
the curve carries the t interval of its repetitions; a device term is the same sum of the bounds (every device is
the same measured device, so their errors move together); a ceiling is a parameter, exact. A curve point of one
run, or a published figure, has no spread and counts as exact.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from .. import agreement, baseline_and_tax, stats
from . import bounds, conformal, curve as curves, devices
from .calibration import LayerCost, calibrate, check_not_scored_on, reference_ceiling
from .curve import CURVE, figures, nearest
from .ceilings import SHARED, UNBOUNDED, Ceilings, ceiling_terms
from .routing import jobs_per_device
from ..significance import DEFAULT_MARGIN, check_margin
from ...errors import AnalysisError, ConfigError
from ...layouts import describe
from ...measure.units import interval, percent, rate

__all__ = ["CURVE", "Ceilings", "curve", "figures", "jobs_per_device", "nearest", "predict",
           "predict_results", "score", "limit_words", "outside_sentences", "drift_words"]

TERMS = ("devices", "pcie", "uplink", "network", "memory", "cpu", "host", "layer")  # ties bind in this order
CLOSE = 0.05  # a term within this fraction above the binding one binds as well, as far as the model can tell
KEYS = ["layout", "devices", "rw", "bs", "numjobs", "iodepth"]
VALUES = curves.VALUES
curve = curves.curve


def _check_points(points) -> pd.DataFrame:
    frame = pd.DataFrame(points).reset_index(drop=True)
    wanted = ["devices", "rw", "bs", "numjobs", "iodepth"]
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise ConfigError(f"points lack column(s) {', '.join(map(repr, missing))}; each point needs {wanted}")
    for name in ("devices", "bs", "numjobs", "iodepth"):
        for value in frame[name]:
            if isinstance(value, bool) or not (isinstance(value, (int, float, np.number)) and np.isfinite(value)
                                               and value >= 1 and value == int(value)):
                raise ConfigError(f"point {name} = {value!r} must be a whole number above 0")
    return frame[wanted].astype({n: "int64" for n in wanted if n != "rw"}).assign(rw=frame["rw"].astype(str))


def _check(base: pd.DataFrame, layout: str, ceilings: Ceilings) -> None:
    if not isinstance(layout, str) or not layout.strip():
        raise ConfigError(f"layout {layout!r} must be a layout's name")
    if not isinstance(ceilings, Ceilings):
        raise ConfigError(f"ceilings must be a ceilings.Ceilings; got {type(ceilings).__name__}")
    missing = [c for c in CURVE if c not in curves.with_outstanding(base).columns]
    if missing:
        raise ConfigError(f"the single-device curve lacks {missing}: make it with predict.curve or predict.figures")


def predict(base: pd.DataFrame, layout: str, points, ceilings: Ceilings = Ceilings(), chunk_bytes: int | None = None,
            layer: LayerCost | None = None, tags: int | None = None,
            host: Mapping[str, float] | None = None, stripe_span: bool = True,
            reference: Mapping[str, float] | None = None) -> pd.DataFrame:
    """Per point of ``points`` (rows or a frame of devices, rw, bs, numjobs, iodepth) of ``layout``: each term
    (``<term>_limit_bw_bytes``, the devices' with ``_lo``/``_hi``), ``layout_share``, ``jobs_per_device``,
    ``busy_devices``, ``routing``, ``members_per_request``, ``piece_bytes``, ``member_outstanding`` and
    ``busiest_member`` (requests in flight on a member, on average and on the busiest), ``hosts``,
    ``cpu_s_per_byte``, ``layer_s_per_io`` and ``layer_cpu_s_per_byte`` (where ``layer`` was calibrated),
    ``predicted_bw_bytes`` (the smallest term), ``predicted_lo``, ``predicted_hi``, ``predicted_limit``,
    ``predicted_close``, ``predicted_exact`` (each busy device runs a point the single device was measured at: this
    rw, bs, iodepth and job count, nothing nearest or interpolated standing in) and ``predicted_note``.
    ``predicted_reps`` (the fewest runs of the single-device points behind it: ``score``'s agreement reads it);
    ``predicted_lo_bw_bytes`` / ``predicted_hi_bw_bytes``, the interval the unknowns leave (``bounds``: NaN an open
    end, said in the note) and ``predicted_unknown``, which unknowns made it wide.
    ``base`` is a ``curve`` or ``figures``; ``chunk_bytes`` the stripe unit (None: unknown); ``tags`` a member's
    queue depth (``nr_requests``; None: unknown, requests wait at their member, never in the job's queue); ``host``
    per rw the host's measured ceiling (``calibration.host_ceiling``); ``stripe_span`` False leaves the stripe unit
    out of the interval (``flashscale plan``'s many device counts: each chunk a stripe could have is a model run);
    ``reference`` per rw what the reference layout carried on as many devices of this host, each device beyond the
    curve's largest load (``calibration.reference_ceiling``): the host term of the layouts on top of it (the point's,
    not an end), and the fact that closes the host's shared paths' lower end (``bounds.HOST``: open without it
    wherever more than one device runs)."""
    _check(base, layout, ceilings)
    rows = []
    for point in _check_points(points).itertuples(index=False):
        check_not_scored_on(layer, layout, point.devices)
        share = baseline_and_tax.design_share(layout, point.rw)
        known = not base[base["rw"] == point.rw].empty
        dev = devices.term(base, layout, point, chunk_bytes, tags, stripe_span) if known else dict(
            devices.UNKNOWN, note=f"no single-device {point.rw} rows")
        seconds, extra_cpu, layer_note = layer.at(point.rw, point.bs, point.numjobs, point.iodepth) if layer else (
            np.nan, np.nan, "")
        cpu = dev["cpu_s_per_byte"] + (extra_cpu if np.isfinite(extra_cpu) else 0.0)
        own_host, carried = (host or {}).get(point.rw, np.nan), (reference or {}).get(point.rw, np.nan)
        shared = {"host": np.fmin(own_host, carried)}
        raw = {**ceiling_terms(ceilings, point.rw, point.devices, share, dev["cpu_s_per_byte"]), **shared}
        terms = {"devices": dev["bw_bytes"] * share, **ceiling_terms(ceilings, point.rw, point.devices, share, cpu),
                 **shared}
        lows = {**terms, "devices": dev["bw_bytes_lo"] * share}
        highs = {**terms, "devices": dev["bw_bytes_hi"] * share}
        for side in (terms, lows, highs):
            side["layer"] = _layer_term({**raw, "devices": side["devices"]}, point, seconds)
        ends, open_words = _interval(terms, raw, dev, point, seconds, share, own_host,
                                     _unknowns(dev, layout, layer, point.devices > 1 and np.isnan(carried)))
        notes = [dev["note"], _cpu_words(base, point.rw, ceilings, dev["cpu_s_per_byte"], terms["cpu"]),
                 "; ".join(filter(None, [layer.words(), layer_note])) if layer is not None else "",
                 _host_words(own_host, carried, point.devices)]
        if np.isfinite(terms["devices"]) and not any(np.isfinite(terms[t]) for t in SHARED):
            notes.append(UNBOUNDED)
        row = dict(layout=layout, **point._asdict(), hosts=ceilings.hosts, busy_devices=dev["busy_devices"],
                   jobs_per_device=point.numjobs / point.devices, layout_share=share, routing=dev["routing"],
                   members_per_request=dev["members_per_request"], piece_bytes=dev["piece_bytes"],
                   member_outstanding=dev["member_outstanding"], busiest_member=dev["busiest_member"],
                   cpu_s_per_byte=cpu, layer_s_per_io=seconds, layer_cpu_s_per_byte=extra_cpu,
                   **{f"{t}_limit_bw_bytes": terms[t] for t in TERMS},
                   devices_limit_bw_bytes_lo=lows["devices"], devices_limit_bw_bytes_hi=highs["devices"])
        row.update(_smallest(terms, lows, highs), predicted_exact=dev["exact"], **ends,
                   predicted_reps=dev.get("reps", np.nan),
                   predicted_note="; ".join(filter(None, [*notes, *open_words])))
        rows.append(row)
    return pd.DataFrame(rows)


def _cpu_words(base: pd.DataFrame, rw: str, ceilings: Ceilings, cost: float, term: float) -> str:
    """What the cpu term rests on, where the cores are given: nothing (the single device's CPU not measured), or
    fio's own CPU per byte read at a cap (``curve.CPU_AT_CAP``: a floor of the cost, so the term an upper end)."""
    if not ceilings.cores:
        return ""
    if not (np.isfinite(cost) and cost > 0):
        return "no CPU cost from the single device (not measured): no cpu term"
    if curves.with_outstanding(base).loc[lambda c: c["rw"] == rw, curves.CPU_AT_CAP].astype(bool).any():
        return (f"cpu: the single device's CPU per byte read at its cap from fio's own time ({cost * 2**30:.3g} "
                f"CPU-s/GiB, a floor: the kernel's threads uncounted): the host's cores carry at most {rate(term)}")
    return ""


def _host_words(own_host: float, carried: float, devices: int) -> str:
    """The host term in words: measured on fewer devices (``own_host``), or what the reference carried on these
    (``carried``), whichever it is; "" where neither was measured."""
    if np.isfinite(own_host) and not own_host > carried:
        return f"host: several devices together were measured at {rate(own_host)} at most"
    if np.isfinite(carried):
        return (f"host: the reference carried {rate(carried)} on these {devices} devices, each beyond the single "
                "device's largest load: the layers on top cross the same devices and host (the point's ceiling, not "
                "an end: a layer may hold more in flight a device)")
    return ""


def _unknowns(dev: dict, layout: str, layer: LayerCost | None, shared_unmeasured: bool) -> dict:
    """What the devices' term leaves unknown (``bounds``): an open lower end where a layer's CPU cost is not
    measured (a stripe with no calibration) or the host's shared paths are not (``shared_unmeasured``: several
    devices at once, never measured together on this host), an upper end beyond the curve, and each finite
    unknown's own width."""
    spread = dev["bw_bytes_hi"] / dev["bw_bytes_lo"] if dev["bw_bytes_lo"] > 0 else np.nan
    stripe = dev.get("stripe_span", 1.0)
    others = (spread if spread > 1 else 1.0) * (stripe if stripe > 1 else 1.0)  # NaN compares false: 1
    load = (dev["bound_hi"] / dev["bound_lo"] if dev["bound_lo"] > 0 else np.inf) / others if np.isfinite(
        dev["bw_bytes"]) else np.nan
    opened = [bounds.LAYER_CPU] if not describe(layout).per_device and layer is None else []
    return dict(open_low=opened + ([bounds.HOST] if shared_unmeasured else []), beyond=bool(dev["beyond"]),
                widths={bounds.STRIPE_UNIT: dev.get("stripe_span", 1.0), bounds.BELOW: load,
                        bounds.REPETITIONS: spread})


def _interval(terms: dict, raw: dict, dev: dict, point, seconds: float, share: float, own_host: float,
              unknown: dict) -> tuple[dict, list[str]]:
    """``predicted_lo_bw_bytes`` / ``predicted_hi_bw_bytes`` (``bounds.ends`` of each term's ends, the devices' at
    the bounds its unknowns leave, the layer's from them: NaN an open end) and ``predicted_unknown`` (which unknowns
    made the interval wide, the first the widest), with the open ends in words; NaN, "" and none where the devices'
    term is unknown. The upper end holds the host's ceiling measured on fewer devices (``own_host``), not what the
    reference carried on these (a point's ceiling, not an end)."""
    if not np.isfinite(terms["devices"]):
        return dict(predicted_lo_bw_bytes=np.nan, predicted_hi_bw_bytes=np.nan, predicted_unknown=""), []
    floor = {**terms, "devices": dev["bound_lo"] * share}
    ceiling = {**terms, "devices": dev["bound_hi"] * share, "host": own_host}
    for side in (floor, ceiling):
        side["layer"] = _layer_term({**raw, "devices": side["devices"]}, point, seconds)
    lo, hi = bounds.ends(floor, ceiling, bool(unknown["open_low"]), unknown["beyond"])
    why = {bounds.LAYER_CPU: "the layer's CPU cost is not measured (no calibration)",
           bounds.HOST: f"the host's shared paths (PCIe root, memory, the devices' aggregate) were never measured "
                        f"carrying {point.devices} devices together"}
    words = [f"lower end open: {why[u]}" for u in unknown["open_low"]] if np.isnan(lo) else []
    if np.isnan(hi):
        words.append("upper end open: beyond the single device's largest measured load, no ceiling known")
    return dict(predicted_lo_bw_bytes=lo, predicted_hi_bw_bytes=hi,
                predicted_unknown=bounds.unknowns(unknown["open_low"], unknown["beyond"], unknown["widths"])), words


def _layer_term(raw: dict, point, seconds: float) -> float:
    """The layer's term: each of the k requests in flight spends ``seconds`` more than the smallest of the raw
    terms (the cpu's at the device's own cost, as the calibration held it) allows it (Little's law: a request's
    time is k x bs / rate); NaN without a calibration."""
    below = [value for value in raw.values() if np.isfinite(value)]
    if not np.isfinite(seconds) or not below:
        return np.nan
    if min(below) <= 0:  # an interval's low side at nothing: the layer adds to nothing
        return 0.0
    work = point.numjobs * point.iodepth * point.bs
    return work / (work / min(below) + seconds)


def _smallest(terms: dict, lows: dict, highs: dict) -> dict:
    """The prediction: the smallest term (NaN when the devices' is unknown), the one that binds, its interval, and
    the other terms within ``CLOSE`` of it (``predicted_close``, comma-separated): they bind as well, as far as
    the model can tell."""
    if not np.isfinite(terms["devices"]):
        return dict(predicted_bw_bytes=np.nan, predicted_lo=np.nan, predicted_hi=np.nan, predicted_limit="",
                    predicted_close="")
    known = [t for t in TERMS if np.isfinite(terms[t])]
    limit = min(known, key=lambda t: (terms[t], TERMS.index(t)))
    close = [t for t in known if t != limit and terms[t] <= terms[limit] * (1 + CLOSE)]
    return dict(predicted_bw_bytes=terms[limit], predicted_lo=min(lows[t] for t in known),
                predicted_hi=min(highs[t] for t in known), predicted_limit=limit, predicted_close=",".join(close))


def limit_words(limit: str, close: str = "") -> str:
    """The binding term in words, with those within ``CLOSE`` of it: "devices", "devices (cpu within 5%)"."""
    others = [t for t in str(close if isinstance(close, str) else "").split(",") if t]
    return f"{limit} ({' and '.join(others)} within {percent(CLOSE, 0)})" if others else str(limit)


def chunks(frame: pd.DataFrame, chunk_bytes: int | None = None) -> dict[str, int | None]:
    """Per layout of ``frame``, its stripe unit: the rows' own ``chunk_bytes`` (an imported run's metadata) where
    they give one, else ``chunk_bytes`` (the user's, or the layout flashscale built)."""
    out = {}
    for layout, rows in frame.groupby("layout", sort=True):
        given = pd.to_numeric(rows["chunk_bytes"], errors="coerce").dropna() if "chunk_bytes" in rows else []
        out[str(layout)] = int(given.iloc[0]) if len(given) else chunk_bytes
    return out


def predict_results(frame: pd.DataFrame, ceilings: Ceilings = Ceilings(), confidence: float = 0.95,
                    chunk_bytes: int | None = None, baseline_layout: str | None = None) -> pd.DataFrame:
    """Every measured point of ``frame``'s layouts of more than one device, predicted from ``frame``'s own
    single-device rows (``curve``; those of ``baseline_layout`` when given), each stripe routed by its chunk
    (``chunks``), its layer's cost from its own points on fewer devices where the table has them
    (``own_calibration``); each layout with a layer (not ``per_device``) held to what the table's layouts without one (a
    jbod: each device its own jobs) carried on as many devices (``calibration.reference_ceiling``: ``predict``'s
    ``reference``), never such a layout to itself."""
    base = curve(frame, confidence, baseline_layout)
    points = baseline_and_tax.point_means(frame)
    points = points[points["devices"] > 1]
    if points.empty:
        raise AnalysisError("no layout of more than one device to predict: the results hold single-device rows only")
    unit = chunks(frame, chunk_bytes)
    rates = baseline_and_tax.rates(frame)
    raw = rates[[describe(str(name)).per_device for name in rates["layout"]]]
    parts = []
    for (layout, count), group in points.groupby(["layout", "devices"], sort=True):
        own = raw[raw["devices"] == count]
        reference = {} if describe(str(layout)).per_device else reference_ceiling(base, own)
        layer = own_calibration(base, rates, str(layout), int(count), ceilings, unit.get(str(layout)))
        parts.append(predict(base, str(layout), group[["devices", "rw", "bs", "numjobs", "iodepth"]], ceilings,
                             unit.get(str(layout)), layer=layer, reference=reference))
    return pd.concat(parts, ignore_index=True)


def own_calibration(base: pd.DataFrame, rates: pd.DataFrame, layout: str, count: int, ceilings: Ceilings,
                    chunk_bytes: int | None) -> LayerCost | None:
    """The table's own calibration of ``layout`` for ``count`` devices: the same layout measured on the largest count
    of at least 2 below it (``rates``: the table's rated rows), its points set beside the raw model's
    (``calibration.calibrate``); None for a layout without a layer (``per_device``), or where the table measured it
    on no such count or at no point the model predicts."""
    if describe(layout).per_device:
        return None
    mine = rates[rates["layout"].astype(str) == layout]
    fewer = sorted(c for c in set(mine["devices"]) if 2 <= c < count)
    if not fewer:
        return None
    rows = mine[mine["devices"] == fewer[-1]]
    points = rows[["rw", "bs", "numjobs", "iodepth"]].drop_duplicates().assign(devices=int(fewer[-1]))
    try:
        return calibrate(predict(base, layout, points, ceilings, chunk_bytes), rows, layout, int(fewer[-1]))
    except AnalysisError:
        return None


def score(prediction: pd.DataFrame, frame: pd.DataFrame, confidence: float = 0.95,
          margin: float = DEFAULT_MARGIN, level: float = conformal.LEVEL) -> pd.DataFrame:
    """``prediction`` with what was measured at each point (``measured_bw_bytes``, the mean of its repetitions
    with its t interval ``_lo``/``_hi``, ``measured_reps``); ``error`` = measured / predicted - 1; ``in_interval``:
    the measured mean lies in the prediction interval (``agreement.prediction_interval``: the predicted interval
    widened by the measurement's own run-to-run noise; NA where the prediction has no interval); ``agreement``: the one rule's
    verdict (``agreement.agree`` of the measured against the predicted, each side with its own interval: the
    measured runs', the single device's behind the prediction, ``predicted_reps`` runs where the prediction says,
    exact where its interval has no width): same, above, below, undecided, or no interval (one run on a side);
    ``beyond_margin``: above or below, the whole interval of their ratio beyond ``margin`` (NA with no interval);
    ``unexplained`` = 1 - measured / predicted, what the model did not explain;
    ``devices_tax`` = 1 - measured / the devices term: the tax re-read against what these devices, at these jobs,
    deliver alone; ``interval_meets``: the measured interval (the mean where one run) meets the interval the
    unknowns leave (``predicted_lo_bw_bytes`` to ``predicted_hi_bw_bytes``, an open end meeting everything on its
    side: ``bounds.meets``), and ``predicted_width`` its hi / lo (inf where an end is open); the interval with two
    ends each point is scored by and whether the measurement lies inside it (``conformal.two_ended`` at ``level``:
    ``scored_lo_bw_bytes``, ``scored_hi_bw_bytes``, ``scored_from``, ``scored_inside``; the table's tier, source
    and clip: ``scored_tier``, ``scored_residuals``, ``scored_clipped``, ``scored_unclipped``). Points not measured
    are left out."""
    missing = [c for c in (*KEYS, "predicted_bw_bytes", "predicted_lo", "predicted_hi", "devices_limit_bw_bytes")
               if c not in prediction.columns]
    if missing:
        raise AnalysisError(f"prediction lacks {missing}: make it with predict.predict")
    measured = stats.repetition_stats(frame, confidence=confidence)
    measured = measured.rename(columns={"bw_bytes": "measured_bw_bytes", "bw_bytes_lo": "measured_bw_bytes_lo",
                                        "bw_bytes_hi": "measured_bw_bytes_hi", "reps": "measured_reps"})
    measured = measured[[*KEYS, "measured_bw_bytes", "measured_bw_bytes_lo", "measured_bw_bytes_hi", "measured_reps"]]
    types = {k: "int64" for k in ("devices", "bs", "numjobs", "iodepth")}
    out = prediction.astype(types).merge(measured.astype(types).astype({"layout": str, "rw": str}), on=KEYS,
                                         how="inner", validate="one_to_one")
    value = out["measured_bw_bytes"]
    out["error"] = value / out["predicted_bw_bytes"] - 1
    check_margin(margin)
    runs = out["predicted_reps"] if "predicted_reps" in out.columns else pd.Series(np.inf, index=out.index)
    sides = [(agreement.side(p, p_lo, p_hi, k - 1, confidence), agreement.side(m, m_lo, m_hi, n - 1, confidence))
             for m, m_lo, m_hi, n, p, p_lo, p_hi, k in zip(
                 value, out["measured_bw_bytes_lo"], out["measured_bw_bytes_hi"], out["measured_reps"],
                 out["predicted_bw_bytes"], out["predicted_lo"], out["predicted_hi"], runs)]
    ranges = [agreement.prediction_interval(p, m, confidence) if p is not None and m is not None else (np.nan, np.nan)
              for p, m in sides]
    inside = pd.Series([lo <= v <= hi for v, (lo, hi) in zip(value, ranges)], index=out.index)
    out["in_interval"] = inside.astype("boolean").mask(out["predicted_lo"].isna() | pd.Series(
        [not np.isfinite(lo) for lo, _ in ranges], index=out.index))
    out["agreement"] = [agreement.verdict(agreement.side(m, m_lo, m_hi, n - 1, confidence),
                                          agreement.side(p, p_lo, p_hi, k - 1, confidence), margin, confidence)
                        for m, m_lo, m_hi, n, p, p_lo, p_hi, k in zip(
                            value, out["measured_bw_bytes_lo"], out["measured_bw_bytes_hi"], out["measured_reps"],
                            out["predicted_bw_bytes"], out["predicted_lo"], out["predicted_hi"], runs)]
    out["beyond_margin"] = out["agreement"].isin([agreement.ABOVE, agreement.BELOW]).astype("boolean").mask(
        out["agreement"].isna() | out["agreement"].eq(agreement.NO_INTERVAL))
    out["unexplained"] = 1 - value / out["predicted_bw_bytes"]
    if "predicted_lo_bw_bytes" in out.columns:  # predictions stated before the unknowns' interval have none
        low = out["measured_bw_bytes_lo"].where(np.isfinite(out["measured_bw_bytes_lo"]), value)
        high = out["measured_bw_bytes_hi"].where(np.isfinite(out["measured_bw_bytes_hi"]), value)
        out["interval_meets"] = [bounds.meets(*ends) for ends in zip(
            low, high, out["predicted_lo_bw_bytes"], out["predicted_hi_bw_bytes"])]
        out["predicted_width"] = [bounds.width(lo, hi) for lo, hi in zip(out["predicted_lo_bw_bytes"],
                                                                          out["predicted_hi_bw_bytes"])]
    out["devices_tax"] = 1 - value / out["devices_limit_bw_bytes"]
    return conformal.two_ended(out, frame, level)


def outside_sentences(scored: pd.DataFrame, drift: Mapping[str, float] | None = None,
                      margin: float = DEFAULT_MARGIN) -> list[str]:
    """Each scored point whose measurement lies outside its predicted interval and beyond the margin, in words,
    with the term that bound: "btrfs-raid0 write, 4 devices, bs 1048576, 1 job, iodepth 1: measured 453 MB/s,
    predicted 800 MB/s (798–802 MB/s), -43.4%; the devices bound" (the interval "one run: no interval" where the
    prediction has none). ``drift``: per rw, how far this machine's own measurements of one point drift apart
    (``scoring.drift``); each sentence then says whether its error is inside that drift (a miss that cannot be told
    from it) or beyond it (``drift_words``, against the report's ``margin``)."""
    out = []
    for row in scored[scored["beyond_margin"].fillna(False).astype(bool)].itertuples(index=False):
        line = (f"{row.layout} {row.rw}, {row.devices} devices, bs {row.bs}, {baseline_and_tax.count_of(row.numjobs, 'job')}, "
                f"iodepth {row.iodepth}: "
                f"measured {rate(row.measured_bw_bytes)}, predicted {rate(row.predicted_bw_bytes)} "
                f"({interval(*_bounds(row))}), {percent(row.error, signed=True)}; the "
                f"{limit_words(row.predicted_limit, getattr(row, 'predicted_close', ''))} bound")
        out.append(line + drift_words(row.error, row.rw, drift, margin))
    return out


def _bounds(row) -> tuple[float, float]:
    """A prediction's interval, NaN where its single device had one run (``predicted_reps``): no interval."""
    runs = getattr(row, "predicted_reps", np.nan)
    return (np.nan, np.nan) if runs < 2 else (row.predicted_lo, row.predicted_hi)


def drift_words(error: float, rw: str, drift: Mapping[str, float] | None, margin: float = DEFAULT_MARGIN) -> str:
    """A prediction's ``error`` held to how far this machine's own measurements of one point drift apart in ``rw``
    (``drift``, per rw, ``scoring.drift``), where it is a miss (beyond the ``margin`` of practical equivalence):
    "; inside this machine's write drift (14.7%): not told from it", or "; beyond this machine's read drift
    (2.5%)"; nothing for an error within the margin (no miss to own) or where that drift was not measured."""
    own = (drift or {}).get(rw, np.nan)
    if not np.isfinite(own) or not np.isfinite(error) or abs(error) <= margin:
        return ""
    if abs(error) <= own:
        return f"; inside this machine's {rw} drift ({percent(own)}): not told from it"
    return f"; beyond this machine's {rw} drift ({percent(own)})"
