"""Many verdicts, one error budget: a report's tax verdicts controlled together.

A report holds a verdict for every layout, rw, block size and device count it measured, each read at its own level
(a 95% interval: each claim, a tax, a gain or equivalence against the margin, is a one-sided test at 2.5%). Read
one at a time, the more verdicts a report holds, the more of them are wrong by chance. ``controlled`` adjusts the
p-values of every claim each tested row could make, whichever it made (``significance.verdict_p``: the claim's own
test against the margin; three a row: tax, gain, equivalent), by Benjamini and Hochberg's step-up
(scipy.stats.false_discovery_control). A verdict holds for the family where its claim's adjusted ``tax_q`` is at
most the verdicts' own one-sided level: of the claims the report keeps, that share at most are expected to be false
(the false discovery rate; it holds for independent claims and for claims positively dependent, as those taxed
against one reference's runs are). Every claim a row could make is in the family, not only those it made: a family
of the claims already made would be adjusted after their selection and keep every one of them (measured: 5.6% false
where 2.5% is stated). Chosen over a family-wise bound (Holm): a study's question is which layouts cost what, and a
report of dozens of verdicts would keep almost none under a family-wise bound at the runs a campaign makes.
Measured in tests/test_family.py.

A group-sequential verdict (PRECISION) enters with the p-values of its last look's test: the look that stopped it.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..measure.units import percent

CLAIMS = ("tax", "gain", "equivalent")


def controlled(summary: pd.DataFrame) -> pd.DataFrame:
    """``summary`` (``stats.summary_intervals``) with ``tax_q``, the Benjamini-Hochberg adjusted p-value of each
    row's claim among every claim the table's tested rows could make (``tax_claim_p_<claim>``; NaN where the row
    makes none), and ``tax_held``: whether the claim holds for the family, its ``tax_q`` at most its own one-sided
    level ((1 - ``tax_confidence``) / 2); NA where no claim."""
    columns = [f"tax_claim_p_{claim}" for claim in CLAIMS]
    if not {"tax_verdict", "tax_confidence", *columns} <= set(summary.columns):
        return summary
    p = summary[columns].astype(float)
    tested = np.isfinite(p).all(axis=1)
    q = pd.DataFrame(np.nan, index=summary.index, columns=columns)
    if tested.any():
        q.loc[tested] = sps.false_discovery_control(p[tested].clip(0, 1).to_numpy().ravel()).reshape(-1, 3)
    claims = summary["tax_verdict"].isin(CLAIMS) & tested
    mine = pd.Series([q.at[i, f"tax_claim_p_{v}"] if c else np.nan
                      for i, v, c in zip(summary.index, summary["tax_verdict"], claims)], index=summary.index,
                     dtype="float64")
    level = (1.0 - summary["tax_confidence"].astype(float)) / 2.0
    held = (mine <= level).astype("boolean").mask(~claims)
    return summary.assign(tax_q=mine, tax_held=held)


def sentences(summary: pd.DataFrame) -> list[str]:
    """The family in words: how many claims the table makes, at what false discovery rate they were controlled,
    how many hold, and each that does not (its layout, rw, devices, verdict and q); nothing without claims."""
    if "tax_held" not in summary.columns:
        return []
    made = summary[summary["tax_held"].notna()]
    if made.empty:
        return []
    levels = sorted({float(v) for v in (1.0 - made["tax_confidence"].astype(float)) / 2.0})
    rate = percent(levels[0], 1) if len(levels) == 1 else f"{percent(levels[0], 1)} to {percent(levels[-1], 1)}"
    held = int(made["tax_held"].sum())
    head = (f"{len(made)} verdict(s) (tax, gain or equivalent) controlled together at a {rate} false discovery "
            f"rate (Benjamini-Hochberg): ")
    if held == len(made):
        return [head + ("it holds" if held == 1 else f"all {held} hold") + "."]
    lost = made[~made["tax_held"].astype(bool)]
    named = "; ".join(f"{r.layout} {r.rw} at {int(r.devices)} devices ({r.tax_verdict}, q = {r.tax_q:.3g})"
                      for r in lost.itertuples(index=False))
    return [head + f"{held} of {len(made)} hold; not held as a family: {named}."]
