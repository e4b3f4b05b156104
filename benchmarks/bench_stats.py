"""make bench-stats: every error rate flashscale's tax verdicts and intervals state, measured by Monte Carlo on its
own functions over the settings a user may choose.

Each draw is a campaign's point: a reference of m runs and a layout of n, each run a rate of 400 MB/s times a true
ratio (layout / reference) times multiplicative log-normal noise of a side's spread, rounded to whole KiB/s as fio
reports it (so runs tie where the spread is below fio's resolution; a spread of 0 is every run the same). The noise
is median 1: the verdicts test the ratio of geometric means (the typical run's, ``significance``'s module doc), so
the truth a verdict is scored against is that ratio. Procedures, each with the rate it states:

* ``fixed``: ``significance.tax_test`` and ``practical`` (its 95% interval against the margin), the true ratio on
  the margin's lower edge (a tax of exactly the margin) or its upper edge (a gain of exactly it), where both a tax
  (gain) beyond the margin and equivalence are wrong: stated at most 5% together (2.5% each). And at no tax, the
  significance verdict (``real``): stated 5%.
* ``sequential``: ``significance.sequential_tax`` (PRECISION's group-sequential test), the layout's runs one at a
  time from two to ``most`` (MAX_REPETITIONS), a look after each, against a reference of 3 runs or of ``most`` (a
  campaign runs its tax reference to the most); the truth on an edge as above: stated alpha, 5%, the whole.
* ``shared``: the same test where the reference is sampled as the looks need it (``repetitions.shared_point``,
  ``sequential_tax`` with ``reference_grows``: looks at the fewer side's runs): the reference from 2 runs (or until
  precise at 2%, the layout too, at a most of 10), then a run of each side a look needs; stated alpha, 5%, the whole.
* ``interval``: the throughput interval of a point (``stats.interval_t``, 95%) and whether it holds the true mean
  rate; stated 5% missed. Its noise is mean 1, the quantity it is the interval of.
* ``family``: a report of 12 verdicts (4 layouts a true tax on the margin's edge, 4 a tax of 8%, 4 none), read by
  ``stats.tax_tests`` and controlled together (``family.controlled``, Benjamini-Hochberg): the false discovery rate
  among the verdicts it keeps (tax, gain or equivalent wrong about the truth), stated 2.5%.
* ``outlier``: ``outliers.unlike`` (a run unlike the others of its point, at the report's margin) over a point's
  runs that are all alike: the share of runs it flags, stated at most 1% (its ``LEVEL``). Beside it, not held: the
  share of draws in which one run 30% slower is flagged (``detected``).
* ``drift``: ``drift.drift_test`` (BRACKET: the tax reference's runs before the layouts against its runs after
  them) where the reference did not move: the share of points it withholds, stated at most 5%. Beside it, not
  held: the share in which a reference 5% slower after is found (``found``).

Grid: runs 2, 3, 5, 10 a side; spreads 0, 0.1%, 2%, 20% on both sides and 5% against 1% either way; margins 0.5%,
2%, 10%; most 2, 3, 5, 10. ``DRAWS`` draws a setting (``--draws``, default 2000); the Monte Carlo error of a rate is
sqrt(p (1 - p) / draws) at the stated p. The exit status is 1 where a measured error rate exceeds its stated rate
by more than 3 Monte Carlo errors (3, not 1: the grid holds several hundred settings, and a procedure exactly at its
rate would exceed it by one error in a sixth of them, by three in about one in 700). Every setting's counts, and
every draw's verdict and runs, are kept in ``benchmarks/results/stats/tax-<stamp>.json.gz``. The interval over
builds has its own check (``benchmarks/stats_builds.py``), which ``make bench-stats`` runs too.

Measured at 2,000 draws (2026-12-04, ``tax-20261204T0140Z.json.gz``; docs/validation.md has the table): the largest
error over the grid 5.65% for the fixed test and its significance verdict, 4.85% sequential, 6.40% for the
interval (20 settings: medians at the rates), 0% for the family, 1.11% for the outlier rule (at 1%), 4.40% for the
drift rule; none over by 3 errors. Before it, the tax test's
Welch-Satterthwaite degrees of freedom reached 7.2% and the sequential test 7.5% (``significance``'s docs).

``--stall``: beside the table, the throughput interval where one run in ten is 30% slower (a stall), a case
outside the noise model the intervals state their rate for: reported, not held (docs/validation.md).
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from flashscale.analysis import agreement, drift as drifts, family as families, outliers, repetitions, significance, stats

BW = 400e6  # bytes/s
KIB = 1024.0  # fio's bandwidth resolution
RUNS = (2, 3, 5, 10)
SPREADS = ((0.0, 0.0), (0.001, 0.001), (0.02, 0.02), (0.2, 0.2), (0.05, 0.01), (0.01, 0.05))  # (layout, reference)
MARGINS = (0.005, 0.02, 0.1)
MOSTS = (2, 3, 5, 10)
EDGES = ("lower", "upper")
STATED = {"fixed": 0.05, "significance": 0.05, "sequential": 0.05, "shared": 0.05, "interval": 0.05, "family": 0.025,
          "outlier": outliers.LEVEL, "drift": 0.05}
SIGMAS = 3.0  # how many Monte Carlo errors a measured rate may exceed its stated one by
CODE = {"tax": "t", "gain": "g", "equivalent": "e", "inconclusive": "i", agreement.ONE_RUN: "o"}


def rates(rng, ratio: float, spread: float, n: int, mean_one: bool = False) -> np.ndarray:
    """n runs of BW x ``ratio`` with log-normal noise of ``spread`` (median 1, or mean 1), in whole KiB/s."""
    shift = -spread ** 2 / 2 if mean_one else 0.0
    values = BW * ratio * np.exp(rng.normal(shift, spread, n)) if spread else np.full(n, BW * ratio)
    return np.maximum(np.round(values / KIB), 1.0) * KIB


def true_ratio(margin: float, edge: str) -> float:
    """The ratio on the margin's edge: 1 - margin (a tax of exactly it) or 1 / (1 - margin) (a gain of it)."""
    return 1.0 - margin if edge == "lower" else 1.0 / (1.0 - margin)


def wrong_at_edge(verdict: str, edge: str) -> bool:
    """On an edge, a verdict beyond the margin on that side and equivalence are both wrong."""
    return verdict in ("equivalent", "tax" if edge == "lower" else "gain")


def fixed(setting: dict, draws: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    n, m, (sl, sr), margin = setting["n"], setting["m"], setting["spreads"], setting["margin"]
    said = {edge: [] for edge in EDGES}
    real = 0
    for _ in range(draws):
        reference = rates(rng, 1.0, sr, m)
        noise = rates(rng, 1.0, sl, n) / BW  # one draw of the layout's noise, read at each truth
        for edge in EDGES:
            test = significance.tax_test(noise * BW * true_ratio(margin, edge), reference)
            said[edge].append(significance.practical(test, margin))
        real += significance.tax_test(noise * BW, reference).verdict == "real"
    found = {"verdicts": {edge: "".join(CODE[v] for v in said[edge]) for edge in EDGES},
             "significance": real / draws}
    found["fixed"] = max(sum(wrong_at_edge(v, edge) for v in said[edge]) / draws for edge in EDGES)
    return found


def sequential(setting: dict, draws: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    most, m, (sl, sr), margin, edge = (setting["most"], setting["m"], setting["spreads"], setting["margin"],
                                       setting["edge"])
    ratio = true_ratio(margin, edge)
    said, runs = [], []
    for _ in range(draws):
        reference = rates(rng, 1.0, sr, m)
        layout = list(rates(rng, ratio, sl, 2))
        while True:
            look = significance.sequential_tax(layout, reference, most, margin)
            if look.decided:
                break
            layout.extend(rates(rng, ratio, sl, 1))
        said.append(look.verdict)
        runs.append(len(layout))
    return {"sequential": sum(wrong_at_edge(v, edge) for v in said) / draws,
            "decided": sum(v in ("tax", "gain", "equivalent") for v in said) / draws,
            "mean_runs": float(np.mean(runs)), "verdicts": "".join(CODE[v] for v in said), "runs": runs}


def shared(setting: dict, draws: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    most, (sl, sr), margin, edge, precision = (setting["most"], setting["spreads"], setting["margin"], setting["edge"],
                                               setting["precision"])
    ratio = true_ratio(margin, edge)
    said, runs = [], []
    for _ in range(draws):
        taken = repetitions.shared_point(lambda: float(rates(rng, 1.0, sr, 1)[0]),
                                         {"layout": lambda: float(rates(rng, ratio, sl, 1)[0])}, precision, most,
                                         margin=margin)
        said.append(taken.looks["layout"].verdict)
        runs.append((len(taken.layouts["layout"]), len(taken.reference)))
    return {"shared": sum(wrong_at_edge(v, edge) for v in said) / draws,
            "decided": sum(v in ("tax", "gain", "equivalent") for v in said) / draws,
            "mean_runs": [float(x) for x in np.mean(runs, axis=0)], "verdicts": "".join(CODE[v] for v in said),
            "runs": runs}


def interval(setting: dict, draws: int, seed: int, stall: float = 0.0) -> dict:
    rng = np.random.default_rng(seed)
    n, spread = setting["n"], setting["spread"]
    missed = 0
    for _ in range(draws):
        values = rates(rng, 1.0, spread, n, mean_one=True)
        if stall:
            values = np.where(rng.random(n) < 0.1, values * (1.0 - stall), values)
        lo, hi = stats.interval_t(values)
        missed += not lo <= BW <= hi
    return {"interval": missed / draws}


TRUTH = {"edge": 0.98, "tax": 0.92, "none": 1.0}  # the family's layouts: a tax on a 2% margin's edge, 8%, none


def _false(verdict: str, truth: str) -> bool:
    """Is a kept verdict wrong about a layout of ``truth`` (2% margin)?"""
    if truth == "edge":
        return verdict in ("tax", "equivalent")
    if truth == "tax":
        return verdict != "tax"
    return verdict != "equivalent"


def family(setting: dict, draws: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    n, spread = setting["n"], setting["spread"]
    truths = [t for t in TRUTH for _ in range(4)]
    layouts = [f"l{i}" for i in range(len(truths))]
    rows = pd.DataFrame({"layout": ["ref", *layouts], "devices": 4, "rw": "read"})
    share = []
    for _ in range(draws):
        reps = [("ref", v) for v in rates(rng, 1.0, spread, n)]
        reps += [(name, v) for name, t in zip(layouts, truths) for v in rates(rng, TRUTH[t], spread, n)]
        runs = pd.DataFrame(reps, columns=["layout", "bw_bytes"]).assign(devices=4, rw="read")
        tested = pd.concat([rows, stats.tax_tests(rows, runs, "ref", ["devices", "rw"], point={})], axis=1)
        kept = families.controlled(tested).iloc[1:]
        held = kept["tax_held"].fillna(False).astype(bool).to_numpy()
        wrong = [_false(v, t) for v, t in zip(kept["tax_verdict"], truths)]
        share.append(sum(w and h for w, h in zip(wrong, held)) / max(int(held.sum()), 1))
    return {"family": float(np.mean(share))}


def outlier(setting: dict, draws: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    n, spread, margin = setting["n"], setting["spread"], setting["margin"]
    flagged, detected = 0, 0
    for _ in range(draws):
        values = rates(rng, 1.0, spread, n)
        flagged += int(outliers.unlike(values, margin).sum())
        values[0] *= 0.7
        detected += bool(outliers.unlike(values, margin)[0])
    return {"outlier": flagged / (draws * n), "detected": detected / draws}


def drift(setting: dict, draws: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    n, m, spread, margin = setting["n"], setting["m"], setting["spread"], setting["margin"]
    withheld, found = 0, 0
    for _ in range(draws):
        before, after = rates(rng, 1.0, spread, n), rates(rng, 1.0, spread, m)
        withheld += drifts.drift_test(before, after, margin).drifted
        found += drifts.drift_test(before, 0.95 * after, margin).drifted
    return {"drift": withheld / draws, "found": found / draws}


def grid() -> list[tuple[str, dict]]:
    work = [("fixed", {"n": n, "m": m, "spreads": s, "margin": g})
            for n, m, s, g in itertools.product(RUNS, RUNS, SPREADS, MARGINS)]
    work += [("sequential", {"most": most, "m": m, "spreads": s, "margin": g, "edge": e})
             for most, s, g, e in itertools.product(MOSTS, SPREADS, MARGINS, EDGES)
             for m in sorted({3, most})]
    work += [("shared", {"most": most, "spreads": s, "margin": g, "edge": e, "precision": p})
             for most, s, g, e in itertools.product(MOSTS, SPREADS, MARGINS, EDGES)
             for p in ((None, 0.02) if most == 10 else (None,))]
    work += [("interval", {"n": n, "spread": s}) for n in RUNS for s in (0.0, 0.001, 0.02, 0.05, 0.2)]
    work += [("family", {"n": n, "spread": s}) for n in (2, 3, 5) for s in (0.02, 0.05)]
    work += [("outlier", {"n": n, "spread": s, "margin": g})
             for n in (3, 5, 10) for s in (0.0, 0.001, 0.02, 0.2) for g in MARGINS]
    work += [("drift", {"n": n, "m": m, "spread": s, "margin": g})
             for n, m in ((2, 2), (3, 3), (5, 5), (10, 10), (10, 3)) for s in (0.0, 0.001, 0.02, 0.2) for g in MARGINS]
    return work


def draws_of(procedure: str, draws: int) -> int:
    """The draws a setting of ``procedure`` takes: ``draws``, the family a tenth (each draw a report of 12 tests)."""
    return max(draws // 10, 50) if procedure == "family" else draws


def run(job: tuple[str, dict, int, int]) -> dict:
    procedure, setting, draws, seed = job
    found = {"fixed": fixed, "sequential": sequential, "shared": shared, "interval": interval, "family": family,
             "outlier": outlier, "drift": drift}[procedure](
        setting, draws_of(procedure, draws), seed)
    return {"procedure": procedure, "setting": setting, "seed": seed, **found}


def error(stated: float, draws: int) -> float:
    return float(np.sqrt(stated * (1 - stated) / draws))


def held(result: dict, draws: int) -> list[tuple[str, float, float, float, bool]]:
    """Each rate this result measured: (name, stated, measured, Monte Carlo error, within it)."""
    names = {"fixed": ("fixed", "significance"), "sequential": ("sequential",), "shared": ("shared",),
             "interval": ("interval",),
             "family": ("family",), "outlier": ("outlier",), "drift": ("drift",)}[result["procedure"]]
    n = draws_of(result["procedure"], draws)
    return [(name, STATED[name], result[name], error(STATED[name], n),
             result[name] <= STATED[name] + SIGMAS * error(STATED[name], n)) for name in names]


def table(results: list[dict], draws: int) -> list[dict]:
    """Per procedure: the settings, the stated rate, the largest measured one and where, and how many exceed it."""
    rows = []
    for name in STATED:
        found = [(r, rate) for r in results for (k, _, rate, _, _) in held(r, draws) if k == name]
        if not found:
            continue
        worst, rate = max(found, key=lambda f: f[1])
        n = draws_of(name, draws)
        rows.append({"procedure": name, "settings": len(found), "stated": STATED[name], "largest": rate,
                     "median": float(np.median([f[1] for f in found])), "error": error(STATED[name], n),
                     "over": sum(rate > STATED[name] + SIGMAS * error(STATED[name], n) for _, rate in found),
                     "where": worst["setting"]})
    return rows


def markdown(summary: list[dict]) -> str:
    """The table docs/validation.md shows."""
    lines = ["| procedure | settings | stated | largest measured | median | Monte Carlo error | over by 3 errors |",
             "|---|---|---|---|---|---|---|"]
    for row in summary:
        lines.append(f"| {row['procedure']} | {row['settings']} | {row['stated']:.1%} | {row['largest']:.2%} | "
                     f"{row['median']:.2%} | {row['error']:.2%} | {row['over']} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=2000, help="draws a setting (the family: a tenth)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", choices=sorted({p for p, _ in grid()}), action="append",
                        help="one procedure (repeatable); default every one")
    parser.add_argument("--stall", action="store_true", help="also the interval with one run in ten stalled")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results" / "stats",
                        help="the folder the results are kept in (default benchmarks/results/stats)")
    args = parser.parse_args(argv)
    if args.draws < 100:
        parser.error(f"--draws {args.draws} is too few for a rate near 5% (at least 100)")
    work = [(p, s, args.draws, 1000 + i) for i, (p, s) in enumerate(grid()) if not args.only or p in args.only]
    with ProcessPoolExecutor(max(args.jobs, 1)) as pool:
        results = list(pool.map(run, work, chunksize=4))
    summary = table(results, args.draws)
    print(f"{'procedure':13s} {'settings':>8s} {'stated':>7s} {'largest':>8s} {'median':>7s} {'MC error':>8s} over")
    for row in summary:
        print(f"{row['procedure']:13s} {row['settings']:8d} {row['stated']:7.1%} {row['largest']:8.2%} "
              f"{row['median']:7.2%} {row['error']:8.2%} {row['over']:4d}   largest at {row['where']}")
    print("\n" + markdown(summary) + "\n")
    for r in results:  # the outlier rule's power, reported beside its rate (not held)
        if r["procedure"] == "outlier" and r["setting"]["margin"] == 0.02:
            print(f"outlier rule, {r['setting']['n']} runs at {r['setting']['spread']:.1%}: a run 30% slower "
                  f"flagged in {r['detected']:.1%} of draws")
        if r["procedure"] == "drift" and r["setting"]["margin"] == 0.02:
            print(f"drift rule, {r['setting']['n']} runs before and {r['setting']['m']} after at "
                  f"{r['setting']['spread']:.1%}: a reference 5% slower after found in {r['found']:.1%} of draws")
    stall = []
    if args.stall:
        stall = [{"n": n, "spread": s, "missed": interval({"n": n, "spread": s}, args.draws, 99, stall=0.3)["interval"]}
                 for n in (3, 5, 10) for s in (0.005, 0.02)]
        for row in stall:
            print(f"stalled one run in ten (30%): {row['n']} runs at {row['spread']:.1%}: the interval missed "
                  f"{row['missed']:.1%} (stated 5%, outside its noise model: not held)")
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%MZ")
    out = args.out / f"tax-{stamp}.json.gz"
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(out, "wt") as f:
        json.dump({"draws": args.draws, "stated": STATED, "sigmas": SIGMAS, "bw": BW, "summary": summary,
                   "stall": stall, "settings": results}, f)
    over = sum(row["over"] for row in summary)
    for result in results:
        for name, stated, rate, err, within in held(result, args.draws):
            if not within:
                print(f"  over: {name} {rate:.2%} against {stated:.1%} (+{SIGMAS:g} x {err:.2%}) "
                      f"at {result['setting']}")
    print(f"kept in {out}; {over} setting(s) above their stated rate by more than {SIGMAS:g} Monte Carlo errors")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
